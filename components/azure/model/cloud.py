"""AKS as gpufleet sees it: the cloud's data (names, zones, labels, catalogs) and its answers to
the cloud interface, each delegated to the module whose job it is: cluster checks and warnings
(`cluster_checks.py`), agent pools with their checks, node facts and capacity
(`kinds/agent_pools.py`, `reservations.py`), MIG and the GPU software around AKS's driver
(`gpu_software.py`).

Sources: ../shared/reference/FACTS.md (AKS section) and the AKS documentation it cites (GPU
node pools, Spot node pools, multi-instance GPU, the GPU Operator on AKS).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from components.azure.model import allocatable as azure_allocatable
from components.azure.model import (
    cluster_checks,
    gpu_software,
    health,
    kinds,
    limits,
    prices,
    version_rules,
    versions,
)
from components.azure.model import config as azure_config
from components.azure.model import daemonsets as aks_daemonsets
from components.azure.model import fabric as aks_fabric
from components.azure.model import nccl as aks_nccl
from components.azure.model import offerings as azure_offerings
from components.azure.model import resources as azure_resources
from components.azure.model.catalog import (
    AKS_MIG_SIZES,
    CATALOG,
    MACHINE_NAMES,
)
from components.azure.model.kinds.agent_pools import (
    AGENT_POOL_LABEL,
    AGENT_POOLS,
    LEGACY_AGENT_POOL_LABEL,
    PARTITION_SIZE_LABEL,
    SPOT_KEY,
)
from components.model.allocatable import NodeAllocatable
from components.model.catalog.gpus import GpuModel
from components.model.cloud import NameRule
from components.model.daemonsets import NodeDaemonSet
from components.model.fabric import FabricFacts, NcclTest, PoolFabric
from components.model.lifecycle import Assessment
from components.model.managed_cloud import ManagedCloud
from components.model.offerings import Offerings
from components.model.pool_kind import PoolKind
from components.model.pool_spec import PoolSpec
from components.model.problems import Problem
from components.model.schema import (
    ClusterConfig,
    GpuPoolConfig,
    GpuSoftwareConfig,
    SoftwareMode,
    StackConfig,
)


class Azure(ManagedCloud):
    name = "azure"
    version_lifecycle = versions.LIFECYCLE
    cluster_options = azure_config.AzureClusterOptions
    adopts_clusters = True
    resource_knowledge = azure_resources.RESOURCES
    # Where the existing cluster is, the node subnet for the GPU pools (default: the first
    # agent pool's), how the Kubernetes provider signs in on an Entra ID cluster, and which
    # kind of GPU pool the cluster takes (it must run that provisioner already: adopted.py).
    adopted_cluster_keys = (
        "subscription_id",
        "resource_group_name",
        "vnet_subnet_id",
        "kubelogin_mode",
        "provisioner",
    )
    pool_options = azure_config.AzurePoolOptions
    software_options = azure_config.AksSoftwareOptions
    stack_module = "components.azure.stack"
    catalog = CATALOG
    pool_name_rule = NameRule(
        r"^[a-z][a-z0-9]{0,11}$", "AKS: 1-12 lowercase letters and digits, starting with a letter"
    )
    # learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules
    # (Microsoft.ContainerService/managedClusters): 1-63 of letters, digits, hyphens and
    # underscores, starting and ending with a letter or digit (review aks.md N1).
    cluster_name_rule = NameRule(
        r"^[a-zA-Z0-9]([-a-zA-Z0-9_]{0,61}[a-zA-Z0-9])?$",
        "AKS: 1-63 of A-Z a-z 0-9 - _, starting and ending with a letter or digit",
    )
    region_rule = NameRule(r"^[a-z]+[a-z0-9]*$", "an Azure location such as eastus2")
    distribution = "aks"
    gpu_taint = ("sku", "gpu")
    one_machine_type_advice = "several machine types are only supported on aws; use machineType"
    default_system_machine = "Standard_D4s_v5"
    pricing = prices.PRICING
    machine_name_rule = MACHINE_NAMES
    system_machine_shapes: ClassVar[Mapping[str, tuple[int, float]]] = {
        "Standard_D2s_v5": (2, 8),
        "Standard_D4s_v5": (4, 16),
        "Standard_D8s_v5": (8, 32),
    }
    # A pool without zones is placed by AKS (regional).
    zones_required = False
    # AKS partitions MIG GPUs itself (gpuInstanceProfile); the device plugin's per-pool config
    # sets the MIG strategy, and the operator's MIG manager must stay out of it.
    mig_in_device_plugin_config = True
    operator_partitions_mig = False
    partition_label = PARTITION_SIZE_LABEL
    offerings: ClassVar[Offerings] = azure_offerings
    # Agent pools make the system pool and, by default, every GPU pool; node auto-provisioning
    # makes the GPU pools of a cluster whose cluster.azure.provisioner says so.
    pool_kinds = kinds.KINDS
    # A NAP pool of [spot, on-demand] taints all its nodes as Spot (kinds/node_auto_provisioning).
    spot_taint_key = SPOT_KEY
    system_pool_kind = AGENT_POOLS

    def zone_rule(self, region: str) -> NameRule:
        return NameRule(r"[123]", '"1", "2" or "3"')

    @staticmethod
    def zone_label(region: str, zone: str) -> str:
        return f"{region}-{zone}"

    def check_cluster(self, cluster: ClusterConfig) -> list[Problem]:
        adopted = self.adopted(cluster)
        problems = cluster_checks.cluster_problems(cluster, adopted)
        return problems + kinds.gpu_pool_kind(cluster).cluster_problems(cluster, adopted)

    def pools_problems(
        self, cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]]
    ) -> list[Problem]:
        return limits.pools_problems(pools)

    def pools_warnings(
        self, cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]]
    ) -> list[str]:
        # An adopted cluster's other pools are its owner's: their nodes are not known offline.
        adopted = self.adopted(cluster)
        fabric = aks_fabric.fabric_warnings([pool for _, pool in pools], adopted)
        if adopted:
            return fabric
        return limits.cluster_node_warnings(cluster, pools) + fabric

    def cluster_warnings(self, cluster: ClusterConfig) -> list[str]:
        return cluster_checks.cluster_warnings(cluster, self.adopted(cluster))

    def node_allocatable(
        self, machine: str, vcpus: int, memory_gib: float, disk_size_gb: int
    ) -> NodeAllocatable | None:
        return azure_allocatable.node_allocatable(vcpus, memory_gib)

    def allocatable_notes(self, vcpus: int) -> tuple[str, ...]:
        return azure_allocatable.estimate_notes(vcpus)

    def node_daemonsets(
        self, config: StackConfig, pool: GpuPoolConfig | None
    ) -> tuple[NodeDaemonSet, ...]:
        # AKS's agents run on every node, the system pool's too.
        return aks_daemonsets.node_daemonsets()

    def version_problems(self, cluster: ClusterConfig, verdict: Assessment) -> list[Problem]:
        if self.adopted(cluster):
            return []  # an existing cluster runs this minor already; its support plan (LTS) is its owner's
        return version_rules.version_problems(cluster, verdict)

    def check_pool_keys(self, pool: GpuPoolConfig, path: str) -> list[Problem]:
        # AKS takes taints as key=value:Effect and rejects an empty value.
        return [
            Problem(f"{path}.taints[{index}].value", "AKS taints need a value", taint.value)
            for index, taint in enumerate(pool.taints)
            if not taint.value
        ]

    def mig_partitions(self, model: GpuModel) -> Mapping[str, int]:
        # What AKS builds, which is not every size NVIDIA defines (no H100 1g.20gb).
        return AKS_MIG_SIZES.get(model.name, {})

    def check_mig(
        self, mode: SoftwareMode, pool: GpuPoolConfig, model: GpuModel, path: str
    ) -> list[Problem]:
        return gpu_software.mig_problems(pool, path)

    def check_software(
        self,
        software: GpuSoftwareConfig,
        mode: SoftwareMode,
        pools: Sequence[GpuPoolConfig],
        cluster: ClusterConfig | None,
    ) -> list[Problem]:
        return gpu_software.software_problems(software, mode, pools)

    def gpu_health_warnings(
        self, software: GpuSoftwareConfig, mode: SoftwareMode, pools: Sequence[GpuPoolConfig]
    ) -> list[str]:
        own_driver = azure_config.software_options(software).operator_driver
        checked_by_aks = () if own_driver and mode == "gpu-operator" else health.NPD_GPU_SIZES
        unwatched = [
            pool.name
            for pool in pools
            if (pool.machine_type or CATALOG.defaults.get(pool.accelerator, ""))
            not in checked_by_aks
        ]
        return health.unwatched_pools_warning(unwatched, software.monitoring.dcgm_exporter)

    def pool_kind(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> PoolKind:
        return kinds.gpu_pool_kind(cluster)

    def fabric_facts(self, machine_type: str) -> FabricFacts | None:
        return aks_fabric.fabric_facts(machine_type)

    def pool_fabric(
        self, config: StackConfig, pool: GpuPoolConfig, facts: FabricFacts, zone: str
    ) -> PoolFabric:
        return aks_fabric.pool_fabric(facts, zone)

    def nccl_test(self, config: StackConfig, pool: PoolSpec, nodes: int) -> NcclTest | None:
        if pool.fabric is None or pool.fabric.resource is None:
            return None
        return aks_nccl.nccl_test(pool, nodes)

    def system_node_labels(self) -> dict[str, str]:
        return {
            AGENT_POOL_LABEL: "system",
            LEGACY_AGENT_POOL_LABEL: "system",
            "kubernetes.azure.com/mode": "system",
        }

    def gpu_operator_preset(self, config: StackConfig) -> dict[str, Any]:
        return gpu_software.gpu_operator_preset(config)


AZURE = Azure()
