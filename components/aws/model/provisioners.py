"""The labels EKS's provisioners put on GPU nodes, and the rules the pool kinds share
(components/aws/model/kinds/ has each kind: self-managed groups, managed node groups,
Karpenter, EKS Auto Mode).

Auto Mode facts (awsdocs/amazon-eks-user-guide at 4d52b4d, latest/ug/automode/): its NodePools
take the well-known and `eks.amazonaws.com/instance-*` labels as requirements but not
`kubernetes.io/os` (create-node-pool.adoc); nodes carry `eks.amazonaws.com/compute-type: auto`;
a node runs at most 110 pods (create-node-class.adoc).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from components.aws.model import config as aws_config
from components.aws.model.config import existing_options
from components.model.capacity import declared_order
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

# EC2 security group ids: sg- and 8 or 17 hex digits (EC2 API reference, SecurityGroup).
SECURITY_GROUP_ID = re.compile(r"sg-([0-9a-f]{8}|[0-9a-f]{17})")
AUTO_MODE_COMPUTE_LABEL = "eks.amazonaws.com/compute-type"
AUTO_MODE_GPU_MANUFACTURER_LABEL = "eks.amazonaws.com/instance-gpu-manufacturer"
AUTO_MODE_GPU_COUNT_LABEL = "eks.amazonaws.com/instance-gpu-count"

# nodeadm labels a node with NVIDIA devices `nvidia.com/gpu.present=true` from kubelet 1.35
# (awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go, generateKubeletConfig, at
# 81fec2e8; nodeadm/doc/api-concepts.md lists it as "since 1.35").
NODEADM_GPU_LABEL = "nvidia.com/gpu.present"
NODEADM_GPU_LABEL_SINCE = (1, 35)
# EKS managed node groups label their nodes with the group's capacity type. The cluster
# autoscaler's template of a managed group at zero does not carry it: it takes the group's own
# labels from DescribeNodegroup plus a bare `capacityType` key (kubernetes/autoscaler
# cloudprovider/aws aws_wrapper.go getManagedNodegroupInfo at 017598c2, aws_manager.go
# buildNodeFromTemplate at 00a2c93c), so a pod selecting it never scales a group up from zero.
MANAGED_CAPACITY_LABEL = "eks.amazonaws.com/capacityType"
# The group's capacityType, which EKS puts on its nodes as that label (EKS API
# Nodegroup.capacityType: ON_DEMAND | SPOT | CAPACITY_BLOCK; a group on an On-Demand Capacity
# Reservation is ON_DEMAND with a launch template that targets it).
MANAGED_CAPACITY_TYPES = {"spot": "SPOT", "capacity-block": "CAPACITY_BLOCK"}
# gpufleet's own Spot label on the groups the cluster autoscaler scales (self-managed groups get
# no cloud label at all): declared, so it reaches the kubelet's --node-labels, a self-managed
# group's node-template tag and a managed group's labels, which the autoscaler reads at zero.
SPOT_LABEL = ("gpufleet.io/capacity-type", "spot")
# The cluster autoscaler's `--balancing-label`: groups are similar, and one scale-up is split
# between them, only when both carry it with the same value (cluster-autoscaler
# processors/nodegroupset/label_nodegroups.go areLabelsSame: a label missing on either node
# makes them not similar; cloudprovider/builder/cloud_provider_builder.go puts this comparator
# in place of AWS's own when the flag is set). A pool's zone groups carry it, valued the pool's
# name, so they are balanced; a pool with `aws.maxNodesPerZone` leaves it off, so the autoscaler
# never splits a scale-up over its zones and a multi-node job can get its nodes in one zone
# (review eks-3.md R3-4; before, the balancing label was gpufleet.io/pool, which every pool has).
BALANCING_LABEL = "gpufleet.io/balancing-group"


def zone_balanced(pool: GpuPoolConfig) -> bool:
    """Whether the autoscaler balances the pool's zone groups (a pool without maxNodesPerZone)."""
    return aws_config.pool_options(pool).max_nodes_per_zone is None


def nodeadm_labels_gpu(cluster: ClusterConfig, pool: GpuPoolConfig) -> bool:
    """Whether nodeadm labels the pool's nodes GPU-present (AL2023 images gpufleet chooses;
    Auto Mode's own image is not asked)."""
    if aws_config.pool_options(pool).ami_family != "al2023":
        return False
    major, minor = (int(part) for part in cluster.kubernetes_version.split(".")[:2])
    return (major, minor) >= NODEADM_GPU_LABEL_SINCE


def adopted_problems(
    cluster: ClusterConfig, *, cluster_compute: bool, installed_needs_node_role: bool
) -> list[Problem]:
    """What an adopted EKS cluster's `cluster.existing` keys need of the provisioner (whether
    the cluster's own compute launches nodes, whether an installed one needs its node role)."""
    existing = existing_options(cluster)
    problems = []
    if existing.autoscaler_installed and cluster_compute:
        problems.append(
            Problem(
                "cluster.existing.autoscalerInstalled",
                "EKS Auto Mode's node provisioning is AWS's, never installed; remove it",
                True,
            )
        )
    uses_role = existing.autoscaler_installed and installed_needs_node_role
    if uses_role and not existing.karpenter_node_role:
        problems.append(
            Problem(
                "cluster.existing.karpenterNodeRole",
                "is required with a Karpenter already installed: the name of the node role its "
                "controller may pass to instances (iam:PassRole), which has an access entry",
                has_value=False,
            )
        )
    groups = existing.node_security_group_ids
    if groups is not None and not groups:
        problems.append(
            Problem(
                "cluster.existing.nodeSecurityGroupIds",
                "must name at least one security group; leave it out when the cluster "
                "security group is all its nodes need",
                [],
            )
        )
    problems += [
        Problem(
            f"cluster.existing.nodeSecurityGroupIds[{index}]",
            "must be a security group id such as sg-0123456789abcdef0",
            group,
        )
        for index, group in enumerate(groups or [])
        if not SECURITY_GROUP_ID.fullmatch(group)
    ]
    if existing.karpenter_node_role and not uses_role:
        problems.append(
            Problem(
                "cluster.existing.karpenterNodeRole",
                "applies only with cluster.aws.provisioner karpenter and autoscalerInstalled: "
                "true (otherwise gpufleet creates the node role)",
                existing.karpenter_node_role,
            )
        )
    return problems


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


def provisioner_keys(
    pool: GpuPoolConfig, path: str, keys: Sequence[str], provisioner: str
) -> list[Problem]:
    """Pool keys set in the stack that only `provisioner` reads."""
    options = aws_config.pool_options(pool)
    return [
        Problem(
            f"{path}.aws.{_camel(key)}",
            f"applies only with cluster.aws.provisioner: {provisioner}; remove it",
            getattr(options, key),
        )
        for key in keys
        if key in options.model_fields_set
    ]


def managed_capacity_type(pool: GpuPoolConfig) -> str:
    """An EKS managed node group's capacityType for the pool."""
    return MANAGED_CAPACITY_TYPES.get(declared_order(pool.capacity, pool.spot)[0], "ON_DEMAND")
