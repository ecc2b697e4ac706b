"""EKS Auto Mode: AWS runs Karpenter; one NodePool and EKS NodeClass per pool, on nodes that run
AWS's own image with NVIDIA's driver and device plugin, replaced within 21 days.

Facts (awsdocs/amazon-eks-user-guide at 4d52b4d, latest/ug/automode/): its NodePools take the
well-known and `eks.amazonaws.com/instance-*` labels as requirements but not `kubernetes.io/os`
(create-node-pool.adoc); nodes carry `eks.amazonaws.com/compute-type: auto`.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.aws.model import auto_mode, fabric, provisioners
from components.aws.model.kinds.node_pool_kinds import NodePoolKind
from components.model.capacity import QUEUED, CapacityOrder
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig, SoftwareMode


class AutoModeNodePools(NodePoolKind):
    title = "EKS Auto Mode NodePools"
    provisioner = "auto-mode"
    display = "EKS Auto Mode"
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
        if order == QUEUED:
            return super().capacity_advice(cluster, pool, order)
        return (
            "EKS Auto Mode's NodeClass can select reservations (capacityReservationSelectorTerms), "
            "but selecting any turns off Auto Mode's use of open ODCRs for every NodeClass of the "
            "cluster, and AWS publishes no NodeClass CRD gpufleet could validate them against "
            f"({auto_mode.RESERVATIONS_SOURCE}), so gpufleet builds reservations and Capacity "
            "Blocks under cluster.aws.provisioner karpenter (the same NodePools, with "
            "[reserved, on-demand] fallback) or cluster-autoscaler, not EKS Auto Mode; on Auto "
            "Mode, leave capacity on-demand and make the ODCR open: Auto Mode launches into open "
            "ODCRs that match, though it does not prefer them"
        )


AUTO_MODE = AutoModeNodePools()
