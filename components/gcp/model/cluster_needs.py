"""What gpufleet's pools need of a GKE cluster's network and project beyond the cluster itself.

- Kueue (queued pools) is called by the control plane on ports a private cluster's firewall
  drops. GKE's own rule for a private cluster (`gke-<cluster>-<id>-master`) lets the control
  plane open TCP connections to nodes and Pods on 443 and 10250 only; an admission webhook on
  another port needs a rule from the control plane's range (cloud.google.com/kubernetes-engine/
  docs/how-to/private-clusters, "Adding firewall rules for specific use cases"; now
  how-to/latest/network-isolation#add_firewall_rules). gpufleet adds that rule in the VPC it
  creates; in a given network or on an adopted cluster it says the exact rule to add.
- Image streaming (gcfsConfig) needs the Container File System API enabled in the project
  (cloud.google.com/kubernetes-engine/docs/how-to/image-streaming, "Requirements": "You must
  enable the Container File System API"). gpufleet enables it for a cluster it creates (never
  disabling it on destroy: other clusters of the project may stream too); on an adopted cluster
  it does not manage the project's services and says so. Nodes that do not run as Compute
  Engine's default service account stream only if their account holds Service Usage Consumer
  (`roles/serviceusage.serviceUsageConsumer`) in the project that hosts the images (same
  "Requirements"; review gke-3.md R3-5): gpufleet grants it to its own node account in the
  cluster's project when a pool streams, and says so for a given account. Without it GKE pulls
  images whole, silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from components.gcp.model.adopted import GkeClusterFacts
from components.gcp.model.config import cluster_options, pool_options
from components.model import kueue_ports as kueue
from components.model.capacity import declared_order, written_order
from components.model.schema import ClusterConfig, GpuPoolConfig

# The ports GKE's firewall rule for a private cluster opens from the control plane to nodes.
CONTROL_PLANE_OPEN_PORTS: Final[tuple[int, ...]] = (443, 10250)
IMAGE_STREAMING_API: Final[str] = "containerfilesystem.googleapis.com"
IMAGE_STREAMING_ROLE: Final[str] = "roles/serviceusage.serviceUsageConsumer"
# Compute Engine's default service account: NUMBER-compute@developer.gserviceaccount.com.
COMPUTE_DEFAULT_ACCOUNT: Final[str] = "-compute@developer.gserviceaccount.com"


def kueue_ports(pools: Sequence[GpuPoolConfig], queue_pools: Sequence[str] = ()) -> tuple[int, ...]:
    """The ports the control plane must reach Kueue on beyond GKE's own rule (none without
    a queued pool or a pool `queues.pools` names, `queue_pools`: no Kueue)."""
    if not any(_queued(pool) or pool.name in queue_pools for pool in pools):
        return ()
    return tuple(p for p in kueue.CONTROL_PLANE_PORTS if p not in CONTROL_PLANE_OPEN_PORTS)


def _queued(pool: GpuPoolConfig) -> bool:
    # As queue_checks.is_queued (which the clouds' models cannot import: it reads the registry).
    order = written_order(pool.capacity)
    return order is not None and "queued" in declared_order(pool.capacity, pool.spot)


def firewall_rule_name(cluster_name: str) -> str:
    # Firewall names: 1-63 of a-z 0-9 -; GKE cluster names take at most 40 characters.
    return f"{cluster_name}-kueue-webhooks"


def network_project(network: str) -> str | None:
    """The project a network path names (`projects/HOST/global/networks/NAME`, also inside a
    full URL such as `https://www.googleapis.com/compute/v1/projects/HOST/...`), else None
    (review gke-4 N4)."""
    parts = network.split("/")
    return parts[parts.index("projects") + 1] if "projects" in parts[:-1] else None


def _allow(ports: Sequence[int]) -> str:
    return ",".join(f"tcp:{port}" for port in ports)


def streams(pools: Sequence[GpuPoolConfig]) -> bool:
    """Whether a pool turns image streaming on (the default)."""
    return any(pool_options(pool).image_streaming for pool in pools)


def project_services(pools: Sequence[GpuPoolConfig]) -> tuple[str, ...]:
    """The project APIs the pools need enabled (image streaming's, when a pool streams)."""
    return (IMAGE_STREAMING_API,) if streams(pools) else ()


def node_account_roles(pools: Sequence[GpuPoolConfig]) -> tuple[str, ...]:
    """The project roles gpufleet's own node account needs beyond GKE's minimum for the pools
    (image streaming's, when a pool streams)."""
    return (IMAGE_STREAMING_ROLE,) if streams(pools) else ()


def pools_warnings(
    cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]], adopted: bool
) -> list[str]:
    """What the pools need that gpufleet neither creates nor can check offline, said at plan
    (an adopted cluster's firewall is said once it is looked up: `adopted_kueue_warning`)."""
    warnings: list[str] = []
    options = cluster_options(cluster)
    ports = kueue_ports([pool for _, pool in pools])
    if ports and options.network is not None and not adopted:
        # A firewall rule lives in its network's project: a Shared VPC's host project, which
        # the network's path names (review gke-3.md R3-8).
        host = network_project(options.network) or options.project
        targets = options.node_service_account or "<the stack's nodeIdentity output>"
        warnings.append(
            f"cluster.gcp.network: Kueue (for the queued pools) is called by the control plane on "
            f"{_allow(ports)}, which a private GKE cluster's firewall drops (GKE opens 443 and "
            "10250 only); gpufleet adds no rule to a network it did not create: not checked. "
            f"Add: gcloud compute firewall-rules create {firewall_rule_name(cluster.name)} "
            f"--project {host} --network {options.network} --direction INGRESS "
            f"--source-ranges {options.master_cidr} --allow {_allow(ports)} "
            f"--target-service-accounts {targets}"
        )
    streaming = [i for i, pool in pools if pool_options(pool).image_streaming]
    account = options.node_service_account
    # Compute Engine's default account needs no grant (the requirement is for other accounts).
    if streaming and account is not None and not account.endswith(COMPUTE_DEFAULT_ACCOUNT):
        where = ", ".join(f"gpuPools[{i}]" for i in streaming)
        warnings.append(
            f"{where}: image streaming needs the nodes' account {account} "
            "(cluster.gcp.nodeServiceAccount) to hold "
            f"{IMAGE_STREAMING_ROLE} in every project that hosts the pools' images (GKE "
            "image-streaming requirements; without it GKE pulls images whole); gpufleet grants "
            "nothing to a given account: not checked; grant it (gcloud projects "
            f"add-iam-policy-binding IMAGE_PROJECT --member "
            f"serviceAccount:{account} --role {IMAGE_STREAMING_ROLE}) or "
            "set gcp.imageStreaming: false"
        )
    if adopted and streaming:
        where = ", ".join(f"gpuPools[{i}]" for i in streaming)
        warnings.append(
            f"{where}: image streaming needs the Container File System API in project "
            f"{options.project}; gpufleet does not manage an existing cluster's project "
            "services: not checked; enable it (gcloud services enable "
            f"{IMAGE_STREAMING_API} --project {options.project}) or set "
            "gcp.imageStreaming: false"
        )
    return warnings


def adopted_kueue_warning(facts: GkeClusterFacts, ports: Sequence[int]) -> str | None:
    """The rule an adopted private cluster's owner adds so the control plane reaches Kueue."""
    if not ports or not facts.private_nodes:
        return None
    source = facts.control_plane_cidr or "<the control plane's range: privateClusterConfig>"
    host = network_project(facts.network or "")
    return (
        f"cluster {facts.name} has private nodes: the control plane reaches Kueue (for the "
        f"queued pools) on {_allow(ports)} only through a firewall rule, which gpufleet does not "
        "add to a cluster it did not create: not checked. Ask its owner to add: gcloud compute "
        f"firewall-rules create {firewall_rule_name(facts.name)} "
        f"{f'--project {host} ' if host else ''}--network "
        f"{facts.network or '<the cluster network>'} --direction INGRESS --source-ranges "
        f"{source} --allow {_allow(ports)} --target-tags <the target tag of GKE's rule "
        f"gke-{facts.name}-<id>-master>"
    )
