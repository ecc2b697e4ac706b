"""What EKS's two kinds of cluster autoscaler groups share (one group per pool and zone, which
gpufleet's or the owner's cluster autoscaler scales from zero): self-managed auto scaling groups
and EKS managed node groups."""

from __future__ import annotations

from typing import ClassVar

from components.aws.model import capacity, capacity_checks, fabric, groups, provisioners
from components.aws.model import config as aws_config
from components.aws.model.fabric import fabric_group
from components.aws.model.kinds.base import EksPoolKind
from components.model.capacity import ON_DEMAND, QUEUED, SPOT, CapacityOrder
from components.model.catalog.gpus import MachineType
from components.model.catalog.provisioning import BEST_EFFORT_ATOMIC
from components.model.pool_kind import GpuNodeFacts
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

# The GPU taint's key, which gpufleet puts on every pool (Aws.gpu_taint).
GPU_TAINT_KEY = "nvidia.com/gpu"


class AutoscalerGroups(EksPoolKind):
    provisioner = "cluster-autoscaler"
    capacity_orders: ClassVar[tuple[CapacityOrder, ...]] = (
        ON_DEMAND,
        SPOT,
        *capacity.GROUP_ORDERS,
        QUEUED,
    )
    # EKS scales a managed Capacity Block group to 0 and drains it before the block ends.
    drains_capacity_blocks: ClassVar[bool] = False

    def pool_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        problems = provisioners.provisioner_keys(
            pool, path, aws_config.KARPENTER_ONLY_POOL_KEYS, "karpenter"
        )
        zones = pool.zones or cluster.zones or []
        options = aws_config.pool_options(pool)
        problems += groups.size_problems(pool, options.max_nodes_per_zone, len(zones), path)
        problems += self.group_limits(cluster, pool, path)
        # One node-template tag per taint key: the GPU taint's key and repeats cannot be expressed.
        keys = [GPU_TAINT_KEY, *(t.key for t in pool.taints)]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            problems.append(
                Problem(
                    f"{path}.taints",
                    "taint keys must be unique on aws (nvidia.com/gpu is already the GPU taint)",
                    repeated,
                )
            )
        return problems

    def group_limits(self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str) -> list[Problem]:
        """What this kind's group can carry (names, tags)."""
        return []

    def capacity_advice(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder
    ) -> str:
        word = capacity.single_reservation(order)
        if word is None:
            return super().capacity_advice(cluster, pool, order)
        return (
            "a node group's launch template targets its reservation and launches nothing else, "
            f"so under the cluster autoscaler a pool is {capacity.RESERVED} or "
            f"{capacity.CAPACITY_BLOCK} alone, or, on self-managed groups, "
            f"[{', '.join(capacity.RESERVED_FIRST)}] (the group's "
            f"{capacity.RESERVATIONS_FIRST_PREFERENCE}): write one of those, or use "
            "cluster.aws.provisioner: karpenter for another fallback"
        )

    def provisioning_class(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> str | None:
        # gpufleet's cluster autoscaler, started for ProvisioningRequests (provisioning_requests).
        return BEST_EFFORT_ATOMIC.name

    def reservation_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, word: str, path: str
    ) -> list[Problem]:
        return capacity_checks.group_problems(
            cluster, pool, word, path, drains_blocks=self.drains_capacity_blocks
        )

    def kind_facts(
        self, facts: GpuNodeFacts, pool: GpuPoolConfig, machines: list[MachineType]
    ) -> None:
        self.group_labels(facts, pool)
        if pool.spot:
            key, value = provisioners.SPOT_LABEL
            facts.declared[key] = value
        if provisioners.zone_balanced(pool):
            facts.declared[provisioners.BALANCING_LABEL] = pool.name
        if fabric_group(pool):
            # What the EFA device plugin's DaemonSet selects (components/aws/efa_plugin.py).
            facts.declared[fabric.FABRIC_LABEL] = fabric.FABRIC_LABEL_VALUE

    def group_labels(self, facts: GpuNodeFacts, pool: GpuPoolConfig) -> None:
        """Labels the group's nodes get from the group itself (EKS's own, for managed groups)."""
