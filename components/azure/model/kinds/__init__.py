"""AKS's pool kinds, and the one place `cluster.azure.provisioner` becomes a kind: agent pools
the cluster autoscaler scales (the default), or node auto-provisioning's NodePools."""

from __future__ import annotations

from components.azure.model import nap
from components.azure.model.config import cluster_options
from components.azure.model.kinds.agent_pools import AGENT_POOLS, AgentPools
from components.azure.model.kinds.node_auto_provisioning import (
    NODE_AUTO_PROVISIONING,
    NodeAutoProvisioning,
)
from components.model.schema import ClusterConfig

KINDS: tuple[AgentPools | NodeAutoProvisioning, ...] = (AGENT_POOLS, NODE_AUTO_PROVISIONING)


def gpu_pool_kind(cluster: ClusterConfig) -> AgentPools | NodeAutoProvisioning:
    """The kind of every GPU pool of the cluster (one provisioner per cluster)."""
    if cluster_options(cluster).provisioner == "node-auto-provisioning":
        return NODE_AUTO_PROVISIONING
    return AGENT_POOLS


def auto_provisioning(cluster: ClusterConfig) -> bool:
    """Whether the cluster runs node auto-provisioning (its provisioning profile in Auto mode)."""
    return gpu_pool_kind(cluster) is NODE_AUTO_PROVISIONING


def provisioning_mode(provisioner: str | None) -> str:
    """The cluster's nodeProvisioningProfile mode a `cluster.azure.provisioner` value (as
    written; None: the default) runs on: Auto for node auto-provisioning, else AKS's Manual."""
    return nap.PROVISIONING_MODE if provisioner == "node-auto-provisioning" else "Manual"
