"""An AKS cluster gpufleet adopts (`cluster.existing`): looked up, never created or changed.

The lookup runs while the program plans, so a cluster on another minor is an error before any
resource exists. gpufleet adds only the Kubernetes provider here and (in
`components.azure.stack`) the same GPU agent pools as on a cluster it creates. The pools run
with the cluster's own kubelet identity and join its node subnet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import containerservice
from pulumi_azure_native.provider import Provider as AzureProvider

from components.azure.cluster import MAINTENANCE_CONFIGURATIONS, user_access
from components.azure.deployed import control_plane_identity_of, pools_of
from components.azure.model.adopted import AksClusterFacts, adoption_problems, adoption_warnings
from components.azure.model.config import cluster_options
from components.azure.model.reservations import uses_group
from components.azure.reservation_groups import check_reservation_groups
from components.kubernetes.cluster import KubernetesProviders, stop_unless_adoptable
from components.model.adoption import AdoptionError
from components.model.schema import ClusterConfig, GpuPoolConfig


@dataclass(frozen=True)
class AdoptedAksClusterArgs:
    config: ClusterConfig
    # The stack's GPU pools as configured (the reservation groups they name are checked).
    gpu_pools: tuple[GpuPoolConfig, ...] = ()


class AdoptedAksCluster(pulumi.ComponentResource):
    """The looked-up cluster's facts, the provider for its pools and the Kubernetes provider."""

    facts: AksClusterFacts
    azure_provider: AzureProvider
    resource_group_name: str
    subnet_id: str | None
    server: pulumi.Output[str]
    certificate_authority: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    k8s_provider: k8s.Provider

    def __init__(
        self, name: str, args: AdoptedAksClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:azure:AdoptedCluster", name, None, opts)
        cfg = args.config
        aks = cluster_options(cfg)
        self.azure_provider = AzureProvider(
            f"{name}-azure",
            location=cfg.region or "",
            subscription_id=aks.subscription_id,
            opts=pulumi.ResourceOptions(parent=self),
        )
        assert aks.resource_group_name is not None  # required with cluster.existing
        self.resource_group_name = aks.resource_group_name
        invoke = pulumi.InvokeOptions(parent=self, provider=self.azure_provider)
        self.facts = facts = self._look_up(cfg, invoke)
        reserved = any(uses_group(pool) for pool in args.gpu_pools)
        stop_unless_adoptable(
            cfg.name,
            adoption_problems(facts, cfg, reserved, [pool.name for pool in args.gpu_pools]),
            adoption_warnings(facts, reserved),
        )
        check_reservation_groups(cfg, args.gpu_pools, self, self.azure_provider)
        self.subnet_id = aks.vnet_subnet_id or facts.system_subnet_id

        access = user_access(
            self,
            self.azure_provider,
            self.resource_group_name,
            cfg.name,
            cfg.name,
            kubelogin_mode=aks.kubelogin_mode if facts.entra_id else None,
        )
        self.server, self.certificate_authority = access.server, access.certificate_authority
        self.kubeconfig = access.kubeconfig
        self.k8s_providers = KubernetesProviders(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # The cluster (its ARM path), not its API server or CA: see components/azure/cluster.py.
            cluster_identifier=f"resourceGroups/{self.resource_group_name}/providers/"
            f"Microsoft.ContainerService/managedClusters/{facts.name}",
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.k8s_provider = self.k8s_providers.main
        self.register_outputs(
            {"clusterName": cfg.name, "kubernetesVersion": facts.kubernetes_version}
        )

    def _look_up(self, cfg: ClusterConfig, invoke: pulumi.InvokeOptions) -> AksClusterFacts:
        try:
            found = containerservice.get_managed_cluster(
                resource_group_name=self.resource_group_name, resource_name=cfg.name, opts=invoke
            )
        except Exception as error:  # the provider's message says why (not found, no access)
            where = f"in resource group {self.resource_group_name}"
            raise pulumi.RunError(
                AdoptionError.unreadable(cfg.name, where, error).render()
            ) from None
        windows = {
            kind: self._has_window(cfg.name, config_name, invoke)
            for kind, config_name in MAINTENANCE_CONFIGURATIONS.items()
        }
        return facts_of(found, windows["auto-upgrade"], windows["node-os"])

    def _has_window(self, cluster: str, config_name: str, invoke: pulumi.InvokeOptions) -> bool:
        try:
            containerservice.get_maintenance_configuration(
                config_name=config_name,
                resource_group_name=self.resource_group_name,
                resource_name=cluster,
                opts=invoke,
            )
            return True
        except Exception:  # AKS answers NotFound when the owner set no window
            return False


def facts_of(
    found: Any, has_auto_upgrade_window: bool, has_node_os_window: bool = True
) -> AksClusterFacts:
    profiles = list(found.agent_pool_profiles or [])
    system = next((p for p in profiles if p.mode == "System"), profiles[0] if profiles else None)
    aad = found.aad_profile
    kubelet = (found.identity_profile or {}).get("kubeletidentity")
    autoscaler = found.auto_scaler_profile
    upgrade = found.auto_upgrade_profile
    network = found.network_profile
    return AksClusterFacts(
        name=found.name,
        kubernetes_version=found.current_kubernetes_version or found.kubernetes_version or "",
        # An Entra ID cluster's user credentials are a kubelogin exec user (with or without
        # local accounts); a cluster without it hands out a client certificate.
        entra_id=bool(aad is not None and aad.managed),
        system_subnet_id=getattr(system, "vnet_subnet_id", None),
        oidc_issuer_url=getattr(found.oidc_issuer_profile, "issuer_url", None) or "",
        kubelet_object_id=getattr(kubelet, "object_id", None) or "",
        skips_nodes_with_local_storage=getattr(autoscaler, "skip_nodes_with_local_storage", None)
        == "true",
        auto_upgrade_channel=getattr(upgrade, "upgrade_channel", None),
        has_auto_upgrade_window=has_auto_upgrade_window,
        network_plugin=getattr(network, "network_plugin", None),
        network_plugin_mode=getattr(network, "network_plugin_mode", None),
        pod_subnet_id=getattr(system, "pod_subnet_id", None),
        node_os_channel=getattr(upgrade, "node_os_upgrade_channel", None),
        has_node_os_window=has_node_os_window,
        pools=pools_of(profiles),
        control_plane_identity_id=control_plane_identity_of(found.identity),
        node_provisioning_mode=getattr(found.node_provisioning_profile, "mode", None),
    )
