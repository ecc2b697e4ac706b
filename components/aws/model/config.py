"""EKS's own config keys: `cluster.aws` and `gpuPools[].aws`, and what they expose."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from components.model import existing_cluster
from components.model.exposure import endpoint_warnings
from components.model.schema import ClusterConfig, ConfigModel, GpuPoolConfig, section


class CapacityReservationOptions(ConfigModel):
    """One On-Demand Capacity Reservation or Capacity Block a pool launches into (an entry of
    `gpuPools[].aws.capacityReservations`): its id, and what is known of it, as EC2's
    DescribeCapacityReservations shows it (checked against the pool where given)."""

    id: str
    instance_type: str | None = None
    zone: str | None = None
    # The reservation's instances (TotalInstanceCount): `fit` names it as the pool's cap.
    instance_count: int | None = Field(default=None, ge=1)
    # Capacity Blocks only: EndDate, ISO 8601 in UTC; `plan` warns as it nears.
    end_time: str | None = None


class AwsPoolOptions(ConfigModel):
    # self-managed: one auto scaling group per zone (default); managed: EKS managed node group.
    node_group: Literal["self-managed", "managed"] = "self-managed"
    ami_family: Literal["al2023", "bottlerocket"] = "al2023"
    # Karpenter only: a Spot pool may fall back to on-demand when Spot has no capacity.
    on_demand_fallback: bool = False
    # Karpenter only: also repack nodes that still run pods onto fewer or cheaper ones (drains
    # them: off by default, a training job would be restarted to save money).
    consolidate_underutilized: bool = False
    # Cluster autoscaler only: every zone's group may grow to this many nodes (instead of a
    # share of maxNodes), so a multi-node job can get its nodes in one zone (review eks-2.md N8).
    max_nodes_per_zone: int | None = Field(default=None, ge=1)
    # `capacity: reserved` / `capacity-block`: the reservations the pool launches into, by id
    # (components/aws/model/capacity.py has the rules), and (Karpenter) every reservation
    # carrying these tags.
    capacity_reservations: list[CapacityReservationOptions] | None = None
    capacity_reservation_tags: dict[str, str] | None = None
    # SOCI parallel pull and unpack of container images (components/aws/model/image_start.py):
    # unset takes the default of the pool's image family and kind (on for Bottlerocket,
    # off for AL2023, where nodeadm's gate is experimental).
    fast_image_pull: bool | None = None
    # Bottlerocket only: the EBS snapshot its data volume (/dev/xvdb) starts from, with the
    # container images preloaded (docs/eks.md, Fast image start).
    data_volume_snapshot: str | None = None


# Keys that mean something to one provisioner only (the others refuse them).
AUTOSCALER_ONLY_POOL_KEYS = ("node_group", "max_nodes_per_zone")
KARPENTER_ONLY_POOL_KEYS = ("on_demand_fallback", "consolidate_underutilized")


class AwsClusterOptions(ConfigModel):
    vpc_cidr: str = "10.0.0.0/16"
    private_subnet_ids: list[str] | None = None
    public_subnet_ids: list[str] | None = None
    # Cluster autoscaler expander (FACTS: priority,least-waste is the recommended pairing).
    autoscaler_expander: str = "priority,least-waste"
    # Who may reach the public API endpoint: required (no open default); [] keeps it private.
    public_endpoint_cidrs: list[str] | None = None
    # Kubernetes service range; nodeadm needs it to join (fixed at cluster creation).
    service_cidr: str = "172.20.0.0/16"
    # STANDARD: when a minor leaves standard support EKS upgrades the cluster; EXTENDED keeps it
    # at 6x the control-plane price. EKS defaults to EXTENDED when unset, so it is always set.
    support_type: Literal["STANDARD", "EXTENDED"] = "STANDARD"
    # IAM roles and users that administer the cluster besides whoever runs pulumi (a CI role,
    # teammates): access entries with AmazonEKSClusterAdminPolicy.
    admin_principal_arns: list[str] = Field(default_factory=list)
    # What brings GPU nodes up from zero: the cluster autoscaler with one auto scaling group per
    # pool and zone, Karpenter with one NodePool and EC2NodeClass per pool, or EKS Auto Mode
    # (AWS runs Karpenter) with one NodePool and NodeClass per pool.
    provisioner: Literal["cluster-autoscaler", "karpenter", "auto-mode"] = "cluster-autoscaler"
    # single: one NAT gateway for all zones (cheap); per-zone: one per zone (survives a zone outage).
    nat_gateways: Literal["single", "per-zone"] = "single"
    # The account's EKS quotas where raised through Service Quotas (unset: EKS's defaults, 30
    # managed node groups per cluster and 450 nodes per group; components/aws/model/quotas.py).
    managed_node_group_quota: int | None = Field(default=None, ge=1)
    nodes_per_managed_node_group_quota: int | None = Field(default=None, ge=1)
    # The account's raised VPC quota of security groups per network interface (unset: 5; at
    # most 16, Amazon VPC quotas), which a node's primary interface counts against.
    security_groups_per_interface_quota: int | None = Field(default=None, ge=1, le=16)


class AwsExistingOptions(ConfigModel):
    """EKS's own keys of `cluster.existing` (an adopted cluster). `components.model.config`
    adds them to that section, so they are written `cluster.existing.autoscalerInstalled` etc."""

    # A cluster autoscaler or Karpenter (cluster.aws.provisioner says which) already runs in the
    # cluster; gpufleet creates only what it needs to see the new pools, not a second one.
    autoscaler_installed: bool = False
    # With a Karpenter already installed: the node role that Karpenter's controller may pass to
    # the instances it launches (its IAM policy names it), by role name.
    karpenter_node_role: str | None = None
    # Security groups every gpufleet GPU node gets besides the cluster security group, for
    # clusters whose nodes reach CoreDNS and each other through a node security group of their
    # own (terraform-aws-modules/eks does not attach the cluster security group to nodes).
    node_security_group_ids: list[str] | None = None


def principal_slug(arn: str) -> str:
    """A short, stable name for an IAM principal's resources: its role or user name."""
    name = arn.rsplit("/", 1)[-1].lower()
    return "".join(c if c.isalnum() else "-" for c in name).strip("-")


def cluster_options(cluster: ClusterConfig) -> AwsClusterOptions:
    return section(cluster, "aws", AwsClusterOptions)


def existing_options(cluster: ClusterConfig) -> AwsExistingOptions:
    """EKS's keys of `cluster.existing` (their defaults when the cluster is not adopted)."""
    return section(cluster, existing_cluster.SECTION, AwsExistingOptions)


def pool_options(pool: GpuPoolConfig) -> AwsPoolOptions:
    return section(pool, "aws", AwsPoolOptions)


def exposure_warnings(cluster: ClusterConfig, adopted: bool) -> list[str]:
    """An EKS public endpoint open to the whole internet (review security-1 SEC-4; CIS EKS
    5.4.1-5.4.2). An adopted cluster's endpoint is its owner's: gpufleet does not set it."""
    key = None if adopted else "cluster.aws.publicEndpointCidrs"
    return endpoint_warnings(cluster, key, cluster_options(cluster).public_endpoint_cidrs, "EKS")
