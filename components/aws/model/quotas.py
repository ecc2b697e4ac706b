"""Service quotas a stack's nodes count against, checked before `pulumi up`: EKS's managed node
group quotas, and the VPC's security groups per network interface.

Under the cluster autoscaler a managed pool is one EKS managed node group per zone (S2-7), and
the cluster gpufleet creates has one more, the system group. EKS refuses CreateNodegroup past
the "Managed node groups per cluster" quota (ResourceLimitExceededException), halfway through an
`up`, and a group whose maximum passes "Nodes per managed node group" (review eks-3.md R3-2).

Sources: AWS General Reference, "Amazon Elastic Kubernetes Service endpoints and quotas"
(docs.aws.amazon.com/general/latest/gr/eks.html) and the EKS user guide, "View and manage Amazon
EKS and Fargate service quotas" (service-quotas.adoc): both adjustable, per cluster and per
group, with the Service Quotas codes below; defaults as read on 2026-11-28. An account's raised
value is not visible offline: a stack states it (`cluster.aws.managedNodeGroupQuota`,
`cluster.aws.nodesPerManagedNodeGroupQuota`, `cluster.aws.securityGroupsPerInterfaceQuota`).
Self-managed groups are plain auto scaling groups,
limited per region and account (500 by default, EC2 Auto Scaling quotas), which gpufleet cannot
count for the account: not checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from components.aws.model import config as aws_config
from components.aws.model.config import existing_options
from components.aws.model.fabric import fabric_group
from components.aws.model.groups import group_max_sizes
from components.aws.model.kinds import cluster_kind, pool_kind
from components.aws.model.kinds.managed import MANAGED
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig


@dataclass(frozen=True)
class Quota:
    default: int
    code: str  # the Service Quotas code (of `service`)
    name: str
    key: str  # the stack key that states a raised value (under cluster.aws)
    service: str = "eks"

    def request(self, needed: int, region: str) -> str:
        return (
            f"raise the quota (Service Quotas console, or `aws service-quotas "
            f"request-service-quota-increase --service-code {self.service} "
            f"--quota-code {self.code} "
            f"--desired-value {needed} --region {region}`) and, once granted, set "
            f"cluster.aws.{self.key}: {needed}"
        )


MANAGED_NODE_GROUPS: Final = Quota(
    30, "L-6D54EA21", "Managed node groups per cluster", "managedNodeGroupQuota"
)
NODES_PER_MANAGED_GROUP: Final = Quota(
    450, "L-BD136A63", "Nodes per managed node group", "nodesPerManagedNodeGroupQuota"
)
# Amazon VPC quotas (docs.aws.amazon.com/vpc/latest/userguide/amazon-vpc-limits.html, "Security
# groups"): "Security groups per network interface", default 5, adjustable up to 16; EC2 refuses
# to launch an instance whose interface names more (EC2 API ValidateSecurityGroupQuotasForInterface
# checks exactly this). Every node's primary interface carries the cluster security group and
# cluster.existing.nodeSecurityGroupIds, and a fabric node's also the pool's EFA group.
SECURITY_GROUPS_PER_INTERFACE: Final = Quota(
    5,
    "L-2AFB9258",
    "Security groups per network interface",
    "securityGroupsPerInterfaceQuota",
    service="vpc",
)


# The resource type each managed node group is in a plan (pulumi-aws aws.eks.NodeGroup).
NODE_GROUP_TYPE: Final = "aws:eks/nodeGroup:NodeGroup"


def concurrent_limits(cluster: ClusterConfig, adopted: bool) -> dict[str, dict[str, Any]]:
    """The managed-group quota for `diff`'s peak check: Pulumi creates a replacement (the
    system group's, by name prefix) and a renamed pool's groups before it deletes the old ones,
    so a stack at its quota passes it for a moment (review eks-4 N-1). On an adopted cluster
    the owner's groups count too, which only the program's live read sees: not given here."""
    if adopted:
        return {}
    limit = quota(cluster, MANAGED_NODE_GROUPS)
    return {
        NODE_GROUP_TYPE: {
            "limit": limit,
            "what": f"EKS managed node groups ('{MANAGED_NODE_GROUPS.name}' quota "
            f"{MANAGED_NODE_GROUPS.code})",
            "raise": MANAGED_NODE_GROUPS.request(limit + 1, cluster.region or "REGION"),
        }
    }


def quota(cluster: ClusterConfig, which: Quota) -> int:
    options = aws_config.cluster_options(cluster)
    stated = {
        MANAGED_NODE_GROUPS.key: options.managed_node_group_quota,
        NODES_PER_MANAGED_GROUP.key: options.nodes_per_managed_node_group_quota,
        SECURITY_GROUPS_PER_INTERFACE.key: options.security_groups_per_interface_quota,
    }[which.key]
    return stated or which.default


def security_group_problems(
    cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]], adopted: bool
) -> list[Problem]:
    """More security groups on a node's primary interface than the VPC quota allows: the
    cluster's, the adopted cluster's extra ones and, on a fabric pool, its EFA group."""
    extra = list(existing_options(cluster).node_security_group_ids or []) if adopted else []
    fabric = any(fabric_group(pool) is not None for _, pool in pools)
    count = 1 + len(extra) + int(fabric)
    limit = quota(cluster, SECURITY_GROUPS_PER_INTERFACE)
    if count <= limit:
        return []
    efa = ", and a fabric pool's EFA security group" if fabric else ""
    return [
        Problem(
            "cluster.existing.nodeSecurityGroupIds",
            f"puts {count} security groups on each node's primary network interface (the "
            f"cluster security group, the {len(extra)} listed here{efa}) where an interface may "
            f"have {limit} ('{SECURITY_GROUPS_PER_INTERFACE.name}' VPC quota "
            f"{SECURITY_GROUPS_PER_INTERFACE.code}, at most 16): EC2 would refuse every launch "
            f"of the pools' nodes. Drop {count - limit} of the ids, or "
            + SECURITY_GROUPS_PER_INTERFACE.request(count, cluster.region or ""),
            extra,
        )
    ]


def _managed(cluster: ClusterConfig, pool: GpuPoolConfig) -> bool:
    """Whether the pool is EKS managed node groups (one per zone, under EKS's quotas)."""
    return pool_kind(cluster, pool) is MANAGED


def gpu_groups(cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]]) -> list[str]:
    """The managed node groups gpufleet makes for the GPU pools, by name (`<pool>-<zone>`)."""
    if cluster_kind(cluster).node_pools:
        return []  # NodePools make no groups, whatever the pools say
    return [
        f"{pool.name}-{zone}"
        for _, pool in pools
        if _managed(cluster, pool)
        for zone in pool.zones or cluster.zones or []
    ]


def quota_problems(
    cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]], adopted: bool
) -> list[Problem]:
    """More managed groups than the cluster's quota, groups that may grow past theirs, and
    interfaces with more security groups than the VPC's quota."""
    problems = security_group_problems(cluster, pools, adopted)
    region = cluster.region or ""
    groups = gpu_groups(cluster, pools)
    # The system group: on a cluster gpufleet creates, under every provisioner.
    count = len(groups) + (0 if adopted else 1)
    limit = quota(cluster, MANAGED_NODE_GROUPS)
    if count > limit:
        per_pool = {
            pool.name: len(pool.zones or cluster.zones or [])
            for _, pool in pools
            if _managed(cluster, pool)
        }
        system = "" if adopted else " and the system group"
        problems.append(
            Problem(
                "gpuPools",
                f"needs {count} EKS managed node groups (one per managed pool and zone"
                f"{system}) where the cluster may have {limit} ('{MANAGED_NODE_GROUPS.name}' "
                f"quota {MANAGED_NODE_GROUPS.code}); "
                "CreateNodegroup would fail past it halfway through `pulumi up`. Put some pools "
                "on self-managed groups (aws.nodeGroup: self-managed), list fewer zones, or "
                + MANAGED_NODE_GROUPS.request(count, region),
                per_pool,
            )
        )
    per_group = quota(cluster, NODES_PER_MANAGED_GROUP)
    for index, pool in pools:
        if not _managed(cluster, pool):
            continue
        options = aws_config.pool_options(pool)
        zones = pool.zones or cluster.zones or []
        largest = max(group_max_sizes(pool.max_nodes, zones, options.max_nodes_per_zone).values())
        if largest > per_group:
            key = "aws.maxNodesPerZone" if options.max_nodes_per_zone else "maxNodes"
            value = options.max_nodes_per_zone or pool.max_nodes
            problems.append(
                _nodes_problem(f"gpuPools[{index}].{key}", largest, per_group, value, region)
            )
    if not adopted and cluster.system_pool.max_nodes > per_group:
        problems.append(
            _nodes_problem(
                "cluster.systemPool.maxNodes",
                cluster.system_pool.max_nodes,
                per_group,
                cluster.system_pool.max_nodes,
                region,
            )
        )
    return problems


def _nodes_problem(path: str, largest: int, limit: int, value: int, region: str) -> Problem:
    return Problem(
        path,
        f"lets one EKS managed node group grow to {largest} nodes where a group may have "
        f"{limit} ('{NODES_PER_MANAGED_GROUP.name}' quota {NODES_PER_MANAGED_GROUP.code}); EKS "
        "refuses a larger maxSize. Lower it, "
        "spread the pool over more zones, or " + NODES_PER_MANAGED_GROUP.request(largest, region),
        value,
    )


def adopted_warning(
    cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]]
) -> list[str]:
    """On a cluster gpufleet adopts, the owner's managed node groups count toward the same quota
    and are not in the stack: read while `pulumi preview` plans (components/aws/adopted.py),
    never offline."""
    groups = gpu_groups(cluster, pools)
    if not groups:
        return []
    return [
        f"gpuPools: not checked offline: the managed node groups cluster {cluster.name} already "
        f"has (its owner's) count toward EKS's '{MANAGED_NODE_GROUPS.name}' quota "
        f"({quota(cluster, MANAGED_NODE_GROUPS)}) with gpufleet's {len(groups)}; "
        "`pulumi preview` lists them (eks:ListNodegroups) and refuses the stack when together "
        "they exceed it"
    ]


def live_problem(
    cluster: ClusterConfig, planned: Sequence[str], running: Sequence[str]
) -> Problem | None:
    """The adopted cluster's groups as EKS lists them (`running`) and gpufleet's (`planned`,
    some of which may run already), against the quota."""
    owners = sorted(set(running) - set(planned))
    count = len(owners) + len(planned)
    limit = quota(cluster, MANAGED_NODE_GROUPS)
    if count <= limit:
        return None
    return Problem(
        "gpuPools",
        f"cluster {cluster.name} has {len(owners)} managed node groups of its owner's and "
        f"gpufleet adds {len(planned)}: {count} where the cluster may have {limit} "
        f"('{MANAGED_NODE_GROUPS.name}' quota {MANAGED_NODE_GROUPS.code}); put gpufleet's pools on self-managed groups "
        "(aws.nodeGroup: self-managed), list fewer zones, or "
        + MANAGED_NODE_GROUPS.request(count, cluster.region or ""),
        len(planned),
    )
