"""What every EKS pool kind shares: the traits it derives from its data, the checks every kind
runs (the cluster's zones, a mix of instance types), and the labels every GPU node carries.

A kind's file says only what differs: its data (class attributes) and its own checks, node
labels, capacity advice and reservation rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import ClassVar

from components.aws.model import (
    capacity,
    capacity_checks,
    fabric,
    groups,
    image_start,
    provisioners,
)
from components.aws.model import config as aws_config
from components.aws.model.asg_limits import EKS_ACCELERATOR_LABEL
from components.aws.model.catalog import CATALOG
from components.model.capacity import ON_DEMAND, SPOT, CapacityOrder, ReservationCap
from components.model.catalog.gpus import MachineType
from components.model.pool_kind import (
    CLUSTER_AUTOSCALER,
    GpuNodeFacts,
    PoolKind,
    PoolTraits,
    ScaleFromZero,
    SharingVia,
)
from components.model.pool_spec import SAFE_TO_EVICT
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig, SoftwareMode, StackConfig


class EksPoolKind(PoolKind):
    """One way EKS gets GPU nodes. Class attributes are the kind's data."""

    # `cluster.aws.provisioner` and, under the cluster autoscaler, `gpuPools[].aws.nodeGroup`.
    provisioner: ClassVar[str]
    node_group: ClassVar[str | None] = None
    # What scales the pool from zero, as fit names it.
    display: ClassVar[str] = CLUSTER_AUTOSCALER
    # One NodePool per pool, a node per pending pod (no groups, no minimum, no per-zone cap).
    node_pools: ClassVar[bool] = False
    capacity_orders: ClassVar[tuple[CapacityOrder, ...]] = (ON_DEMAND, SPOT)
    keep_running: ClassVar[Mapping[str, str]] = SAFE_TO_EVICT
    # Where the autoscaler's picture of the pool at zero comes from.
    scale_from_zero: ClassVar[ScaleFromZero] = "pool"
    # The nodes run AWS's own image and GPU software (Auto Mode): no allocatable, no choice.
    cloud_image: ClassVar[bool] = False
    # The node's price carries a management fee per instance-hour (Auto Mode).
    node_fee: ClassVar[bool] = False
    # The nodes join with gpufleet's EC2_LINUX node role (self-managed groups, Karpenter).
    joins_with_node_role: ClassVar[bool] = False
    # The nodes launch with an instance profile gpufleet makes (Karpenter makes its own).
    instance_profile: ClassVar[bool] = True
    # The node role exists with the provisioner, before any pool (Karpenter's controller).
    node_role_always: ClassVar[bool] = False
    # The cluster's own compute launches the nodes (Auto Mode's computeConfig); none installed.
    cluster_compute: ClassVar[bool] = False
    # The system pool's minimum a new stack starts with: the controller's replicas' nodes.
    system_nodes: ClassVar[int] = 1
    # An installed controller of this kind may pass only its own node role to nodes.
    installed_needs_node_role: ClassVar[bool] = False
    # A new launch template version replaces the running nodes (EKS managed node groups).
    template_change_rolls: ClassVar[bool] = False
    # What turning `interconnect: fabric` on or off does to running nodes (PoolFabric.notes).
    fabric_change_note: ClassVar[str] = fabric.GROUP_CHANGE_NOTE

    def traits(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> PoolTraits:
        return PoolTraits(
            provisioner_name=self.display,
            picks_type_per_pod=self.node_pools,
            scale_from_zero=self.scale_from_zero,
            own_device_plugin=self.own_device_plugin(pool),
            allocatable_known=not self.cloud_image,
            zone_max_nodes=self.zone_max_nodes(cluster, pool),
            keep_running_annotations=self.keep_running,
            capacity_orders=self.capacity_orders,
        )

    def own_device_plugin(self, pool: GpuPoolConfig) -> bool:
        """Bottlerocket's NVIDIA variant (and Auto Mode's image) runs its own device plugin."""
        return self.cloud_image or aws_config.pool_options(pool).ami_family == "bottlerocket"

    def zone_max_nodes(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> int | None:
        """The most nodes one zone of the pool holds: a group per zone gets a share of
        maxNodes; a NodePool's limits are pool-wide (any zone can take them all)."""
        if self.node_pools:
            return None
        zones = pool.zones or cluster.zones or []
        per_zone = aws_config.pool_options(pool).max_nodes_per_zone
        return groups.zone_capacity(pool.max_nodes, zones, per_zone)

    def image_start(self, pool: GpuPoolConfig) -> image_start.EksImageStart:
        """How the pool's nodes start images fast (components/aws/model/image_start.py)."""
        options = aws_config.pool_options(pool)
        return image_start.image_start(
            options.ami_family,
            options,
            cloud_image=self.cloud_image,
            rolls_nodes=self.template_change_rolls,
        )

    # --- checks ----------------------------------------------------------------------------

    def check(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str, warnings: list[str]
    ) -> list[Problem]:
        problems = self.machine_mix_problems(pool, path, warnings)
        if cluster.zones and pool.zones:
            outside = [z for z in pool.zones if z not in cluster.zones]
            if outside:
                problems.append(
                    Problem(
                        f"{path}.zones", f"not among cluster.zones {list(cluster.zones)}", outside
                    )
                )
        options = aws_config.pool_options(pool)
        problems += image_start.problems(
            options.ami_family,
            options,
            cloud_image=self.cloud_image,
            disk_size_gb=pool.disk_size_gb,
            path=path,
            warnings=warnings,
        )
        return problems + self.pool_problems(cluster, pool, path)

    def machine_mix_problems(
        self, pool: GpuPoolConfig, path: str, warnings: list[str]
    ) -> list[Problem]:
        """Several instance types in one pool: one GPU count, and (where the autoscaler
        simulates the first type) a warning when their shapes differ."""
        names = capacity.pool_machine_types(pool)
        found = [CATALOG.machine(pool.accelerator, name) for name in names]
        machines = [m for m in found if m is not None]
        if len(machines) < 2:
            return []
        problems = []
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
        if len(shapes) > 1 and not self.node_pools:
            first = machines[0]
            warnings.append(
                f"{path}.machineTypes: vCPU or memory differ ({', '.join(f'{m.name} {m.vcpus} vCPU/{m.memory_gib:g} GiB' for m in machines)}); "
                f"the cluster autoscaler sizes the group at zero from the first type, {first.name}"
            )
        return problems

    def pool_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        """What this kind's pool objects can express (keys of other kinds, limits)."""
        return []

    def fabric_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        """A group pool's launch template lays out one set of EFA interfaces: every instance
        type of the pool must have the same network cards (terraform-aws-modules/eks README,
        "EFA support": mixing types of different interface counts is not supported)."""
        if pool.interconnect != "fabric":
            return []
        return fabric.layout_problems(capacity.pool_machine_types(pool), f"{path}.machineTypes")

    def cluster_problems(self, cluster: ClusterConfig) -> list[Problem]:
        """What this kind needs of the cluster (e.g. a Kubernetes minor its controller runs on)."""
        return []

    def software_problems(
        self, mode: SoftwareMode, pools: Sequence[GpuPoolConfig]
    ) -> list[Problem]:
        """GPU software settings this kind's nodes cannot take."""
        return []

    def capacity_advice(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder
    ) -> str:
        """What to do instead of an order this kind does not build, and why."""
        return capacity.common_advice(self.display, order)

    def reservation_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, word: str, path: str
    ) -> list[Problem]:
        """How this kind launches into the pool's reservations, and what it cannot."""
        return []

    def reservation_warnings(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[str]:
        """What gpufleet cannot check of how this kind launches into the pool's reservations."""
        return []

    def check_capacity(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder, path: str
    ) -> list[Problem]:
        return capacity_checks.check(cluster, pool, order, path, self.reservation_problems)

    def capacity_warnings(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str, today: date
    ) -> list[str]:
        warnings = self.reservation_warnings(cluster, pool, path)
        return warnings + capacity.warnings(cluster, pool, path, today)

    def reservation_cap(self, config: StackConfig, pool: GpuPoolConfig) -> ReservationCap | None:
        return capacity.reservation_cap(pool, config.today)

    def max_pods(
        self, pool: GpuPoolConfig, machines: list[MachineType], machine: str
    ) -> int | None:
        """The pods a node of `machine` may run where the kind caps them below the network's
        figure."""
        return None

    # --- node facts ------------------------------------------------------------------------

    def node_facts(
        self,
        config: StackConfig,
        pool: GpuPoolConfig,
        machines: list[MachineType],
        sharing_via: SharingVia,
    ) -> GpuNodeFacts:
        facts = GpuNodeFacts(
            declared={"nvidia.com/gpu": "true", EKS_ACCELERATOR_LABEL: f"nvidia-{pool.accelerator}"}
        )
        if not self.cloud_image and provisioners.nodeadm_labels_gpu(config.cluster, pool):
            # nodeadm labels the node itself; declared too, so the autoscaler's template at zero
            # (node-template tags, the managed group's labels, the NodePool) carries it as well.
            facts.declared[provisioners.NODEADM_GPU_LABEL] = "true"
        self.kind_facts(facts, pool, machines)
        return facts

    def kind_facts(
        self, facts: GpuNodeFacts, pool: GpuPoolConfig, machines: list[MachineType]
    ) -> None:
        """The labels a pool's nodes get from how this kind launches them."""
