"""What the three managed clouds share: catalog-checked pools and nodes the cloud labels itself.

`ManagedCloud` implements what GKE, EKS and AKS answer alike. What differs between the ways one
cloud makes pools is asked of the pool's kind (`Cloud.pool_kind`, components/model/pool_kind.py:
data, pool checks, node facts, selector keys, capacity); what differs between clouds, through
the few hooks below (GPU taint, zone names, allocatable, sharing).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from components.model.allocatable import NodeAllocatable
from components.model.catalog.gpus import MachineType
from components.model.cloud import Cloud, NameRule
from components.model.daemonsets import after_daemonsets
from components.model.labels import ACCELERATOR_LABEL, POOL_LABEL
from components.model.machine_checks import machine_problems
from components.model.pool_kind import PoolKind, SharingVia
from components.model.pool_resolution import resolve_gpu_pool
from components.model.pool_spec import PoolSpec
from components.model.problems import Problem
from components.model.schema import (
    SYSTEM_POOL_NAME,
    ClusterConfig,
    GpuPoolConfig,
    SoftwareMode,
    StackConfig,
)


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
    # One pool may list several machine types (`gpuPools[].machineTypes`).
    several_machine_types: ClassVar[bool] = False
    # Why a pool here takes one machine type only (where `several_machine_types` is False).
    one_machine_type_advice: ClassVar[str] = "takes one machine type here; use machineType"
    # The device plugin's per-pool config also carries MIG (the cloud partitions the GPUs).
    mig_in_device_plugin_config: ClassVar[bool] = False
    # The GPU Operator's MIG manager partitions this cloud's MIG pools.
    operator_partitions_mig: ClassVar[bool] = True
    # The kind of pool the cluster's CPU system pool is (pods select it by that kind's pool label).
    system_pool_kind: ClassVar[PoolKind]
    # Node label whose value names the GPU model, and the one naming a MIG partition size.
    accelerator_label: ClassVar[str] = ACCELERATOR_LABEL
    partition_label: ClassVar[str | None] = None

    # --- config checks ---------------------------------------------------------------------

    def check_pool(
        self,
        cluster: ClusterConfig,
        mode: SoftwareMode,
        pool: GpuPoolConfig,
        path: str,
        warnings: list[str],
    ) -> list[Problem]:
        """Zones, machine types against the catalog, then what the pool's kind can express."""
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
        problems += self.pool_kind(cluster, pool).check(cluster, pool, path, warnings)
        return problems

    def check_machines(
        self, pool: GpuPoolConfig, cluster: ClusterConfig, path: str, warnings: list[str]
    ) -> list[Problem]:
        """The pool's machine types carry its accelerator here and suit its settings."""
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
            problems.append(Problem(f"{path}.machineTypes", self.one_machine_type_advice, names))
        if pool.machine_types is not None and not pool.machine_types:
            problems.append(
                Problem(f"{path}.machineTypes", "must list at least one machine type", [])
            )
        allowed = ", ".join(m.name for m in candidates)
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
            problems += machine_problems(
                machine,
                pool,
                kubernetes_version,
                self.name,
                where=where,
                path=path,
                defaulted=defaulted,
            )
        return problems

    # --- pools -----------------------------------------------------------------------------

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

    def container_env(self, config: StackConfig, pool: GpuPoolConfig) -> dict[str, str]:
        """Environment a CUDA container needs on this pool's nodes (where the cloud mounts its
        driver somewhere the container does not look by itself)."""
        return {}

    def pool_allocatable(
        self, config: StackConfig, pool: GpuPoolConfig, sized: MachineType
    ) -> NodeAllocatable | None:
        """The allocatable of a pool node of machine `sized`, before DaemonSets (None where
        the kind's nodes run an image whose reservations are not published)."""
        if not self.pool_kind(config.cluster, pool).traits(config.cluster, pool).allocatable_known:
            return None
        return self.node_allocatable(sized.name, sized.vcpus, sized.memory_gib, pool.disk_size_gb)

    def pod_settings(self, pool: GpuPoolConfig, sharing_via: SharingVia) -> dict[str, object]:
        """Pod-level fields a GPU pod on this pool must set."""
        return {}

    def resolve_pool(self, config: StackConfig, pool: GpuPoolConfig) -> PoolSpec:
        """The pool's nodes as the scheduler and the provisioner will see them
        (components/model/pool_resolution.py has the steps)."""
        return resolve_gpu_pool(self, config, pool)

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
            selector_keys=(self.system_pool_kind.pool_label_key,),
            disk_size_gb=self.system_disk_size_gb,
        )
