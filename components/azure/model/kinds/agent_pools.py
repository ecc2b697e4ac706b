"""AKS agent pools: one Virtual Machine Scale Set per pool, which AKS's managed cluster
autoscaler scales from zero, selected by the agent pool's name, with its capacity rules
(capacity reservation groups, queued pools). Node auto-provisioning (AKS's managed Karpenter)
is the sibling kind (node_auto_provisioning.py)."""

from __future__ import annotations

from components.azure.model import fabric, limits, reservations
from components.model import existing_cluster
from components.model.capacity import (
    ON_DEMAND,
    QUEUED,
    SPOT,
    CapacityOrder,
    ReservationCap,
    declared_order,
)
from components.model.catalog.gpus import MachineType
from components.model.catalog.provisioning import BEST_EFFORT_ATOMIC
from components.model.pool_kind import GpuNodeFacts, PoolKind, SharingVia
from components.model.pool_spec import Taint
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig, StackConfig

# AKS labels MIG nodes with no partition size: gpufleet does, so tools that select a partition
# (Flyte's partition selector) can tell a MIG pool from a whole-GPU pool of the same model.
PARTITION_SIZE_LABEL = "gpufleet.io/gpu-partition-size"
# AKS labels and taints Spot nodes with this key (value `spot`).
SPOT_KEY = "kubernetes.azure.com/scalesetpriority"
AGENT_POOL_LABEL = "kubernetes.azure.com/agentpool"
LEGACY_AGENT_POOL_LABEL = "agentpool"
# A pool in a capacity reservation group takes regular VMs once its reservation is used up
# (components/azure/model/reservations.py), so that is `[reserved, on-demand]`; `reserved`
# alone only within the VMs reserved for it. Queued pools: AKS's managed cluster autoscaler
# serves best-effort-atomic-scale-up ProvisioningRequests with no setting of ours, and
# Azure scale sets implement AtomicIncreaseSize (catalog/provisioning.py).
CAPACITY_ORDERS: tuple[CapacityOrder, ...] = (
    ON_DEMAND,
    SPOT,
    reservations.RESERVED_THEN_ON_DEMAND,
    reservations.RESERVED,
    QUEUED,
)


class AgentPools(PoolKind):
    title = "AKS agent pools"
    pool_label_key = AGENT_POOL_LABEL
    capacity_orders = CAPACITY_ORDERS

    def cluster_problems(self, cluster: ClusterConfig, adopted: bool) -> list[Problem]:
        """Agent pools ask nothing more of the cluster than its own checks."""
        return []

    def check(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str, warnings: list[str]
    ) -> list[Problem]:
        """What plan says of the pool's reservation group, then the agent pool's limits."""
        adopted = existing_cluster.written(cluster)
        warnings += reservations.capacity_warnings(cluster, pool, path, adopted)
        return limits.pool_limit_problems(pool, path)

    def node_facts(
        self,
        config: StackConfig,
        pool: GpuPoolConfig,
        machines: list[MachineType],
        sharing_via: SharingVia,
    ) -> GpuNodeFacts:
        facts = GpuNodeFacts(
            labels={
                AGENT_POOL_LABEL: pool.name,
                "kubernetes.azure.com/accelerator": "nvidia",
                "kubernetes.azure.com/mode": "user",
                # AgentBaker's legacy keys, which the cluster autoscaler's template of a pool
                # at zero predicts too (kubernetes/autoscaler cluster-autoscaler/cloudprovider/
                # azure/azure_template.go: legacyAgentPoolNodeLabelKey, legacyGPULabel); AKS's
                # docs and many charts select on them (review aks-5 H5-4).
                LEGACY_AGENT_POOL_LABEL: pool.name,
                "accelerator": "nvidia",
            }
        )
        if pool.mig_partition_size:
            facts.declared[PARTITION_SIZE_LABEL] = pool.mig_partition_size
        if pool.spot:
            facts.labels[SPOT_KEY] = "spot"
            facts.taints.append(Taint(SPOT_KEY, "spot", "NoSchedule"))
        if declared_order(pool.capacity, pool.spot) == QUEUED:
            facts.declared_taints.append(
                Taint(reservations.QUEUED_TAINT_KEY, pool.name, "NoSchedule")
            )
        return facts

    # --- capacity (docs/capacity.md, docs/aks.md) ---------------------------------------------

    def capacity_advice(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder
    ) -> str:
        return (
            "a capacity reservation group is capacity [reserved, on-demand] with "
            "gpuPools[].azure.capacityReservationGroupId; capacity blocks and flex-start are "
            "EC2's and GKE's, Azure sells neither"
        )

    def check_capacity(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder, path: str
    ) -> list[Problem]:
        adopted = existing_cluster.written(cluster)
        return reservations.capacity_problems(cluster, pool, order, path, adopted)

    def provisioning_class(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> str | None:
        return BEST_EFFORT_ATOMIC.name

    def reservation_cap(self, config: StackConfig, pool: GpuPoolConfig) -> ReservationCap | None:
        return reservations.cap(pool)

    def fabric_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        # One zone and one placement group's worth of nodes (components/azure/model/fabric.py).
        return fabric.fabric_problems(cluster, pool, path)


AGENT_POOLS = AgentPools()
