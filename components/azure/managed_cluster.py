"""The AKS `ManagedCluster` resource: identity, Entra ID, API server access, Azure CNI
overlay, the cluster autoscaler's profile, upgrade channels and the inline system pool
(components/azure/cluster.py builds the rest around it)."""

from __future__ import annotations

import pulumi
from pulumi_azure_native import containerservice

from components.azure import system_pool
from components.azure.model import kinds, nap
from components.azure.model.config import cluster_options
from components.model.pools import PoolSpec
from components.model.schema import ClusterConfig

# Nothing of the cluster is ignored after creation. Its `agentPoolProfiles` holds only the
# system pool, as configured now (a creation-time profile kept by ignoreChanges would come back
# with every cluster update: review aks-2.md A-F3); after a `pulumi refresh` the recorded list
# also holds the GPU pools, and the next `up` sends the system pool alone once more, which AKS
# accepts (pools a cluster PUT leaves out are kept; only a pool it adds is refused).
CLUSTER_IGNORE_CHANGES: list[str] = []


def managed_cluster(
    name: str,
    cfg: ClusterConfig,
    resource_group_name: pulumi.Input[str],
    subnet_id: pulumi.Input[str],
    system: PoolSpec,
    tags: dict[str, str],
    creating: bool,
    protected: pulumi.ResourceOptions,
) -> containerservice.ManagedCluster:
    """The cluster, with the system pool's count sent only when this `up` creates it."""
    aks = cluster_options(cfg)
    auto_provisioning = kinds.auto_provisioning(cfg)
    identity_id = aks.control_plane_identity_id
    entra_id = aks.authentication == "entra-id"
    return containerservice.ManagedCluster(
        f"{name}-aks",
        resource_name_=cfg.name,
        resource_group_name=resource_group_name,
        location=cfg.region or "",
        dns_prefix=dns_prefix(cfg.name),
        # A minor version: AKS picks the newest patch and the `patch` channel keeps it current.
        kubernetes_version=cfg.kubernetes_version,
        sku=containerservice.ManagedClusterSKUArgs(name="Base", tier=aks.sku_tier),
        identity=containerservice.ManagedClusterIdentityArgs(
            type=containerservice.ResourceIdentityType.USER_ASSIGNED,
            user_assigned_identities=[identity_id],
        )
        if identity_id
        else containerservice.ManagedClusterIdentityArgs(
            type=containerservice.ResourceIdentityType.SYSTEM_ASSIGNED
        ),
        oidc_issuer_profile=containerservice.ManagedClusterOIDCIssuerProfileArgs(enabled=True),
        security_profile=containerservice.ManagedClusterSecurityProfileArgs(
            workload_identity=containerservice.ManagedClusterSecurityProfileWorkloadIdentityArgs(
                enabled=True
            )
        ),
        enable_rbac=True,
        aad_profile=containerservice.ManagedClusterAADProfileArgs(
            managed=True,
            enable_azure_rbac=True,
            admin_group_object_ids=list(aks.admin_group_object_ids) or None,
        )
        if entra_id
        else None,
        # Entra ID clusters hand out no static credentials.
        disable_local_accounts=entra_id,
        api_server_access_profile=containerservice.ManagedClusterAPIServerAccessProfileArgs(
            authorized_ip_ranges=list(aks.api_server_authorized_cidrs)
        )
        if aks.api_server_authorized_cidrs
        else None,
        network_profile=containerservice.ContainerServiceNetworkProfileArgs(
            network_plugin="azure",
            network_plugin_mode="overlay",
            pod_cidr=aks.pod_cidr,
            service_cidr=aks.service_cidr,
            dns_service_ip=aks.dns_service_ip,
            load_balancer_sku="standard",
            outbound_type="loadBalancer",
        ),
        auto_scaler_profile=containerservice.ManagedClusterPropertiesAutoScalerProfileArgs(
            balance_similar_node_groups="true",
            # DaemonSet-only GPU nodes (device plugin, DCGM) must still scale down to zero,
            # and so must GPU nodes whose pods use emptyDir (datasets, caches).
            skip_nodes_with_system_pods="false",
            skip_nodes_with_local_storage="false",
            # Every GPU node runs DaemonSets (device plugin, DCGM exporter): AKS recommends
            # leaving their requests out of a node's utilization so an idle GPU node is
            # still seen as idle (aks/cluster-autoscaler-overview; review aks.md N3).
            ignore_daemonsets_utilization=True,
            expander=aks.autoscaler_expander,
            scale_down_unneeded_time=aks.scale_down_unneeded_time,
            scale_down_delay_after_add=aks.scale_down_delay_after_add,
        ),
        auto_upgrade_profile=containerservice.ManagedClusterAutoUpgradeProfileArgs(
            upgrade_channel="patch", node_os_upgrade_channel="NodeImage"
        ),
        agent_pool_profiles=[
            system_pool.inline_profile(system, subnet_id, creating, not auto_provisioning)
        ],
        # Node auto-provisioning: AKS runs Karpenter for the GPU pools' NodePools. Left out
        # otherwise, so a cluster on agent pools sends what it always did (AKS: Manual).
        node_provisioning_profile=containerservice.ManagedClusterNodeProvisioningProfileArgs(
            mode=nap.PROVISIONING_MODE, default_node_pools=nap.DEFAULT_NODE_POOLS
        )
        if auto_provisioning
        else None,
        tags=tags,
        opts=pulumi.ResourceOptions.merge(
            protected,
            pulumi.ResourceOptions(
                ignore_changes=CLUSTER_IGNORE_CHANGES
                + (system_pool.NEW_CLUSTER_IGNORE_CHANGES if creating else [])
            ),
        ),
    )


def dns_prefix(cluster_name: str) -> str:
    """AKS DNS prefix: 1-54 of letters, digits and hyphens, alphanumeric at both ends."""
    prefix = cluster_name.replace("_", "-")[:54].strip("-")
    return prefix or "aks"
