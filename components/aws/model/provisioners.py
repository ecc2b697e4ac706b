"""What each EKS provisioner (cluster autoscaler or Karpenter) accepts and puts on its nodes."""

from __future__ import annotations

from collections.abc import Sequence

from components.aws.model import config as aws_config
from components.aws.model import karpenter
from components.model.catalog.gpus import MachineType
from components.model.managed_cloud import GpuNodeFacts
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig


def cluster_problems(cluster: ClusterConfig) -> list[Problem]:
    """A Kubernetes minor the pinned Karpenter release does not support."""
    if aws_config.cluster_options(cluster).provisioner != "karpenter":
        return []
    if karpenter.supports(cluster.kubernetes_version):
        return []
    supported = [m for m in karpenter.MIN_KARPENTER_FOR_MINOR if karpenter.supports(m)]
    return [
        Problem(
            "cluster.kubernetesVersion",
            f"Karpenter {karpenter.CHART_VERSION} (pinned) supports Kubernetes "
            f"{', '.join(supported)} (its compatibility matrix); choose one of those or "
            "cluster.aws.provisioner: cluster-autoscaler",
            cluster.kubernetes_version,
        )
    ]


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


def provisioner_keys(
    pool: GpuPoolConfig, path: str, keys: Sequence[str], provisioner: str
) -> list[Problem]:
    """Pool keys set in the stack that only `provisioner` reads."""
    options = aws_config.pool_options(pool)
    return [
        Problem(
            f"{path}.aws.{_camel(key)}",
            f"applies only with cluster.aws.provisioner: {provisioner}; remove it",
            getattr(options, key),
        )
        for key in keys
        if key in options.model_fields_set
    ]


def karpenter_pool_problems(pool: GpuPoolConfig, path: str) -> list[Problem]:
    problems = provisioner_keys(
        pool, path, aws_config.AUTOSCALER_ONLY_POOL_KEYS, "cluster-autoscaler"
    )
    if pool.min_nodes > 0:
        # A NodePool scales with pending pods only; its `replicas` (alpha) makes it a fixed size
        # that never scales, so neither is a floor under an autoscaling pool.
        problems.append(
            Problem(
                f"{path}.minNodes",
                "Karpenter keeps no minimum: a NodePool launches nodes for pending pods only; "
                "set 0 (a placeholder Deployment can hold warm capacity) or use "
                "cluster.aws.provisioner: cluster-autoscaler",
                pool.min_nodes,
            )
        )
    options = aws_config.pool_options(pool)
    if options.on_demand_fallback and not pool.spot:
        problems.append(
            Problem(
                f"{path}.aws.onDemandFallback",
                "is for Spot pools (spot: true): an on-demand pool needs no fallback",
                True,
            )
        )
    return problems


def karpenter_labels(
    facts: GpuNodeFacts, pool: GpuPoolConfig, machine: MachineType, machines: list[MachineType]
) -> None:
    """Labels Karpenter puts on the nodes of a NodePool (and knows when it simulates one)."""
    options = aws_config.pool_options(pool)
    facts.labels[karpenter.NODEPOOL_LABEL] = pool.name
    facts.labels[karpenter.NODECLASS_LABEL] = pool.name
    facts.labels[karpenter.GPU_MANUFACTURER_LABEL] = "nvidia"
    counts = {m.gpus for m in machines}
    if len(counts) == 1:
        facts.labels[karpenter.GPU_COUNT_LABEL] = str(machine.gpus)
    capacity = karpenter.capacity_types(pool.spot, options.on_demand_fallback)
    if len(capacity) == 1:
        facts.labels[karpenter.CAPACITY_TYPE_LABEL] = capacity[0]
    else:
        facts.choices[karpenter.CAPACITY_TYPE_LABEL] = capacity
