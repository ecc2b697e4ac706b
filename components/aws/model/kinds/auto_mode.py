"""EKS Auto Mode: AWS runs Karpenter; one NodePool and EKS NodeClass per pool, on nodes that run
AWS's own image with NVIDIA's driver and device plugin, replaced within 21 days.

Facts (awsdocs/amazon-eks-user-guide at 4d52b4d, latest/ug/automode/): its NodePools take the
well-known and `eks.amazonaws.com/instance-*` labels as requirements but not `kubernetes.io/os`
(create-node-pool.adoc); nodes carry `eks.amazonaws.com/compute-type: auto`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from components.aws.model import auto_mode, capacity, capacity_checks, fabric, provisioners
from components.aws.model.kinds.node_pool_kinds import NodePoolKind
from components.model.capacity import ON_DEMAND, QUEUED, SPOT, CapacityOrder
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig, SoftwareMode


class AutoModeNodePools(NodePoolKind):
    title = "EKS Auto Mode NodePools"
    provisioner = "auto-mode"
    display = "EKS Auto Mode"
    # An ODCR alone, or first with on-demand after it: the shapes AWS's auto-odcr page shows
    # (model/auto_mode.py). Spot after a reservation and Capacity Blocks are not built here.
    capacity_orders: ClassVar[tuple[CapacityOrder, ...]] = (
        ON_DEMAND,
        SPOT,
        (capacity.RESERVED,),
        capacity.RESERVED_FIRST,
    )
    # Auto Mode picks its own image: there is no AMI family to choose.
    refused_keys = ("ami_family",)
    cloud_image = True
    node_fee = True
    cluster_compute = True
    gpu_manufacturer_label = provisioners.AUTO_MODE_GPU_MANUFACTURER_LABEL
    gpu_count_label = provisioners.AUTO_MODE_GPU_COUNT_LABEL

    def fabric_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        if pool.interconnect != "fabric":
            return []
        return [fabric.refusal(path, fabric.AUTO_MODE_WHY)]

    def class_labels(self, pool: GpuPoolConfig) -> dict[str, str]:
        return {provisioners.AUTO_MODE_COMPUTE_LABEL: "auto"}

    def check(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str, warnings: list[str]
    ) -> list[Problem]:
        lifetime = auto_mode.NODE_LIFETIME
        warnings.append(
            f"{path}: EKS Auto Mode replaces every node within 21 days, whatever the pods on "
            f"it: its NodePool drains a node after {lifetime['expireAfter']} (expireAfter) and "
            f"deletes what is left {lifetime['terminationGracePeriod']} later; a job that runs "
            "longer must checkpoint, or run under cluster.aws.provisioner karpenter or "
            "cluster-autoscaler"
        )
        return super().check(cluster, pool, path, warnings)

    def software_problems(
        self, mode: SoftwareMode, pools: Sequence[GpuPoolConfig]
    ) -> list[Problem]:
        problems = [
            Problem(
                f"gpuPools[{index}].{'sharing' if pool.sharing else 'migPartitionSize'}",
                "EKS Auto Mode runs its own NVIDIA device plugin, which gpufleet cannot "
                "configure for sharing or MIG; use cluster.aws.provisioner karpenter or "
                "cluster-autoscaler for this pool",
                pool.sharing.strategy if pool.sharing else pool.mig_partition_size,
            )
            for index, pool in enumerate(pools)
            if pool.sharing or pool.mig_partition_size
        ]
        if mode != "cloud-managed":
            problems.append(
                Problem(
                    "gpuSoftware.mode",
                    "EKS Auto Mode nodes come with NVIDIA's driver and device plugin and a "
                    "read-only root file system, so NVIDIA's plugin or operator from gpufleet "
                    "would conflict or have nothing to install; use auto (cloud-managed)",
                    mode,
                )
            )
        return problems

    def capacity_advice(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder
    ) -> str:
        if order == QUEUED or capacity.reservation_word(order) is None:
            return super().capacity_advice(cluster, pool, order)
        return (
            "on EKS Auto Mode gpufleet builds reserved and [reserved, on-demand] (the "
            "NodeClass's capacityReservationSelectorTerms and the NodePool's reserved capacity "
            f"type, {auto_mode.RESERVATIONS_SOURCE}), not yet Capacity Blocks or Spot after a "
            "reservation: for those use cluster.aws.provisioner karpenter (the same NodePools, "
            "checked against Karpenter's CRDs)"
        )

    def reservation_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, word: str, path: str
    ) -> list[Problem]:
        # Auto Mode's NodeClass selects as Karpenter's does; its term limits are Karpenter's
        # CRD's (AWS publishes none of its own), the zone and type rules hold the same.
        return capacity_checks.karpenter_problems(cluster, pool, word, path)

    def reservation_warnings(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[str]:
        order = capacity.order_of(pool)
        if capacity.reservation_word(order) is None:
            return []
        warnings = [
            f"{path}.capacity: this pool's NodeClass selects reservations, so EKS Auto Mode stops "
            'launching into open ODCRs for every NodeClass of the cluster ("If you configure '
            "capacityReservationSelectorTerms on a NodeClass in a cluster, EKS Auto Mode will no "
            'longer automatically use open ODCRs for any NodeClass", '
            f"{auto_mode.RESERVATIONS_SOURCE}): an open ODCR another pool or team relied on now "
            "sits idle, billed, unless a NodeClass selects it; not checked: gpufleet cannot see "
            "the cluster's other NodeClasses"
        ]
        if order[1:]:
            warnings.append(
                f"{path}.capacity: not checked: whether EKS Auto Mode moves work from on-demand nodes "
                "back into the reservation once it has room (AWS documents only that reserved nodes "
                "are preferred when launching); a node started on on-demand while the reservation "
                "is full may keep running, billed beside the reservation, until it is empty"
            )
        return warnings


AUTO_MODE = AutoModeNodePools()
