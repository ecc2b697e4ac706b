"""Karpenter's scheduling contract, as a pool kind any Karpenter provider subclasses: one
`karpenter.sh/v1` NodePool per pool, an instance type picked per pending pod, a node kept for a
running job by `karpenter.sh/do-not-disrupt`, no per-zone cap, no minimum, the template labels
the NodePool CRD refuses, and the labels Karpenter puts on every node it launches.

A provider's kind (EKS: gpufleet's Karpenter and EKS Auto Mode; next, AKS node
auto-provisioning) lists this class before its cloud's kind base and gives its data: the
provider's reserved label domain, the labels naming a node's GPUs and class, and where its
messages send a user who needs a minimum. Sources: `components/model/karpenter_pool.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from components.model import karpenter_pool
from components.model.capacity import declared_order
from components.model.pool_kind import GpuNodeFacts, PoolKind, PoolTraits
from components.model.pool_spec import DO_NOT_DISRUPT
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

if TYPE_CHECKING:
    from components.model.catalog.gpus import MachineType


class KarpenterPoolKind(PoolKind):
    """A kind whose pools are Karpenter NodePools. Class attributes are the provider's data."""

    # What scales the pool from zero, as fit and the messages name it.
    display: ClassVar[str] = "Karpenter"
    keep_running: ClassVar[Mapping[str, str]] = DO_NOT_DISRUPT
    # The provider's label domain the NodePool CRD reserves beside karpenter.sh.
    reserved_label_domain: ClassVar[str]
    # The labels the provider's nodes carry naming their GPU maker and GPU count.
    gpu_manufacturer_label: ClassVar[str]
    gpu_count_label: ClassVar[str]
    # The config that gives a pool a minimum instead (e.g. another provisioner), as written.
    minimum_instead: ClassVar[str]
    # What holds a warm node where a NodePool keeps no minimum (minNodes stays 0).
    placeholder: ClassVar[str] = (
        "a placeholder Deployment (one low-priority pod asking for the pool's GPUs, which real "
        "pods preempt; minNodes stays 0)"
    )

    def traits(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> PoolTraits:
        """The cloud's traits, with Karpenter's contract over them: a type per pod, no
        per-zone cap (a NodePool's limits are pool-wide), do-not-disrupt keeps a job's node."""
        return dataclasses.replace(
            super().traits(cluster, pool),
            provisioner_name=self.display,
            picks_type_per_pod=True,
            zone_max_nodes=None,
            keep_running_annotations=self.keep_running,
            keep_one_warm=self.placeholder,
        )

    def reserved_label(self, key: str) -> bool:
        """Whether the NodePool CRD refuses `key` as a template label."""
        return karpenter_pool.reserved_label(key, self.reserved_label_domain)

    def node_pool_problems(self, pool: GpuPoolConfig, path: str) -> list[Problem]:
        """A minimum, and labels Karpenter reserves: what no NodePool can express."""
        problems = []
        if pool.min_nodes > 0:
            # A NodePool scales with pending pods only; its `replicas` (alpha) makes it a fixed
            # size that never scales, so neither is a floor under an autoscaling pool.
            problems.append(
                Problem(
                    f"{path}.minNodes",
                    f"{self.display} keeps no minimum: a NodePool launches nodes for pending pods "
                    f"only; set 0 ({self.placeholder} holds a warm node) or use "
                    f"{self.minimum_instead}",
                    pool.min_nodes,
                )
            )
        reserved = sorted(key for key in pool.labels if self.reserved_label(key))
        if reserved:
            problems.append(
                Problem(
                    f"{path}.labels",
                    f"Karpenter reserves these keys (the karpenter.sh and "
                    f"{self.reserved_label_domain} domains, kubernetes.io/hostname) and the API "
                    "server refuses a NodePool that sets them; rename them",
                    reserved,
                )
            )
        return problems

    def on_demand_fallback(self, pool: GpuPoolConfig) -> bool:
        """Whether a Spot pool may launch on-demand too (the provider's pool key)."""
        return False

    def capacity_types(self, pool: GpuPoolConfig) -> tuple[str, ...]:
        """The NodePool's `karpenter.sh/capacity-type` values, in the order Karpenter tries."""
        return karpenter_pool.capacity_types(
            declared_order(pool.capacity, pool.spot), self.on_demand_fallback(pool)
        )

    def class_labels(self, pool: GpuPoolConfig) -> dict[str, str]:
        """The labels naming the node's class (or compute type)."""
        return {}

    def node_pool_facts(
        self, facts: GpuNodeFacts, pool: GpuPoolConfig, machines: list[MachineType]
    ) -> None:
        """Labels the controller puts on a NodePool's nodes and knows when it plans one."""
        facts.labels[karpenter_pool.NODEPOOL_LABEL] = pool.name
        facts.labels.update(self.class_labels(pool))
        facts.labels[self.gpu_manufacturer_label] = "nvidia"
        counts = {m.gpus for m in machines}
        if len(counts) == 1:
            facts.labels[self.gpu_count_label] = str(counts.pop())
        capacity = self.capacity_types(pool)
        if len(capacity) == 1:
            facts.labels[karpenter_pool.CAPACITY_TYPE_LABEL] = capacity[0]
        else:
            facts.choices[karpenter_pool.CAPACITY_TYPE_LABEL] = capacity
