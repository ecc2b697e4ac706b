"""GKE custom compute classes: a pool whose `capacity` is a fallback list one node pool cannot
express, built as a ComputeClass over one node pool per capacity (components/gcp/model/
compute_class.py has the facts and sources). What differs from its sibling, node pools: pods
select the class (`cloud.google.com/compute-class`), the nodes carry the class's taint, the
node pool label names one of several pools, and the capacity rules are the class's."""

from __future__ import annotations

from components.gcp.model import capacity as gke_capacity
from components.gcp.model import capacity_checks
from components.gcp.model import compute_class as gke_class
from components.gcp.model.kinds.node_pools import (
    NODE_POOLS,
    capacity_order,
    gke_zone_problems,
    machines_of,
)
from components.model.capacity import CapacityOrder
from components.model.catalog.gpus import MachineType
from components.model.pool_kind import GpuNodeFacts, PoolKind, SharingVia
from components.model.pool_spec import Taint
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig, StackConfig

NODE_POOL_LABEL = NODE_POOLS.pool_label_key


class ComputeClasses(PoolKind):
    """Each priority is a node pool: what a node pool answers, the class changes or adds to."""

    title = "GKE compute classes"
    # Pods select the class; GKE tolerates its taint for them (compute_class.py sources).
    pool_label_key = gke_class.CLASS_LABEL
    capacity_orders = gke_class.ORDERS

    def check(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str, warnings: list[str]
    ) -> list[Problem]:
        """The node pools' own checks (each priority is one), and what plan says of the class."""
        problems = NODE_POOLS.check(cluster, pool, path, warnings)
        order = capacity_order(pool)
        if order in self.capacity_orders:
            warnings += gke_class.class_warnings(pool, order, path)
            if "reserved" in order:
                warnings += capacity_checks.capacity_warnings(
                    cluster, pool, gke_capacity.RESERVED, path
                )
        return problems

    def node_facts(
        self,
        config: StackConfig,
        pool: GpuPoolConfig,
        machines: list[MachineType],
        sharing_via: SharingVia,
    ) -> GpuNodeFacts:
        facts = NODE_POOLS.node_facts(config, pool, machines, sharing_via)
        # Each priority is its own node pool: the label names one of them.
        del facts.labels[NODE_POOL_LABEL]
        facts.choices[NODE_POOL_LABEL] = tuple(
            gke_class.node_pool_name(pool.name, word) for word in capacity_order(pool)
        )
        # A manually created pool serves the class only with its label and taint.
        facts.labels[gke_class.CLASS_LABEL] = pool.name
        facts.declared[gke_class.CLASS_LABEL] = pool.name
        facts.declared_taints.append(Taint(gke_class.CLASS_LABEL, pool.name, "NoSchedule"))
        return facts

    def selector_keys(
        self, config: StackConfig, pool: GpuPoolConfig, sharing_via: SharingVia
    ) -> tuple[str, ...]:
        # The node pool's keys with the class in place of the pool's own node pool name.
        keys = NODE_POOLS.selector_keys(config, pool, sharing_via)
        return tuple(self.pool_label_key if k == NODE_POOL_LABEL else k for k in keys)

    def autoscaler_gpus(self, sharing_via: SharingVia, physical: int, allocatable: int) -> int:
        return NODE_POOLS.autoscaler_gpus(sharing_via, physical, allocatable)

    def capacity_order(self, pool: GpuPoolConfig) -> CapacityOrder:
        return capacity_order(pool)

    def capacity_advice(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder
    ) -> str:
        return NODE_POOLS.capacity_advice(cluster, pool, order)

    def check_capacity(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder, path: str
    ) -> list[Problem]:
        problems = gke_class.class_problems(cluster, pool, order, path, machines_of(pool))
        if "reserved" in order:
            zones = gke_zone_problems if cluster.region else None
            problems += capacity_checks.reservation_zone_problems(
                cluster, pool, gke_capacity.RESERVED, path, zones
            )
        return problems

    def fabric_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        # GPUDirect's extra networks and compact placement belong to one node pool, and a job's
        # nodes must share them; a class spreads the pool over a node pool per capacity.
        if pool.interconnect != "fabric":
            return []
        return [
            Problem(
                f"{path}.capacity",
                "a fabric pool is one node pool (its GPU networks and compact placement hold a "
                "job's nodes together), and a capacity list makes a compute class over a node "
                "pool per capacity: write one capacity (e.g. reserved), or drop "
                "interconnect: fabric",
                pool.capacity,
            )
        ]

    # No provisioning_class: queued stands alone, never in a class. No reservation_cap: past the
    # reservation the class falls back, so the reservation does not cap the pool.


COMPUTE_CLASSES = ComputeClasses()


def gke_pool_kind(pool: GpuPoolConfig) -> PoolKind:
    """A pool's kind: a compute class for a fallback list one node pool cannot express."""
    return COMPUTE_CLASSES if capacity_order(pool) in gke_class.ORDERS else NODE_POOLS
