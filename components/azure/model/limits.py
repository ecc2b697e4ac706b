"""AKS's limits on pools and nodes, checked before anything is created.

From AKS's "Service quotas and limits" (learn.microsoft.com/azure/aks/quotas-skus-regions, the
include container-service-limits.md of 2024-01-12): "Maximum nodes per node pool (Virtual
Machine Scale Sets node pools): 1000", "Maximum node pools per cluster: 100", "Maximum nodes per
cluster with Virtual Machine Scale Sets and Standard Load Balancer SKU: 5,000 across all node
pools". The agent pool API says the same of a pool's count ("Allowed values must be in the range
of 0 to 1000 (inclusive) for user pools and in the range of 1 to 1000 (inclusive) for system
pools": pulumi-azure-native 3.29 AgentPool.count, API 2025-09-01). None of them is raised on
request. Other AKS limits live with what they limit: pool names (cloud.py), the node resource
group's name (cluster_checks.py), the system pool's deployment name (../system_pool.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

MAX_NODES_PER_POOL: Final = 1000
MAX_POOLS_PER_CLUSTER: Final = 100
MAX_NODES_PER_CLUSTER: Final = 5000
_SOURCE = "aks/quotas-skus-regions"


def pool_limit_problems(pool: GpuPoolConfig, path: str) -> list[Problem]:
    """A GPU pool's bounds within what one AKS pool can hold."""
    if pool.max_nodes <= MAX_NODES_PER_POOL:
        return []
    return [
        Problem(
            f"{path}.maxNodes",
            f"AKS holds at most {MAX_NODES_PER_POOL} nodes in a pool ({_SOURCE}); lower it, or "
            "split the nodes over several pools",
            pool.max_nodes,
        )
    ]


def system_pool_problems(cluster: ClusterConfig) -> list[Problem]:
    """The system pool's bounds within what one AKS pool can hold."""
    if cluster.system_pool.max_nodes <= MAX_NODES_PER_POOL:
        return []
    return [
        Problem(
            "cluster.systemPool.maxNodes",
            f"AKS holds at most {MAX_NODES_PER_POOL} nodes in a pool ({_SOURCE}); lower it",
            cluster.system_pool.max_nodes,
        )
    ]


def pools_problems(pools: Sequence[tuple[int, GpuPoolConfig]]) -> list[Problem]:
    """The GPU pools and the cluster's System pool (one at least, on an adopted cluster too)
    within AKS's pools per cluster; an adopted cluster's own pools are counted when the program
    reads it (components/azure/model/adopted.py)."""
    allowed = MAX_POOLS_PER_CLUSTER - 1
    if len(pools) <= allowed:
        return []
    return [
        Problem(
            "gpuPools",
            f"{len(pools)} GPU pools and the system pool make {len(pools) + 1} pools, and AKS "
            f"holds at most {MAX_POOLS_PER_CLUSTER} in a cluster ({_SOURCE}); keep at most "
            f"{allowed} GPU pools, or put the others in another stack's cluster",
            f"{len(pools)} pools",
        )
    ]


def cluster_node_warnings(
    cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]]
) -> list[str]:
    """The pools' bounds against the nodes AKS runs in one cluster."""
    total = cluster.system_pool.max_nodes + sum(pool.max_nodes for _, pool in pools)
    if total <= MAX_NODES_PER_CLUSTER:
        return []
    return [
        f"gpuPools[].maxNodes: with cluster.systemPool.maxNodes they add up to {total} nodes, "
        f"and AKS runs at most {MAX_NODES_PER_CLUSTER} in a cluster ({_SOURCE}): the autoscaler "
        "cannot grow the pools past that all at once; whether AKS refuses such bounds is not "
        "checked"
    ]
