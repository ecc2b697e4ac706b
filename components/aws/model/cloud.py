"""EKS as gpufleet sees it: names, zones, the autoscaler's limits and GPU node labels.

Sources: ../shared/reference/FACTS.md (EKS section), the EKS user guide and the
cluster-autoscaler AWS provider documentation it cites.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from components.aws.model import allocatable as aws_allocatable
from components.aws.model import (
    cluster_checks,
    kinds,
    nccl,
    prices,
    provisioners,
    quotas,
    version_rules,
    versions,
)
from components.aws.model import config as aws_config
from components.aws.model import daemonsets as aws_daemonsets
from components.aws.model import fabric as aws_fabric
from components.aws.model import offerings as aws_offerings
from components.aws.model import resources as aws_resources
from components.aws.model.asg_limits import EKS_ACCELERATOR_LABEL
from components.aws.model.catalog import CATALOG, MACHINE_NAMES
from components.aws.model.kinds.base import EksPoolKind
from components.model.allocatable import NodeAllocatable
from components.model.catalog.gpus import GpuModel, MachineType
from components.model.cloud import NameRule
from components.model.daemonsets import NodeDaemonSet
from components.model.fabric import FabricFacts, NcclTest, PoolFabric
from components.model.lifecycle import Assessment
from components.model.managed_cloud import ManagedCloud
from components.model.offerings import Offerings
from components.model.pool_spec import PoolSpec
from components.model.problems import Problem
from components.model.schema import (
    ClusterConfig,
    GpuPoolConfig,
    GpuSoftwareConfig,
    SoftwareMode,
    StackConfig,
)


class Aws(ManagedCloud):
    name = "aws"
    version_lifecycle = versions.LIFECYCLE
    cluster_options = aws_config.AwsClusterOptions
    adopts_clusters = True
    resource_knowledge = aws_resources.RESOURCES
    existing_options = aws_config.AwsExistingOptions
    # Where the GPU nodes go, what brings them up, and how gpufleet's own autoscaler expands.
    adopted_cluster_keys = (
        "private_subnet_ids",
        "provisioner",
        "autoscaler_expander",
        "managed_node_group_quota",
        "nodes_per_managed_node_group_quota",
        "security_groups_per_interface_quota",
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
    accelerator_label = EKS_ACCELERATOR_LABEL
    offerings: ClassVar[Offerings] = aws_offerings
    # Each kind's capacity orders, checks and advice are its own (kinds/; capacity.py says which
    # orders where). The system pool is a managed node group.
    pool_kinds = kinds.KINDS
    system_pool_kind = kinds.MANAGED

    def pool_kind(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> EksPoolKind:
        return kinds.pool_kind(cluster, pool)

    # --- EFA (components/aws/model/fabric.py) ----------------------------------------------

    def fabric_facts(self, machine_type: str) -> FabricFacts | None:
        return aws_fabric.fabric_facts(machine_type)

    def pool_fabric(
        self, config: StackConfig, pool: GpuPoolConfig, facts: FabricFacts, zone: str
    ) -> PoolFabric:
        kind = self.pool_kind(config.cluster, pool)
        return aws_fabric.pool_fabric(pool, facts, zone, kind.fabric_change_note)

    def nccl_test(self, config: StackConfig, pool: PoolSpec, nodes: int) -> NcclTest | None:
        return nccl.nccl_test(pool, nodes)

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
        """What the cluster's provisioner needs, then zones, network ranges, subnets, admins
        and the autoscaler expander (components/aws/model/cluster_checks.py)."""
        adopted = self.adopted(cluster)
        kind = kinds.cluster_kind(cluster)
        problems = kind.cluster_problems(cluster)
        if adopted:
            problems += provisioners.adopted_problems(
                cluster,
                cluster_compute=kind.cluster_compute,
                installed_needs_node_role=kind.installed_needs_node_role,
            )
        return problems + cluster_checks.cluster_problems(cluster, adopted)

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
        problems = (
            [] if cluster is None else kinds.cluster_kind(cluster).software_problems(mode, pools)
        )
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

    def pool_allocatable(
        self, config: StackConfig, pool: GpuPoolConfig, sized: MachineType
    ) -> NodeAllocatable | None:
        kind = self.pool_kind(config.cluster, pool)
        if not kind.traits(config.cluster, pool).allocatable_known:
            return None
        pods = kind.max_pods(pool, self.machines(pool), sized.name)
        return aws_allocatable.node_allocatable(
            sized.name, sized.vcpus, sized.memory_gib, pool.disk_size_gb, pods
        )

    def software_mode(
        self, mode: SoftwareMode, cluster: ClusterConfig | None = None
    ) -> SoftwareMode:
        if mode == "auto" and cluster is not None:
            # Auto Mode's nodes bring the GPU software themselves: `auto` means the cloud's.
            cloud_image = kinds.cluster_kind(cluster).cloud_image
            return "cloud-managed" if cloud_image else self.default_software_mode
        return super().software_mode(mode, cluster)

    def system_node_labels(self) -> dict[str, str]:
        # The managed group is named from a prefix (replaced create-before-delete), so its
        # eks.amazonaws.com/nodegroup label is not known ahead; pods select on POOL_LABEL.
        return {"eks.amazonaws.com/capacityType": "ON_DEMAND"}

    def gpu_operator_preset(self, config: StackConfig) -> dict[str, Any]:
        # The AL2023 NVIDIA AMI ships the driver and the container toolkit.
        return {"driver": {"enabled": False}, "toolkit": {"enabled": False}}


AWS = Aws()
