"""The stack's pools, resolved by their cloud: config + catalog -> what every node looks like."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from components.model import kueue
from components.model.capacity import PoolQueue
from components.model.fabric_resolution import with_fabric
from components.model.labels import (
    ACCELERATOR_LABEL,
    DEVICE_PLUGIN_CONFIG_LABEL,
    GPU_RESOURCE,
    MIG_CONFIG_LABEL,
    POOL_LABEL,
)
from components.model.managed_cloud import ManagedCloud
from components.model.pool_spec import PoolSpec, Taint
from components.model.registry import CLOUDS, cloud_of, software_platform
from components.model.schema import GpuPoolConfig, StackConfig

__all__ = [
    "ACCELERATOR_LABEL",
    "DEVICE_PLUGIN_CONFIG_LABEL",
    "GPU_RESOURCE",
    "GPU_TAINTS",
    "MIG_CONFIG_LABEL",
    "POOL_LABEL",
    "SYSTEM_MACHINE_SHAPES",
    "PoolSpec",
    "Taint",
    "resolve_pool",
    "resolve_pools",
    "system_pool",
]

# The GPU taint of each cloud that creates GPU pools, and the CPU machine shapes of their
# system pools (views over the registry, for checks that span clouds).
GPU_TAINTS: Mapping[str, tuple[str, str]] = {
    name: cloud.gpu_taint for name, cloud in CLOUDS.items() if isinstance(cloud, ManagedCloud)
}
SYSTEM_MACHINE_SHAPES: Mapping[str, tuple[int, float]] = {
    machine: shape
    for cloud in CLOUDS.values()
    if isinstance(cloud, ManagedCloud)
    for machine, shape in cloud.system_machine_shapes.items()
}


def resolve_pools(config: StackConfig) -> list[PoolSpec]:
    """Every GPU pool of the stack, resolved (config order)."""
    return [resolve_pool(config, pool) for pool in config.gpu_pools]


def resolve_pool(config: StackConfig, pool: GpuPoolConfig) -> PoolSpec:
    """The pool as its cloud resolves it, with how it gets capacity: the order, a queued pool's
    Kueue queue, and the cap a reservation puts on it (the answers of the pool's kind)."""
    cloud = cloud_of(config)
    spec = with_fabric(cloud, config, pool, cloud.resolve_pool(config, pool))
    kind = cloud.pool_kind(config.cluster, pool)
    order = kind.capacity_order(pool)
    cap = kind.reservation_cap(config, pool)
    provisioning = kind.provisioning_class(config.cluster, pool) if "queued" in order else None
    return replace(
        spec,
        capacity=order,
        queue=_pool_queue(config, pool, provisioning, kueue.quota_nodes(pool, order, cap)),
        reservation_cap=cap,
        # The API server's: on a cluster gpufleet did not create, its distribution's (GKE,
        # EKS, AKS), else not known.
        extended_resource_toleration=software_platform(config).extended_resource_toleration.runs,
    )


def _pool_queue(
    config: StackConfig, pool: GpuPoolConfig, provisioning: str | None, quota_nodes: int
) -> PoolQueue | None:
    """The pool's Kueue queue: a queued pool's (with its ProvisioningRequest class; the config
    checks refuse a queued pool without one), or one `queues.pools` names, in a cohort with the
    pool it borrows from, or with the pools that borrow from it."""
    named = {entry.pool: entry for entry in config.queues.pools}
    if provisioning is None and pool.name not in named:
        return None
    entry = named.get(pool.name)
    lender = entry.borrow_from if entry is not None else None
    lends = any(other.borrow_from == pool.name for other in config.queues.pools)
    cohort_of = lender or (pool.name if lends else None)
    return PoolQueue(
        local_queue=pool.name,
        cluster_queue=kueue.cluster_queue_name(pool.name),
        namespaces=tuple(config.queues.namespaces),
        provisioning_class=provisioning,
        quota_nodes=quota_nodes,
        cohort=kueue.cohort_name(cohort_of) if cohort_of is not None else None,
        borrow_from=lender,
    )


def system_pool(config: StackConfig) -> PoolSpec | None:
    """The CPU system pool every managed cluster keeps (>= 1 node); None on existing clusters."""
    return cloud_of(config).system_pool(config)
