"""What EKS's two NodePool kinds share (Karpenter's `karpenter.sh/v1` NodePool per pool, a node
per pending pod, no groups and no minimum): gpufleet's Karpenter and EKS Auto Mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from components.aws.model import config as aws_config
from components.aws.model import karpenter, provisioners
from components.aws.model.kinds.base import EksPoolKind
from components.model import karpenter_pool
from components.model.capacity import declared_order
from components.model.catalog.gpus import MachineType
from components.model.pool_kind import GpuNodeFacts
from components.model.pool_spec import DO_NOT_DISRUPT
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig


class NodePoolKind(EksPoolKind):
    node_pools = True
    keep_running: ClassVar[Mapping[str, str]] = DO_NOT_DISRUPT
    # Pool keys this kind refuses (beyond the cluster autoscaler's own).
    refused_keys: ClassVar[tuple[str, ...]] = ()
    # The labels the kind's nodes carry naming their GPU maker and GPU count.
    gpu_manufacturer_label: ClassVar[str]
    gpu_count_label: ClassVar[str]

    def pool_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        """Keys of the other provisioners, a minimum, labels Karpenter reserves, a fallback
        for an on-demand pool."""
        problems = provisioners.provisioner_keys(
            pool,
            path,
            (*aws_config.AUTOSCALER_ONLY_POOL_KEYS, *self.refused_keys),
            "cluster-autoscaler",
        )
        if pool.min_nodes > 0:
            # A NodePool scales with pending pods only; its `replicas` (alpha) makes it a fixed
            # size that never scales, so neither is a floor under an autoscaling pool.
            problems.append(
                Problem(
                    f"{path}.minNodes",
                    f"{self.display} keeps no minimum: a NodePool launches nodes for pending pods "
                    "only; set 0 (a placeholder Deployment can hold warm capacity) or use "
                    "cluster.aws.provisioner: cluster-autoscaler",
                    pool.min_nodes,
                )
            )
        reserved = sorted(key for key in pool.labels if karpenter.reserved_label(key))
        if reserved:
            problems.append(
                Problem(
                    f"{path}.labels",
                    "Karpenter reserves these keys (the karpenter.sh and karpenter.k8s.aws "
                    "domains, kubernetes.io/hostname) and the API server refuses a NodePool that "
                    "sets them; rename them",
                    reserved,
                )
            )
        problems += self.sharing_problems(cluster, pool, path)
        options = aws_config.pool_options(pool)
        if options.on_demand_fallback and not pool.spot:
            problems.append(
                Problem(
                    f"{path}.aws.onDemandFallback",
                    "is for Spot pools (spot: true): an on-demand pool needs no fallback, and a "
                    "pool with a capacity list writes its fallbacks there (e.g. [reserved, spot, "
                    "on-demand])",
                    True,
                )
            )
        return problems

    def sharing_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        """Sharing or MIG this kind's controller cannot plan nodes for."""
        return []

    def class_labels(self, pool: GpuPoolConfig) -> dict[str, str]:
        """The labels naming the node's class (or compute type)."""
        return {}

    def kind_facts(
        self, facts: GpuNodeFacts, pool: GpuPoolConfig, machines: list[MachineType]
    ) -> None:
        """Labels the controller puts on a NodePool's nodes and knows when it plans one."""
        options = aws_config.pool_options(pool)
        facts.labels[karpenter_pool.NODEPOOL_LABEL] = pool.name
        facts.labels.update(self.class_labels(pool))
        facts.labels[self.gpu_manufacturer_label] = "nvidia"
        counts = {m.gpus for m in machines}
        if len(counts) == 1:
            facts.labels[self.gpu_count_label] = str(counts.pop())
        capacity = karpenter_pool.capacity_types(
            declared_order(pool.capacity, pool.spot), options.on_demand_fallback
        )
        if len(capacity) == 1:
            facts.labels[karpenter_pool.CAPACITY_TYPE_LABEL] = capacity[0]
        else:
            facts.choices[karpenter_pool.CAPACITY_TYPE_LABEL] = capacity
