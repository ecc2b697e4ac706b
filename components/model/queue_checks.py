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
from components.model.capacity import declared_order, written_order
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


def _shape_known(cloud: Cloud, pool: GpuPoolConfig) -> bool:
    """Whether the pool's node cpu and memory are known (its cloud's catalog, or a catalog
    machine type it names), to size the ClusterQueue's quota."""
    if cloud.catalog.machines_for(pool.accelerator):
        return True
    names = set(pool.machine_types or ([pool.machine_type] if pool.machine_type else []))
    return any(machine.name in names for machine in all_machine_types())


def pool_problems(cloud: Cloud, pool: GpuPoolConfig, path: str) -> list[Problem]:
    """A queued pool's own rules (names and node shape)."""
    problems: list[Problem] = []
    if len(pool.name) > kueue.MAX_POOL_NAME:
        problems.append(
            Problem(
                f"{path}.name",
                f"a queued pool's name takes at most {kueue.MAX_POOL_NAME} characters: its "
                f"Kueue objects are named {kueue.PREFIX}<name>, at most "
                f"{kueue.MAX_OBJECT_NAME}",
                pool.name,
            )
        )
    if not _shape_known(cloud, pool):
        problems.append(
            Problem(
                f"{path}.machineType",
                "a queued pool's ClusterQueue quota is maxNodes x a node's cpu and memory: name "
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
    queued = [(index, pool) for index, pool in pools if is_queued(pool)]
    if cloud is not None:
        for index, pool in queued:
            problems += pool_problems(cloud, pool, f"gpuPools[{index}]")
    if queues is None:
        return problems
    if written and not queued:
        problems.append(
            Problem(
                "queues",
                "applies to queued pools only and no pool has capacity: queued; remove it",
                has_value=False,
            )
        )
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
    gpufleet creates them only on its own clusters (never touching what it did not create)."""
    if not any(is_queued(pool) for pool in pools) or creates_cluster(cloud, cluster):
        return []
    needed = [ns for ns in queues.namespaces if ns not in kueue.INITIAL_NAMESPACES]
    if not needed:
        return []
    return [
        f"queues.namespaces: {', '.join(needed)} must exist on the cluster before `pulumi up` "
        "(not checked): the API server refuses a LocalQueue in a namespace that does not exist, "
        "and gpufleet creates namespaces only on clusters it creates; create them with "
        "`kubectl create namespace <name>` if they are new"
    ]


def resolved_problems(specs: Sequence[tuple[int, PoolSpec]]) -> list[Problem]:
    """What a queued pool's ResourceFlavor would carry beyond Kueue's limits."""
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
                        f"a queued pool's Kueue ResourceFlavor takes at most "
                        f"{kueue.MAX_FLAVOR_ITEMS} {key}; this pool's nodes have {count} {what} "
                        "(with the cloud's own); use fewer",
                        count,
                    )
                )
    return problems
