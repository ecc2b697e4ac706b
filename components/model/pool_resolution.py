"""A managed cloud's GPU pool resolved to a `PoolSpec`, in steps: sharing, labels and taints,
what the pods can have of a node, and what the provisioner sees of the pool at zero.

Every step reads the cloud (catalog, hooks) and the pool's kind (`PoolTraits`, node facts); none
knows which cloud or provisioner it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from components.model.admission import ExtendedResourceToleration
from components.model.allocatable import NodeAllocatable
from components.model.catalog.gpus import GPU_MODELS, GpuModel, MachineType
from components.model.daemonsets import NodeDaemonSet, after_daemonsets, gpufleet_daemonsets
from components.model.labels import (
    ACCELERATOR_LABEL,
    DEVICE_PLUGIN_CONFIG_LABEL,
    GPU_RESOURCE,
    MIG_CONFIG_LABEL,
    POOL_LABEL,
)
from components.model.pool_kind import GpuNodeFacts, PoolKind, PoolTraits, SharingVia
from components.model.pool_spec import PLUGIN_FAILS_REQUESTS_GREATER_THAN_ONE, PoolSpec, Taint
from components.model.schema import ClusterConfig, GpuPoolConfig, SoftwareMode, StackConfig


class ResolvingCloud(Protocol):
    """What resolving a pool asks of its cloud (`ManagedCloud` answers all of it)."""

    @property
    def name(self) -> str: ...
    @property
    def gpu_taint(self) -> tuple[str, str]: ...
    @property
    def mig_in_device_plugin_config(self) -> bool: ...
    @property
    def operator_partitions_mig(self) -> bool: ...
    @property
    def accelerator_label(self) -> str: ...
    @property
    def partition_label(self) -> str | None: ...

    @property
    def extended_resource_toleration(self) -> ExtendedResourceToleration: ...
    def pool_kind(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> PoolKind: ...
    def machines(self, pool: GpuPoolConfig) -> list[MachineType]: ...
    def sharing_via(self, mode: SoftwareMode) -> SharingVia: ...
    def mig_partitions(self, model: GpuModel) -> Mapping[str, int]: ...
    def zone_label(self, region: str, zone: str) -> str: ...
    def gpu_operator_preset(self, config: StackConfig) -> dict[str, Any]: ...
    def node_daemonsets(
        self, config: StackConfig, pool: GpuPoolConfig | None
    ) -> tuple[NodeDaemonSet, ...]: ...
    def pool_allocatable(
        self, config: StackConfig, pool: GpuPoolConfig, sized: MachineType
    ) -> NodeAllocatable | None: ...
    def allocatable_notes(self, vcpus: int) -> tuple[str, ...]: ...
    def container_env(self, config: StackConfig, pool: GpuPoolConfig) -> dict[str, str]: ...
    def pod_settings(self, pool: GpuPoolConfig, sharing_via: SharingVia) -> dict[str, object]: ...


@dataclass(frozen=True)
class Sharing:
    """How the pool's GPUs are shared: by whom, and how many clients each GPU takes."""

    via: SharingVia
    per_gpu: int


@dataclass(frozen=True)
class NodeLabels:
    """The labels and taints of the pool's nodes, declared by gpufleet and put by the cloud."""

    declared: dict[str, str]
    declared_taints: tuple[Taint, ...]
    generic: dict[str, str]
    choices: dict[str, tuple[str, ...]]
    facts: GpuNodeFacts

    @property
    def on_nodes(self) -> dict[str, str]:
        return {**self.generic, **self.facts.labels, **self.declared}

    @property
    def taints(self) -> tuple[Taint, ...]:
        return self.declared_taints + tuple(self.facts.taints)

    @property
    def at_zero(self) -> dict[str, str]:
        """What the autoscaler's template of the pool at zero carries (EKS self-managed groups:
        node-template tags written from these labels)."""
        return {k: v for k, v in self.on_nodes.items() if k not in self.facts.only_on_nodes}


@dataclass(frozen=True)
class NodeRoom:
    """What the user's pods can have of one node, and what the provisioner plans a new one with."""

    allocatable: dict[str, int | str]
    daemonsets: tuple[NodeDaemonSet, ...]
    known: bool


def sizing_machine(traits: PoolTraits, machines: list[MachineType]) -> MachineType:
    """The machine whose shape a pod must fit: the autoscaler's simulated first type, or,
    where a type is picked per pod, the largest (a pod that fits it gets that type)."""
    if traits.picks_type_per_pod:
        return max(machines, key=lambda m: (m.vcpus, m.memory_gib))
    return machines[0]


def sharing(cloud: ResolvingCloud, config: StackConfig, pool: GpuPoolConfig) -> Sharing:
    if not (pool.sharing or pool.mig_partition_size):
        return Sharing("none", 1)
    via = cloud.sharing_via(config.gpu_software_mode)
    if pool.sharing:
        return Sharing(via, pool.sharing.max_shared_clients_per_gpu)
    assert pool.mig_partition_size is not None
    model = GPU_MODELS[pool.accelerator]
    return Sharing(via, cloud.mig_partitions(model)[pool.mig_partition_size])


def node_labels(
    cloud: ResolvingCloud,
    config: StackConfig,
    pool: GpuPoolConfig,
    machines: list[MachineType],
    shared: Sharing,
) -> NodeLabels:
    mode = config.gpu_software_mode
    region = config.cluster.region or ""
    declared = {POOL_LABEL: pool.name, ACCELERATOR_LABEL: pool.accelerator}
    if shared.via == "nvidia" and (
        pool.sharing or (pool.mig_partition_size and cloud.mig_in_device_plugin_config)
    ):
        # The device plugin picks this pool's entry of its config map by this label.
        declared[DEVICE_PLUGIN_CONFIG_LABEL] = pool.name
    if pool.mig_partition_size and mode == "gpu-operator" and cloud.operator_partitions_mig:
        # The operator's MIG manager partitions every GPU of the node with this profile.
        declared[MIG_CONFIG_LABEL] = f"all-{pool.mig_partition_size}"
    gpu_taint_key, gpu_taint_value = cloud.gpu_taint
    declared_taints = [Taint(gpu_taint_key, gpu_taint_value, "NoSchedule")]
    declared_taints += [Taint(t.key, t.value, t.effect) for t in pool.taints]

    generic = {
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/region": region,
    }
    kind = cloud.pool_kind(config.cluster, pool)
    facts = kind.node_facts(config, pool, machines, shared.via)
    declared.update(facts.declared)
    declared_taints += facts.declared_taints
    choices = dict(facts.choices)

    zones = tuple(pool.zones or config.cluster.zones or ())
    zone_values = tuple(cloud.zone_label(region, z) for z in zones)
    if len(zone_values) == 1:
        generic["topology.kubernetes.io/zone"] = zone_values[0]
    elif zone_values:
        choices["topology.kubernetes.io/zone"] = zone_values
    if len(machines) == 1:
        generic["node.kubernetes.io/instance-type"] = machines[0].name
    else:
        choices["node.kubernetes.io/instance-type"] = tuple(m.name for m in machines)
    declared.update(pool.labels)
    return NodeLabels(declared, tuple(declared_taints), generic, choices, facts)


def node_room(
    cloud: ResolvingCloud,
    config: StackConfig,
    pool: GpuPoolConfig,
    traits: PoolTraits,
    sized: MachineType,
    gpus_allocatable: int,
) -> NodeRoom:
    mode = config.gpu_software_mode
    allocatable: dict[str, int | str] = {GPU_RESOURCE: gpus_allocatable}
    daemonsets = gpufleet_daemonsets(
        mode,
        dcgm_exporter=config.gpu_software.monitoring.dcgm_exporter,
        own_device_plugin=traits.own_device_plugin,
        operator_preset=cloud.gpu_operator_preset(config) if mode == "gpu-operator" else {},
        mig=pool.mig_partition_size is not None,
    ) + cloud.node_daemonsets(config, pool)
    node = cloud.pool_allocatable(config, pool, sized)
    if node is not None:
        # What the user's pods can have: the DaemonSets' requests come off first.
        allocatable.update(after_daemonsets(node, daemonsets).quantities())
    return NodeRoom(allocatable, daemonsets, node is not None)


def one_shared_gpu_per_container(pool: GpuPoolConfig, via: SharingVia, gpus_per_node: int) -> bool:
    """Whether the node's device plugin fails a container asking for more than one shared GPU:
    GKE's plugin under time-sharing, or MPS on multi-GPU nodes (gpusharing.go; gke-2 N8);
    gpufleet's NVIDIA plugin config: failRequestsGreaterThanOne (eks-3 N21)."""
    if pool.sharing is None:
        return False
    if via == "cloud":
        return pool.sharing.strategy != "mps" or gpus_per_node > 1
    return via == "nvidia" and PLUGIN_FAILS_REQUESTS_GREATER_THAN_ONE


def resolve_gpu_pool(cloud: ResolvingCloud, config: StackConfig, pool: GpuPoolConfig) -> PoolSpec:
    """The pool's `PoolSpec`: its kind's traits, then sharing, labels, node room."""
    kind = cloud.pool_kind(config.cluster, pool)
    traits = kind.traits(config.cluster, pool)
    machines = cloud.machines(pool)
    first = machines[0]
    gpus_per_node = (pool.gpus_per_node or 1) if first.attach_counts else first.gpus
    shared = sharing(cloud, config, pool)
    labels = node_labels(cloud, config, pool, machines, shared)
    gpus_allocatable = gpus_per_node * shared.per_gpu
    sized = sizing_machine(traits, machines)
    room = node_room(cloud, config, pool, traits, sized, gpus_allocatable)
    taints = labels.taints
    return PoolSpec(
        name=pool.name,
        cloud=cloud.name,
        kind="gpu",
        accelerator=pool.accelerator,
        machine_types=tuple(m.name for m in machines),
        gpus_per_node=gpus_per_node,
        gpu_resource=GPU_RESOURCE,
        allocatable_per_node=room.allocatable,
        min_nodes=pool.min_nodes,
        max_nodes=pool.max_nodes,
        spot=pool.spot,
        zones=tuple(pool.zones or config.cluster.zones or ()),
        declared_labels=labels.declared,
        declared_taints=labels.declared_taints,
        node_labels=labels.on_nodes,
        label_choices=labels.choices,
        node_taints=taints,
        vcpus=sized.vcpus,
        memory_gib=sized.memory_gib,
        sharing_strategy=pool.sharing.strategy if pool.sharing else None,
        max_shared_clients_per_gpu=pool.sharing.max_shared_clients_per_gpu
        if pool.sharing
        else None,
        mig_partition_size=pool.mig_partition_size,
        sharing_via=shared.via,
        autoscaler_labels=labels.at_zero,
        autoscaler_taints=taints,
        provisioner=traits.provisioner_name,
        keep_running_annotations=traits.keep_running_annotations,
        autoscaler_resources={
            GPU_RESOURCE: kind.autoscaler_gpus(shared.via, gpus_per_node, gpus_allocatable)
        },
        extended_resource_toleration=cloud.extended_resource_toleration.runs,
        disk_size_gb=pool.disk_size_gb,
        selector_keys=kind.selector_keys(config, pool, shared.via),
        container_env=cloud.container_env(config, pool),
        one_shared_gpu_per_container=one_shared_gpu_per_container(pool, shared.via, gpus_per_node),
        accelerator_label=cloud.accelerator_label,
        partition_label=cloud.partition_label,
        scale_from_zero=traits.scale_from_zero,
        own_device_plugin=traits.own_device_plugin,
        daemonsets=tuple(d.name for d in room.daemonsets),
        allocatable_notes=cloud.allocatable_notes(sized.vcpus) if room.known else (),
        sized_by=sized.name if traits.picks_type_per_pod and len(machines) > 1 else None,
        pod_settings=cloud.pod_settings(pool, shared.via),
        zone_max_nodes=traits.zone_max_nodes,
    )
