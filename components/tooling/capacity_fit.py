"""What `fit` says about a pool's capacity: a queued pool's all-or-nothing admission, the cap
a reservation puts on a pool, and whether the pool holds a workload's pods at once.

A queued pool (`capacity: queued`) admits a Job whole: Kueue reserves quota for all its pods,
then asks the autoscaler (a ProvisioningRequest of the cloud's class) for every node they need
at once, and only then lets the pods be created. So a Job whose pods need more than the pool may
ever have (its ClusterQueue quota is maxNodes nodes' worth) waits forever; a reservation of N
nodes caps what can come at once in the same way. Which pool a queue-labelled Job may use at all
is `queue_fit.route`'s; whether any other pool holds a workload's pods at once is `gang_fit`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from components.model import kueue
from components.model.capacity import QUEUE_LABEL, shown_order
from components.model.catalog.provisioning import PROVISIONING_CLASSES
from components.model.pool_spec import PoolSpec
from components.tooling.gang_fit import (
    RESERVED_ONLY,
    gang_verdict,
    nodes_needed,
    plural,
    pods_per_node,
)
from components.tooling.queue_fit import Routing, quota_reasons, quota_source, quota_use
from components.tooling.scheduling.model import NodeTemplate
from components.tooling.scheduling.workload_objects import PodSet


@dataclass(frozen=True)
class Workload:
    """What fit knows of the object around a pod template: how many pods it runs at once (a
    Job's parallelism, capped by its completions, as Kueue counts them; a Deployment's
    replicas), the labels Kueue reads (the Job's own, a CronJob's job template's), whether its
    pods must run together, and every pod set Kueue would admit with it."""

    pods: int = 1
    labels: Mapping[str, str] = field(default_factory=dict)
    # Where it is created, when the manifest says.
    namespace: str | None = None
    # Why all its pods must run at once (None: each runs on its own).
    together: str | None = None
    pod_sets: tuple[PodSet, ...] = ()


@dataclass(frozen=True)
class CapacityVerdict:
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # Whether the pool holds all the workload's pods at once: said only of a pool whose nodes
    # take the pod at all.
    gang_reasons: tuple[str, ...] = ()
    gang_notes: tuple[str, ...] = ()


def admitted_pod(
    pod_spec: Mapping[str, Any], spec: PoolSpec, routing: Routing
) -> Mapping[str, Any]:
    """The pod as it runs once Kueue admits its Job through the pool's queue: Kueue adds the
    ResourceFlavor's tolerations and node labels to it (a selector the pod already has for a
    label keeps its value; a conflicting one keeps the flavor from matching, as in Kueue).
    Other pods are left as written."""
    if spec.queue is None or not routing.admits_to(spec.name):
        return pod_spec
    flavor = kueue.resource_flavor(spec)["spec"]
    tolerations = [*(pod_spec.get("tolerations") or []), *flavor.get("tolerations", [])]
    selector = {**flavor.get("nodeLabels", {}), **(pod_spec.get("nodeSelector") or {})}
    return {**pod_spec, "tolerations": tolerations, "nodeSelector": selector}


def _bypass(spec: PoolSpec, workload: Workload, routing: Routing) -> CapacityVerdict:
    """A queued pool's verdict for a workload its queue does not admit."""
    queue = spec.queue
    if queue is None:
        return CapacityVerdict()
    provisioning = PROVISIONING_CLASSES.get(queue.provisioning_class or "")
    labelled = workload.labels.get(QUEUE_LABEL)
    wanted = f"{QUEUE_LABEL}={queue.local_queue}"
    where = f"in namespace {' or '.join(queue.namespaces)}"
    if labelled and not routing.managed:
        has = f"labelled {QUEUE_LABEL}={labelled} in a namespace Kueue does not manage"
    elif labelled:
        has = f"labelled {QUEUE_LABEL}={labelled}"
    else:
        has = f"without {wanted}"
    if provisioning is not None and provisioning.only_requested:
        return CapacityVerdict(
            reasons=(
                f"the pool is queued and its nodes come only through ProvisioningRequests "
                f"({queue.provisioning_class}), which Kueue makes for Jobs labelled {wanted} "
                f"{where}; a workload {has} never gets a node",
            )
        )
    if not queue.requested:
        return CapacityVerdict(
            notes=(
                f"the pool has a Kueue queue (queues.pools), but a workload {has} bypasses it: "
                f"it takes the pool's nodes outside the quota the team's Jobs share; label it "
                f"{wanted} {where}",
            )
        )
    return CapacityVerdict(
        notes=(
            f"the pool is queued, but a workload {has} bypasses its queue: its pods "
            f"get nodes one at a time as they come, not all at once; label it {wanted} "
            f"{where}",
        )
    )


def _admitted(
    spec: PoolSpec,
    pod_spec: Mapping[str, Any],
    node: NodeTemplate,
    workload: Workload,
    borrower: str | None = None,
) -> CapacityVerdict:
    """The verdict of a pool with a queue for a workload its queue admits: whole, or never.
    `borrower`: the pool whose queue admits it here by borrowing this pool's quota."""
    per_node = pods_per_node(pod_spec, node)
    nodes = nodes_needed(workload.pods, per_node)
    pods = plural(workload.pods, "pod")
    cap = spec.reservation_cap
    reserved_only = cap is not None and set(spec.capacity) <= RESERVED_ONLY
    sets = workload.pod_sets or (PodSet("pod", pod_spec, workload.pods),)
    quota_nodes = spec.queue.quota_nodes if spec.queue is not None else spec.max_nodes
    by_quota = spec.queue is not None and not spec.queue.requested
    # Identical pods that pack within the quota's nodes are within the quota too: the amounts
    # matter when the workload's other pod sets (a JobSet's) come with them. A queue without
    # an admission check admits by the amounts alone, whatever the nodes hold.
    reasons = quota_reasons(spec, sets, amounts=by_quota or nodes <= quota_nodes)
    most = min(spec.max_nodes, cap.nodes) if reserved_only and cap is not None else spec.max_nodes
    if by_quota and nodes > most:
        if not reasons:
            reasons.append(_stranded(spec, sets, workload.pods, per_node, most))
    elif nodes > spec.max_nodes:
        reasons.append(
            f"Kueue admits a Job whole or not at all: its {pods} need "
            f"{plural(nodes, 'node')} ({per_node} per node), more than the pool's "
            f"maxNodes {spec.max_nodes} (its ClusterQueue quota), so it waits in the "
            "queue forever; run fewer pods at once or raise maxNodes"
        )
    elif reserved_only and cap is not None and nodes > cap.nodes:
        reasons.append(
            f"Kueue admits a Job whole or not at all: its {pods} need "
            f"{plural(nodes, 'node')} at once, but {cap.source} gives this pool at "
            f"most {plural(cap.nodes, 'node')}, so it waits forever"
        )
    if reasons:
        return CapacityVerdict(tuple(dict.fromkeys(reasons)))
    queue = spec.queue
    if queue is not None and not queue.requested:
        return CapacityVerdict(gang_notes=(_quota_note(spec, nodes, pods, borrower),))
    provisioning = PROVISIONING_CLASSES.get(queue.provisioning_class or "") if queue else None
    autoscaler = (
        f"the autoscaler {provisioning.says}"
        if provisioning is not None
        else f"the autoscaler serves its ProvisioningRequest ({queue.provisioning_class if queue else ''})"
    )
    return CapacityVerdict(
        gang_notes=(
            f"queued, all or nothing: the Job waits in Kueue until all "
            f"{plural(nodes, 'node')} for its {pods} can be had at once ({autoscaler}); "
            "then its pods start together",
        )
    )


def _stranded(spec: PoolSpec, sets: tuple[PodSet, ...], pods: int, per_node: int, most: int) -> str:
    """A Job its quota admits whose pods the pool's nodes cannot all hold: Kueue counts
    amounts, not nodes, so the Job holds the quota while its last pods stay Pending."""
    running = min(pods, most * per_node)
    gpus = spec.allocatable_per_node.get(spec.gpu_resource, 0)
    per_gpu = gpus if isinstance(gpus, int) else 0
    sizes = [str(n) for n in range(1, per_gpu + 1) if per_gpu % n == 0]
    instead = (
        f"pods of {', '.join(sizes[:-1])} or {sizes[-1]} GPUs" if len(sizes) > 1 else "smaller pods"
    )
    return (
        f"Kueue admits the Job on this pool by quota ({quota_use(spec, sets)}), but its "
        f"{plural(pods, 'pod')} need {plural(nodes_needed(pods, per_node), 'node')} "
        f"({per_node} per node) and the pool has at most {plural(most, 'node')}: {running} "
        f"run, {pods - running} {'stays' if pods - running == 1 else 'stay'} Pending for good "
        f"while the Job holds the quota; use {instead}, or fewer pods"
    )


def _quota_note(spec: PoolSpec, nodes: int, pods: str, borrower: str | None) -> str:
    """How a pool of `queues.pools` takes a Job its queue admits (no ProvisioningRequest)."""
    queue = spec.queue
    assert queue is not None
    if borrower is not None:
        return (
            f"borrowed: when ClusterQueue {kueue.cluster_queue_name(borrower)}'s own quota "
            f"cannot hold the Job, Kueue admits it whole on this pool's unused quota (cohort "
            f"{queue.cohort}), and its {pods} run here; this pool's own Jobs then wait for it "
            "to finish (reclaimWithinCohort: Never, so running work is not preempted)"
        )
    return (
        f"Kueue admits the Job whole once ClusterQueue {queue.cluster_queue} has quota for all "
        f"its {pods} ({quota_source(spec)}); then the autoscaler adds the "
        f"{plural(nodes, 'node')} they need as it does for any pod (no ProvisioningRequest)"
    )


def _reservation_notes(spec: PoolSpec) -> list[str]:
    cap = spec.reservation_cap
    if cap is None:
        return []
    if set(spec.capacity) <= RESERVED_ONLY:
        if cap.nodes < spec.max_nodes:
            return [
                f"at most {plural(cap.nodes, 'node')} at once, not maxNodes "
                f"{spec.max_nodes}: every node comes from {cap.source}"
            ]
        return []
    rest = [word for word in spec.capacity if word not in RESERVED_ONLY]
    return [
        f"the first {plural(cap.nodes, 'node')} come from {cap.source}; beyond "
        f"them, {shown_order(tuple(rest))} (capacity {shown_order(spec.capacity)})"
    ]


def capacity_verdict(
    spec: PoolSpec,
    pod_spec: Mapping[str, Any],
    node: NodeTemplate,
    workload: Workload,
    routing: Routing,
    siblings: tuple[PodSet, ...] = (),
) -> CapacityVerdict:
    """Reasons the capacity itself refuses the workload, and notes on how it will get nodes.
    `siblings`: the workload's other pod sets this pool also takes (a JobSet's other jobs)."""
    reservation = tuple(_reservation_notes(spec))
    if spec.queue is not None and routing.admits_to(spec.name):
        borrower = routing.pool if routing.pool != spec.name else None
        verdict = _admitted(spec, pod_spec, node, workload, borrower)
        return CapacityVerdict(verdict.reasons, reservation, gang_notes=verdict.gang_notes)
    verdict = _bypass(spec, workload, routing) if spec.queue is not None else CapacityVerdict()
    gang = gang_verdict(spec, pod_spec, node, workload.pods, workload.together, siblings)
    return CapacityVerdict(
        verdict.reasons, (*verdict.notes, *reservation), gang.reasons, gang.notes
    )
