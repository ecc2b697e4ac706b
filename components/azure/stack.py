"""AKS: the cluster and one separate agent pool component per GPU pool."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import authorization

from components.azure.adopted import AdoptedAksCluster, AdoptedAksClusterArgs
from components.azure.cluster import AksCluster, AksClusterArgs
from components.azure.gpu_pool import (
    AksGpuAgentPool,
    AksGpuAgentPoolArgs,
    fixed_at_creation,
    gpu_driver,
)
from components.azure.infiniband import AksInfiniband, AksInfinibandArgs
from components.azure.model import expander, kinds
from components.azure.model.cloud import AZURE
from components.azure.model.config import cluster_options
from components.azure.model.deployed import kept
from components.azure.model.fabric import fabric_pools
from components.azure.model.kinds.agent_pools import AGENT_POOL_LABEL
from components.azure.model.pool_capacity import pool_capacity
from components.azure.model.reservations import group_id
from components.azure.nap_pools import build_nap_pools
from components.kubernetes.cluster import ClusterHandle
from components.kubernetes.targeting import tolerations
from components.model.pools import PoolSpec
from components.model.schema import StackConfig


def build_cluster(config: StackConfig, system_pool: PoolSpec | None) -> ClusterHandle:
    if AZURE.adopted(config.cluster):
        return _adopt_cluster(config)
    assert system_pool is not None
    cluster = AksCluster(
        config.cluster.name,
        AksClusterArgs(
            config=config.cluster,
            system_pool=system_pool,
            gpu_pools=tuple(config.gpu_pools),
        ),
    )
    aks = cluster.cluster
    return ClusterHandle.of(
        cluster,
        name=aks.name,
        exports={
            "clusterEndpoint": cluster.server,
            "clusterCaCertificate": cluster.certificate_authority,
            "oidcIssuerUrl": cluster.oidc_issuer_url,
            # The kubelet identity nodes pull images and reach Azure with (its object id).
            "nodeIdentity": aks.identity_profile.apply(_kubelet_object_id),
        },
    )


def _adopt_cluster(config: StackConfig) -> ClusterHandle:
    """A cluster that exists: looked up, with gpufleet's Kubernetes provider only."""
    cluster = AdoptedAksCluster(
        config.cluster.name,
        AdoptedAksClusterArgs(
            config=config.cluster,
            gpu_pools=tuple(config.gpu_pools),
        ),
    )
    return ClusterHandle.of(
        cluster,
        name=cluster.facts.name,
        exports={
            "clusterEndpoint": cluster.server,
            "clusterCaCertificate": cluster.certificate_authority,
            "oidcIssuerUrl": cluster.facts.oidc_issuer_url,
            "nodeIdentity": cluster.facts.kubelet_object_id,
        },
    )


def _kubelet_object_id(profile: Any) -> str:
    identity = (profile or {}).get("kubeletidentity")
    return getattr(identity, "object_id", None) or ""


def build_gpu_pools(
    config: StackConfig, pools: Sequence[PoolSpec], cluster: ClusterHandle
) -> list[pulumi.Resource]:
    aks = cluster.component
    # AKS runs one agent pool operation at a time: the pools follow each other, after the
    # system pool of a cluster gpufleet created (after the control plane in a minor bump).
    previous: list[pulumi.Resource]
    if isinstance(aks, AksCluster):
        cluster_name: pulumi.Input[str] = aks.cluster.name
        existing = aks.deployed.pools if aks.deployed else {}
        # The first pool (and so every other) after the control plane's reservation grants.
        previous = [aks.system_pool, *aks.reservation_grants.values()]
    else:
        assert isinstance(aks, AdoptedAksCluster)
        cluster_name = aks.facts.name
        existing = aks.facts.pools
        previous = []
    driver = gpu_driver(config)
    tags = {"managed-by": "gpufleet", "gpufleet-cluster": config.cluster.name}
    if kinds.auto_provisioning(config.cluster):
        # NodePools and node classes, after the cluster whose Auto mode runs Karpenter (an
        # adopted cluster runs it already, and its subnet is NAP's default unless configured).
        created = aks if isinstance(aks, AksCluster) else None
        return build_nap_pools(
            config.cluster.name,
            pools,
            driver=driver,
            subnet_id=created.subnet_id
            if created
            else cluster_options(config.cluster).vnet_subnet_id,
            tags=tags,
            k8s_provider=aks.k8s_provider,
            wait_for=[created.cluster, created.system_pool] if created else [],
        )
    components: list[pulumi.Resource] = []
    for pool, pool_config in zip(pools, config.gpu_pools, strict=True):
        capacity = pool_capacity(pool_config)
        group = capacity.reservation_group
        exists = kept(existing, pool.name, fixed_at_creation(pool, driver, group))
        component = AksGpuAgentPool(
            f"{config.cluster.name}-{pool.name}",
            AksGpuAgentPoolArgs(
                pool=pool,
                resource_group_name=aks.resource_group_name,
                cluster_name=cluster_name,
                subnet_id=aks.subnet_id,
                driver=driver,
                provider=aks.azure_provider,
                tags=tags,
                kubernetes_version=config.cluster.kubernetes_version,
                exists=exists,
                capacity=capacity,
                reservation_grant=_grant_to_wait_for(aks, group, exists),
                after=previous,
            ),
        )
        previous = [component.agent_pool]
        components.append(component)
    if fabric := fabric_pools(config.gpu_pools):
        AksInfiniband(
            f"{config.cluster.name}-infiniband",
            AksInfinibandArgs(
                fabric_pools=fabric,
                pool_label=AGENT_POOL_LABEL,
                tolerations=tuple(tolerations(p for p in pools if p.name in fabric)),
                operator_driver=driver == "None",
                gpu_operator=config.gpu_software_mode == "gpu-operator",
                provider=aks.k8s_provider,
                after=previous,
            ),
            opts=pulumi.ResourceOptions(parent=aks),
        )
    if isinstance(aks, AksCluster) and cluster_options(config.cluster).autoscaler_expander == (
        "priority"
    ):
        _priority_expander(config.cluster.name, aks, pools)
    return components


def _grant_to_wait_for(
    aks: pulumi.Resource, group: str | None, exists: bool
) -> authorization.RoleAssignment | None:
    """The grant a pool AKS creates (new, or replaced into another group) waits for: the
    control plane's on the group's resource group, when this stack makes it, until it has
    propagated (components/azure/model/rbac.py), since AKS checks the grant when it creates the
    pool. A pool that exists keeps its group and waits for nothing."""
    parts = group_id(group)
    if group is None or parts is None or exists or not isinstance(aks, AksCluster):
        return None
    # None: made elsewhere (grantsMadeElsewhere, roleAssignments false).
    return aks.reservation_grants.get(parts.resource_group_id.lower())


def _priority_expander(name: str, aks: AksCluster, pools: Sequence[PoolSpec]) -> None:
    """The priorities AKS's autoscaler reads with the priority expander (a cluster gpufleet
    created: an adopted cluster's autoscaler is its owner's)."""
    k8s.core.v1.ConfigMap(
        f"{name}-autoscaler-priorities",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=expander.CONFIG_MAP, namespace=expander.NAMESPACE),
        data={"priorities": expander.priorities(pools)},
        opts=pulumi.ResourceOptions(parent=aks, provider=aks.k8s_provider),
    )
