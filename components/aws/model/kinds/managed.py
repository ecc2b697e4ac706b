"""EKS managed node groups: one per pool and zone, which EKS creates and rolls; the cluster
autoscaler reads a group's labels and taints (eks:DescribeNodegroup) to scale it from zero."""

from __future__ import annotations

from components.aws.model import allocatable, capacity, groups, provisioners
from components.aws.model.kinds.autoscaler_groups import AutoscalerGroups
from components.model.capacity import CapacityOrder
from components.model.catalog.gpus import MachineType
from components.model.pool_kind import GpuNodeFacts
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig


class ManagedNodeGroups(AutoscalerGroups):
    title = "EKS managed node groups"
    node_group = "managed"
    drains_capacity_blocks = True
    # EKS rolls every node of the group onto a new launch template version.
    template_change_rolls = True

    def group_limits(self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str) -> list[Problem]:
        return groups.managed_group_limits(pool, path)

    def capacity_advice(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder
    ) -> str:
        if order != capacity.RESERVED_FIRST:
            return super().capacity_advice(cluster, pool, order)
        return (
            "EKS owns a managed node group's Auto Scaling group and takes no Capacity "
            "Reservation preference for it, and a launch template that targets the reservation "
            "launches nothing else: set aws.nodeGroup: self-managed (whose group gpufleet sets "
            f"to {capacity.RESERVATIONS_FIRST_PREFERENCE}), or use cluster.aws.provisioner: "
            "karpenter"
        )

    def max_pods(
        self, pool: GpuPoolConfig, machines: list[MachineType], machine: str
    ) -> int | None:
        # A managed group caps maxPods by its smallest type (components/aws/model/allocatable.py).
        return allocatable.managed_max_pods([(m.name, m.vcpus) for m in machines])

    def group_labels(self, facts: GpuNodeFacts, pool: GpuPoolConfig) -> None:
        # eks.amazonaws.com/nodegroup differs per zone (one group per zone): not a pool label.
        # The capacity type is on the nodes but not in the autoscaler's template at zero.
        label = provisioners.MANAGED_CAPACITY_LABEL
        facts.labels[label] = provisioners.managed_capacity_type(pool)
        facts.only_on_nodes.add(label)


MANAGED = ManagedNodeGroups()
