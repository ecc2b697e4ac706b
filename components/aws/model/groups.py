"""How a pool's node counts are split over the per-zone groups the cluster autoscaler scales.

The autoscaler scales auto scaling groups (and the groups behind managed node groups), one per
zone; its limits are per group, never per pool (kubernetes/autoscaler cluster-autoscaler FAQ:
`--nodes` and node group min/max; only `--max-nodes-total` spans groups, and it spans the whole
cluster). So a pool's `maxNodes` is split over its zones, each group getting a share, unless the
pool says `aws.maxNodesPerZone`: then every zone's group may grow to that many, so a multi-node
job can get all its nodes in one zone (review eks-2.md N8), and `maxNodes` must say what the
groups then add up to.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.model.problems import Problem
from components.model.schema import GpuPoolConfig


def zone_sizes(total: int, zones: Sequence[str]) -> dict[str, int]:
    """Split a pool-wide node count over its zones so the groups never exceed it together."""
    base, extra = divmod(total, len(zones))
    return {zone: base + (1 if index < extra else 0) for index, zone in enumerate(zones)}


def group_max_sizes(max_nodes: int, zones: Sequence[str], per_zone: int | None) -> dict[str, int]:
    """Each zone's group maximum: the zone's share of maxNodes, or maxNodesPerZone."""
    if per_zone is not None:
        return {zone: per_zone for zone in zones}
    return zone_sizes(max_nodes, zones)


def zone_capacity(max_nodes: int, zones: Sequence[str], per_zone: int | None) -> int:
    """The most nodes one zone of the pool can hold."""
    return max(group_max_sizes(max_nodes, zones, per_zone).values(), default=max_nodes)


def size_problems(
    pool: GpuPoolConfig, per_zone: int | None, zones: int, path: str
) -> list[Problem]:
    """One group per zone: each gets a share of maxNodes (at least one node: an auto scaling
    group of maxSize 0 is useless and an EKS managed node group refuses it, terraform-provider-aws
    node_group.go `max_size` IntAtLeast(1); review eks-2.md N2), or maxNodesPerZone each."""
    if not zones:
        return []
    if per_zone is None:
        if pool.max_nodes >= zones:
            return []
        return [
            Problem(
                f"{path}.maxNodes",
                f"must be at least the number of zones ({zones}): each zone's group gets a "
                "share of maxNodes and EKS refuses a node group of maxSize 0; raise it, list "
                "fewer zones, or set aws.maxNodesPerZone",
                pool.max_nodes,
            )
        ]
    if pool.max_nodes == per_zone * zones:
        return []
    return [
        Problem(
            f"{path}.maxNodes",
            f"with aws.maxNodesPerZone {per_zone} over {zones} zones the pool can reach "
            f"{per_zone * zones} nodes (the cluster autoscaler limits each zone's group, never "
            f"the pool); set maxNodes: {per_zone * zones}, or list fewer zones",
            pool.max_nodes,
        )
    ]
