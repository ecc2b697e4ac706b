"""Which pools a workload labelled for a Kueue queue can run on, and whether its queue admits it.

Kueue as gpufleet installs it (components/model/kueue.py; facts from kubernetes-sigs/kueue
v0.19.2):

- It manages a Job only in the namespaces of `managedJobsNamespaceSelector`, which gpufleet sets
  to `queues.namespaces`: the chart gives its webhooks that namespace selector (charts/kueue
  templates/webhook/manifests.yaml), and the Job reconciler skips any other namespace
  (pkg/controller/jobframework/reconciler.go, "Namespace not opted in"; the feature gate
  ManagedJobsNamespaceSelectorAlwaysRespected is GA and locked on in 0.19). A Job labelled for
  a queue elsewhere is created unsuspended and runs at once, unqueued: its pods no longer start
  all together.
- In a managed namespace it manages only Jobs with a `kueue.x-k8s.io/queue-name` label
  (`manageJobsWithoutQueueName` is false by default, and gpufleet keeps it so). Such a Job is
  suspended on creation (jobframework WorkloadShouldBeSuspended) and waits until its queue
  admits it; a LocalQueue that does not exist admits nothing.
- A LocalQueue leads to its ClusterQueue, whose first ResourceFlavor is the pool: Kueue adds
  the flavor's node labels and tolerations to the admitted pods, so they run on that pool. The
  ClusterQueue's quota is `PoolQueue.quota_nodes` nodes' worth of the pool's resources (maxNodes,
  or a reservation's size), and a resource it does not cover blocks admission (flavorassigner,
  quotaCheckStrategy BlockUndeclared): a Job asking for more never leaves the queue.
- A pool of `queues.pools` with `borrowFrom` lists the lender's flavor second, in one cohort:
  when its own quota cannot hold the Job, Kueue borrows the lender's unused quota and the whole
  Job runs on the lender's pool (a pod set gets one flavor; apis/kueue/v1beta2
  clusterqueue_types.go: cohortName, FlavorFungibility whenCanBorrow MayStopSearch).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from components.model import kueue
from components.model.capacity import QUEUE_LABEL
from components.model.pool_spec import PoolSpec
from components.tooling.gang_fit import plural
from components.tooling.scheduling import PodTemplate, quantity
from components.tooling.scheduling.resources import pod_requests
from components.tooling.scheduling.workload_objects import PodSet


@dataclass(frozen=True)
class Routing:
    """What Kueue does with a workload: whether it admits it whole (`managed`), the one pool
    its queue places it on (`pool`), why every other pool is out, and what to say of it."""

    managed: bool = False
    pool: str | None = None
    elsewhere: str | None = None
    notes: tuple[str, ...] = ()
    # The pool its queue borrows from when its own quota is used up (queues.pools borrowFrom).
    borrow: str | None = None
    # The one pool Kueue assigns by quota, of `pool` and `borrow` (`by_quota`); None: either.
    flavor: str | None = None

    def admits_to(self, pool: str) -> bool:
        """Whether Kueue may place the workload's pods on this pool."""
        if self.flavor is not None:
            return pool == self.flavor
        return pool in (self.pool, self.borrow)


def route(labels: Mapping[str, str], namespace: str | None, specs: Sequence[PoolSpec]) -> Routing:
    """Where Kueue sends a workload with these labels, created in `namespace` (None: the
    manifest does not say)."""
    queue_name = labels.get(QUEUE_LABEL)
    queued = [spec for spec in specs if spec.queue is not None]
    if queue_name is None:
        return Routing()
    label = f"{QUEUE_LABEL}={queue_name}"
    if not queued:
        return Routing(
            notes=(
                f"labelled {label}, but this stack has no queued pool and installs no Kueue: "
                "the label does nothing unless the cluster runs a Kueue of its own (not checked)",
            )
        )
    first = queued[0].queue
    namespaces = first.namespaces if first is not None else ()
    listed = ", ".join(namespaces)
    if namespace is not None and namespace not in namespaces:
        return Routing(
            notes=(
                f"labelled {label}, but namespace {namespace} is not managed by Kueue (it manages "
                f"queues.namespaces: {listed}): the workload runs at once, unqueued, and its "
                "pods no longer start all together; create it in one of those namespaces",
            )
        )
    notes = []
    if namespace is None:
        notes.append(
            f"no namespace in the manifest: judged as created in one Kueue manages "
            f"(queues.namespaces: {listed}); in any other it runs at once, unqueued"
        )
    where = namespace or " or ".join(namespaces)
    for spec in queued:
        if spec.queue is not None and spec.queue.local_queue == queue_name:
            lender = spec.queue.borrow_from
            places = (
                f"ClusterQueue {spec.queue.cluster_queue} puts its pods on pool {spec.name}, "
                f"or, borrowing, on pool {lender}"
                if lender
                else f"ResourceFlavor {spec.queue.cluster_queue} puts its pods on pool "
                f"{spec.name} only"
            )
            return Routing(
                managed=True,
                pool=spec.name,
                elsewhere=f"Kueue admits it through LocalQueue {queue_name}, whose {places}",
                notes=tuple(notes),
                borrow=lender,
            )
    known = ", ".join(spec.queue.local_queue for spec in queued if spec.queue is not None)
    return Routing(
        managed=True,
        elsewhere=(
            f"labelled {label}, but this stack makes no LocalQueue {queue_name} in namespace "
            f"{where} (its queues: {known}): Kueue keeps the workload suspended until a queue "
            "of that name exists; label it for one of them"
        ),
        notes=tuple(notes),
    )


def by_quota(routing: Routing, specs: Sequence[PoolSpec], template: PodTemplate) -> Routing:
    """The pool Kueue assigns a borrower's workload to, as Kueue does: flavors in order, the
    first whose quota holds the workload's requests ends the search (whenCanBorrow
    MayStopSearch, the default: apis/kueue/v1beta2/clusterqueue_types.go), so a workload within
    the pool's own quota never borrows, even where its pods cannot pack on the pool's nodes;
    one beyond it borrows the lender's. Judged on empty queues, the pod sets' requests summed."""
    own = next((spec for spec in specs if spec.name == routing.pool), None)
    if own is None or routing.borrow is None:
        return routing
    pod_sets = template.pod_sets or (PodSet("pod", template.spec, template.pods),)
    reasons = quota_reasons(own, pod_sets)
    if any("does not cover" in reason for reason in reasons):
        return routing  # neither flavor covers it: each pool's verdict says so
    use = quota_use(own, pod_sets)
    cluster_queue = _cluster_queue(own)
    if reasons:
        return replace(
            routing,
            flavor=routing.borrow,
            elsewhere=(
                f"ClusterQueue {cluster_queue}'s own quota cannot hold it ({use}), so Kueue "
                f"admits it on pool {routing.borrow} by borrowing that pool's quota, not here"
            ),
        )
    return replace(
        routing,
        flavor=own.name,
        elsewhere=(
            f"Kueue admits it on pool {own.name}, not here: ClusterQueue {cluster_queue}'s own "
            f"quota holds it ({use}), and Kueue takes the first flavor whose quota fits without "
            "borrowing (whenCanBorrow: MayStopSearch), whether or not its pods pack on that "
            "pool's nodes"
        ),
    )


def _totals(pod_sets: Sequence[PodSet]) -> dict[str, int]:
    """What a workload requests in all, per resource, as Kueue counts it against quota."""
    totals: dict[str, int] = {}
    for pod_set in pod_sets:
        requested, _ = pod_requests(pod_set.spec)
        for name, amount in requested.items():
            if amount.total > 0:
                totals[name] = totals.get(name, 0) + amount.total * pod_set.count
    return totals


def quota_use(spec: PoolSpec, pod_sets: Sequence[PodSet]) -> str:
    """The workload's GPUs against the pool's quota, e.g. "15 of 16 nvidia.com/gpu"."""
    quota, totals = _quota(spec), _totals(pod_sets)
    shown = [
        f"{_shown(name, totals.get(name, 0))} of {_shown(name, quota[name])} {name}"
        for name in sorted(spec.extended_resources)
        if name in quota
    ]
    return ", ".join(shown) or "no GPUs"


def _quota(spec: PoolSpec) -> dict[str, int]:
    """The ClusterQueue's nominal quota, in the simulator's units (millicores, bytes, counts)."""
    quota: dict[str, int] = {}
    for name, value in kueue.node_resources(spec).items():
        if isinstance(value, int):
            amount = value
        elif name == "cpu":
            amount = quantity.cpu_millis(value)
        else:
            amount = quantity.memory_bytes(value)
        quota[name] = amount * _quota_nodes(spec)
    return quota


def _quota_nodes(spec: PoolSpec) -> int:
    return spec.queue.quota_nodes if spec.queue is not None else spec.max_nodes


def _shown(name: str, amount: int) -> str:
    if name == "cpu":
        return quantity.format_cpu(amount)
    if name in ("memory", "ephemeral-storage"):
        return f"{quantity.format_gib(amount)} GiB"
    return str(amount)


def quota_reasons(spec: PoolSpec, pod_sets: Sequence[PodSet], *, amounts: bool = True) -> list[str]:
    """Why the pool's ClusterQueue (a borrower's, for a lender's pool) never admits the
    workload: a resource its quota does not cover, or (with `amounts`) more of one than its
    quota's nodes' worth."""
    quota = _quota(spec)
    totals = _totals(pod_sets)
    pods = sum(pod_set.count for pod_set in pod_sets)
    reasons = []
    uncovered = sorted(name for name in totals if name not in quota)
    if uncovered:
        reasons.append(
            f"it requests {', '.join(uncovered)}, which ClusterQueue {_cluster_queue(spec)} does "
            f"not cover (it covers {', '.join(quota)}): Kueue never admits it"
        )
    for name, total in totals.items() if amounts else ():
        if name in quota and total > quota[name]:
            reasons.append(
                f"its {plural(pods, 'pod')} request {_shown(name, total)} {name} in all, more "
                f"than ClusterQueue {_cluster_queue(spec)}'s quota of {_shown(name, quota[name])} "
                f"({quota_source(spec)}): Kueue never admits it{_without(spec)}; request "
                "less or raise the quota"
            )
    return reasons


def quota_source(spec: PoolSpec) -> str:
    """What the ClusterQueue's quota is the size of."""
    nodes = _quota_nodes(spec)
    cap = spec.reservation_cap
    if nodes < spec.max_nodes and cap is not None:
        return f"{plural(nodes, 'node')}' worth: the size of {cap.source}"
    return f"maxNodes {nodes} nodes' worth"


def _without(spec: PoolSpec) -> str:
    """What else the queue may do: borrow (queues.pools borrowFrom), where it can."""
    queue = spec.queue
    if queue is None or queue.requested:
        return ""
    if queue.borrow_from is not None:
        return f" on this pool (it may borrow pool {queue.borrow_from}'s quota instead)"
    return " (its queue borrows from no pool: queues.pools[].borrowFrom)"


def _cluster_queue(spec: PoolSpec) -> str:
    return spec.queue.cluster_queue if spec.queue is not None else spec.name
