"""The pools of a cluster gpufleet did not create: nodes its owner runs, found by their labels.

gpufleet makes no pool object here, so the kind answers only capacity: the nodes are on demand or
Spot as the user says, and a queued pool's Jobs go through Kueue to the autoscaler the owner
runs, by the ProvisioningRequest class the user names.
"""

from __future__ import annotations

from components.model import existing_cluster as existing_config
from components.model.capacity import ON_DEMAND, QUEUED, SPOT, CapacityOrder
from components.model.catalog.provisioning import PROVISIONING_CLASSES
from components.model.pool_kind import PoolKind
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

PROVISIONING_KEY = "cluster.existing.provisioningRequestClass"


class OwnersPools(PoolKind):
    title = "the cluster owner's node pools"
    capacity_orders = (ON_DEMAND, SPOT, QUEUED)

    def check_capacity(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder, path: str
    ) -> list[Problem]:
        if order != QUEUED or existing_config.cluster_options(cluster).provisioning_request_class:
            return []
        return [
            Problem(
                PROVISIONING_KEY,
                f"is required with a queued pool ({path}, {pool.name}): the ProvisioningRequest "
                f"class this cluster's autoscaler serves, one of {', '.join(PROVISIONING_CLASSES)} "
                "(gpufleet does not manage that autoscaler and cannot check it)",
                has_value=False,
            )
        ]

    def provisioning_class(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> str | None:
        return existing_config.cluster_options(cluster).provisioning_request_class


OWNERS_POOLS = OwnersPools()
