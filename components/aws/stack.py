"""EKS: the cluster, one component per GPU pool (self-managed groups or a managed node group),
and the cluster autoscaler that scales them to and from zero."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

import pulumi
import pulumi_aws as aws

from components.aws import node_pools
from components.aws.adopted import AdoptedEksCluster, AdoptedEksClusterArgs
from components.aws.autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
from components.aws.cluster import EksCluster, EksClusterArgs
from components.aws.efa_plugin import EfaDevicePlugin
from components.aws.gpu_pool import (
    SelfManagedGpuPool,
    SelfManagedGpuPoolArgs,
    group_name,
)
from components.aws.managed_gpu_pool import (
    ManagedGpuPool,
    ManagedGpuPoolArgs,
    group_name_pattern,
)
from components.aws.model import quotas
from components.aws.model.adopted import Needs
from components.aws.model.cloud import AWS
from components.aws.model.config import cluster_options, existing_options
from components.aws.model.fabric import fabric_group
from components.aws.model.group_settings import group_settings
from components.aws.model.kinds import cluster_kind, pool_kind
from components.aws.model.kinds.auto_mode import AUTO_MODE
from components.aws.model.kinds.base import EksPoolKind
from components.aws.model.kinds.karpenter import KARPENTER
from components.aws.model.kinds.managed import MANAGED
from components.aws.model.kinds.self_managed import SELF_MANAGED
from components.aws.node_host import EksNodeHost
from components.aws.termination_handler import (
    NodeTerminationHandler,
    NodeTerminationHandlerArgs,
)
from components.kubernetes.cluster import ClusterHandle
from components.model.pools import PoolSpec
from components.model.schema import GpuPoolConfig, StackConfig


def build_cluster(config: StackConfig, system_pool: PoolSpec | None) -> ClusterHandle:
    if AWS.adopted(config.cluster):
        return _adopt_cluster(config)
    assert system_pool is not None
    cluster = EksCluster(
        config.cluster.name,
        EksClusterArgs(
            config=config.cluster,
            system_pool=system_pool,
            # Karpenter's nodes, like self-managed groups' nodes, join with an EC2_LINUX entry.
            self_managed_nodes=_needs_self_managed_role(config),
            instance_profile=cluster_kind(config.cluster).instance_profile,
            auto_mode=cluster_kind(config.cluster).cluster_compute,
        ),
    )
    eks = cluster.cluster
    return ClusterHandle.of(
        cluster,
        name=eks.name,
        exports={
            "clusterEndpoint": eks.endpoint,
            "clusterCaCertificate": eks.certificate_authority.data,
            "oidcIssuerUrl": cluster.oidc_issuer,
            "oidcProviderArn": cluster.oidc_provider.arn,
            # The role of the managed node groups (system pool, managed GPU pools).
            "nodeIdentity": cluster.managed_node_role.arn,
        },
    )


def _adopt_cluster(config: StackConfig) -> ClusterHandle:
    """A cluster that exists: looked up, with gpufleet's node roles and provider only."""
    cfg = config.cluster
    kind = cluster_kind(cfg)
    installed = existing_options(cfg).autoscaler_installed
    pool_kinds = [pool_kind(cfg, p) for p in config.gpu_pools]
    # An installed Karpenter's nodes join with its own role (cluster.existing.karpenterNodeRole).
    own_role = kind.installed_needs_node_role and installed
    self_managed = _needs_self_managed_role(config) and not own_role
    # The node termination handler drains self-managed groups (IRSA, like the controllers).
    drainer = SELF_MANAGED in pool_kinds
    cluster = AdoptedEksCluster(
        cfg.name,
        AdoptedEksClusterArgs(
            config=cfg,
            needs=Needs(
                access_entries=self_managed or kind.cluster_compute,
                irsa=(not kind.cluster_compute and not installed) or drainer,
                auto_mode=kind.cluster_compute,
                zones=tuple(cfg.zones or ()),
            ),
            self_managed_nodes=self_managed,
            instance_profile=kind.instance_profile,
            managed_nodes=MANAGED in pool_kinds,
            managed_group_names=tuple(quotas.gpu_groups(cfg, list(enumerate(config.gpu_pools)))),
        ),
    )
    facts = cluster.facts
    roles = [cluster.managed_node_role, cluster.self_managed_node_role]
    return ClusterHandle.of(
        cluster,
        name=facts.name,
        exports={
            "clusterEndpoint": facts.endpoint,
            "clusterCaCertificate": facts.certificate_authority,
            "oidcIssuerUrl": facts.oidc_issuer,
            "oidcProviderArn": facts.oidc_provider_arn or "",
            # The role gpufleet's GPU nodes run with (a running Karpenter's, when it has one).
            "nodeIdentity": next(
                (role.arn for role in roles if role is not None),
                existing_options(cfg).karpenter_node_role or "",
            ),
        },
    )


@dataclass
class _GroupPool:
    """A node-group pool built: its component, its Spot groups (name patterns for the
    autoscaler), and the self-managed groups the termination handler drains."""

    component: pulumi.Resource
    spot_groups: list[str]
    drained: dict[str, aws.autoscaling.Group] = field(default_factory=dict)


def _managed_pool(
    config: StackConfig, pool: PoolSpec, pool_config: GpuPoolConfig, eks: EksNodeHost
) -> _GroupPool:
    cfg = config.cluster
    managed_role = eks.managed_node_role
    assert managed_role is not None
    component = ManagedGpuPool(
        f"{cfg.name}-{pool.name}",
        ManagedGpuPoolArgs(
            pool=pool,
            cluster_name=eks.cluster_name,
            cluster_version=eks.cluster_version,
            kubernetes_version=cfg.kubernetes_version,
            settings=group_settings(cfg, pool_config),
            node_role_arn=managed_role.arn,
            subnets_by_zone=eks.network.private_subnets_by_zone,
            provider=eks.aws_provider,
            autoscaler_tag=eks.autoscaler_discovery_tag,
            # A fabric pool's interfaces name every group (EKS then adds none of its own).
            security_group_ids=list(eks.node_security_group_ids)
            if existing_options(cfg).node_security_group_ids or pool_config.interconnect == "fabric"
            else None,
            vpc_id=eks.vpc_id,
            live_groups=eks.live_node_groups,
            join=eks.join,
        ),
        opts=pulumi.ResourceOptions(depends_on=list(eks.nodes_after)),
    )
    spot = [group_name_pattern(pool.name, zone) for zone in pool.zones] if pool.spot else []
    return _GroupPool(component, spot)


def _self_managed_pool(
    config: StackConfig, pool: PoolSpec, pool_config: GpuPoolConfig, eks: EksNodeHost
) -> _GroupPool:
    cfg = config.cluster
    assert eks.self_managed_instance_profile is not None and eks.self_managed_access
    component = SelfManagedGpuPool(
        f"{cfg.name}-{pool.name}",
        SelfManagedGpuPoolArgs(
            pool=pool,
            cluster_name=cfg.name,
            kubernetes_version=cfg.kubernetes_version,
            settings=group_settings(cfg, pool_config),
            join=eks.join,
            instance_profile_arn=eks.self_managed_instance_profile.arn,
            security_group_ids=list(eks.node_security_group_ids),
            subnets_by_zone=eks.network.private_subnets_by_zone,
            provider=eks.aws_provider,
            autoscaler_tag=eks.autoscaler_discovery_tag,
            vpc_id=eks.vpc_id,
        ),
        # Nodes may only start once they are allowed to join.
        opts=pulumi.ResourceOptions(depends_on=[eks.self_managed_access]),
    )
    # Names are [A-Za-z0-9_-] only (config rules), so they are literal regexes.
    spot = [f"^{group_name(cfg.name, pool.name, z)}$" for z in pool.zones] if pool.spot else []
    drained = {f"{pool.name}-{zone}": group for zone, group in component.groups.items()}
    return _GroupPool(component, spot, drained)


# What builds each kind's pools: the one place a kind meets its components, so a new kind is a
# row here (and its builder). NodePool kinds build all pools of the cluster with one controller;
# node-group kinds build one pool each, under the cluster autoscaler.
NODE_POOL_BUILDERS: Final[
    Mapping[EksPoolKind, Callable[[StackConfig, EksNodeHost], node_pools.EksNodePoolBuilder]]
] = MappingProxyType(
    {KARPENTER: node_pools.karpenter_builder, AUTO_MODE: node_pools.AutoModeBuilder}
)
GROUP_BUILDERS: Final[
    Mapping[EksPoolKind, Callable[[StackConfig, PoolSpec, GpuPoolConfig, EksNodeHost], _GroupPool]]
] = MappingProxyType({MANAGED: _managed_pool, SELF_MANAGED: _self_managed_pool})


def build_gpu_pools(
    config: StackConfig, pools: Sequence[PoolSpec], cluster: ClusterHandle
) -> list[pulumi.Resource]:
    """The GPU pools, then the autoscaler that owns their sizes."""
    eks = node_host(cluster)
    cfg = config.cluster
    by_name = {p.name: p for p in config.gpu_pools}
    node_pool_builder = NODE_POOL_BUILDERS.get(cluster_kind(cfg))
    if node_pool_builder is not None:
        built_pools = node_pools.build(node_pool_builder(config, eks), pools, eks)
        _efa_device_plugin(config, pools, eks)
        return built_pools
    built: list[pulumi.Resource] = []
    spot_groups: list[str] = []
    # Self-managed groups, Spot or on-demand: nothing drains a node EC2 or the group terminates
    # (a Spot reclaim, a rebalance, maintenance, a scale-in) unless the termination handler does.
    self_managed_groups: dict[str, aws.autoscaling.Group] = {}
    for pool in pools:
        pool_config = by_name[pool.name]
        group_pool = GROUP_BUILDERS[pool_kind(cfg, pool_config)](config, pool, pool_config, eks)
        built.append(group_pool.component)
        spot_groups += group_pool.spot_groups
        self_managed_groups.update(group_pool.drained)

    _efa_device_plugin(config, pools, eks)
    if not existing_options(cfg).autoscaler_installed:
        queued = any(pool.queue is not None and pool.queue.requested for pool in pools)
        autoscaler = _cluster_autoscaler(config, eks, spot_groups, queued)
        if queued:
            # Queued pools get nodes through it: Kueue waits for its ProvisioningRequest CRD.
            built.append(autoscaler)
    if self_managed_groups:
        NodeTerminationHandler(
            # The name it had when it drained Spot groups only: renaming would recreate it.
            f"{cfg.name}-spot-drainer",
            NodeTerminationHandlerArgs(
                cluster_name=cfg.name,
                region=cfg.region or "",
                groups=self_managed_groups,
                oidc_provider_arn=eks.oidc_provider_arn,
                oidc_issuer_url=eks.oidc_issuer,
                node_selector=eks.controller_node_selector,
                aws_provider=eks.aws_provider,
                k8s_provider=eks.k8s_provider,
            ),
        )
    return built


def _cluster_autoscaler(
    config: StackConfig, eks: EksNodeHost, spot_groups: list[str], queued: bool
) -> ClusterAutoscaler:
    """gpufleet's cluster autoscaler, which owns the groups' sizes (unless one runs already),
    and serves ProvisioningRequests when a pool is queued."""
    cfg = config.cluster
    return ClusterAutoscaler(
        f"{cfg.name}-autoscaler",
        ClusterAutoscalerArgs(
            cluster_name=cfg.name,
            region=cfg.region or "",
            kubernetes_version=cfg.kubernetes_version,
            expander=cluster_options(cfg).autoscaler_expander,
            oidc_provider_arn=eks.oidc_provider_arn,
            oidc_issuer_url=eks.oidc_issuer,
            spot_group_patterns=spot_groups,
            node_selector=eks.controller_node_selector,
            own_tag=eks.autoscaler_discovery_tag,
            aws_provider=eks.aws_provider,
            k8s_provider=eks.k8s_provider,
            provisioning_requests=queued,
        ),
    )


def node_host(cluster: ClusterHandle) -> EksNodeHost:
    """The EKS cluster the pools go on: one gpufleet created or one it adopted."""
    eks = cluster.component
    assert isinstance(eks, EksCluster | AdoptedEksCluster)
    return eks


def _needs_self_managed_role(config: StackConfig) -> bool:
    """Karpenter's nodes and self-managed groups' nodes join with the EC2_LINUX node role."""
    if cluster_kind(config.cluster).node_role_always:
        return True
    return any(pool_kind(config.cluster, p).joins_with_node_role for p in config.gpu_pools)


def _efa_device_plugin(config: StackConfig, pools: Sequence[PoolSpec], eks: EksNodeHost) -> None:
    """The EFA device plugin, on the fabric pools' nodes, when any pool has the fabric (group
    pools and Karpenter NodePools alike: both label their nodes gpufleet.io/fabric)."""
    by_name = {p.name: p for p in config.gpu_pools}
    fabric_pools = [pool for pool in pools if fabric_group(by_name[pool.name]) is not None]
    if fabric_pools:
        EfaDevicePlugin(
            f"{config.cluster.name}-efa-device-plugin",
            fabric_pools,
            eks.k8s_provider,
            eks.control_plane,
        )
