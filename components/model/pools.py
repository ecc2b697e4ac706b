"""Resolved GPU pools: config + catalog -> what every node of a pool will look like.

A `PoolSpec` is computed from config and catalog alone (no cloud calls), so the `gpuPools` stack
output, `fit`, the device plugin's placement and the sample workloads are all known offline and
all derive from this one place. Components read the `declared_*` fields to register labels and
taints; `node_labels`/`node_taints` add what the cloud and Kubernetes put on nodes themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from components.model.catalog import gpus
from components.model.config import (
    DEFAULT_SYSTEM_MACHINE,
    SYSTEM_POOL_NAME,
    GpuPoolConfig,
    StackConfig,
)

GPU_RESOURCE = "nvidia.com/gpu"
POOL_LABEL = "gpufleet.io/pool"
ACCELERATOR_LABEL = "gpufleet.io/accelerator"
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
GKE_NO_DEFAULT_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"

# The GPU taint each cloud documents for GPU nodes (declared explicitly by gpufleet).
GPU_TAINTS: Mapping[str, tuple[str, str]] = {
    "gcp": ("nvidia.com/gpu", "present"),
    "aws": ("nvidia.com/gpu", "true"),
    "azure": ("sku", "gpu"),
}
AKS_SPOT_KEY = "kubernetes.azure.com/scalesetpriority"


@dataclass(frozen=True, order=True)
class Taint:
    key: str
    value: str
    effect: str

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "value": self.value, "effect": self.effect}

    def toleration(self) -> dict[str, str]:
        if self.value:
            return {
                "key": self.key,
                "operator": "Equal",
                "value": self.value,
                "effect": self.effect,
            }
        return {"key": self.key, "operator": "Exists", "effect": self.effect}

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}"


@dataclass(frozen=True)
class PoolSpec:
    """Everything about one pool that is known before deploying."""

    name: str
    cloud: str
    kind: Literal["gpu", "system"]
    accelerator: str  # portable GPU model ("" for the system pool)
    machine_types: tuple[str, ...]
    gpus_per_node: int
    gpu_resource: str
    allocatable_per_node: Mapping[str, int]
    min_nodes: int
    max_nodes: int
    spot: bool
    zones: tuple[str, ...]
    # Labels and taints gpufleet registers on the pool (through the cloud API or kubelet flags).
    declared_labels: Mapping[str, str]
    declared_taints: tuple[Taint, ...]
    # Every label with one value on all nodes, and labels whose value varies per node.
    node_labels: Mapping[str, str]
    label_choices: Mapping[str, tuple[str, ...]]
    node_taints: tuple[Taint, ...]
    vcpus: int
    memory_gib: float
    # How sharing and MIG are delivered: by the cloud, NVIDIA's device plugin/operator, or not.
    sharing_strategy: str | None = None
    max_shared_clients_per_gpu: int | None = None
    mig_partition_size: str | None = None
    sharing_via: Literal["cloud", "nvidia", "none"] = "none"
    # GKE accelerator type / driver mode, AKS MIG profile: what the pool resource needs.
    gke_accelerator: str = ""
    gke_driver: str = ""
    aks_gpu_instance_profile: str | None = None
    # What the cluster autoscaler knows of the pool at zero nodes; None = it cannot see it.
    autoscaler_labels: Mapping[str, str] | None = None
    autoscaler_taints: tuple[Taint, ...] = ()
    autoscaler_resources: Mapping[str, int] = field(default_factory=dict)
    extended_resource_toleration: bool = False  # GKE's admission plugin
    disk_size_gb: int = 100
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def pod_scheduling(self) -> dict[str, Any]:
        """What a pod needs to land on this pool: selector, tolerations, one GPU."""
        selector = {k: self.node_labels[k] for k in self._selector_keys() if k in self.node_labels}
        scheduling: dict[str, Any] = {
            "nodeSelector": selector,
            "tolerations": [t.toleration() for t in self.node_taints],
        }
        if self.kind == "gpu":
            scheduling["resources"] = {"limits": {self.gpu_resource: 1}}
        else:
            scheduling["resources"] = {}
        return scheduling

    def _selector_keys(self) -> list[str]:
        keys = {
            "gcp": ["cloud.google.com/gke-nodepool"],
            "azure": ["kubernetes.azure.com/agentpool"],
            "aws": [POOL_LABEL],
        }.get(self.cloud, sorted(self.declared_labels))
        if self.cloud == "gcp" and self.sharing_via == "cloud":
            keys += [
                "cloud.google.com/gke-gpu-sharing-strategy",
                "cloud.google.com/gke-max-shared-clients-per-gpu",
            ]
        if (
            self.cloud == "gcp"
            and self.mig_partition_size
            and self.gke_driver != "INSTALLATION_DISABLED"
        ):
            keys.append("cloud.google.com/gke-gpu-partition-size")
        return keys

    def to_output(self) -> dict[str, Any]:
        """The `gpuPools` stack output entry: exactly the documented keys."""
        return {
            "name": self.name,
            "cloud": self.cloud,
            "accelerator": self.accelerator,
            "machineTypes": list(self.machine_types),
            "gpusPerNode": self.gpus_per_node,
            "gpuResource": self.gpu_resource,
            "allocatablePerNode": dict(sorted(self.allocatable_per_node.items())),
            "minNodes": self.min_nodes,
            "maxNodes": self.max_nodes,
            "spot": self.spot,
            "zones": list(self.zones),
            "nodeLabels": dict(sorted(self.node_labels.items())),
            "nodeTaints": [t.to_dict() for t in self.node_taints],
            "podScheduling": self.pod_scheduling,
        }


def resolve_pools(config: StackConfig) -> list[PoolSpec]:
    """Every GPU pool of the stack, resolved (config order)."""
    return [resolve_pool(config, pool) for pool in config.gpu_pools]


def resolve_pool(config: StackConfig, pool: GpuPoolConfig) -> PoolSpec:
    cloud = config.cloud
    mode = config.gpu_software_mode
    if cloud == "existing":
        return _existing_pool(config, pool)
    machines = _machines(cloud, pool)
    first = machines[0]
    gpus_per_node = (pool.gpus_per_node or 1) if first.attach_counts else first.gpus
    zones = tuple(pool.zones or config.cluster.zones or ())
    region = config.cluster.region or ""
    model = gpus.GPU_MODELS[pool.accelerator]

    sharing_via: Literal["cloud", "nvidia", "none"] = "none"
    if pool.sharing or pool.mig_partition_size:
        sharing_via = "cloud" if (cloud == "gcp" and mode == "cloud-managed") else "nvidia"
    per_gpu = 1
    if pool.sharing:
        per_gpu = pool.sharing.max_shared_clients_per_gpu
    elif pool.mig_partition_size:
        per_gpu = model.mig_partitions[pool.mig_partition_size]

    declared = {POOL_LABEL: pool.name, ACCELERATOR_LABEL: pool.accelerator}
    if sharing_via == "nvidia" and (pool.sharing or (pool.mig_partition_size and cloud == "azure")):
        # The device plugin picks this pool's entry of its config map by this label.
        declared[DEVICE_PLUGIN_CONFIG_LABEL] = pool.name
    if pool.mig_partition_size and mode == "gpu-operator" and cloud != "azure":
        # The operator's MIG manager partitions every GPU of the node with this profile.
        declared[MIG_CONFIG_LABEL] = f"all-{pool.mig_partition_size}"
    gpu_taint_key, gpu_taint_value = GPU_TAINTS[cloud]
    declared_taints = [Taint(gpu_taint_key, gpu_taint_value, "NoSchedule")]
    declared_taints += [Taint(t.key, t.value, t.effect) for t in pool.taints]

    generic = {
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/region": region,
    }
    choices: dict[str, tuple[str, ...]] = {}
    cloud_labels: dict[str, str] = {}
    cloud_taints: list[Taint] = []
    gke_driver = ""
    aks_profile = None
    if cloud == "gcp":
        gke_driver = (
            "INSTALLATION_DISABLED" if mode == "gpu-operator" else pool.gcp.driver_version.upper()
        )
        if mode == "gpu-operator":
            declared[GKE_NO_DEFAULT_PLUGIN_LABEL] = "true"
        cloud_labels = _gke_labels(pool, first, gke_driver, sharing_via)
    elif cloud == "aws":
        declared["nvidia.com/gpu"] = "true"
        # Lets the cluster autoscaler wait for the device plugin instead of scaling up twice.
        declared["k8s.amazonaws.com/accelerator"] = f"nvidia-{pool.accelerator}"
        if pool.aws.node_group == "managed":
            cloud_labels["eks.amazonaws.com/nodegroup"] = pool.name
            cloud_labels["eks.amazonaws.com/capacityType"] = "SPOT" if pool.spot else "ON_DEMAND"
    elif cloud == "azure":
        cloud_labels = {
            "kubernetes.azure.com/agentpool": pool.name,
            "kubernetes.azure.com/accelerator": "nvidia",
            "kubernetes.azure.com/mode": "user",
        }
        if pool.spot:
            cloud_labels[AKS_SPOT_KEY] = "spot"
            cloud_taints.append(Taint(AKS_SPOT_KEY, "spot", "NoSchedule"))
        if pool.mig_partition_size:
            aks_profile = gpus.AKS_MIG_PROFILES[pool.mig_partition_size.split(".")[0]]

    zone_values = tuple(f"{region}-{z}" for z in zones) if cloud == "azure" else zones
    if len(zone_values) == 1:
        generic["topology.kubernetes.io/zone"] = zone_values[0]
    elif zone_values:
        choices["topology.kubernetes.io/zone"] = zone_values
    if len(machines) == 1:
        generic["node.kubernetes.io/instance-type"] = first.name
    else:
        choices["node.kubernetes.io/instance-type"] = tuple(m.name for m in machines)

    declared.update(pool.labels)
    node_labels = {**generic, **cloud_labels, **declared}
    allocatable = {GPU_RESOURCE: gpus_per_node * per_gpu}
    taints = tuple(declared_taints) + tuple(cloud_taints)

    # What the autoscaler sees at zero. EKS self-managed: the ASG's node-template tags, which
    # gpufleet writes from exactly these declared labels and taints. GKE/AKS: the pool's API.
    autoscaler_labels = {**generic, **cloud_labels, **declared}
    return PoolSpec(
        name=pool.name,
        cloud=cloud,
        kind="gpu",
        accelerator=pool.accelerator,
        machine_types=tuple(m.name for m in machines),
        gpus_per_node=gpus_per_node,
        gpu_resource=GPU_RESOURCE,
        allocatable_per_node=allocatable,
        min_nodes=pool.min_nodes,
        max_nodes=pool.max_nodes,
        spot=pool.spot,
        zones=zones,
        declared_labels=declared,
        declared_taints=tuple(declared_taints),
        node_labels=node_labels,
        label_choices=choices,
        node_taints=taints,
        vcpus=first.vcpus,
        memory_gib=first.memory_gib,
        sharing_strategy=pool.sharing.strategy if pool.sharing else None,
        max_shared_clients_per_gpu=pool.sharing.max_shared_clients_per_gpu
        if pool.sharing
        else None,
        mig_partition_size=pool.mig_partition_size,
        sharing_via=sharing_via,
        gke_accelerator=first.gke_accelerator,
        gke_driver=gke_driver,
        aks_gpu_instance_profile=aks_profile,
        autoscaler_labels=autoscaler_labels,
        autoscaler_taints=taints,
        autoscaler_resources=allocatable,
        extended_resource_toleration=cloud == "gcp",
        disk_size_gb=pool.disk_size_gb,
    )


def _machines(cloud: Literal["gcp", "aws", "azure"], pool: GpuPoolConfig) -> list[gpus.MachineType]:
    names = pool.machine_types or [
        pool.machine_type or gpus.DEFAULT_MACHINE_TYPES[(cloud, pool.accelerator)]
    ]
    return [gpus.MACHINE_TYPES[(cloud, pool.accelerator, name)] for name in names]


def _gke_labels(
    pool: GpuPoolConfig, machine: gpus.MachineType, driver: str, sharing_via: str
) -> dict[str, str]:
    labels = {
        "cloud.google.com/gke-nodepool": pool.name,
        "cloud.google.com/gke-accelerator": machine.gke_accelerator,
        "cloud.google.com/gke-gpu": "true",
        "cloud.google.com/gke-os-distribution": "cos",
        "cloud.google.com/machine-family": machine.name.split("-")[0],
    }
    if driver != "INSTALLATION_DISABLED":
        labels["cloud.google.com/gke-gpu-driver-version"] = driver.lower()
    if pool.spot:
        labels["cloud.google.com/gke-spot"] = "true"
    if sharing_via == "cloud" and pool.sharing:
        labels["cloud.google.com/gke-gpu-sharing-strategy"] = pool.sharing.strategy
        labels["cloud.google.com/gke-max-shared-clients-per-gpu"] = str(
            pool.sharing.max_shared_clients_per_gpu
        )
    if sharing_via == "cloud" and pool.mig_partition_size:
        labels["cloud.google.com/gke-gpu-partition-size"] = pool.mig_partition_size
    return labels


def _existing_pool(config: StackConfig, pool: GpuPoolConfig) -> PoolSpec:
    """An existing cluster's GPU nodes, as the user describes them (their labels and taints)."""
    model = gpus.GPU_MODELS[pool.accelerator]
    gpus_per_node = pool.gpus_per_node or 1
    mode = config.gpu_software_mode
    per_gpu = 1
    sharing_via: Literal["cloud", "nvidia", "none"] = "none"
    declared: dict[str, str] = dict(pool.labels)
    if pool.sharing:
        per_gpu = pool.sharing.max_shared_clients_per_gpu
        sharing_via = "nvidia"
        declared[DEVICE_PLUGIN_CONFIG_LABEL] = pool.name
    elif pool.mig_partition_size:
        per_gpu = model.mig_partitions[pool.mig_partition_size]
        sharing_via = "nvidia"
        if mode == "gpu-operator":
            declared[MIG_CONFIG_LABEL] = f"all-{pool.mig_partition_size}"
        elif mode == "device-plugin":
            # The GPUs are partitioned already; this pool's plugin config sets migStrategy single.
            declared[DEVICE_PLUGIN_CONFIG_LABEL] = pool.name
    taints = tuple(Taint(t.key, t.value, t.effect) for t in pool.taints)
    labels = {"kubernetes.io/os": "linux", **declared}
    allocatable = {GPU_RESOURCE: gpus_per_node * per_gpu}
    return PoolSpec(
        name=pool.name,
        cloud="existing",
        kind="gpu",
        accelerator=pool.accelerator,
        machine_types=tuple(
            pool.machine_types or ([pool.machine_type] if pool.machine_type else [])
        ),
        gpus_per_node=gpus_per_node,
        gpu_resource=GPU_RESOURCE,
        allocatable_per_node=allocatable,
        min_nodes=pool.min_nodes,
        max_nodes=pool.max_nodes,
        spot=pool.spot,
        zones=tuple(pool.zones or ()),
        declared_labels=declared,
        declared_taints=taints,
        node_labels=labels,
        label_choices={},
        node_taints=taints,
        vcpus=0,
        memory_gib=0.0,
        sharing_strategy=pool.sharing.strategy if pool.sharing else None,
        max_shared_clients_per_gpu=pool.sharing.max_shared_clients_per_gpu
        if pool.sharing
        else None,
        mig_partition_size=pool.mig_partition_size,
        sharing_via=sharing_via,
        autoscaler_labels=labels,
        autoscaler_taints=taints,
        autoscaler_resources=allocatable,
        disk_size_gb=pool.disk_size_gb,
    )


def system_pool(config: StackConfig) -> PoolSpec | None:
    """The CPU system pool every managed cluster keeps (>= 1 node); None on existing clusters."""
    if config.cloud == "existing":
        return None
    system = config.cluster.system_pool
    machine = system.machine_type or DEFAULT_SYSTEM_MACHINE[config.cloud]
    labels = {
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": machine,
        "topology.kubernetes.io/region": config.cluster.region or "",
        POOL_LABEL: SYSTEM_POOL_NAME,
    }
    if config.cloud == "gcp":
        labels["cloud.google.com/gke-nodepool"] = SYSTEM_POOL_NAME
    elif config.cloud == "azure":
        labels["kubernetes.azure.com/agentpool"] = SYSTEM_POOL_NAME
        labels["kubernetes.azure.com/mode"] = "system"
    elif config.cloud == "aws":
        # The managed group is named from a prefix (replaced create-before-delete), so its
        # eks.amazonaws.com/nodegroup label is not known ahead; select on POOL_LABEL instead.
        labels["eks.amazonaws.com/capacityType"] = "ON_DEMAND"
    vcpus, memory = SYSTEM_MACHINE_SHAPES.get(machine, (0, 0.0))
    return PoolSpec(
        name=SYSTEM_POOL_NAME,
        cloud=config.cloud,
        kind="system",
        accelerator="",
        machine_types=(machine,),
        gpus_per_node=0,
        gpu_resource="",
        allocatable_per_node={},
        min_nodes=system.min_nodes,
        max_nodes=system.max_nodes,
        spot=False,
        zones=tuple(config.cluster.zones or ()),
        declared_labels={POOL_LABEL: SYSTEM_POOL_NAME},
        declared_taints=(),
        node_labels=labels,
        label_choices={},
        node_taints=(),
        vcpus=vcpus,
        memory_gib=memory,
        autoscaler_labels=labels,
        extended_resource_toleration=config.cloud == "gcp",
    )


# Shapes of the default CPU machines (vCPU, GiB), for the scheduler simulation.
SYSTEM_MACHINE_SHAPES: Mapping[str, tuple[int, float]] = {
    "e2-standard-2": (2, 8),
    "e2-standard-4": (4, 16),
    "e2-standard-8": (8, 32),
    "m6i.large": (2, 8),
    "m6i.xlarge": (4, 16),
    "m6i.2xlarge": (8, 32),
    "Standard_D2s_v5": (2, 8),
    "Standard_D4s_v5": (4, 16),
    "Standard_D8s_v5": (8, 32),
}
