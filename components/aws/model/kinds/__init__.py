"""EKS's four pool kinds, and the one place `cluster.aws.provisioner` and
`gpuPools[].aws.nodeGroup` are mapped to one (tests/test_architecture.py keeps it so)."""

from __future__ import annotations

from components.aws.model.config import cluster_options, pool_options
from components.aws.model.kinds.auto_mode import AUTO_MODE
from components.aws.model.kinds.base import EksPoolKind
from components.aws.model.kinds.karpenter import KARPENTER
from components.aws.model.kinds.managed import MANAGED
from components.aws.model.kinds.self_managed import SELF_MANAGED
from components.model.schema import ClusterConfig, GpuPoolConfig

KINDS: tuple[EksPoolKind, ...] = (SELF_MANAGED, MANAGED, KARPENTER, AUTO_MODE)


def provisioner_kinds(provisioner: str) -> tuple[EksPoolKind, ...]:
    """The kinds of pool a `cluster.aws.provisioner` value makes (default node group first)."""
    return tuple(kind for kind in KINDS if kind.provisioner == provisioner)


def pool_kind(cluster: ClusterConfig, pool: GpuPoolConfig) -> EksPoolKind:
    """The kind of the pool: its cluster's provisioner and (groups) its node group."""
    node_group = pool_options(pool).node_group
    kinds = provisioner_kinds(cluster_options(cluster).provisioner)
    return next(kind for kind in kinds if kind.node_group in (None, node_group))


def cluster_kind(cluster: ClusterConfig) -> EksPoolKind:
    """The kind that answers the cluster-wide questions of its provisioner (which every kind of
    one provisioner answers alike): the kind of a pool that names no node group."""
    return provisioner_kinds(cluster_options(cluster).provisioner)[0]
