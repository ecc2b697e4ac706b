"""What the three managed clouds share: catalog-checked pools and nodes the cloud labels itself.

`ManagedCloud` implements what GKE, EKS and AKS answer alike, asks each through small hooks for
what differs (GPU taint, node labels, zone names); a cloud that works differently overrides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from components.model.allocatable import GIB, MIB, NodeAllocatable
from components.model.catalog.gpus import GPU_MODELS, MachineType
from components.model.cloud import Cloud, NameRule
from components.model.daemonsets import after_daemonsets, gpufleet_daemonsets
from components.model.labels import (
    ACCELERATOR_LABEL,
    DEVICE_PLUGIN_CONFIG_LABEL,
    GPU_RESOURCE,
    MIG_CONFIG_LABEL,
    POOL_LABEL,
)
from components.model.machine_checks import machine_problems
from components.model.pool_spec import PLUGIN_FAILS_REQUESTS_GREATER_THAN_ONE, PoolSpec, Taint
from components.model.problems import Problem
from components.model.schema import (
    SYSTEM_POOL_NAME,
    ClusterConfig,
    GpuPoolConfig,
    SoftwareMode,
    StackConfig,
)

SharingVia = Literal["cloud", "nvidia", "none"]


@dataclass
class GpuNodeFacts:
    """What a cloud adds to a GPU pool's nodes: labels gpufleet declares, and those (and taints)
    the cloud puts on its nodes itself."""

    declared: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[Taint] = field(default_factory=list)
    # Taints gpufleet itself sets on the pool's nodes (sent to the cloud), beyond the GPU taint
    # and the configured ones.
    declared_taints: list[Taint] = field(default_factory=list)
    # Labels whose value differs between the pool's nodes (e.g. Spot or on-demand).
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Labels of `labels` on the nodes that the autoscaler's template of the pool at zero lacks.
    only_on_nodes: set[str] = field(default_factory=set)


class ManagedCloud(Cloud):
    """A cloud whose cluster and pools gpufleet creates from its GPU catalog."""

    # The taint each cloud documents for GPU nodes (gpufleet declares it explicitly).
    gpu_taint: ClassVar[tuple[str, str]]
    default_system_machine: ClassVar[str]
    # How the cloud names its machine types (the system pool's is checked against it).
    machine_name_rule: ClassVar[NameRule]
    # (vCPU, GiB) of the CPU machines a system pool may use, for the scheduler simulation.
    system_machine_shapes: ClassVar[Mapping[str, tuple[int, float]]]
    # The system pool's boot disk (GiB), which the cloud's cluster component gives its nodes.
    system_disk_size_gb: ClassVar[int] = 100
    # GPU types are offered in some zones only: a pool must name its zones (here or cluster).
    zones_required: ClassVar[bool] = True
    # One pool may list several machine types (one auto scaling group, several instance types).
    several_machine_types: ClassVar[bool] = False
    # The device plugin's per-pool config also carries MIG (the cloud partitions the GPUs).
    mig_in_device_plugin_config: ClassVar[bool] = False
    # The GPU Operator's MIG manager partitions this cloud's MIG pools.
    operator_partitions_mig: ClassVar[bool] = True

    # --- config checks ---------------------------------------------------------------------

    def check_pool(
        self,
        cluster: ClusterConfig,
        mode: SoftwareMode,
        pool: GpuPoolConfig,
        path: str,
        warnings: list[str],
    ) -> list[Problem]:
        problems: list[Problem] = []
        if self.zones_required and not (pool.zones or cluster.zones):
            problems.append(
                Problem(
                    f"{path}.zones",
                    "is required (here or as cluster.zones): GPU types are offered in some zones only",
                    has_value=False,
                )
            )
        region = cluster.region
        if region is not None and self.region_known(cluster):
            problems += self.zone_problems(region, pool.zones or [], f"{path}.zones")
        problems += self.check_machines(pool, cluster, path, warnings)
        problems += self.check_pool_limits(cluster, pool, path)
        return problems

    def check_pool_limits(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        """What this cloud's pool resources can express, beyond zones and machine types."""
        return []

    def check_machines(
        self, pool: GpuPoolConfig, cluster: ClusterConfig, path: str, warnings: list[str]
    ) -> list[Problem]:
        kubernetes_version = cluster.kubernetes_version
        problems: list[Problem] = []
        names = pool.machine_types or ([pool.machine_type] if pool.machine_type else [])
        # Left out, the machine type is the catalog's default, which must take the pool too.
        default = self.catalog.defaults.get(pool.accelerator)
        defaulted = not names and default is not None
        if defaulted:
            names = [default or ""]
        key = "machineTypes" if pool.machine_types is not None else "machineType"
        candidates = self.catalog.machines_for(pool.accelerator)
        if not candidates:
            offered = ", ".join(self.catalog.models())
            problems.append(
                Problem(
                    f"{path}.accelerator",
                    f"not offered on {self.name}; offered there: {offered}",
                    pool.accelerator,
                )
            )
            return problems
        if pool.machine_types is not None and not self.several_machine_types:
            problems.append(
                Problem(
                    f"{path}.machineTypes",
                    "several machine types are only supported on aws; use machineType",
                    names,
                )
            )
        if pool.machine_types is not None and not pool.machine_types:
            problems.append(
                Problem(f"{path}.machineTypes", "must list at least one machine type", [])
            )
        allowed = ", ".join(m.name for m in candidates)
        machines: list[MachineType] = []
        for index, name in enumerate(names):
            where = f"{path}.{key}[{index}]" if pool.machine_types is not None else f"{path}.{key}"
            machine = self.catalog.machine(pool.accelerator, name)
            if machine is None:
                carries = self.catalog.carriers_of(name)
                known = (
                    f"it carries {', '.join(carries)}"
                    if carries
                    else "not a GPU machine type we know"
                )
                problems.append(
                    Problem(
                        where,
                        f"cannot carry {pool.accelerator} on {self.name} ({known}); allowed: {allowed}",
                        name,
                    )
                )
                continue
            machines.append(machine)
            problems += machine_problems(
                machine,
                pool,
                kubernetes_version,
                self.name,
                where=where,
                path=path,
                defaulted=defaulted,
            )
        if len(machines) > 1:
            gpu_counts = {m.name: m.gpus for m in machines}
            if len(set(gpu_counts.values())) > 1:
                problems.append(
                    Problem(
                        f"{path}.machineTypes",
                        "every instance type of one auto scaling group must have the same GPU count "
                        f"(the autoscaler simulates the first); got {gpu_counts}",
                        names,
                    )
                )
            shapes = {(m.vcpus, m.memory_gib) for m in machines}
            if len(shapes) > 1 and not self.picks_type_per_pod(cluster):
                first = machines[0]
                warnings.append(
                    f"{path}.machineTypes: vCPU or memory differ ({', '.join(f'{m.name} {m.vcpus} vCPU/{m.memory_gib:g} GiB' for m in machines)}); "
                    f"the cluster autoscaler sizes the group at zero from the first type, {first.name}"
                )
        return problems

    # --- pools -----------------------------------------------------------------------------

    def allocatable_known(self, config: StackConfig) -> bool:
        """Whether the GPU nodes' reservations are this cloud's documented ones."""
        return True

    def provisioner_name(self, config: StackConfig) -> str:
        """What scales GPU pools from zero, as fit names it."""
        return "the cluster autoscaler"

    def provisioner_memory_overhead(self, config: StackConfig) -> float:
        """Memory fraction a provisioner plans new nodes without, beyond the allocatable's."""
        return 0.0

    def picks_type_per_pod(self, cluster: ClusterConfig) -> bool:
        """Whether the provisioner chooses among a pool's machine types for each pending pod
        (Karpenter) rather than simulating one type per group (the cluster autoscaler)."""
        return False

    def sizing_machine(self, config: StackConfig, machines: list[MachineType]) -> MachineType:
        """The machine whose shape a pod must fit: the autoscaler's simulated first type, or,
        where a type is picked per pod, the largest (a pod that fits it gets that type)."""
        if self.picks_type_per_pod(config.cluster):
            return max(machines, key=lambda m: (m.vcpus, m.memory_gib))
        return machines[0]

    def machines(self, pool: GpuPoolConfig) -> list[MachineType]:
        """The pool's machine types (the catalog's default when it names none); checked config."""
        default = self.catalog.defaults.get(pool.accelerator, "")
        names = pool.machine_types or [pool.machine_type or default]
        found = [self.catalog.machine(pool.accelerator, name) for name in names]
        return [m for m in found if m is not None]

    def sharing_via(self, mode: SoftwareMode) -> SharingVia:
        """Who delivers sharing and MIG for the software mode: the cloud or NVIDIA's software."""
        return "nvidia"

    @staticmethod
    def zone_label(region: str, zone: str) -> str:
        """The `topology.kubernetes.io/zone` value of a configured zone name."""
        return zone

    def gpu_node_facts(
        self,
        config: StackConfig,
        pool: GpuPoolConfig,
        machine: MachineType,
        sharing_via: SharingVia,
    ) -> GpuNodeFacts:
        """The cloud's labels and taints on this pool's nodes (after gpufleet's own labels)."""
        return GpuNodeFacts()

    # The node label naming a node's pool (the cloud's own, where it sets one).
    pool_label_key: ClassVar[str] = POOL_LABEL

    def selector_keys(
        self, config: StackConfig, pool: GpuPoolConfig, sharing_via: SharingVia
    ) -> tuple[str, ...]:
        """The node labels a pod selects this pool by."""
        return (self.pool_label_key,)

    def container_env(self, config: StackConfig, pool: GpuPoolConfig) -> dict[str, str]:
        return {}

    def scale_from_zero(
        self, config: StackConfig, pool: GpuPoolConfig
    ) -> Literal["pool", "node-template-tags", "unmanaged"]:
        return "pool"

    def own_device_plugin(self, config: StackConfig, pool: GpuPoolConfig) -> bool:
        return False

    def zone_max_nodes(self, config: StackConfig, pool: GpuPoolConfig) -> int | None:
        return None  # the most nodes one zone of the pool holds (None: all of maxNodes)

    def pool_allocatable(
        self, config: StackConfig, pool: GpuPoolConfig, sized: MachineType
    ) -> NodeAllocatable | None:
        if not self.allocatable_known(config):  # a node of the pool, of machine `sized`
            return None
        return self.node_allocatable(sized.name, sized.vcpus, sized.memory_gib, pool.disk_size_gb)

    def autoscaler_gpus(self, sharing_via: SharingVia, physical: int, allocatable: int) -> int:
        """The GPU count the cluster autoscaler expects of a new node of the pool."""
        return allocatable

    def pod_settings(self, pool: GpuPoolConfig, sharing_via: SharingVia) -> dict[str, object]:
        """Pod-level fields a GPU pod on this pool must set."""
        return {}

    accelerator_label: ClassVar[str] = ACCELERATOR_LABEL
    partition_label: ClassVar[str | None] = None

    def resolve_pool(self, config: StackConfig, pool: GpuPoolConfig) -> PoolSpec:
        mode = config.gpu_software_mode
        machines = self.machines(pool)
        first = machines[0]
        gpus_per_node = (pool.gpus_per_node or 1) if first.attach_counts else first.gpus
        zones = tuple(pool.zones or config.cluster.zones or ())
        region = config.cluster.region or ""
        model = GPU_MODELS[pool.accelerator]

        sharing_via: SharingVia = "none"
        if pool.sharing or pool.mig_partition_size:
            sharing_via = self.sharing_via(mode)
        per_gpu = 1
        if pool.sharing:
            per_gpu = pool.sharing.max_shared_clients_per_gpu
        elif pool.mig_partition_size:
            per_gpu = self.mig_partitions(model)[pool.mig_partition_size]

        declared = {POOL_LABEL: pool.name, ACCELERATOR_LABEL: pool.accelerator}
        if sharing_via == "nvidia" and (
            pool.sharing or (pool.mig_partition_size and self.mig_in_device_plugin_config)
        ):
            # The device plugin picks this pool's entry of its config map by this label.
            declared[DEVICE_PLUGIN_CONFIG_LABEL] = pool.name
        if pool.mig_partition_size and mode == "gpu-operator" and self.operator_partitions_mig:
            # The operator's MIG manager partitions every GPU of the node with this profile.
            declared[MIG_CONFIG_LABEL] = f"all-{pool.mig_partition_size}"
        gpu_taint_key, gpu_taint_value = self.gpu_taint
        declared_taints = [Taint(gpu_taint_key, gpu_taint_value, "NoSchedule")]
        declared_taints += [Taint(t.key, t.value, t.effect) for t in pool.taints]

        generic = {
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "topology.kubernetes.io/region": region,
        }
        choices: dict[str, tuple[str, ...]] = {}
        facts = self.gpu_node_facts(config, pool, first, sharing_via)
        declared.update(facts.declared)
        declared_taints += facts.declared_taints
        choices.update(facts.choices)

        zone_values = tuple(self.zone_label(region, z) for z in zones)
        if len(zone_values) == 1:
            generic["topology.kubernetes.io/zone"] = zone_values[0]
        elif zone_values:
            choices["topology.kubernetes.io/zone"] = zone_values
        if len(machines) == 1:
            generic["node.kubernetes.io/instance-type"] = first.name
        else:
            choices["node.kubernetes.io/instance-type"] = tuple(m.name for m in machines)

        declared.update(pool.labels)
        node_labels = {**generic, **facts.labels, **declared}
        gpus_allocatable = gpus_per_node * per_gpu
        allocatable: dict[str, int | str] = {GPU_RESOURCE: gpus_allocatable}
        own_device_plugin = self.own_device_plugin(config, pool)
        daemonsets = gpufleet_daemonsets(
            mode,
            dcgm_exporter=config.gpu_software.monitoring.dcgm_exporter,
            own_device_plugin=own_device_plugin,
            operator_preset=self.gpu_operator_preset(config) if mode == "gpu-operator" else {},
            mig=pool.mig_partition_size is not None,
        ) + self.node_daemonsets(config, pool)
        sized = self.sizing_machine(config, machines)
        node = self.pool_allocatable(config, pool, sized)
        autoscaler_shape: dict[str, str] = {}
        shape_note: str | None = None
        if node is not None:
            # What the user's pods can have: the DaemonSets' requests come off first.
            left = after_daemonsets(node, daemonsets)
            allocatable.update(left.quantities())
            overhead = self.provisioner_memory_overhead(config)
            if overhead:
                # The provisioner plans new nodes with less memory than they will report.
                assumed = left.memory_bytes - int(overhead * sized.memory_gib * GIB)
                autoscaler_shape["memory"] = f"{assumed // MIB}Mi"
                shape_note = (
                    f"it plans new nodes with {overhead:.1%} of their memory kept for the "
                    "hypervisor: ask for less memory, or allow a larger machine type"
                )
        taints = tuple(declared_taints) + tuple(facts.taints)
        # What the autoscaler sees at zero (EKS self-managed: tags written from these labels).
        autoscaler_labels = {**generic, **facts.labels, **declared}
        for key in facts.only_on_nodes:
            autoscaler_labels.pop(key, None)
        return PoolSpec(
            name=pool.name,
            cloud=self.name,
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
            vcpus=sized.vcpus,
            memory_gib=sized.memory_gib,
            sharing_strategy=pool.sharing.strategy if pool.sharing else None,
            max_shared_clients_per_gpu=pool.sharing.max_shared_clients_per_gpu
            if pool.sharing
            else None,
            mig_partition_size=pool.mig_partition_size,
            sharing_via=sharing_via,
            autoscaler_labels=autoscaler_labels,
            autoscaler_taints=taints,
            autoscaler_shape=autoscaler_shape,
            autoscaler_shape_note=shape_note,
            provisioner=self.provisioner_name(config),
            autoscaler_resources={
                GPU_RESOURCE: self.autoscaler_gpus(sharing_via, gpus_per_node, gpus_allocatable)
            },
            extended_resource_toleration=self.extended_resource_toleration.runs,
            disk_size_gb=pool.disk_size_gb,
            selector_keys=self.selector_keys(config, pool, sharing_via),
            container_env=self.container_env(config, pool),
            # GKE's plugin: time-sharing, or MPS on multi-GPU nodes (gpusharing.go; gke-2 N8);
            # gpufleet's NVIDIA plugin config: failRequestsGreaterThanOne (eks-3 N21).
            one_shared_gpu_per_container=pool.sharing is not None
            and (
                (sharing_via == "cloud" and (pool.sharing.strategy != "mps" or gpus_per_node > 1))
                or (sharing_via == "nvidia" and PLUGIN_FAILS_REQUESTS_GREATER_THAN_ONE)
            ),
            accelerator_label=self.accelerator_label,
            partition_label=self.partition_label,
            scale_from_zero=self.scale_from_zero(config, pool),
            own_device_plugin=own_device_plugin,
            daemonsets=tuple(d.name for d in daemonsets),
            allocatable_notes=self.allocatable_notes(sized.vcpus) if node is not None else (),
            sized_by=sized.name
            if self.picks_type_per_pod(config.cluster) and len(machines) > 1
            else None,
            pod_settings=self.pod_settings(pool, sharing_via),
            zone_max_nodes=self.zone_max_nodes(config, pool),
        )

    def system_node_labels(self) -> dict[str, str]:
        """The cloud's own labels on the system pool's nodes."""
        return {}

    def system_pool(self, config: StackConfig) -> PoolSpec | None:
        """The CPU system pool every cluster gpufleet creates keeps (>= 1 node); an adopted
        cluster's CPU nodes are its owner's."""
        if self.adopted(config.cluster):
            return None
        system = config.cluster.system_pool
        machine = system.machine_type or self.default_system_machine
        labels = {
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "node.kubernetes.io/instance-type": machine,
            "topology.kubernetes.io/region": config.cluster.region or "",
            POOL_LABEL: SYSTEM_POOL_NAME,
            **self.system_node_labels(),
        }
        vcpus, memory = self.system_machine_shapes.get(machine, (0, 0.0))
        daemonsets = self.node_daemonsets(config, None)
        node = (
            self.node_allocatable(machine, vcpus, memory, self.system_disk_size_gb)
            if vcpus and memory
            else None
        )
        return PoolSpec(
            name=SYSTEM_POOL_NAME,
            cloud=self.name,
            kind="system",
            accelerator="",
            machine_types=(machine,),
            gpus_per_node=0,
            gpu_resource="",
            allocatable_per_node=after_daemonsets(node, daemonsets).quantities() if node else {},
            daemonsets=tuple(d.name for d in daemonsets) if node else (),
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
            extended_resource_toleration=self.extended_resource_toleration.runs,
            selector_keys=(self.pool_label_key,),
            disk_size_gb=self.system_disk_size_gb,
        )
