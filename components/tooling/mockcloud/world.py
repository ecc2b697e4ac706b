"""What the mock cloud assumes about the clusters a stack adopts (`cluster.existing`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class World:
    """The existing cluster as the stack describes it, unless a test says otherwise: it runs
    `kubernetes_version` (a full version, as the cloud reports it) and has what gpufleet needs."""

    kubernetes_version: str = "1.36.3"
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
    # GKE: an Autopilot cluster; the owner's node pools, and pools gpufleet created in an
    # earlier `up` (their nodes carry gpufleet.io/pool).
    autopilot: bool = False
    node_pools: tuple[str, ...] = ("default-pool",)
    gpufleet_pools: tuple[str, ...] = ()
    # Every cluster, created or adopted, presents another API endpoint and CA (a credential
    # rotation, GKE's move between its IP and DNS endpoints): what each mock cloud lists in its
    # ROTATED table is answered rotated.
    endpoint_rotated: bool = False


class NotFound(Exception):
    """What the cloud answers a look-up of something that does not exist; the engine returns it
    as the invoke's failure, as a provider does, so the program can catch it."""
