"""What the mock cloud assumes about the clusters a stack adopts (`cluster.existing`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class World:
    """The existing cluster as the stack describes it, unless a test says otherwise: it runs
    `kubernetes_version` (a full version, as the cloud reports it) and has what gpufleet needs."""

    kubernetes_version: str = "1.36.3"
    # The stack's `cluster.region`: endpoints, ARNs and ids carry it, as the cloud's would (None:
    # each cloud module's default region).
    region: str | None = None
    # Whether the cluster the stack names exists at all (and the deployer may read it).
    exists: bool = True
    # GKE: Workload Identity on; EKS: API access entries; a maintenance window set.
    workload_identity: bool = True
    authentication_mode: str = "API_AND_CONFIG_MAP"
    maintenance_window: bool = True
    # EKS: whether the cluster's IAM OIDC provider exists.
    oidc_provider: bool = True
    # EKS: Auto Mode's compute enabled on the cluster.
    auto_mode: bool = False


class NotFound(Exception):
    """What the cloud answers a look-up of something that does not exist; the engine returns it
    as the invoke's failure, as a provider does, so the program can catch it."""
