"""EKS as gpufleet sees it: names, zones, the autoscaler's limits and GPU node labels.

Sources: ../shared/reference/FACTS.md (EKS section), the EKS user guide and the
cluster-autoscaler AWS provider documentation it cites.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any, ClassVar, Literal

from components.aws.model import allocatable as aws_allocatable
from components.aws.model import (
    asg_limits,
    capacity,
    capacity_checks,
    groups,
    prices,
    provisioners,
    quotas,
    version_rules,
    versions,
)
from components.aws.model import config as aws_config
from components.aws.model import daemonsets as aws_daemonsets
from components.aws.model import node_effects as aws_node_effects
from components.aws.model import offerings as aws_offerings
from components.aws.model import resources as aws_resources
from components.aws.model.asg_limits import ACCELERATOR_LABEL
from components.aws.model.catalog import CATALOG, MACHINE_NAMES
from components.model.allocatable import NodeAllocatable
from components.model.capacity import CapacityOrder, ReservationCap
from components.model.catalog.gpus import GpuModel, MachineType
from components.model.catalog.provisioning import BEST_EFFORT_ATOMIC
from components.model.cloud import NameRule
from components.model.daemonsets import NodeDaemonSet
from components.model.lifecycle import Assessment
from components.model.managed_cloud import GpuNodeFacts, ManagedCloud, SharingVia
from components.model.networks import cidr_list_problems
from components.model.offerings import Offerings
from components.model.problems import Problem
from components.model.schema import (
    ClusterConfig,
    GpuPoolConfig,
    GpuSoftwareConfig,
    SoftwareMode,
    StackConfig,
)

# Expanders cluster-autoscaler knows (FAQ "What are Expanders?").
AUTOSCALER_EXPANDERS = ("random", "most-pods", "least-waste", "price", "priority", "least-nodes")
IAM_PRINCIPAL_ARN = re.compile(
    r"arn:aws(-cn|-us-gov)?:iam::[0-9]{12}:(role|user)/[\w+=,.@/-]{1,512}"
)


class Aws(ManagedCloud):
    name = "aws"
    version_lifecycle = versions.LIFECYCLE
    cluster_options = aws_config.AwsClusterOptions
    adopts_clusters = True
    resource_knowledge = aws_resources.RESOURCES
    node_effects = aws_node_effects.NODE_EFFECTS
    control_plane_version = aws_node_effects.CONTROL_PLANE_VERSION
    version_bump_effects = aws_node_effects.VERSION_BUMP_EFFECTS
    removal_effects = aws_node_effects.REMOVAL_EFFECTS
    split_from_roll = aws_node_effects.SPLIT_FROM_ROLL
    existing_options = aws_config.AwsExistingOptions
    # Where the GPU nodes go, what brings them up, and how gpufleet's own autoscaler expands.
    adopted_cluster_keys = (
        "private_subnet_ids",
        "provisioner",
        "autoscaler_expander",
        "managed_node_group_quota",
        "nodes_per_managed_node_group_quota",
    )
    pool_options = aws_config.AwsPoolOptions
    stack_module = "components.aws.stack"
    catalog = CATALOG
    pool_name_rule = NameRule(
        r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
        "EKS: 1-63 of a-z 0-9 -, starting and ending alphanumeric",
    )
    cluster_name_rule = NameRule(
        r"^[a-zA-Z0-9][-a-zA-Z0-9_]{0,99}$", "EKS: 1-100 of A-Z a-z 0-9 - _"
    )
    region_rule = NameRule(r"^[a-z]{2}(-gov)?-[a-z]+-[0-9]$", "an AWS region such as us-east-1")
    distribution = "eks"
    gpu_taint = ("nvidia.com/gpu", "true")
    default_system_machine = "m6i.large"
    pricing = prices.PRICING
    machine_name_rule = MACHINE_NAMES
    system_disk_size_gb = 50
    system_machine_shapes: ClassVar[Mapping[str, tuple[int, float]]] = {
        "m6i.large": (2, 8),
        "m6i.xlarge": (4, 16),
        "m6i.2xlarge": (8, 32),
    }
    several_machine_types = True
    accelerator_label = ACCELERATOR_LABEL
    offerings: ClassVar[Offerings] = aws_offerings
    # Reservations and Capacity Blocks under Karpenter and the autoscaler's node groups, queued
    # pools under the autoscaler (components/aws/model/capacity.py says which where).
    capacity_orders = capacity.EVERY_ORDER

    # --- capacity (components/aws/model/capacity.py) ---------------------------------------

    def supported_capacity(
        self, cluster: ClusterConfig, pool: GpuPoolConfig
    ) -> tuple[CapacityOrder, ...]:
        return capacity.supported_orders(cluster)

    def unsupported_capacity_advice(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder
    ) -> str:
        return capacity.unsupported_advice(cluster, pool, order)

    def check_capacity(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder, path: str
    ) -> list[Problem]:
        return capacity_checks.check(cluster, pool, order, path)

    def capacity_warnings(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str, today: date
    ) -> list[str]:
        return capacity.warnings(cluster, pool, path, today)

    def provisioning_class(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> str | None:
        # gpufleet's cluster autoscaler, started for ProvisioningRequests (provisioning_requests).
        if provisioners.launches_per_pod(cluster):
            return None
        return BEST_EFFORT_ATOMIC.name

    def reservation_cap(self, config: StackConfig, pool: GpuPoolConfig) -> ReservationCap | None:
        return capacity.reservation_cap(pool)

    def zone_rule(self, region: str) -> NameRule:
        return NameRule(rf"{re.escape(region)}[a-z]", f"{region}<letter>")

    def node_allocatable(
        self, machine: str, vcpus: int, memory_gib: float, disk_size_gb: int
    ) -> NodeAllocatable | None:
        return aws_allocatable.node_allocatable(machine, vcpus, memory_gib, disk_size_gb)

    def node_daemonsets(
        self, config: StackConfig, pool: GpuPoolConfig | None
    ) -> tuple[NodeDaemonSet, ...]:
        return aws_daemonsets.node_daemonsets()

    def version_problems(self, cluster: ClusterConfig, verdict: Assessment) -> list[Problem]:
        return version_rules.version_problems(cluster, verdict, adopted=self.adopted(cluster))

    def version_advice(self, cluster: ClusterConfig, verdict: Assessment) -> str:
        return version_rules.version_advice(cluster, verdict, adopted=self.adopted(cluster))

    def cluster_warnings(self, cluster: ClusterConfig) -> list[str]:
        return aws_config.exposure_warnings(cluster, self.adopted(cluster))

    def check_cluster(self, cluster: ClusterConfig) -> list[Problem]:
        """Zones, network ranges, subnets and the autoscaler expander of an EKS cluster."""
        aws = aws_config.cluster_options(cluster)
        problems = []
        problems += provisioners.cluster_problems(cluster)
        if self.adopted(cluster):
            problems += provisioners.adopted_problems(cluster)
        if not cluster.zones:
            problems.append(
                Problem(
                    "cluster.zones",
                    "is required on aws (the VPC spans these zones), e.g. [us-east-1a, us-east-1b]",
                    has_value=False,
                )
            )
        if aws.private_subnet_ids is not None and not aws.private_subnet_ids:
            problems.append(Problem("cluster.aws.privateSubnetIds", "must not be empty", []))
        ranges: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for key, cidr, max_prefix in (
            ("vpcCidr", aws.vpc_cidr, 20),
            ("serviceCidr", aws.service_cidr, 24),
        ):
            try:
                network = ipaddress.ip_network(cidr)
            except ValueError:
                problems.append(
                    Problem(f"cluster.aws.{key}", "must be an IPv4 CIDR such as 10.0.0.0/16", cidr)
                )
                continue
            if network.version != 4 or not 12 <= network.prefixlen <= max_prefix:
                problems.append(
                    Problem(
                        f"cluster.aws.{key}",
                        f"must be an IPv4 CIDR from /12 to /{max_prefix}",
                        cidr,
                    )
                )
            else:
                ranges.append(network)
        if len(ranges) == 2 and ranges[0].overlaps(ranges[1]):
            problems.append(
                Problem(
                    "cluster.aws.serviceCidr",
                    f"must not overlap vpcCidr {aws.vpc_cidr}",
                    aws.service_cidr,
                )
            )
        if cluster.zones is not None and len(cluster.zones) < 2:
            problems.append(
                Problem(
                    "cluster.zones", "EKS needs subnets in at least two zones", list(cluster.zones)
                )
            )
        if aws.public_subnet_ids is not None and aws.private_subnet_ids is None:
            problems.append(
                Problem(
                    "cluster.aws.publicSubnetIds",
                    "needs privateSubnetIds too (nodes run in private subnets)",
                    aws.public_subnet_ids,
                )
            )
        if aws.public_endpoint_cidrs is None and not self.adopted(cluster):
            problems.append(
                Problem(
                    "cluster.aws.publicEndpointCidrs",
                    "is required on aws: the ranges that may reach the API server (where pulumi "
                    "and your users run), [] for a private endpoint only, or [0.0.0.0/0] to open "
                    "it to the internet on purpose",
                    has_value=False,
                )
            )
        elif aws.public_endpoint_cidrs is not None:
            problems += cidr_list_problems(
                "cluster.aws.publicEndpointCidrs", aws.public_endpoint_cidrs
            )
        slugs: dict[str, int] = {}
        for index, arn in enumerate(aws.admin_principal_arns):
            where = f"cluster.aws.adminPrincipalArns[{index}]"
            if not IAM_PRINCIPAL_ARN.fullmatch(arn):
                problems.append(
                    Problem(
                        where,
                        "must be an IAM role or user ARN (arn:aws:iam::<account>:role/<name>)",
                        arn,
                    )
                )
            elif aws_config.principal_slug(arn) in slugs:
                problems.append(
                    Problem(
                        where,
                        f"names the same role or user as adminPrincipalArns"
                        f"[{slugs[aws_config.principal_slug(arn)]}]",
                        arn,
                    )
                )
            slugs.setdefault(aws_config.principal_slug(arn), index)
        expanders = [e.strip() for e in aws.autoscaler_expander.split(",")]
        unknown = [e for e in expanders if e not in AUTOSCALER_EXPANDERS]
        if unknown or len(set(expanders)) != len(expanders):
            problems.append(
                Problem(
                    "cluster.aws.autoscalerExpander",
                    f"comma-separated, no repeats, from: {', '.join(AUTOSCALER_EXPANDERS)}",
                    aws.autoscaler_expander,
                )
            )
        return problems

    def check_pool(
        self,
        cluster: ClusterConfig,
        mode: SoftwareMode,
        pool: GpuPoolConfig,
        path: str,
        warnings: list[str],
    ) -> list[Problem]:
        if provisioners.provisioner(cluster) == "auto-mode":
            warnings.append(provisioners.auto_mode_lifetime_warning(path))
        return super().check_pool(cluster, mode, pool, path, warnings)

    def pools_problems(
        self, cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]]
    ) -> list[Problem]:
        return quotas.quota_problems(cluster, pools, adopted=self.adopted(cluster))

    def concurrent_limits(self, cluster: ClusterConfig) -> dict[str, dict[str, Any]]:
        return quotas.concurrent_limits(cluster, adopted=self.adopted(cluster))

    def pools_warnings(
        self, cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]]
    ) -> list[str]:
        return quotas.adopted_warning(cluster, pools) if self.adopted(cluster) else []

    def check_pool_limits(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        """The cluster's zones, and what the autoscaler's tags and one group per zone express."""
        problems = []
        if cluster.zones and pool.zones:
            outside = [z for z in pool.zones if z not in cluster.zones]
            if outside:
                problems.append(
                    Problem(
                        f"{path}.zones", f"not among cluster.zones {list(cluster.zones)}", outside
                    )
                )
        if provisioners.launches_per_pod(cluster):
            return problems + provisioners.pool_problems(cluster, pool, path)
        problems += provisioners.provisioner_keys(
            pool, path, aws_config.KARPENTER_ONLY_POOL_KEYS, "karpenter"
        )
        zones = pool.zones or cluster.zones or []
        options = aws_config.pool_options(pool)
        problems += groups.size_problems(pool, options.max_nodes_per_zone, len(zones), path)
        if options.node_group == "managed":
            problems += groups.managed_group_limits(pool, path)
        else:
            problems += asg_limits.tag_problems(cluster, pool, path, self.adopted(cluster))
        # One node-template tag per taint key: the GPU taint's key and repeats cannot be expressed.
        keys = [self.gpu_taint[0], *(t.key for t in pool.taints)]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            problems.append(
                Problem(
                    f"{path}.taints",
                    "taint keys must be unique on aws (nvidia.com/gpu is already the GPU taint)",
                    repeated,
                )
            )
        return problems

    def check_mig(
        self, mode: SoftwareMode, pool: GpuPoolConfig, model: GpuModel, path: str
    ) -> list[Problem]:
        if mode == "gpu-operator":
            return []
        return [
            Problem(
                f"{path}.migPartitionSize",
                "MIG on EKS needs the GPU Operator's MIG manager; set gpuSoftware.mode: gpu-operator",
                pool.mig_partition_size,
            )
        ]

    def check_software(
        self,
        software: GpuSoftwareConfig,
        mode: SoftwareMode,
        pools: Sequence[GpuPoolConfig],
        cluster: ClusterConfig | None,
    ) -> list[Problem]:
        """Bottlerocket's NVIDIA variant brings its own device plugin and is not an operator platform."""
        problems = provisioners.software_problems(mode, cluster, pools)
        for index, pool in enumerate(pools):
            if aws_config.pool_options(pool).ami_family != "bottlerocket":
                continue
            where = f"gpuPools[{index}].aws.amiFamily"
            if mode == "gpu-operator":
                problems.append(
                    Problem(
                        where,
                        "the GPU Operator does not support Bottlerocket; use al2023",
                        "bottlerocket",
                    )
                )
            elif pool.sharing is not None:
                problems.append(
                    Problem(
                        where,
                        "Bottlerocket runs its own device plugin, which gpufleet does not configure "
                        "for sharing; use al2023 for shared pools",
                        "bottlerocket",
                    )
                )
        return problems

    def gpu_node_facts(
        self,
        config: StackConfig,
        pool: GpuPoolConfig,
        machine: MachineType,
        sharing_via: SharingVia,
    ) -> GpuNodeFacts:
        facts = GpuNodeFacts(
            declared={"nvidia.com/gpu": "true", ACCELERATOR_LABEL: f"nvidia-{pool.accelerator}"}
        )
        provisioners.node_facts(facts, config.cluster, pool, self.machines(pool))
        return facts

    def provisioner_name(self, config: StackConfig) -> str:
        return provisioners.display_name(config.cluster)

    def pool_allocatable(
        self, config: StackConfig, pool: GpuPoolConfig, sized: MachineType
    ) -> NodeAllocatable | None:
        if not self.allocatable_known(config):
            return None
        pods = None
        managed = aws_config.pool_options(pool).node_group == "managed"
        if managed and not provisioners.launches_per_pod(config.cluster):
            pods = aws_allocatable.managed_max_pods(
                [(m.name, m.vcpus) for m in self.machines(pool)]
            )
        return aws_allocatable.node_allocatable(
            sized.name, sized.vcpus, sized.memory_gib, pool.disk_size_gb, pods
        )

    def picks_type_per_pod(self, cluster: ClusterConfig) -> bool:
        return provisioners.launches_per_pod(cluster)

    def software_mode(
        self, mode: SoftwareMode, cluster: ClusterConfig | None = None
    ) -> SoftwareMode:
        if mode == "auto" and cluster is not None:
            return provisioners.auto_software_mode(cluster) or self.default_software_mode
        return super().software_mode(mode, cluster)

    def allocatable_known(self, config: StackConfig) -> bool:
        # Auto Mode's nodes run AWS's own image, whose reservations AWS does not publish.
        return provisioners.provisioner(config.cluster) != "auto-mode"

    def scale_from_zero(
        self, config: StackConfig, pool: GpuPoolConfig
    ) -> Literal["pool", "node-template-tags", "unmanaged"]:
        # Self-managed groups: the autoscaler reads the ASGs' node-template tags. Managed node
        # groups: it reads labels and taints via eks:DescribeNodegroup, so PoolSpec is its view.
        # Karpenter: it simulates the NodePool's labels, taints and requirements (PoolSpec).
        if provisioners.launches_per_pod(config.cluster):
            return "pool"
        if aws_config.pool_options(pool).node_group == "self-managed":
            return "node-template-tags"
        return "pool"

    def zone_max_nodes(self, config: StackConfig, pool: GpuPoolConfig) -> int | None:
        # Karpenter's and Auto Mode's limits are pool-wide: any zone can take them all.
        if provisioners.launches_per_pod(config.cluster):
            return None
        zones = pool.zones or config.cluster.zones or []
        per_zone = aws_config.pool_options(pool).max_nodes_per_zone
        return groups.zone_capacity(pool.max_nodes, zones, per_zone)

    def own_device_plugin(self, config: StackConfig, pool: GpuPoolConfig) -> bool:
        # Bottlerocket's NVIDIA variant and Auto Mode's nodes run their own device plugin.
        return provisioners.own_device_plugin(config.cluster, pool)

    def system_node_labels(self) -> dict[str, str]:
        # The managed group is named from a prefix (replaced create-before-delete), so its
        # eks.amazonaws.com/nodegroup label is not known ahead; pods select on POOL_LABEL.
        return {"eks.amazonaws.com/capacityType": "ON_DEMAND"}

    def gpu_operator_preset(self, config: StackConfig) -> dict[str, Any]:
        # The AL2023 NVIDIA AMI ships the driver and the container toolkit.
        return {"driver": {"enabled": False}, "toolkit": {"enabled": False}}


AWS = Aws()
