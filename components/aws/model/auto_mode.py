"""EKS Auto Mode, as data: the cluster's and nodes' IAM, and one NodeClass per GPU pool.

Sources (awsdocs/amazon-eks-user-guide at 4d52b4d, latest/ug/): the cluster role needs
AmazonEKSComputePolicy, AmazonEKSBlockStoragePolicy, AmazonEKSLoadBalancingPolicy and
AmazonEKSNetworkingPolicy beside AmazonEKSClusterPolicy, and may tag sessions
(security/iam-reference/auto-cluster-iam-role.adoc); the node role needs
AmazonEKSWorkerNodeMinimalPolicy and AmazonEC2ContainerRegistryPullOnly and must not be the
cluster's role (auto-create-node-role.adoc); a custom NodeClass's role needs an access entry of
type EC2 with the AmazonEKSAutoNodePolicy access policy, and user tags on the instances need
extra cluster-role permissions, so gpufleet sets none (automode/create-node-class.adoc); compute,
block storage and load balancing are enabled together (automode/auto-enable-existing.adoc) and
the cluster must not bootstrap self-managed add-ons (the AWS provider's aws_eks_cluster notes).
The NodeClass fields: role, subnetSelectorTerms, securityGroupSelectorTerms and ephemeralStorage
(create-node-class.adoc, "Node Class Specification"), and capacityReservationSelectorTerms for a
reserved pool (auto-odcr, below).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from components.aws.model.karpenter import selector_terms

CLUSTER_POLICIES = (
    "AmazonEKSComputePolicy",
    "AmazonEKSBlockStoragePolicy",
    "AmazonEKSLoadBalancingPolicy",
    "AmazonEKSNetworkingPolicy",
)
NODE_POLICIES = ("AmazonEKSWorkerNodeMinimalPolicy", "AmazonEC2ContainerRegistryPullOnly")
NODE_ACCESS_ENTRY_TYPE = "EC2"
NODE_ACCESS_POLICY = "AmazonEKSAutoNodePolicy"
NODE_CLASS_API_VERSION = "eks.amazonaws.com/v1"
NODE_CLASS_KIND = "NodeClass"
NODE_CLASS_GROUP = "eks.amazonaws.com"
# Auto Mode "enforces a 21-day maximum node lifetime" (automode/automode.adoc, Upgrades; the
# Security paragraph: "a maximum lifetime of 21 days (which you can reduce)"). Stated in every
# NodePool so nobody reads `Never` there: draining starts after 20 days (expireAfter), and a pod
# that blocks it is deleted after one more (terminationGracePeriod), within the 21 days (Karpenter
# v1 docs, concepts/disruption: the maximum node lifetime is the sum of the two). A job that needs
# longer cannot run on one Auto Mode node.
MAX_NODE_LIFETIME_HOURS = 21 * 24
# Reservations (docs.aws.amazon.com/eks/latest/userguide/auto-odcr.html, read 2026-11-28 in both
# versions AWS serves, and awsdocs/amazon-eks-user-guide latest/ug/automode/auto-odcr.adoc at
# 4f3d500): a NodeClass (`eks.amazonaws.com/v1`) selects ODCRs and Capacity Blocks with
# `capacityReservationSelectorTerms`, each term an `id`, or `tags` with an optional `owner`
# (account id; Karpenter's own EC2NodeClass spells it `ownerID`); its nodes carry
# `karpenter.sh/capacity-type: reserved` and "will be prioritized over on-demand and spot", and
# the page's NodePool example requires `karpenter.sh/capacity-type` In [reserved] ("Enable other
# capacity types: on-demand, spot"). Both versions warn: "If you configure
# capacityReservationSelectorTerms on a NodeClass in a cluster, EKS Auto Mode will no longer
# automatically use open ODCRs for any NodeClass in the cluster". Without terms, Auto Mode
# launches into open ODCRs through open matching, labelled on-demand and not preferred. AWS
# publishes no CRD of this NodeClass; the term keys are the page's example's (and AWS's own
# cdk-eks-blueprints AutoModeNodeClassSpec: id, owner, tags). gpufleet writes ids and tags only.
RESERVATION_TERM_KEYS = ("id", "tags", "owner")
RESERVATIONS_SOURCE = (
    "EKS user guide, auto-odcr (Control deployment of workloads into Capacity Reservations)"
)
NODE_LIFETIME = {"expireAfter": "480h", "terminationGracePeriod": "24h"}


def node_class_spec(
    *,
    node_role: str,
    disk_size_gb: int,
    subnet_ids: Sequence[str],
    security_group_ids: Sequence[str],
    capacity_reservations: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """A pool's NodeClass: its node role, the cluster's private subnets and node security groups
    (by id, as Karpenter's: `karpenter.selector_terms`), the pool's disk as the node's
    ephemeral storage, and the reservations its NodePool may launch into (none: the field is
    left out, so Auto Mode keeps using open ODCRs)."""
    return {
        "role": node_role,
        "subnetSelectorTerms": selector_terms(subnet_ids),
        "securityGroupSelectorTerms": selector_terms(security_group_ids),
        "ephemeralStorage": {"size": f"{disk_size_gb}Gi"},
        **(
            {"capacityReservationSelectorTerms": [dict(t) for t in capacity_reservations]}
            if capacity_reservations
            else {}
        ),
    }
