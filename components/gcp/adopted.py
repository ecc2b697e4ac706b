"""A GKE cluster gpufleet adopts (`cluster.existing`): looked up, never created or changed.

The lookup runs while the program plans, so what keeps the GPU pools from joining (another
minor, no Workload Identity) is an error before any resource exists. gpufleet adds its own node
service account, the Kubernetes provider, and (in `components.gcp.stack`) the same GPU pools
as on a cluster it creates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.gcp.cluster import gke_kubeconfig
from components.gcp.model.adopted import (
    GkeClusterFacts,
    adoption_problems,
    adoption_warnings,
)
from components.gcp.model.cluster_checks import adopted_location
from components.gcp.model.cluster_needs import adopted_kueue_warning
from components.gcp.model.config import cluster_options
from components.gcp.model.node_pool_names import GpufleetNodePool, owner_pool_problems
from components.gcp.node_identity import node_identity
from components.kubernetes.cluster import KubernetesProviders, stop_unless_adoptable
from components.model.adoption import AdoptionError
from components.model.schema import ClusterConfig


@dataclass(frozen=True)
class AdoptedGkeClusterArgs:
    config: ClusterConfig
    # The node pools gpufleet adds (GKE refuses a name the cluster already has).
    node_pools: tuple[GpufleetNodePool, ...] = ()
    # The GPUDirect (fabric) pools gpufleet adds: they need Dataplane V2 and multi-networking.
    fabric_pools: tuple[str, ...] = ()
    # The ports the control plane must reach Kueue on beyond GKE's own firewall rule.
    kueue_ports: tuple[int, ...] = ()
    # Project roles the node account needs for the pools (image streaming's).
    node_account_roles: tuple[str, ...] = ()


def look_up(config: ClusterConfig) -> GkeClusterFacts:
    """The cluster named `cluster.name` in `cluster.region` (or, zonal, in the zone
    `cluster.existing.location`) of `cluster.gcp.project`."""
    project = cluster_options(config).project
    location = adopted_location(config)
    try:
        found = gcp.container.get_cluster(name=config.name, location=location, project=project)
    except Exception as error:  # the provider's message says why (not found, no permission)
        where = f"in {location} of project {project}"
        if location == config.region:
            # GKE finds a cluster only at its exact location (review gke-3.md R3-4).
            where += (
                f" (a zonal cluster is not found in its region: set cluster.existing.location "
                f"to its zone, such as {location}-a)"
            )
        else:
            # The reverse: a regional cluster is not found in one of its zones (review gke-4 N5).
            where += (
                f" (a regional cluster is not found in a zone: leave cluster.existing.location "
                f"out to look it up in {config.region})"
            )
        raise pulumi.RunError(
            AdoptionError.unreadable(config.name, where, error).render()
        ) from None
    return facts_of(found)


def facts_of(found: Any) -> GkeClusterFacts:
    endpoints = _first(found.control_plane_endpoints_configs)
    dns = _first(getattr(endpoints, "dns_endpoint_configs", None))
    private = _first(getattr(found, "private_cluster_configs", None))
    authorized = _first(getattr(found, "master_authorized_networks_configs", None))
    policy = _first(found.maintenance_policies)
    windows = [
        *(getattr(policy, "recurring_windows", None) or []),
        *(getattr(policy, "daily_maintenance_windows", None) or []),
    ]
    return GkeClusterFacts(
        cluster_id=found.id,
        name=found.name,
        location=found.location,
        master_version=found.master_version or "",
        workload_pool=getattr(_first(found.workload_identity_configs), "workload_pool", None),
        release_channel=getattr(_first(found.release_channels), "channel", None),
        has_maintenance_window=bool(windows),
        dns_endpoint=dns.endpoint if dns is not None and dns.allow_external_traffic else None,
        ip_endpoint=found.endpoint or "",
        ca_certificate=getattr(_first(found.master_auths), "cluster_ca_certificate", "") or "",
        autopilot=bool(found.enable_autopilot),
        datapath_provider=getattr(found, "datapath_provider", None) or None,
        multi_networking=bool(getattr(found, "enable_multi_networking", False)),
        node_pools={
            pool.name: dict(getattr(_first(pool.node_configs), "labels", None) or {})
            for pool in found.node_pools or []
        },
        private_nodes=bool(getattr(private, "enable_private_nodes", False)),
        control_plane_cidr=getattr(private, "master_ipv4_cidr_block", None) or None,
        network=getattr(found, "network", None) or None,
        private_endpoint=bool(getattr(private, "enable_private_endpoint", False)),
        authorized_networks=None
        if authorized is None
        else tuple(block.cidr_block for block in authorized.cidr_blocks or ()),
        gcp_public_cidrs=bool(getattr(authorized, "gcp_public_cidrs_access_enabled", False)),
        authorized_on_private=bool(
            getattr(authorized, "private_endpoint_enforcement_enabled", False)
        ),
    )


def _first(items: Any) -> Any:
    return items[0] if items else None


class AdoptedGkeCluster(pulumi.ComponentResource):
    """The looked-up cluster's facts, gpufleet's node service account and Kubernetes provider."""

    facts: GkeClusterFacts
    gcp_provider: gcp.Provider
    node_service_account: pulumi.Input[str]
    node_roles: list[gcp.projects.IAMMember]
    server: str
    certificate_authority: str
    kubeconfig: pulumi.Output[str]
    k8s_provider: k8s.Provider

    def __init__(
        self, name: str, args: AdoptedGkeClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        cfg = args.config
        facts = look_up(cfg)
        firewall = adopted_kueue_warning(facts, args.kueue_ports)
        stop_unless_adoptable(
            cfg.name,
            [
                *adoption_problems(facts, cfg, args.fabric_pools),
                *owner_pool_problems(facts, args.node_pools),
            ],
            [*adoption_warnings(facts, cfg), *([firewall] if firewall else [])],
        )
        super().__init__("gpufleet:gcp:AdoptedCluster", name, None, opts)
        self.facts = facts
        project = cluster_options(cfg).project
        self.gcp_provider = gcp.Provider(
            f"{name}-gcp",
            project=project,
            region=cfg.region or "",
            default_labels={"managed-by": "gpufleet", "gpufleet-cluster": cfg.name},
            opts=pulumi.ResourceOptions(parent=self),
        )
        child = pulumi.ResourceOptions(parent=self, provider=self.gcp_provider)
        identity = node_identity(
            name,
            cfg.name,
            project,
            cfg.region or "",
            cluster_options(cfg).node_service_account,
            child,
            args.node_account_roles,
        )
        self.node_service_account, self.node_roles = identity.email, identity.grants
        if facts.dns_endpoint:
            # The DNS endpoint presents a publicly trusted certificate: no CA data.
            self.server, self.certificate_authority = f"https://{facts.dns_endpoint}", ""
        else:
            self.server = f"https://{facts.ip_endpoint}"
            self.certificate_authority = facts.ca_certificate
        self.kubeconfig = pulumi.Output.secret(
            gke_kubeconfig(cfg.name, self.server, self.certificate_authority)
        )
        self.k8s_providers = KubernetesProviders(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # The cluster, not its endpoint: see components/gcp/cluster.py.
            cluster_identifier=facts.cluster_id,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.k8s_provider = self.k8s_providers.main
        self.register_outputs(
            {
                "clusterName": cfg.name,
                "masterVersion": facts.master_version,
                "releaseChannel": facts.release_channel or "",
            }
        )
