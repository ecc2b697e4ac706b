"""What gpufleet needs of a GKE cluster it adopts (`cluster.existing`), as rules on looked-up facts.

- Workload Identity: gpufleet's GPU pools run the GKE metadata server (`GKE_METADATA`), which
  GKE accepts only on a cluster with a workload pool (cloud.google.com/kubernetes-engine/docs/
  how-to/workload-identity, "Enable Workload Identity Federation for GKE on clusters and node
  pools": node pools need the cluster setting first).
- Versions: a node pool created without a version runs the control plane's (GKE API,
  NodePool.version: "if unspecified, the cluster's current master version"), so a pool is never
  newer than the control plane; the stack's `kubernetesVersion` must name that minor.
- Upgrades: GKE upgrades nodes automatically inside the cluster's maintenance window, or at any
  time without one (cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-
  exclusions). The window is the owner's: gpufleet warns when there is none.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.model.adoption import version_problem
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


def adoption_problems(facts: GkeClusterFacts, cluster: ClusterConfig) -> list[Problem]:
    problems = []
    version = version_problem(facts.name, cluster.kubernetes_version, facts.master_version)
    if version is not None:
        problems.append(version)
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


def adoption_warnings(facts: GkeClusterFacts) -> list[str]:
    if facts.has_maintenance_window:
        return []
    return [
        f"cluster {facts.name} has no maintenance window: GKE may upgrade the GPU nodes (and "
        "restart their training jobs) at any hour; ask its owner to set one "
        "(`gcloud container clusters update --maintenance-window-start ...`)"
    ]
