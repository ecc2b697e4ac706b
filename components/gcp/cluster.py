"""A private, VPC-native regional GKE cluster with a CPU system pool and a Kubernetes provider."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.gcp.model.cluster_needs import firewall_rule_name
from components.gcp.model.config import cluster_options
from components.gcp.node_identity import NodeIdentity, node_identity
from components.kubernetes.cluster import KubernetesProviders
from components.kubernetes.kubeconfig import exec_kubeconfig
from components.model.maintenance import rfc3339, weekly_rrule, window_end, window_start
from components.model.pools import PoolSpec
from components.model.schema import SYSTEM_POOL_NAME, ClusterConfig

# Default GKE node scopes, including devstorage.read_only, which GPU nodes need to fetch drivers.
NODE_OAUTH_SCOPES = [
    "https://www.googleapis.com/auth/devstorage.read_only",
    "https://www.googleapis.com/auth/logging.write",
    "https://www.googleapis.com/auth/monitoring",
    "https://www.googleapis.com/auth/service.management.readonly",
    "https://www.googleapis.com/auth/servicecontrol",
    "https://www.googleapis.com/auth/trace.append",
]


@dataclass(frozen=True)
class GkeClusterArgs:
    config: ClusterConfig
    system_pool: PoolSpec
    # Ports the control plane must reach Kueue on beyond GKE's own rule (cluster_needs.py).
    kueue_ports: tuple[int, ...] = ()
    # Project APIs the pools need (image streaming's); enabled, never disabled on destroy.
    project_services: tuple[str, ...] = ()
    # Project roles the node account needs for the pools (image streaming's).
    node_account_roles: tuple[str, ...] = ()
    # Dataplane V2 and multi-networking, which GPUDirect's extra networks need: set when the
    # stack has fabric pools (components/gcp/model/fabric.py). Fixed at creation: a running
    # cluster keeps what it was created with (change_rules.py refuses the change in `diff`).
    multi_networking: bool = False


class GkeCluster(pulumi.ComponentResource):
    """The cluster, its network (unless given), node service account and system pool."""

    cluster: gcp.container.Cluster
    gcp_provider: gcp.Provider
    k8s_provider: k8s.Provider
    kubeconfig: pulumi.Output[str]
    node_service_account: pulumi.Input[str]
    system_node_pool: gcp.container.NodePool
    server: pulumi.Output[str]
    certificate_authority: pulumi.Input[str]
    # What the GPU pools and Kueue wait for: the project APIs they need, Kueue's firewall rule.
    pool_needs: list[pulumi.Resource]

    def __init__(
        self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:gcp:Cluster", name, None, opts)
        cfg = args.config
        gcp_cfg = cluster_options(cfg)
        self.gcp_provider = gcp.Provider(
            f"{name}-gcp",
            project=gcp_cfg.project,
            region=cfg.region or "",
            default_labels={"managed-by": "gpufleet", "gpufleet-cluster": cfg.name},
            opts=pulumi.ResourceOptions(parent=self),
        )
        child = pulumi.ResourceOptions(parent=self, provider=self.gcp_provider)
        network, subnetwork = self._network(name, args, child)
        identity = node_identity(
            name,
            cfg.name,
            gcp_cfg.project,
            cfg.region or "",
            gcp_cfg.node_service_account,
            child,
            args.node_account_roles,
        )
        self.node_service_account = identity.email
        self.pool_needs = self._pool_needs(name, args, network, identity.email, child)
        self.cluster = self._cluster(
            name, cfg, network, subnetwork, identity, child, args.multi_networking
        )
        self.system_node_pool = self._system_node_pool(name, args, identity.email, child)
        self._kubernetes_access(name, cfg)
        self.register_outputs(
            {
                "clusterName": self.cluster.name,
                "endpoint": self.cluster.endpoint,
                "kubeconfig": self.kubeconfig,
            }
        )

    def _network(
        self, name: str, args: GkeClusterArgs, child: pulumi.ResourceOptions
    ) -> tuple[pulumi.Input[str], pulumi.Input[str]]:
        """The cluster's own VPC and subnetwork (with Cloud NAT: private nodes pull images), or the given ones."""
        cfg = args.config
        options = cluster_options(cfg)
        if options.network and options.subnetwork:
            return options.network, options.subnetwork
        network = gcp.compute.Network(
            f"{name}-network",
            name=f"{cfg.name}-net",
            auto_create_subnetworks=False,
            opts=child,
        )
        subnetwork = gcp.compute.Subnetwork(
            f"{name}-subnet",
            name=f"{cfg.name}-nodes",
            network=network.id,
            region=cfg.region,
            ip_cidr_range=options.subnet_cidr,
            private_ip_google_access=True,
            secondary_ip_ranges=[
                gcp.compute.SubnetworkSecondaryIpRangeArgs(
                    range_name=options.pods_range_name, ip_cidr_range=options.pods_cidr
                ),
                gcp.compute.SubnetworkSecondaryIpRangeArgs(
                    range_name=options.services_range_name, ip_cidr_range=options.services_cidr
                ),
            ],
            opts=child,
        )
        router = gcp.compute.Router(
            f"{name}-router",
            name=f"{cfg.name}-router",
            network=network.id,
            region=cfg.region,
            opts=child,
        )
        gcp.compute.RouterNat(
            f"{name}-nat",
            name=f"{cfg.name}-nat",
            router=router.name,
            region=cfg.region,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
            opts=child,
        )
        return network.id, subnetwork.id

    def _pool_needs(
        self,
        name: str,
        args: GkeClusterArgs,
        network: pulumi.Input[str],
        node_account: pulumi.Input[str],
        child: pulumi.ResourceOptions,
    ) -> list[pulumi.Resource]:
        """The project APIs the pools need and, on gpufleet's own network, Kueue's firewall rule."""
        cfg = args.config
        gcp_cfg = cluster_options(cfg)
        needs: list[pulumi.Resource] = [
            gcp.projects.Service(
                f"{name}-{service.split('.')[0]}-api",
                project=gcp_cfg.project,
                service=service,
                # The project's, not the stack's: other clusters may use it.
                disable_on_destroy=False,
                disable_dependent_services=False,
                opts=child,
            )
            for service in args.project_services
        ]
        if args.kueue_ports and not gcp_cfg.network:
            # GKE's rule lets the control plane reach nodes on 443 and 10250 only; Kueue's
            # webhooks and visibility API listen elsewhere (cluster_needs.py). Kueue runs on
            # the system pool, whose nodes carry gpufleet's node service account.
            needs.append(
                gcp.compute.Firewall(
                    f"{name}-kueue-webhooks",
                    name=firewall_rule_name(cfg.name),
                    network=network,
                    direction="INGRESS",
                    source_ranges=[gcp_cfg.master_cidr],
                    allows=[
                        gcp.compute.FirewallAllowArgs(
                            protocol="tcp", ports=[str(port) for port in args.kueue_ports]
                        )
                    ],
                    target_service_accounts=[node_account],
                    description="GKE control plane to Kueue's webhooks and visibility API",
                    opts=child,
                )
            )
        return needs

    def _cluster(
        self,
        name: str,
        cfg: ClusterConfig,
        network: pulumi.Input[str],
        subnetwork: pulumi.Input[str],
        identity: NodeIdentity,
        child: pulumi.ResourceOptions,
        fabric: bool,
    ) -> gcp.container.Cluster:
        """The private, VPC-native cluster; its default pool is removed once created."""
        gcp_cfg = cluster_options(cfg)
        # The temporary default pool (and the system pool) use gpufleet's node service account,
        # never the Compute Engine default one, which many projects delete or disable; nodes
        # start only once its roles exist.
        node_config = gcp.container.ClusterNodeConfigArgs(
            service_account=identity.email,
            oauth_scopes=NODE_OAUTH_SCOPES,
            workload_metadata_config=gcp.container.ClusterNodeConfigWorkloadMetadataConfigArgs(
                mode="GKE_METADATA"
            ),
            shielded_instance_config=gcp.container.ClusterNodeConfigShieldedInstanceConfigArgs(
                enable_secure_boot=True, enable_integrity_monitoring=True
            ),
        )
        return gcp.container.Cluster(
            f"{name}-cluster",
            name=cfg.name,
            datapath_provider="ADVANCED_DATAPATH" if fabric else None,
            enable_multi_networking=True if fabric else None,
            location=cfg.region or "",
            node_locations=cfg.zones or None,
            network=network,
            subnetwork=subnetwork,
            networking_mode="VPC_NATIVE",
            ip_allocation_policy=gcp.container.ClusterIpAllocationPolicyArgs(
                cluster_secondary_range_name=gcp_cfg.pods_range_name,
                services_secondary_range_name=gcp_cfg.services_range_name,
            ),
            # The default pool is replaced by our own pools so that a GPU pool change never
            # touches the cluster resource.
            remove_default_node_pool=True,
            initial_node_count=1,
            node_config=node_config,
            min_master_version=cfg.kubernetes_version,
            release_channel=gcp.container.ClusterReleaseChannelArgs(
                channel=gcp_cfg.release_channel
            ),
            private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(
                enable_private_nodes=True,
                enable_private_endpoint=False,
                master_ipv4_cidr_block=gcp_cfg.master_cidr,
            ),
            # Google's recommendation: the DNS-based endpoint, IAM-authorised, reachable wherever
            # pulumi runs; the IP endpoints admit only the listed ranges (review gke.md S1-4).
            control_plane_endpoints_config=gcp.container.ClusterControlPlaneEndpointsConfigArgs(
                dns_endpoint_config=gcp.container.ClusterControlPlaneEndpointsConfigDnsEndpointConfigArgs(
                    allow_external_traffic=gcp_cfg.control_plane_access == "dns"
                )
            ),
            master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
                cidr_blocks=[
                    gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
                        cidr_block=cidr, display_name=f"allowed-{i}"
                    )
                    for i, cidr in enumerate(gcp_cfg.master_authorized_cidrs)
                ]
            ),
            workload_identity_config=gcp.container.ClusterWorkloadIdentityConfigArgs(
                workload_pool=f"{gcp_cfg.project}.svc.id.goog"
            ),
            # The autoscaler's profile (cluster.gcp.autoscalingProfile, BALANCED by default:
            # GKE does not recommend OPTIMIZE_UTILIZATION for serving; review gke-2.md N4).
            # Node auto-provisioning stays off.
            cluster_autoscaling=gcp.container.ClusterClusterAutoscalingArgs(
                enabled=False, autoscaling_profile=gcp_cfg.autoscaling_profile
            ),
            # Automatic upgrades start only inside the weekly window (GKE needs 48 hours of it
            # in any 32 days; the config check enforces that).
            maintenance_policy=gcp.container.ClusterMaintenancePolicyArgs(
                recurring_window=gcp.container.ClusterMaintenancePolicyRecurringWindowArgs(
                    start_time=rfc3339(window_start(cfg.maintenance)),
                    end_time=rfc3339(window_end(cfg.maintenance)),
                    recurrence=weekly_rrule(cfg.maintenance),
                )
            ),
            deletion_protection=cfg.protect,
            resource_labels={"managed-by": "gpufleet"},
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    protect=cfg.protect,
                    # The removed default pool's settings would otherwise show as drift. The
                    # cluster's zones are GKE's default for pools created without their own, used
                    # once (by the default pool); changed later, GKE moves every node pool,
                    # GPU pools included, to the new list (GKE API ClusterUpdate.desiredLocations;
                    # terraform-provider-google sends it on any node_locations change; review
                    # gke-3.md R3-1). So the list is fixed at creation: a cluster.zones edit
                    # moves the system pool and the pools that take their zones from it, each
                    # through its own nodeLocations, as `diff` shows.
                    # Dataplane V2 is ForceNew in terraform-provider-google: adding a fabric pool
                    # must not recreate a running cluster (change_rules.py says so in `diff`).
                    ignore_changes=[
                        "initialNodeCount",
                        "nodeConfig",
                        "nodePools",
                        "nodeLocations",
                        "datapathProvider",
                        "enableMultiNetworking",
                    ],
                    depends_on=identity.grants,
                ),
            ),
        )

    def _system_node_pool(
        self,
        name: str,
        args: GkeClusterArgs,
        node_account: pulumi.Input[str],
        child: pulumi.ResourceOptions,
    ) -> gcp.container.NodePool:
        """The autoscaled CPU pool for system pods, on gpufleet's node account."""
        cfg = args.config
        system = args.system_pool
        return gcp.container.NodePool(
            f"{name}-system",
            name=SYSTEM_POOL_NAME,
            cluster=self.cluster.name,
            location=cfg.region or "",
            node_locations=cfg.zones or None,
            initial_node_count=1,
            ignore_node_count_changes=True,  # the autoscaler's (review gke.md S3-2)
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=system.min_nodes,
                total_max_node_count=system.max_nodes,
                location_policy="BALANCED",
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=system.machine_types[0],
                disk_size_gb=100,
                # No disk_type: GKE picks pd-balanced, or hyperdisk-balanced on series without
                # Persistent Disk (N4, C4); a fixed pd-balanced fails there.
                service_account=node_account,
                oauth_scopes=NODE_OAUTH_SCOPES,
                labels=dict(system.declared_labels),
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA"
                ),
                shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=True, enable_integrity_monitoring=True
                ),
            ),
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    ignore_changes=["initialNodeCount", "nodeCount"],
                    # A fixed name: the old pool must go before GKE accepts its replacement.
                    delete_before_replace=True,
                ),
            ),
        )

    def _kubernetes_access(self, name: str, cfg: ClusterConfig) -> None:
        """The API server, its CA, the kubeconfig and the Kubernetes providers (after the system
        pool, which runs what the providers install first)."""
        if cluster_options(cfg).control_plane_access == "dns":
            # The DNS endpoint presents a publicly trusted certificate: no CA data.
            self.server = self.cluster.control_plane_endpoints_config.apply(_dns_endpoint)
            self.certificate_authority = ""
        else:
            self.server = pulumi.Output.concat("https://", self.cluster.endpoint)
            self.certificate_authority = self.cluster.master_auth.cluster_ca_certificate
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(self.server, self.certificate_authority).apply(
                lambda parts: gke_kubeconfig(cfg.name, parts[0], parts[1] or "")
            )
        )
        self.k8s_providers = KubernetesProviders(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # The cluster, not its endpoint, is the provider's identity: a new endpoint or CA
            # (dns <-> ip, a credential rotation) updates the provider instead of replacing it
            # and everything it manages (pulumi-kubernetes DiffConfig; review gke-2.md N1).
            cluster_identifier=self.cluster.id,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.system_node_pool]),
        )
        self.k8s_provider = self.k8s_providers.main


def gke_kubeconfig(cluster_name: str, server: str, ca_data: str) -> str:
    """A kubeconfig whose tokens come from `gke-gcloud-auth-plugin` (short-lived, never stored)."""
    return exec_kubeconfig(
        cluster=cluster_name,
        server=server,
        ca_data=ca_data,
        command="gke-gcloud-auth-plugin",
        args=[],
    )


def _dns_endpoint(config: Any) -> str:
    """`https://<the cluster's DNS endpoint>` from `control_plane_endpoints_config`."""
    dns = getattr(config, "dns_endpoint_config", None)
    endpoint = getattr(dns, "endpoint", None)
    return f"https://{endpoint}" if endpoint else ""
