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
(create-node-class.adoc, "Node Class Specification").
"""

from __future__ import annotations

from collections.abc import Sequence
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
# Reservations (docs.aws.amazon.com/eks/latest/userguide/auto-odcr.html, read 2026-11-28): a
# NodeClass may select ODCRs and Capacity Blocks (`capacityReservationSelectorTerms`), and its
# nodes then carry `karpenter.sh/capacity-type: reserved`, tried before on-demand and Spot; but
# once any NodeClass of the cluster has such terms, Auto Mode stops using open ODCRs for every
# NodeClass ("If you configure capacityReservationSelectorTerms on a NodeClass in a cluster, EKS
# Auto Mode will no longer automatically use open ODCRs for any NodeClass in the cluster"), and
# AWS publishes no CRD of its NodeClass to validate terms against (the page's example only).
# Without terms, Auto Mode launches into open ODCRs through open matching, labelled on-demand and
# not preferred. gpufleet refuses `reserved` and `capacity-block` here until it can validate the
# NodeClass (components/aws/model/kinds/auto_mode.py says what to do instead).
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
) -> dict[str, Any]:
    """A pool's NodeClass: its node role, the cluster's private subnets and node security groups
    (by id, as Karpenter's: `karpenter.selector_terms`), and the pool's disk as the node's
    ephemeral storage."""
    return {
        "role": node_role,
        "subnetSelectorTerms": selector_terms(subnet_ids),
        "securityGroupSelectorTerms": selector_terms(security_group_ids),
        "ephemeralStorage": {"size": f"{disk_size_gb}Gi"},
    }
