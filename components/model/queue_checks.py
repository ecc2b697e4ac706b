"""The rules queued pools share on every cloud: what their Kueue objects need from the config.

Checked before anything is created (the API server would refuse the objects at apply time):
object names within Kueue's limits, a node shape to size the ClusterQueue's quota from, the
`queues` section only where a pool is queued, and, once the pools are resolved, a flavor within
the ResourceFlavor's eight labels and eight taints.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from components.model import kueue
from components.model.capacity import QUEUE_CAPACITY, declared_order, shown_order, written_order
from components.model.catalog import charts
from components.model.cloud import Cloud
from components.model.pool_spec import PoolSpec
from components.model.problems import Problem
from components.model.registry import all_machine_types
from components.model.schema import ClusterConfig, GpuPoolConfig, QueuesConfig

# Namespace names are DNS labels (RFC 1123).
_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def is_queued(pool: GpuPoolConfig) -> bool:
    order = written_order(pool.capacity)
    return order is not None and "queued" in declared_order(pool.capacity, pool.spot)


def has_queue(pool: GpuPoolConfig, queues: QueuesConfig | None) -> bool:
    """Whether the pool gets Kueue objects: queued, or named in `queues.pools`."""
    named = queues is not None and any(entry.pool == pool.name for entry in queues.pools)
    return is_queued(pool) or named


def _pools_problems(
    queues: QueuesConfig, pools: Sequence[tuple[int, GpuPoolConfig]]
) -> list[Problem]:
    """`queues.pools`: pools of paid capacity that exist, are not queued already, and borrow
    only from an on-demand pool that is itself listed (both ClusterQueues join its cohort)."""
    problems: list[Problem] = []
    by_name = {pool.name: pool for _, pool in pools}
    listed = [entry.pool for entry in queues.pools]
    allowed = ", ".join(QUEUE_CAPACITY)
    for index, entry in enumerate(queues.pools):
        path = f"queues.pools[{index}]"
        pool = by_name.get(entry.pool)
        if pool is None:
            problems.append(
                Problem(
                    f"{path}.pool", f"names no pool of gpuPools ({', '.join(by_name)})", entry.pool
                )
            )
        elif is_queued(pool):
            problems.append(
                Problem(
                    f"{path}.pool",
                    "is a queued pool, which has its queue already (capacity: queued); remove it "
                    "from queues.pools",
                    entry.pool,
                )
            )
        elif _falls_on_spot(pool):
            order = declared_order(pool.capacity, pool.spot)
            problems.append(
                Problem(
                    f"{path}.pool",
                    f"pool {entry.pool} has capacity {shown_order(order)}: a queue goes on "
                    f"capacity that starts with {allowed} and never falls back to spot (Spot "
                    "nodes are taken back at any time, so quota over them admits Jobs that "
                    "then lose nodes); remove spot from the pool's capacity, or list another "
                    "pool",
                    entry.pool,
                )
            )
        if listed.count(entry.pool) > 1 and listed.index(entry.pool) == index:
            problems.append(Problem(f"{path}.pool", "is listed more than once", entry.pool))
        lender_name = entry.borrow_from
        if lender_name is None:
            continue
        lender = by_name.get(lender_name)
        entries = {e.pool: e for e in queues.pools}
        if lender_name == entry.pool:
            why = "is the pool itself"
        elif lender is None or lender_name not in entries:
            why = "must name another pool of queues.pools (its ClusterQueue lends the quota)"
        elif declared_order(lender.capacity, lender.spot) != ("on-demand",):
            why = (
                f"pool {lender_name} has capacity "
                f"{shown_order(declared_order(lender.capacity, lender.spot))}: borrow from an "
                "on-demand pool (capacity: on-demand), the capacity that is there when a "
                "reservation is full"
            )
        elif entries[lender_name].borrow_from is not None:
            why = f"pool {lender_name} borrows itself; a lender lends only (one cohort per lender)"
        else:
            continue
        problems.append(Problem(f"{path}.borrowFrom", why, lender_name))
    return problems


def _falls_on_spot(pool: GpuPoolConfig) -> bool:
    """Whether the pool's nodes may be Spot: its first capacity is not one a queue goes on, or
    a later one of its fallback list (a GKE compute class's) is spot."""
    order = declared_order(pool.capacity, pool.spot)
    return order[0] not in QUEUE_CAPACITY or "spot" in order


def _shape_known(cloud: Cloud, pool: GpuPoolConfig) -> bool:
    """Whether the pool's node cpu and memory are known (its cloud's catalog, or a catalog
    machine type it names), to size the ClusterQueue's quota."""
    if cloud.catalog.machines_for(pool.accelerator):
        return True
    names = set(pool.machine_types or ([pool.machine_type] if pool.machine_type else []))
    return any(machine.name in names for machine in all_machine_types())


def pool_problems(cloud: Cloud, pool: GpuPoolConfig, path: str) -> list[Problem]:
    """A pool with a Kueue queue: its own rules (names and node shape)."""
    problems: list[Problem] = []
    if len(pool.name) > kueue.MAX_POOL_NAME:
        problems.append(
            Problem(
                f"{path}.name",
                f"a pool with a Kueue queue takes a name of at most {kueue.MAX_POOL_NAME} characters: its "
                f"Kueue objects are named {kueue.PREFIX}<name>, at most "
                f"{kueue.MAX_OBJECT_NAME}",
                pool.name,
            )
        )
    if not _shape_known(cloud, pool):
        problems.append(
            Problem(
                f"{path}.machineType",
                "a pool with a Kueue queue has a ClusterQueue quota of nodes x a node's cpu and "
                "memory: name "
                "the nodes' machine type as one gpufleet's catalogs know (e.g. g2-standard-24, "
                "p5.48xlarge, Standard_NC24ads_A100_v4)",
                pool.machine_type or pool.machine_types,
                has_value=bool(pool.machine_type or pool.machine_types),
            )
        )
    return problems


def queues_problems(
    cloud: Cloud | None,
    queues: QueuesConfig | None,
    written: bool,
    pools: Sequence[tuple[int, GpuPoolConfig]],
) -> list[Problem]:
    """The `queues` section, and every queued pool's rules."""
    problems: list[Problem] = []
    queued = [(index, pool) for index, pool in pools if has_queue(pool, queues)]
    if cloud is not None:
        for index, pool in queued:
            problems += pool_problems(cloud, pool, f"gpuPools[{index}]")
    if queues is None:
        return problems
    if written and not queued:
        problems.append(
            Problem(
                "queues",
                "applies to queued pools and the pools queues.pools names, and there are none "
                "(no pool has capacity: queued); remove it, or name pools in queues.pools",
                has_value=False,
            )
        )
    problems += _pools_problems(queues, pools)
    if not queues.namespaces:
        problems.append(
            Problem("queues.namespaces", "must list at least one namespace", queues.namespaces)
        )
    for index, namespace in enumerate(queues.namespaces):
        if not _NAMESPACE.fullmatch(namespace):
            problems.append(
                Problem(
                    f"queues.namespaces[{index}]",
                    "not a namespace name (1-63 of a-z 0-9 -, alphanumeric at both ends)",
                    namespace,
                )
            )
        elif namespace in kueue.PROHIBITED_NAMESPACES:
            problems.append(
                Problem(
                    f"queues.namespaces[{index}]",
                    f"Kueue does not manage workloads in {' or '.join(kueue.PROHIBITED_NAMESPACES)} "
                    "(it refuses to start); use the namespace your Jobs run in",
                    namespace,
                )
            )
        elif namespace in charts.own_namespaces():
            problems.append(
                Problem(
                    f"queues.namespaces[{index}]",
                    "is a namespace gpufleet creates for its own software (removing that "
                    "software deletes the namespace with every Job in it); use a namespace of "
                    "your own",
                    namespace,
                )
            )
    if len(set(queues.namespaces)) != len(queues.namespaces):
        problems.append(Problem("queues.namespaces", "must not repeat", queues.namespaces))
    return problems


def creates_cluster(cloud: Cloud, cluster: ClusterConfig) -> bool:
    """Whether gpufleet creates this stack's cluster, and so ensures the queues' namespaces on it
    (creating or adopting them: they may exist on every `up` but the first)."""
    return not cloud.reads_kubeconfig and not cloud.adopted(cluster)


def queues_warnings(
    cloud: Cloud, cluster: ClusterConfig, queues: QueuesConfig, pools: Sequence[GpuPoolConfig]
) -> list[str]:
    """On a cluster gpufleet did not create, the queues' namespaces are the owner's to create:
    gpufleet creates them only on its own clusters (never touching what it did not create).
    And a listed pool that falls back to flex-start."""
    warnings = _flex_start_warnings(queues, pools)
    if not any(has_queue(pool, queues) for pool in pools) or creates_cluster(cloud, cluster):
        return warnings
    needed = [ns for ns in queues.namespaces if ns not in kueue.INITIAL_NAMESPACES]
    if not needed:
        return warnings
    return [
        *warnings,
        f"queues.namespaces: {', '.join(needed)} must exist on the cluster before `pulumi up` "
        "(not checked): the API server refuses a LocalQueue in a namespace that does not exist, "
        "and gpufleet creates namespaces only on clusters it creates; create them with "
        "`kubectl create namespace <name>` if they are new",
    ]


def _flex_start_warnings(queues: QueuesConfig, pools: Sequence[GpuPoolConfig]) -> list[str]:
    """A `queues.pools` pool whose list falls back to flex-start after its first capacity."""
    by_name = {pool.name: pool for pool in pools}
    warnings = []
    for index, entry in enumerate(queues.pools):
        pool = by_name.get(entry.pool)
        if pool is None or is_queued(pool) or _falls_on_spot(pool):
            continue  # refused (queues_problems), or queued already
        order = declared_order(pool.capacity, pool.spot)
        if "flex-start" in order[1:]:
            warnings.append(
                f"queues.pools[{index}].pool: pool {entry.pool} falls back along "
                f"{shown_order(order)}: Jobs its queue admits run on flex-start nodes whenever "
                f"{order[0]} has no room, and those nodes end at their maximum run duration "
                "with the Job on them, or are left when the earlier capacity has room again "
                "(the pods moved back up the list); not checked which capacity a Job lands "
                "on. Put flex-start first or drop it if admitted Jobs must run to the end"
            )
    return warnings


def resolved_problems(specs: Sequence[tuple[int, PoolSpec]]) -> list[Problem]:
    """What a pool's ResourceFlavor would carry beyond Kueue's limits, and a borrower's
    resources its lender's flavor does not cover."""
    problems: list[Problem] = []
    for index, spec in specs:
        if spec.queue is None:
            continue
        flavor = kueue.resource_flavor(spec)["spec"]
        for key, what, where in (
            ("nodeLabels", "labels a pod selects the pool by", "labels"),
            ("nodeTaints", "NoSchedule and NoExecute taints", "taints"),
        ):
            count = len(flavor.get(key, ()))
            if count > kueue.MAX_FLAVOR_ITEMS:
                problems.append(
                    Problem(
                        f"gpuPools[{index}].{where}",
                        f"a pool's Kueue ResourceFlavor takes at most "
                        f"{kueue.MAX_FLAVOR_ITEMS} {key}; this pool's nodes have {count} {what} "
                        "(with the cloud's own); use fewer",
                        count,
                    )
                )
    problems += _borrowing_problems(specs)
    return problems


def unqueued_pods_warnings(specs: Sequence[tuple[int, PoolSpec]]) -> list[str]:
    """A pool of `queues.pools` has no taint of the queue's own (its nodes keep the GPU taint
    every GPU pod tolerates): Kueue counts only the Jobs it admits (ResourceFlavor: it adds the
    flavor's node labels and tolerations to admitted pods only; manageJobsWithoutQueueName is
    off), so any other pod that selects the pool takes GPUs the quota still lends."""
    found: list[str] = []
    for index, spec in specs:
        queue = spec.queue
        if queue is None or queue.requested:
            continue
        found.append(
            f"gpuPools[{index}]: pods without the label kueue.x-k8s.io/queue-name="
            f"{queue.local_queue} (in namespace {' or '.join(queue.namespaces)}) can still "
            f"run on pool {spec.name} (its nodes carry no taint of the queue's own) and take "
            f"GPUs that ClusterQueue {queue.cluster_queue} counts as free: the Jobs it admits "
            "then stay Pending; run only queue-labelled Jobs there (`consumers` leaves the pool "
            "out of JupyterHub, FiftyOne and Flyte settings)"
        )
    return found


def ended_reservation_warnings(specs: Sequence[tuple[int, PoolSpec]]) -> list[str]:
    """A pool with a Kueue queue whose reservation ended (a Capacity Block past its end or in
    its drain window): its ClusterQueue's quota leaves those nodes out (kueue.quota_nodes), from
    the `pulumi up` of this plan on; Jobs admitted onto the block before stay Pending."""
    found: list[str] = []
    for index, spec in specs:
        queue, cap = spec.queue, spec.reservation_cap
        if queue is None or cap is None or not cap.ended_nodes:
            continue
        then = (
            f"its Jobs borrow pool {queue.borrow_from}'s unused quota"
            if queue.borrow_from
            else "its Jobs wait in the queue (no borrowFrom)"
        )
        found.append(
            f"gpuPools[{index}]: queue {queue.local_queue} (ClusterQueue {queue.cluster_queue}) "
            f"gets no quota from {cap.ended}, which has ended or drains today: its quota is "
            f"{queue.quota_nodes} nodes' worth from the next `pulumi up` and {then}; Jobs Kueue "
            "admitted onto the block before keep its quota with their pods Pending (Kueue's "
            "waitForPodsReady is off): delete them so they requeue"
        )
    return found


def _borrowing_problems(specs: Sequence[tuple[int, PoolSpec]]) -> list[Problem]:
    """A borrower's ClusterQueue lists the lender's flavor for the resources it covers itself
    (Kueue: every flavor of a resource group has the group's coveredResources), so the two pools'
    nodes must offer the same GPU resources, or the borrowed flavor never fits a Job."""
    problems: list[Problem] = []
    by_name = {spec.name: spec for _, spec in specs}
    for index, spec in specs:
        queue = spec.queue
        lender = by_name.get(queue.borrow_from or "") if queue is not None else None
        if queue is None or lender is None:
            continue
        own, theirs = sorted(spec.extended_resources), sorted(lender.extended_resources)
        if own != theirs:
            problems.append(
                Problem(
                    f"gpuPools[{index}]",
                    f"borrows from pool {lender.name} (queues.pools), whose nodes offer "
                    f"{', '.join(theirs) or 'no GPU resource'}, not {', '.join(own)}: a Job "
                    "asking for this pool's GPUs never fits the borrowed flavor; borrow from a "
                    "pool with the same GPU sharing (or none)",
                    lender.name,
                )
            )
    return problems
