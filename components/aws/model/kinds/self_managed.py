"""EKS self-managed auto scaling groups: one per pool and zone, launched from gpufleet's launch
template; the cluster autoscaler reads each group's node-template tags to scale it from zero."""

from __future__ import annotations

from typing import ClassVar

from components.aws.model import asg_limits, capacity
from components.aws.model.kinds.autoscaler_groups import AutoscalerGroups
from components.model import existing_cluster
from components.model.capacity import CapacityOrder
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig


class SelfManagedGroups(AutoscalerGroups):
    title = "self-managed auto scaling groups"
    # The group's own Capacity Reservation preference falls back from an ODCR to on-demand.
    capacity_orders: ClassVar[tuple[CapacityOrder, ...]] = (
        *AutoscalerGroups.capacity_orders,
        capacity.RESERVED_FIRST,
    )
    node_group = "self-managed"
    # The autoscaler's template of a group at zero is the group's node-template tags.
    scale_from_zero = "node-template-tags"
    joins_with_node_role = True

    def group_limits(self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str) -> list[Problem]:
        # Every label and taint becomes a node-template tag, under EC2 Auto Scaling's limits.
        adopted = existing_cluster.SECTION in cluster.model_fields_set
        return asg_limits.tag_problems(cluster, pool, path, adopted)


SELF_MANAGED = SelfManagedGroups()
