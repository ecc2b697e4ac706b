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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from components.model.problems import Problem
from components.model.schema import GpuPoolConfig


def zone_sizes(total: int, zones: Sequence[str]) -> dict[str, int]:
    """Split a pool-wide node count over its zones so the groups never exceed it together
    (none: no zones yet, which `cluster.zones` refuses with its own message)."""
    if not zones:
        return {}
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


# EKS managed node groups: label keys (prefix included) and values 1-63, taint keys and values
# at most 63 (EKS API UpdateLabelsPayload, NodegroupTaint; review eks.md S1-3).
MANAGED_LABEL_MAX = 63


def managed_group_limits(pool: GpuPoolConfig, path: str) -> list[Problem]:
    problems = []
    # One group per zone, named <pool>-<zone>; EKS takes node group names of 1-63 characters.
    longest = max((len(zone) for zone in pool.zones or []), default=0)
    if len(pool.name) + 1 + longest > MANAGED_LABEL_MAX:
        problems.append(
            Problem(
                f"{path}.name",
                f"at most {MANAGED_LABEL_MAX - 1 - longest} characters for an EKS managed pool: "
                "each zone's node group is named <pool>-<zone>, at most "
                f"{MANAGED_LABEL_MAX} characters",
                pool.name,
            )
        )
    for key, value in pool.labels.items():
        if len(key) > MANAGED_LABEL_MAX:
            problems.append(
                Problem(
                    f"{path}.labels.{key}",
                    f"EKS managed node groups take label keys of at most {MANAGED_LABEL_MAX} "
                    "characters, prefix included",
                    key,
                )
            )
        if not value:
            problems.append(
                Problem(
                    f"{path}.labels.{key}",
                    "EKS managed node groups take no empty label value",
                    value,
                )
            )
    for index, taint in enumerate(pool.taints):
        if not taint.value:
            # The autoscaler reads a managed group's taints at zero as `<value>:<Effect>` tags
            # (getManagedNodegroupTaints); an empty value drops the taint from its template, so
            # it would scale up for pods the node then refuses (review eks.md S2).
            problems.append(
                Problem(
                    f"{path}.taints[{index}].value",
                    "EKS managed node groups need a taint value for the autoscaler to see the "
                    "taint at zero nodes",
                    taint.value,
                )
            )
        if len(taint.key) > MANAGED_LABEL_MAX:
            problems.append(
                Problem(
                    f"{path}.taints[{index}].key",
                    f"EKS managed node groups take taint keys of at most {MANAGED_LABEL_MAX} "
                    "characters, prefix included",
                    taint.key,
                )
            )
    return problems


# The bounds gpufleet last sent a managed group, as a tag on the group (read back with it):
# Pulumi sends the scaling config when the config's bounds differ from those in its state, and
# the live bounds alone do not show that (bounds changed in the console to what the config now
# says would look unchanged while Pulumi still sends its state's stale desired size).
APPLIED_BOUNDS_TAG = "gpufleet.io/scaling-bounds"


def applied_bounds_tag(min_size: int, max_size: int) -> dict[str, str]:
    return {APPLIED_BOUNDS_TAG: f"{min_size}-{max_size}"}


def applied_bounds(tags: Mapping[str, str]) -> tuple[int, int] | None:
    """The bounds a group's tag says gpufleet last sent (None: no tag, or not gpufleet's form)."""
    low, _, high = tags.get(APPLIED_BOUNDS_TAG, "").partition("-")
    return (int(low), int(high)) if low.isdigit() and high.isdigit() else None


@dataclass(frozen=True)
class LiveScaling:
    """A managed node group's scaling config as EKS reports it, read while the program plans,
    with the bounds gpufleet last sent it (its APPLIED_BOUNDS_TAG; None when it has none)."""

    min_size: int
    max_size: int
    desired_size: int
    applied: tuple[int, int] | None = None


@dataclass(frozen=True)
class ScalingToSend:
    """What gpufleet gives a managed node group's scalingConfig, and whether desiredSize is
    left out of the update (ignoreChanges)."""

    min_size: int
    max_size: int
    desired_size: int
    ignore_desired: bool


def scaling_to_send(min_size: int, max_size: int, live: LiveScaling | None) -> ScalingToSend:
    """The scaling config for a managed group, so `pulumi up` never resets what the autoscaler
    chose.

    terraform-provider-aws sends the whole scaling config, desiredSize included, whenever any
    of it changes (internal/service/eks/node_group.go resourceNodeGroupUpdate and
    expandNodegroupScalingConfig), and an ignored desiredSize is the value in Pulumi's state
    (the creation-time minimum unless someone refreshed), not the live one. So:

    - a group that does not exist yet starts at its minimum, and desiredSize is ignored after;
    - an existing group whose bounds stay (live, and as gpufleet last sent them: its
      APPLIED_BOUNDS_TAG) keeps desiredSize ignored: nothing of the scaling config is sent, so
      nothing races the autoscaler;
    - an existing group whose bounds change, were changed outside gpufleet, or carry no tag
      (made by an earlier gpufleet) gets its live desired size, clamped to the new bounds (EKS
      refuses a desired size outside them), and desiredSize is sent.
    """
    if live is None:
        return ScalingToSend(min_size, max_size, min_size, ignore_desired=True)
    desired = max(min_size, min(max_size, live.desired_size))
    bounds = (min_size, max_size)
    bounds_change = (live.min_size, live.max_size) != bounds or live.applied != bounds
    return ScalingToSend(min_size, max_size, desired, ignore_desired=not bounds_change)
