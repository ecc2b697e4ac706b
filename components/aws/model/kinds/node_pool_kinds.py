"""What EKS's two NodePool kinds share (Karpenter's `karpenter.sh/v1` NodePool per pool, a node
per pending pod, no groups and no minimum): gpufleet's Karpenter and EKS Auto Mode. Karpenter's
own contract is `components/model/karpenter_kind.py`; this adds EKS's data and keys."""

from __future__ import annotations

from typing import ClassVar

from components.aws.model import config as aws_config
from components.aws.model import karpenter, provisioners
from components.aws.model.kinds.base import EksPoolKind
from components.model.catalog.gpus import MachineType
from components.model.karpenter_kind import KarpenterPoolKind
from components.model.pool_kind import GpuNodeFacts
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig


class NodePoolKind(KarpenterPoolKind, EksPoolKind):
    node_pools = True
    # Both EKS kinds' NodePools refuse the EC2NodeClass's domain (Auto Mode's API server runs
    # the same CRD validation).
    reserved_label_domain = karpenter.NODE_CLASS_GROUP
    minimum_instead = "cluster.aws.provisioner: cluster-autoscaler"
    # Pool keys this kind refuses (beyond the cluster autoscaler's own).
    refused_keys: ClassVar[tuple[str, ...]] = ()

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
        problems += self.node_pool_problems(pool, path)
        problems += self.sharing_problems(cluster, pool, path)
        if self.on_demand_fallback(pool) and not pool.spot:
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

    def on_demand_fallback(self, pool: GpuPoolConfig) -> bool:
        return aws_config.pool_options(pool).on_demand_fallback

    def sharing_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        """Sharing or MIG this kind's controller cannot plan nodes for."""
        return []

    def kind_facts(
        self, facts: GpuNodeFacts, pool: GpuPoolConfig, machines: list[MachineType]
    ) -> None:
        self.node_pool_facts(facts, pool, machines)
