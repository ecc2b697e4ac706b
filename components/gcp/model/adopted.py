"""What gpufleet needs of a GKE cluster it adopts (`cluster.existing`), as rules on looked-up facts.

- Workload Identity: gpufleet's GPU pools run the GKE metadata server (`GKE_METADATA`), which
  GKE accepts only on a cluster with a workload pool (cloud.google.com/kubernetes-engine/docs/
  how-to/workload-identity, "Enable Workload Identity Federation for GKE on clusters and node
  pools": node pools need the cluster setting first).
- Versions: a node pool created without a version runs the control plane's (GKE API,
  NodePool.version: "if unspecified, the cluster's current master version"), so a pool is never
  newer than the control plane; the stack's `kubernetesVersion` must name that minor.
  A release channel upgrades the control plane on its own, so a cluster running a newer minor
  than the stack says is a warning, not a stop (review gke-2.md N12): the pools follow the
  control plane whatever the key says. A stack that claims a newer minor than the cluster runs is
  refused: gpufleet's checks (G4 needs 1.34) would judge a cluster that is not there.
- Upgrades: GKE upgrades nodes automatically inside the cluster's maintenance window, or at any
  time without one (cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-
  exclusions). The window is the owner's: gpufleet warns when there is none.
- Autopilot: GKE manages an Autopilot cluster's nodes and accepts no user node pools
  (cloud.google.com/kubernetes-engine/docs/concepts/autopilot-overview; terraform-provider-google
  refuses node_pool blocks with enable_autopilot): every GPU pool would fail at `up`.
- The endpoint gpufleet's Kubernetes provider reaches: the DNS-based endpoint when it admits
  traffic from outside Google Cloud (`allowExternalTraffic`), else the IP endpoint with the
  cluster's CA. That IP endpoint is the control plane's private address when the cluster sets
  `privateClusterConfig.enablePrivateEndpoint`, and admits only the listed ranges when master
  authorized networks are on (on the private endpoint too with
  `privateEndpointEnforcementEnabled`) (GKE docs, how-to/latest/network-isolation; the fields of
  terraform-provider-google's `data.google_container_cluster`). Whether pulumi runs inside the
  VPC or an authorized range gpufleet cannot tell: it says so, with the owner's one-line fix
  (`gcloud container clusters update --enable-dns-access` opens the DNS endpoint, IAM-authorised;
  review gke-3.md R3-3).
- Node pool names are unique in a cluster: node_pool_names.py checks gpufleet's against the
  owner's (a compute class's node pools too).
- GPUDirect (`interconnect: fabric`) pools need the cluster's Dataplane V2 and multi-networking
  (GKE docs how-to/setup-multinetwork-support-for-pods, Requirements): without them the
  `Network` kinds are not served and GKE refuses a node pool with additional node networks.
  Dataplane V2 is chosen at creation (terraform-provider-google @e03b7622
  resource_container_cluster.go L2438-2446: `datapath_provider` ForceNew); multi-networking is
  turned on in place (L2478-2483, L4283-4295), by the owner (review rev-gke6 G6-3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from components.model.adoption import minor_of, version_problem
from components.model.problems import Problem
from components.model.schema import ClusterConfig


@dataclass(frozen=True)
class GkeClusterFacts:
    """What gpufleet reads of the looked-up cluster (`gcp.container.get_cluster`)."""

    # projects/P/locations/L/clusters/N: the Kubernetes provider's identity.
    cluster_id: str
    name: str
    location: str
    master_version: str
    workload_pool: str | None
    release_channel: str | None
    has_maintenance_window: bool
    # The DNS-based endpoint, when it admits traffic from outside Google Cloud (None: it does
    # not, and the Kubernetes provider uses the IP endpoint with the cluster's CA).
    dns_endpoint: str | None
    ip_endpoint: str
    ca_certificate: str
    autopilot: bool = False
    # `networkConfig.datapathProvider` (ADVANCED_DATAPATH: Dataplane V2; None: GKE's default,
    # the legacy datapath) and multi-networking.
    datapath_provider: str | None = None
    multi_networking: bool = False
    # The cluster's node pools and their Kubernetes node labels.
    node_pools: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # Private nodes, and the control plane's range their firewall rules admit (masterIpv4CidrBlock;
    # None where GKE chose none, as for Private Service Connect clusters), and the cluster's VPC.
    private_nodes: bool = False
    control_plane_cidr: str | None = None
    network: str | None = None
    # The IP endpoint is the control plane's private address (enablePrivateEndpoint), and the
    # ranges master authorized networks admit (None: the setting is off; Google Cloud's public
    # IPs too with gcp_public_cidrs; the private endpoint too with authorized_on_private).
    private_endpoint: bool = False
    authorized_networks: tuple[str, ...] | None = None
    gcp_public_cidrs: bool = False
    authorized_on_private: bool = False


def adoption_problems(
    facts: GkeClusterFacts, cluster: ClusterConfig, fabric_pools: Sequence[str] = ()
) -> list[Problem]:
    problems = _fabric_problems(facts, fabric_pools)
    version = version_problem(facts.name, cluster.kubernetes_version, facts.master_version)
    if version is not None and not _upgraded_by_its_channel(facts, cluster):
        problems.append(version)
    if facts.autopilot:
        problems.append(
            Problem(
                "cluster.existing",
                f"cluster {facts.name} is an Autopilot cluster: GKE manages its nodes and "
                "accepts no node pools; adopt a Standard cluster, or run GPU pods on Autopilot "
                "with its own GPU selectors (cloud.google.com/gke-accelerator) and no gpufleet "
                "pools",
                has_value=False,
            )
        )
    if not facts.workload_pool:
        problems.append(
            Problem(
                "cluster.existing",
                f"cluster {facts.name} has no Workload Identity, which gpufleet's GPU pools "
                "(GKE metadata server) need; its owner enables it with `gcloud container "
                f"clusters update {facts.name} --location {facts.location} "
                "--workload-pool=PROJECT_ID.svc.id.goog`",
                has_value=False,
            )
        )
    if not facts.dns_endpoint and not facts.ip_endpoint:
        problems.append(
            Problem(
                "cluster.existing",
                f"cluster {facts.name} shows no endpoint gpufleet's Kubernetes provider can "
                "reach (no external DNS endpoint, no IP endpoint)",
                has_value=False,
            )
        )
    return problems


DATAPLANE_V2 = "ADVANCED_DATAPATH"


def _fabric_problems(facts: GkeClusterFacts, fabric_pools: Sequence[str]) -> list[Problem]:
    """What keeps GPUDirect pools off the cluster: Dataplane V2 (set only at creation), then
    multi-networking (its owner turns it on)."""
    if not fabric_pools:
        return []
    pools = ", ".join(fabric_pools)
    if facts.datapath_provider != DATAPLANE_V2:
        return [
            Problem(
                "cluster.existing",
                f"cluster {facts.name} runs without Dataplane V2 (datapathProvider "
                f"{facts.datapath_provider or 'unset, the legacy datapath'}), which the "
                f"GPUDirect pools ({pools}, interconnect: fabric) need for multi-networking; GKE "
                "sets it only when a cluster is created: run them on a new cluster created with "
                "Dataplane V2 (one gpufleet creates), or set interconnect: none",
                has_value=False,
            )
        ]
    if not facts.multi_networking:
        return [
            Problem(
                "cluster.existing",
                f"cluster {facts.name} has multi-networking off, which the GPUDirect pools "
                f"({pools}, interconnect: fabric) need; its owner turns it on with `gcloud "
                f"container clusters update {facts.name} --location {facts.location} "
                "--enable-multi-networking`",
                has_value=False,
            )
        ]
    return []


def _upgraded_by_its_channel(facts: GkeClusterFacts, cluster: ClusterConfig) -> bool:
    """The cluster runs a newer minor than the stack says (its release channel moved it)."""
    running = minor_of(facts.master_version)
    return running is not None and _minor_key(running) > _minor_key(cluster.kubernetes_version)


def _minor_key(minor: str) -> tuple[int, ...]:
    return tuple(int(part) for part in minor.split(".")[:2] if part.isdigit())


def adoption_warnings(facts: GkeClusterFacts, cluster: ClusterConfig | None = None) -> list[str]:
    warnings = []
    if cluster is not None and _upgraded_by_its_channel(facts, cluster):
        warnings.append(
            f"cluster {facts.name} runs Kubernetes {facts.master_version} "
            f"({facts.release_channel or 'no'} release channel), newer than "
            f"cluster.kubernetesVersion {cluster.kubernetes_version}: its GPU pools follow the "
            f'control plane; set kubernetesVersion: "{minor_of(facts.master_version)}" so '
            "gpufleet's checks judge the minor it runs"
        )
    endpoint = endpoint_warning(facts)
    if endpoint is not None:
        warnings.append(endpoint)
    if not facts.has_maintenance_window:
        warnings.append(
            f"cluster {facts.name} has no maintenance window: GKE may upgrade the GPU nodes (and "
            "restart their training jobs) at any hour; ask its owner to set one "
            "(`gcloud container clusters update --maintenance-window-start ...`)"
        )
    return warnings


def endpoint_warning(facts: GkeClusterFacts) -> str | None:
    """What keeps pulumi from reaching the IP endpoint gpufleet uses when the DNS endpoint admits
    no external traffic (None: the DNS endpoint, or an IP endpoint open to all)."""
    if facts.dns_endpoint or not facts.ip_endpoint:
        return None  # no endpoint at all is a problem (adoption_problems)
    if facts.private_endpoint:
        limit = (
            f"is the control plane's private address ({facts.ip_endpoint}, "
            "privateClusterConfig.enablePrivateEndpoint): pulumi must run inside the cluster's "
            "VPC or a network connected to it"
        )
        if facts.authorized_on_private and facts.authorized_networks is not None:
            limit += f", from a range its authorized networks admit ({_ranges(facts)})"
    elif facts.authorized_networks is not None:
        limit = (
            f"({facts.ip_endpoint}) admits only the cluster's master authorized networks "
            f"({_ranges(facts)}): pulumi must run from one of them"
        )
    else:
        return None
    return (
        f"cluster {facts.name}: its DNS-based endpoint admits no traffic from outside Google "
        f"Cloud, so gpufleet's Kubernetes provider uses the IP endpoint, which {limit}; not "
        "checked: where pulumi runs is not known here, and every Kubernetes resource of the "
        "stack fails at `up` if it cannot reach it. Its owner can open the DNS endpoint "
        f"(IAM-authorised, reachable from anywhere): gcloud container clusters update "
        f"{facts.name} --location {facts.location} --enable-dns-access"
    )


def _ranges(facts: GkeClusterFacts) -> str:
    ranges = list(facts.authorized_networks or ())
    if facts.gcp_public_cidrs:
        ranges.append("Google Cloud's public IPs")
    return ", ".join(ranges) or "none listed"
