"""How many nodes GKE lets a node pool and a cluster have, as rules on the stack's bounds.

Source: GKE docs, "Quotas and limits" (cloud.google.com/kubernetes-engine/quotas), "Limits per
cluster", GKE Standard: nodes per node pool zone 1,000; nodes per cluster 15,000, and "running
more than 5,000 nodes requires lifting a cluster size quota" (contact support). A pool's
`maxNodes` is its total over its zones (`totalMaxNodeCount`), so a pool of N zones can never
have more than 1,000 x N nodes: a larger bound is refused, naming the limit. The cluster-wide
figures are said, not refused: GKE accepts the pools, the autoscaler only stops at the cap, and
on an adopted cluster the owner's nodes count too (not known here).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

NODES_PER_POOL_ZONE: Final[int] = 1_000
NODES_PER_CLUSTER: Final[int] = 15_000
NODES_BEFORE_QUOTA_LIFT: Final[int] = 5_000
_SOURCE = "GKE quotas and limits, 'Nodes per node pool zone'"


def pool_problems(
    max_nodes: int, zones: Sequence[str] | None, path: str, key: str = "maxNodes"
) -> list[Problem]:
    """A pool bound more nodes than its zones can hold (none when its zones are not given:
    the zone checks say so)."""
    count = len(set(zones or ()))
    if not count or max_nodes <= NODES_PER_POOL_ZONE * count:
        return []
    return [
        Problem(
            f"{path}.{key}",
            f"GKE runs at most {NODES_PER_POOL_ZONE:,} nodes per node pool per zone ({_SOURCE}): "
            f"{count} zone(s) hold at most {NODES_PER_POOL_ZONE * count:,}; lower it, or add "
            "zones",
            max_nodes,
        )
    ]


def cluster_warnings(
    cluster: ClusterConfig, pools: Sequence[GpuPoolConfig], adopted: bool
) -> list[str]:
    """The stack's node bounds against GKE's per-cluster limits."""
    total = sum(pool.max_nodes for pool in pools)
    if adopted:
        what = "gpufleet's pools alone (the cluster's own nodes count too) may grow to"
    else:
        total += cluster.system_pool.max_nodes
        what = "the cluster's pools (the system pool's included) may grow to"
    if total > NODES_PER_CLUSTER:
        return [
            f"gpuPools[].maxNodes: {what} {total:,} nodes, more than the {NODES_PER_CLUSTER:,} "
            "nodes GKE runs in a cluster (GKE quotas and limits, 'Nodes per cluster'): the "
            "autoscaler stops at that cap"
        ]
    if total > NODES_BEFORE_QUOTA_LIFT:
        return [
            f"gpuPools[].maxNodes: {what} {total:,} nodes; more than "
            f"{NODES_BEFORE_QUOTA_LIFT:,} nodes in a cluster needs GKE's cluster size quota "
            "lifted (contact Google Cloud support; GKE quotas and limits, 'Nodes per cluster'): "
            "not checked"
        ]
    return []
