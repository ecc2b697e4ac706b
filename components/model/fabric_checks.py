"""The checks of `gpuPools[].interconnect: fabric`, for every cloud alike.

A fabric pool needs a machine type with a GPU network (`Cloud.fabric_facts`), all its machine
types on the same kind of fabric (a job runs one NCCL transport), and exactly one zone: a
cluster placement group, a compact placement policy and an InfiniBand scale set each live in
one zone, and NCCL between zones would leave the fabric. The pool's kind adds what its
provisioner cannot build (`PoolKind.fabric_problems`).
"""

from __future__ import annotations

from components.model.cloud import Cloud
from components.model.fabric import FABRIC_MIN_NODES, FabricFacts
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig


def fabric_machine_types(cloud: Cloud, accelerator: str | None = None) -> list[str]:
    """The cloud's catalog machine types that have a GPU fabric (of `accelerator`'s, if
    given), in catalog order, each once."""
    names: list[str] = []
    for machine in cloud.catalog.rows:
        if accelerator is not None and machine.gpu != accelerator:
            continue
        if machine.name not in names and cloud.fabric_facts(machine.name) is not None:
            names.append(machine.name)
    return names


def pool_machine_names(cloud: Cloud, pool: GpuPoolConfig) -> tuple[str, list[str]]:
    """The key the pool names its machine types under, and the names (the catalog's default
    when it names none)."""
    if pool.machine_types is not None:
        return "machineTypes", list(pool.machine_types)
    default = cloud.catalog.defaults.get(pool.accelerator)
    return "machineType", [pool.machine_type or default or ""]


def pool_zones(cluster: ClusterConfig, pool: GpuPoolConfig) -> tuple[str, tuple[str, ...]]:
    """Where the pool's zones come from (its own key or the cluster's) and the zones."""
    if pool.zones:
        return "own", tuple(pool.zones)
    return "cluster", tuple(cluster.zones or ())


def _offered_where(cloud: Cloud) -> str:
    known = fabric_machine_types(cloud)
    if not known:
        return f"no machine type gpufleet knows on {cloud.name} has one"
    return f"machine types with one on {cloud.name}: {', '.join(known)}"


def fabric_problems(
    cloud: Cloud, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
) -> list[Problem]:
    """Why the pool cannot have `interconnect: fabric` (none: it can, or it asks none)."""
    if pool.interconnect != "fabric":
        return []
    problems: list[Problem] = []
    key, names = pool_machine_names(cloud, pool)
    facts: dict[str, FabricFacts] = {}
    missing: list[str] = []
    for name in names:
        found = cloud.fabric_facts(name)
        if found is None:
            missing.append(name)
        else:
            facts[name] = found
    if missing:
        problems.append(
            Problem(
                f"{path}.interconnect",
                f"fabric needs a machine type with a GPU network, and {', '.join(missing)} "
                f"has none ({_offered_where(cloud)}); set {path}.{key} to one of them, or "
                "interconnect: none",
                pool.interconnect,
            )
        )
    kinds = sorted({f.kind for f in facts.values()})
    if len(kinds) > 1:
        each = ", ".join(f"{name}: {f.kind}" for name, f in facts.items())
        problems.append(
            Problem(
                f"{path}.{key}",
                f"the machine types of a fabric pool must share one fabric kind ({each}): a job "
                "runs one NCCL transport across all its nodes; split them into one pool per "
                "fabric kind",
                names,
            )
        )
    source, zones = pool_zones(cluster, pool)
    if len(zones) != 1:
        where = f"{path}.zones" if source == "own" or not zones else "cluster.zones"
        inherited = " (the pool inherits cluster.zones)" if source == "cluster" and zones else ""
        problems.append(
            Problem(
                where,
                f"a fabric pool runs in exactly one zone{inherited}: its placement and its "
                f"GPU network do not span zones; set {path}.zones to one zone where "
                f"{', '.join(names)} is offered",
                list(zones),
                has_value=bool(zones),
            )
        )
    problems += cloud.pool_kind(cluster, pool).fabric_problems(cluster, pool, path)
    return problems


def fabric_warnings(pool: GpuPoolConfig, path: str) -> list[str]:
    """What `plan` says of a fabric pool that cannot use its fabric: fewer than
    `FABRIC_MIN_NODES` nodes (the fabric links nodes, and `samples` prints no NCCL test)."""
    if pool.interconnect != "fabric" or pool.max_nodes >= FABRIC_MIN_NODES:
        return []
    return [
        f"{path}.maxNodes: {pool.max_nodes}: a fabric carries traffic between nodes, so a pool "
        f"of fewer than {FABRIC_MIN_NODES} nodes gains nothing from interconnect: fabric, and "
        f"`samples` prints no NCCL test for it; raise maxNodes to {FABRIC_MIN_NODES} or more, "
        "or set interconnect: none"
    ]
