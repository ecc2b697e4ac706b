"""AKS as gpufleet sees it: names, zones, MIG profiles, GPU node labels and the operator preset.

Sources: ../shared/reference/FACTS.md (AKS section) and the AKS documentation it cites (GPU
node pools, Spot node pools, multi-instance GPU, the GPU Operator on AKS).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from components.azure.model import allocatable as azure_allocatable
from components.azure.model import config as azure_config
from components.azure.model import daemonsets as aks_daemonsets
from components.azure.model import (
    grants,
    limits,
    prices,
    rbac,
    reservations,
    version_rules,
    versions,
)
from components.azure.model import node_effects as azure_node_effects
from components.azure.model import offerings as azure_offerings
from components.azure.model.catalog import (
    AKS_MIG_PROFILES,
    AKS_MIG_SIZES,
    CATALOG,
    GRID_DRIVER_SIZES,
    MACHINE_NAMES,
)
from components.azure.model.cluster_checks import (
    authorized_range_warnings,
    check_cluster_options,
    exposure_warnings,
    node_resource_group_problems,
)
from components.azure.model.kinds.agent_pools import (
    AGENT_POOL_LABEL,
    AGENT_POOLS,
    CAPACITY_ORDERS,
    PARTITION_SIZE_LABEL,
)
from components.azure.model.kinds.agent_pools import SPOT_KEY as SPOT_KEY
from components.model.allocatable import NodeAllocatable
from components.model.capacity import CapacityOrder, ReservationCap
from components.model.catalog.gpus import GpuModel
from components.model.catalog.provisioning import BEST_EFFORT_ATOMIC
from components.model.cloud import NameRule
from components.model.daemonsets import NodeDaemonSet
from components.model.lifecycle import Assessment
from components.model.managed_cloud import ManagedCloud
from components.model.offerings import Offerings
from components.model.pool_kind import PoolKind
from components.model.problems import Problem
from components.model.schema import (
    ClusterConfig,
    GpuPoolConfig,
    GpuSoftwareConfig,
    SoftwareMode,
    StackConfig,
)


def gpu_instance_profile(mig_partition_size: str | None) -> str | None:
    """The agent pool's `gpuInstanceProfile` for a MIG partition size (None: no MIG)."""
    if mig_partition_size is None:
        return None
    return AKS_MIG_PROFILES[mig_partition_size.split(".")[0]]


class Azure(ManagedCloud):
    name = "azure"
    version_lifecycle = versions.LIFECYCLE
    cluster_options = azure_config.AzureClusterOptions
    adopts_clusters = True
    node_effects = azure_node_effects.NODE_EFFECTS
    grant_waits = rbac.GRANT_WAITS
    # Where the existing cluster is, the node subnet for the GPU pools (default: the first
    # agent pool's), and how the Kubernetes provider signs in on an Entra ID cluster.
    adopted_cluster_keys = (
        "subscription_id",
        "resource_group_name",
        "vnet_subnet_id",
        "kubelogin_mode",
    )
    pool_options = azure_config.AzurePoolOptions
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
    pool_label_key = AGENT_POOL_LABEL
    partition_label = PARTITION_SIZE_LABEL
    offerings: ClassVar[Offerings] = azure_offerings

    def zone_rule(self, region: str) -> NameRule:
        return NameRule(r"[123]", '"1", "2" or "3"')

    @staticmethod
    def zone_label(region: str, zone: str) -> str:
        return f"{region}-{zone}"

    def check_cluster(self, cluster: ClusterConfig) -> list[Problem]:
        options = azure_config.cluster_options(cluster)
        problems = check_cluster_options(options, creates_cluster=not self.adopted(cluster))
        problems += reservations.identity_problems(cluster)
        problems += grants.grant_problems(options)
        if not self.adopted(cluster):
            problems += node_resource_group_problems(cluster, options)
            problems += limits.system_pool_problems(cluster)
        if self.adopted(cluster) and options.resource_group_name is None:
            problems.append(
                Problem(
                    "cluster.azure.resourceGroupName",
                    "is required with cluster.existing: the resource group the AKS cluster is in",
                    has_value=False,
                )
            )
        return problems

    # --- capacity (docs/capacity.md, docs/aks.md) ---------------------------------------------
    # Every agent pool's (components/azure/model/kinds/agent_pools.py says why).
    capacity_orders = CAPACITY_ORDERS
    capacity_advice: ClassVar[str] = (
        "a capacity reservation group is capacity [reserved, on-demand] with "
        "gpuPools[].azure.capacityReservationGroupId; capacity blocks and flex-start are "
        "EC2's and GKE's, Azure sells neither"
    )

    def check_capacity(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder, path: str
    ) -> list[Problem]:
        return reservations.capacity_problems(cluster, pool, order, path, self.adopted(cluster))

    def provisioning_class(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> str | None:
        return BEST_EFFORT_ATOMIC.name

    def check_pool(
        self,
        cluster: ClusterConfig,
        mode: SoftwareMode,
        pool: GpuPoolConfig,
        path: str,
        warnings: list[str],
    ) -> list[Problem]:
        warnings += reservations.capacity_warnings(cluster, pool, path, self.adopted(cluster))
        return super().check_pool(cluster, mode, pool, path, warnings)

    def reservation_cap(self, config: StackConfig, pool: GpuPoolConfig) -> ReservationCap | None:
        return reservations.cap(pool)

    def pools_problems(
        self, cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]]
    ) -> list[Problem]:
        return limits.pools_problems(pools)

    def pools_warnings(
        self, cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]]
    ) -> list[str]:
        # An adopted cluster's other pools are its owner's: their nodes are not known offline.
        return [] if self.adopted(cluster) else limits.cluster_node_warnings(cluster, pools)

    def cluster_warnings(self, cluster: ClusterConfig) -> list[str]:
        options = azure_config.cluster_options(cluster)
        exposed = exposure_warnings(cluster, options, self.adopted(cluster))
        if self.adopted(cluster):
            return exposed
        return exposed + authorized_range_warnings(options) + grants.skipped_grant_warnings(options)

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
        where = f"{path}.migPartitionSize"
        size = pool.mig_partition_size
        assert size is not None
        problems = []
        # Without machineType the pool gets the catalog's default size, which must support MIG too.
        vm_size = pool.machine_type or CATALOG.defaults.get(pool.accelerator)
        machine = CATALOG.machine(pool.accelerator, vm_size or "")
        if machine is not None and not machine.mig_capable:
            problems.append(Problem(where, f"{vm_size} does not support MIG on AKS", size))
        if size.split(".")[0] not in AKS_MIG_PROFILES:
            problems.append(
                Problem(where, "AKS has no gpuInstanceProfile for this partition", size)
            )
        elif size not in AKS_MIG_SIZES.get(pool.accelerator, {}):
            built = ", ".join(AKS_MIG_SIZES.get(pool.accelerator, {})) or "none"
            problems.append(
                Problem(
                    where, f"AKS builds only these {pool.accelerator} partitions: {built}", size
                )
            )
        return problems

    def check_software(
        self,
        software: GpuSoftwareConfig,
        mode: SoftwareMode,
        pools: Sequence[GpuPoolConfig],
        cluster: ClusterConfig | None,
    ) -> list[Problem]:
        """What the operator's own driver cannot do on AKS."""
        if not (software.operator_driver and mode == "gpu-operator"):
            return []
        problems = []
        for index, pool in enumerate(pools):
            if pool.mig_partition_size:
                problems.append(
                    Problem(
                        "gpuSoftware.operatorDriver",
                        f"AKS partitions MIG GPUs only when it installs the driver, so "
                        f"gpuPools[{index}] ({pool.name}) would never be partitioned; keep AKS's "
                        "driver (operatorDriver: false) with MIG pools",
                        True,
                    )
                )
            vm_size = pool.machine_type or CATALOG.defaults.get(pool.accelerator, "")
            if vm_size in GRID_DRIVER_SIZES:
                problems.append(
                    Problem(
                        "gpuSoftware.operatorDriver",
                        f"gpuPools[{index}] ({pool.name}) runs on {vm_size}, whose virtual GPUs "
                        "need the GRID driver AKS installs; keep AKS's driver "
                        "(operatorDriver: false)",
                        True,
                    )
                )
        return problems

    def accepts_operator_driver(self, mode: SoftwareMode) -> bool:
        return mode == "gpu-operator"

    def pool_kind(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> PoolKind:
        return AGENT_POOLS

    def system_node_labels(self) -> dict[str, str]:
        return {AGENT_POOL_LABEL: "system", "kubernetes.azure.com/mode": "system"}

    def gpu_operator_preset(self, config: StackConfig) -> dict[str, Any]:
        # operatorDriver: the pools are created with gpuProfile.driver None and the operator
        # installs driver and toolkit; otherwise AKS's driver and runtime stay in charge.
        own = config.gpu_software.operator_driver
        preset: dict[str, Any] = {
            "driver": {"enabled": own},
            "toolkit": {"enabled": own},
            # AKS partitions MIG GPUs itself (gpuInstanceProfile); the MIG manager would reset
            # them to its default `all-disabled` config.
            "migManager": {"enabled": False},
        }
        if not own:
            # AKS's containerd defines only this runtime on GPU nodes (AgentBaker's template;
            # NVIDIA's AKS guide sets it): the chart's default `nvidia` has no handler there.
            preset["operator"] = {"runtimeClass": "nvidia-container-runtime"}
            # Operator 25.10 and later default to CDI (values.yaml `cdi.enabled: true`, NVIDIA/
            # gpu-operator PR 1578): the device plugin then hands out CDI devices
            # (DEVICE_LIST_STRATEGY cdi-annotations,cdi-cri) and the toolkit, which is off here,
            # installs the CDI hook and turns CDI on in containerd (v26.7.0 controllers/
            # object_controls.go transformDevicePluginCtrForCDI, transformToolkitCtrForCDI).
            # Nothing shows AKS's own containerd and nvidia-container-runtime resolving CDI
            # devices, and NVIDIA's AKS guide predates the default: devices are handed to
            # AKS's runtime by environment variable, as before (review aks-3 N-2).
            preset["cdi"] = {"enabled": False}
        return preset


AZURE = Azure()
