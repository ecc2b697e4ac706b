"""What `fit` says about a pool's capacity: a queued pool's all-or-nothing admission, and the cap
a reservation puts on a pool.

A queued pool (`capacity: queued`) admits a Job whole: Kueue reserves quota for all its pods,
then asks the autoscaler (a ProvisioningRequest of the cloud's class) for every node they need
at once, and only then lets the pods be created. So a Job whose pods need more nodes than the
pool may ever have (its ClusterQueue quota is maxNodes nodes' worth) waits forever; a reservation
of N nodes caps what can come at once in the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from components.model import kueue
from components.model.capacity import QUEUE_LABEL, shown_order
from components.model.catalog.provisioning import PROVISIONING_CLASSES
from components.model.pool_spec import PoolSpec
from components.tooling.scheduling.model import NodeTemplate
from components.tooling.scheduling.resources import pod_requests

# Orders whose every node comes from a reservation (nothing to fall back to).
_RESERVED_ONLY = frozenset({"reserved", "capacity-block"})


@dataclass(frozen=True)
class Workload:
    """What fit knows of the object around a pod template: how many pods it runs at once (a
    Job's parallelism, capped by its completions, as Kueue counts them; a Deployment's
    replicas) and the labels Kueue reads (the Job's own, a CronJob's job template's)."""

    pods: int = 1
    labels: Mapping[str, str] = field(default_factory=dict)
    # Where it is created, when the manifest says.
    namespace: str | None = None


@dataclass(frozen=True)
class CapacityVerdict:
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def admitted_pod(
    pod_spec: Mapping[str, Any], spec: PoolSpec, workload: Workload
) -> Mapping[str, Any]:
    """The pod as it runs once Kueue admits its Job through the pool's queue: Kueue adds the
    ResourceFlavor's tolerations and node labels to it (a selector the pod already has for a
    label keeps its value; a conflicting one keeps the flavor from matching, as in Kueue).
    Other pods are left as written."""
    queue = spec.queue
    if queue is None or workload.labels.get(QUEUE_LABEL) != queue.local_queue:
        return pod_spec
    flavor = kueue.resource_flavor(spec)["spec"]
    tolerations = [*(pod_spec.get("tolerations") or []), *flavor.get("tolerations", [])]
    selector = {**flavor.get("nodeLabels", {}), **(pod_spec.get("nodeSelector") or {})}
    return {**pod_spec, "tolerations": tolerations, "nodeSelector": selector}


def pods_per_node(pod_spec: Mapping[str, Any], node: NodeTemplate) -> int:
    """How many such pods one empty node takes by their requests (at least 1: whether one fits
    at all is the scheduler simulation's verdict)."""
    requested, _ = pod_requests(pod_spec)
    room: list[int] = []
    for name, amount in requested.items():
        if amount.total <= 0:
            continue
        if name == "cpu":
            offered = node.cpu_millis
        elif name == "memory":
            offered = node.memory_bytes
        else:
            offered = node.allocatable.get(name, 0)
        if offered > 0:
            room.append(offered // amount.total)
    return max(1, min(room, default=1))


def nodes_needed(pods: int, per_node: int) -> int:
    return math.ceil(pods / per_node)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def capacity_verdict(
    spec: PoolSpec, pod_spec: Mapping[str, Any], node: NodeTemplate, workload: Workload
) -> CapacityVerdict:
    """Reasons the capacity itself refuses the workload, and notes on how it will get nodes."""
    reasons: list[str] = []
    notes: list[str] = []
    per_node = pods_per_node(pod_spec, node)
    nodes = nodes_needed(workload.pods, per_node)
    cap = spec.reservation_cap
    reserved_only = cap is not None and set(spec.capacity) <= _RESERVED_ONLY
    queue = spec.queue
    if queue is not None:
        provisioning = PROVISIONING_CLASSES.get(queue.provisioning_class)
        labelled = workload.labels.get(QUEUE_LABEL)
        wanted = f"{QUEUE_LABEL}={queue.local_queue}"
        where = f"in namespace {' or '.join(queue.namespaces)}"
        if labelled != queue.local_queue:
            has = f"labelled {QUEUE_LABEL}={labelled}" if labelled else f"without {wanted}"
            if provisioning is not None and provisioning.only_requested:
                reasons.append(
                    f"the pool is queued and its nodes come only through ProvisioningRequests "
                    f"({queue.provisioning_class}), which Kueue makes for Jobs labelled {wanted} "
                    f"{where}; a workload {has} never gets a node"
                )
            else:
                notes.append(
                    f"the pool is queued, but a workload {has} bypasses its queue: its pods "
                    f"get nodes one at a time as they come, not all at once; label it {wanted} "
                    f"{where}"
                )
        elif workload.namespace is not None and workload.namespace not in queue.namespaces:
            reasons.append(
                f"labelled {wanted}, but created in namespace {workload.namespace}, where the "
                f"pool has no LocalQueue (queues.namespaces: {', '.join(queue.namespaces)}): "
                "Kueue never admits it"
            )
        else:
            pods = _plural(workload.pods, "pod")
            if nodes > spec.max_nodes:
                reasons.append(
                    f"Kueue admits a Job whole or not at all: its {pods} need "
                    f"{_plural(nodes, 'node')} ({per_node} per node), more than the pool's "
                    f"maxNodes {spec.max_nodes} (its ClusterQueue quota), so it waits in the "
                    "queue forever; run fewer pods at once or raise maxNodes"
                )
            elif reserved_only and cap is not None and nodes > cap.nodes:
                reasons.append(
                    f"Kueue admits a Job whole or not at all: its {pods} need "
                    f"{_plural(nodes, 'node')} at once, but {cap.source} gives this pool at "
                    f"most {_plural(cap.nodes, 'node')}, so it waits forever"
                )
            else:
                autoscaler = (
                    f"the autoscaler {provisioning.says}"
                    if provisioning is not None
                    else f"the autoscaler serves its ProvisioningRequest ({queue.provisioning_class})"
                )
                notes.append(
                    f"queued, all or nothing: the Job waits in Kueue until all "
                    f"{_plural(nodes, 'node')} for its {pods} can be had at once ({autoscaler}); "
                    "then its pods start together"
                )
    if cap is not None:
        if reserved_only:
            if cap.nodes < spec.max_nodes:
                notes.append(
                    f"at most {_plural(cap.nodes, 'node')} at once, not maxNodes "
                    f"{spec.max_nodes}: every node comes from {cap.source}"
                )
        else:
            rest = [word for word in spec.capacity if word not in _RESERVED_ONLY]
            notes.append(
                f"the first {_plural(cap.nodes, 'node')} come from {cap.source}; beyond "
                f"them, {shown_order(tuple(rest))} (capacity {shown_order(spec.capacity)})"
            )
    return CapacityVerdict(tuple(reasons), tuple(notes))
