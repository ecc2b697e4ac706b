"""AKS node auto-provisioning (NAP): AKS's managed Karpenter makes each GPU pool's nodes from a
`karpenter.sh/v1` NodePool and an AKSNodeClass named after the pool, a VM per pending pod,
Spot then on-demand in one pool. Karpenter's own contract is `components/model/karpenter_kind.py`;
this is AKS's data (`components/azure/model/nap.py` says where each fact comes from)."""

from __future__ import annotations

from components.azure.model import limits, nap
from components.azure.model.kinds.agent_pools import SPOT_KEY
from components.model import existing_cluster, karpenter_pool
from components.model.capacity import ON_DEMAND, SPOT, CapacityOrder
from components.model.catalog.gpus import MachineType
from components.model.karpenter_kind import KarpenterPoolKind
from components.model.pool_kind import GpuNodeFacts, SharingVia
from components.model.pool_spec import Taint
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig, StackConfig

# Azure's Karpenter tries Spot first when a NodePool allows both (karpenter_pool.CAPACITY_PRIORITY).
SPOT_THEN_ON_DEMAND: CapacityOrder = ("spot", "on-demand")


class NodeAutoProvisioning(KarpenterPoolKind):
    title = "node auto-provisioning NodePools"
    display = "AKS node auto-provisioning"
    reserved_label_domain = nap.NODE_CLASS_GROUP
    gpu_manufacturer_label = nap.GPU_MANUFACTURER_LABEL
    gpu_count_label = nap.GPU_COUNT_LABEL
    minimum_instead = "cluster.azure.provisioner: cluster-autoscaler"
    capacity_orders = (ON_DEMAND, SPOT, SPOT_THEN_ON_DEMAND)

    def cluster_problems(self, cluster: ClusterConfig, adopted: bool) -> list[Problem]:
        return nap.cluster_problems(cluster, adopted)

    def check(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str, warnings: list[str]
    ) -> list[Problem]:
        adopted = existing_cluster.written(cluster)
        if adopted:
            warnings.append(nap.adopted_name_warning(pool, path))
        problems = self.node_pool_problems(pool, path)
        problems += nap.pool_problems(pool, path, adopted)
        return problems + limits.pool_limit_problems(pool, path)

    def node_facts(
        self,
        config: StackConfig,
        pool: GpuPoolConfig,
        machines: list[MachineType],
        sharing_via: SharingVia,
    ) -> GpuNodeFacts:
        facts = GpuNodeFacts()
        self.node_pool_facts(facts, pool, machines)
        capacity = self.capacity_types(pool)
        priorities = tuple(nap.PRIORITY_OF_CAPACITY[c] for c in capacity)
        if len(priorities) == 1:
            facts.labels[nap.SCALE_SET_PRIORITY_LABEL] = priorities[0]
        else:
            facts.choices[nap.SCALE_SET_PRIORITY_LABEL] = priorities
        if "spot" in capacity:
            # Agent pools' Spot nodes carry AKS's Spot taint; Azure's Karpenter sets none, so
            # the NodePool does: a pod lands on Spot only if it tolerates eviction, as before.
            facts.declared_taints.append(Taint(SPOT_KEY, "spot", "NoSchedule"))
        return facts

    def capacity_advice(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder
    ) -> str:
        if set(order) == set(SPOT_THEN_ON_DEMAND):
            return (
                "Karpenter tries Spot first, then on-demand, whatever the order written "
                f"({karpenter_pool.CAPACITY_PRIORITY}): write [spot, on-demand]"
            )
        return nap.capacity_advice()


NODE_AUTO_PROVISIONING = NodeAutoProvisioning()
