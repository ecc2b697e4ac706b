"""GKE as gpufleet sees it: the cloud's data (names, labels, catalogs) and its answers to the
cloud interface, each delegated to the module whose job it is: cluster checks and warnings
(`cluster_checks.py`), node pools with their checks, node facts, selector keys and capacity
(`kinds/node_pools.py`), the GPU software around GKE's driver (`gpu_software.py`).

Sources: ../shared/reference/FACTS.md (GKE section) and the GKE documentation it cites
(GPU node labels and taints, time-sharing, MPS and MIG, the GPU Operator on GKE).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from components.gcp.model import allocatable as gcp_allocatable
from components.gcp.model import (
    cluster_checks,
    gpu_software,
    gpu_zones,
    node_limits,
    node_pool_names,
    prices,
    system_machines,
    version_rules,
    versions,
)
from components.gcp.model import cluster_needs as gke_needs
from components.gcp.model import config as gcp_config
from components.gcp.model import daemonsets as gke_daemonsets
from components.gcp.model import fabric as gke_fabric
from components.gcp.model import nccl_test as gke_nccl_test
from components.gcp.model import offerings as gcp_offerings
from components.gcp.model import resources as gcp_resources
from components.gcp.model.catalog import CATALOG, MACHINE_NAMES
from components.gcp.model.kinds.compute_class import COMPUTE_CLASSES, gke_pool_kind
from components.gcp.model.kinds.node_pools import NODE_POOLS, PARTITION_SIZE_LABEL
from components.gcp.model.kinds.node_pools import gke_driver as gke_driver  # for gcp/stack.py
from components.model.allocatable import NodeAllocatable
from components.model.catalog.gpus import GpuModel, MachineType
from components.model.cloud import NameRule
from components.model.daemonsets import NodeDaemonSet
from components.model.fabric import FabricFacts, NcclTest, PoolFabric
from components.model.lifecycle import Assessment
from components.model.managed_cloud import ManagedCloud, SharingVia
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

_RULE = NameRule(
    r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$", "GKE: 1-40 of a-z 0-9 -, starting with a letter"
)


class Gcp(ManagedCloud):
    name = "gcp"
    version_lifecycle = versions.LIFECYCLE
    cluster_options = gcp_config.GcpClusterOptions
    pool_options = gcp_config.GcpPoolOptions
    stack_module = "components.gcp.stack"
    catalog = CATALOG
    pool_name_rule = _RULE
    cluster_name_rule = _RULE
    region_rule = NameRule(r"^[a-z]+-[a-z]+[0-9]+$", "a GCP region such as us-central1")
    distribution = "gke"
    # GKE brings driver and device plugin, and shares GPUs itself.
    default_software_mode = "cloud-managed"
    shares_gpus_itself = True
    several_machine_types = False
    one_machine_type_advice = "several machine types are only supported on aws; use machineType"
    adopts_clusters = True
    # A zonal cluster's zone (components/gcp/model/cluster_checks.py).
    existing_options = gcp_config.GcpExistingOptions
    resource_knowledge = gcp_resources.RESOURCES
    # The project the existing cluster is in (the lookup and the pools' provider use it).
    adopted_cluster_keys = ("project", "node_service_account")
    # GKE's own DaemonSets on every node, whose requests no source read gives
    # (components/gcp/model/daemonsets.py; review gke-2.md N3).
    uncounted_daemonsets = ("kube-proxy", "fluentbit-gke", "gke-metrics-agent", "pdcsi-node")
    gpu_taint = ("nvidia.com/gpu", "present")
    default_system_machine = "e2-standard-4"
    pricing = prices.PRICING
    machine_name_rule = MACHINE_NAMES
    # Compute Engine's general-purpose types, sourced (review gke-2.md N14).
    system_machine_shapes: ClassVar[Mapping[str, tuple[int, float]]] = system_machines.SHAPES
    accelerator_label = "cloud.google.com/gke-accelerator"
    # Only GKE labels nodes with the bare MIG partition size.
    partition_label = PARTITION_SIZE_LABEL
    # GKE admits system-node-critical pods outside kube-system only up to a ResourceQuota.
    critical_pods_need_quota = True
    offerings: ClassVar[Offerings] = gcp_offerings
    # Node pools make every GPU pool and the system pool; a fallback list one node pool cannot
    # express is a custom compute class over node pools.
    pool_kinds = (NODE_POOLS, COMPUTE_CLASSES)
    system_pool_kind = NODE_POOLS

    def zone_rule(self, region: str) -> NameRule:
        return gpu_zones.zone_rule(region)

    def node_daemonsets(
        self, config: StackConfig, pool: GpuPoolConfig | None
    ) -> tuple[NodeDaemonSet, ...]:
        # GKE's device plugin and the driver installer run on GPU nodes only.
        return gke_daemonsets.node_daemonsets(config.gpu_software_mode) if pool else ()

    def node_allocatable(
        self, machine: str, vcpus: int, memory_gib: float, disk_size_gb: int
    ) -> NodeAllocatable | None:
        return gcp_allocatable.node_allocatable(vcpus, memory_gib)

    def pool_allocatable(
        self, config: StackConfig, pool: GpuPoolConfig, sized: MachineType
    ) -> NodeAllocatable | None:
        # A streaming pool's nodes keep memory for image streaming too (allocatable.py). A pool
        # an earlier gpufleet created keeps its own setting (ignoreChanges) and may not stream:
        # its nodes then have more than this figure, never less.
        return gcp_allocatable.node_allocatable(
            sized.vcpus,
            sized.memory_gib,
            image_streaming=gcp_config.pool_options(pool).image_streaming,
        )

    def version_problems(self, cluster: ClusterConfig, verdict: Assessment) -> list[Problem]:
        if self.adopted(cluster):
            return []  # an existing cluster runs this minor already; its release channel is its owner's
        return version_rules.version_problems(cluster, verdict)

    def check_cluster(self, cluster: ClusterConfig) -> list[Problem]:
        return cluster_checks.cluster_problems(cluster, self.machine_name_rule)

    def cluster_warnings(self, cluster: ClusterConfig) -> list[str]:
        return cluster_checks.cluster_warnings(cluster, self.adopted(cluster))

    def check_software(
        self,
        software: GpuSoftwareConfig,
        mode: SoftwareMode,
        pools: Sequence[GpuPoolConfig],
        cluster: ClusterConfig | None,
    ) -> list[Problem]:
        return gpu_software.software_problems(software, mode)

    def pools_warnings(
        self, cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]]
    ) -> list[str]:
        adopted = self.adopted(cluster)
        return gke_needs.pools_warnings(cluster, pools, adopted) + node_limits.cluster_warnings(
            cluster, [pool for _, pool in pools], adopted
        )

    def pools_problems(
        self, cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]]
    ) -> list[Problem]:
        # A class pool's node pools are named after it: one may take another pool's name.
        return node_pool_names.name_problems(pools)

    def sharing_via(self, mode: SoftwareMode) -> SharingVia:
        return "cloud" if mode == "cloud-managed" else "nvidia"

    def sharing_strategies(self, model: GpuModel, mode: SoftwareMode) -> tuple[str, ...]:
        # GKE's own MPS runs on "all NVIDIA Tesla GPU types" (cloud.google.com/kubernetes-engine/
        # docs/how-to/nvidia-mps-gpus; review gke.md S5), P4 and P100 included.
        if self.sharing_via(mode) == "cloud":
            return ("time-sharing", "mps")
        return model.sharing

    def pool_kind(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> PoolKind:
        return gke_pool_kind(pool)

    def pod_settings(self, pool: GpuPoolConfig, sharing_via: SharingVia) -> dict[str, object]:
        # GKE's MPS control daemon runs on the host: clients reach it through host IPC
        # (cloud.google.com/kubernetes-engine/docs/how-to/nvidia-mps-gpus). Pod Security
        # `restricted` and `baseline` forbid hostIPC, so such namespaces cannot use MPS pools.
        if sharing_via == "cloud" and pool.sharing is not None and pool.sharing.strategy == "mps":
            return {"hostIPC": True}
        return {}

    def container_env(self, config: StackConfig, pool: GpuPoolConfig) -> dict[str, str]:
        return gpu_software.container_env(config, pool)

    def system_node_labels(self) -> dict[str, str]:
        return {"cloud.google.com/gke-nodepool": "system"}

    # --- GPUDirect (`gpuPools[].interconnect: fabric`; fabric.py, nccl_test.py) ---------------

    def fabric_facts(self, machine_type: str) -> FabricFacts | None:
        entry = gke_fabric.FABRICS.get(machine_type)
        return entry[1] if entry else None

    def pool_fabric(
        self, config: StackConfig, pool: GpuPoolConfig, facts: FabricFacts, zone: str
    ) -> PoolFabric:
        return gke_fabric.pool_fabric(config, pool, facts, zone)

    def nccl_test(self, config: StackConfig, pool: PoolSpec, nodes: int) -> NcclTest | None:
        return gke_nccl_test.nccl_test(pool, nodes)

    # --- GPU software -----------------------------------------------------------------------

    def gpu_operator_preset(self, config: StackConfig) -> dict[str, Any]:
        return gpu_software.gpu_operator_preset(config)

    def dcgm_exporter_values(self) -> dict[str, Any]:
        return gpu_software.dcgm_exporter_values()


GCP = Gcp()
