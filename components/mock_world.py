"""The offline mock cloud's neutral shapes: what it assumes about the clusters a stack adopts
(`World`, from `cluster.existing`) and what one cloud's mock answers (`CloudMock`).

Each cloud's mock lives in its folder (`components/<cloud>/mock.py`, named by its
`ResourceKnowledge.mock_module`) and the offline engine (`components/tooling/mockcloud`) asks
them all. These types sit in the components layer, below both: the cloud folders' mocks build
on them and the engine (tooling) reads them, while the model layer (the stack's own data and
rules) knows nothing of a fake cloud.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


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
    # EKS: how the cluster's vpc-cni gets its AWS permissions: "node-role" (an EKS add-on without
    # a role of its own, EKS's default), "pod-identity" or "irsa" (an add-on with its own role),
    # "self-managed" (no EKS add-on), "denied" (DescribeAddon refused).
    vpc_cni: str = "node-role"
    # EKS: the cluster's managed node groups by name, each as DescribeNodegroup reports its
    # {"minSize", "maxSize", "desiredSize"}, "labels" and "tags" (a running stack's groups, grown by
    # the autoscaler or not). None of gpufleet's by default: a first `up` creates them.
    eks_node_groups: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # EKS: the deployer may not list or describe the cluster's node groups (AccessDenied).
    eks_reads_denied: bool = False
    # AKS: the cluster's agent pools as `agentPoolProfiles` lists them (None: one System pool
    # on the cluster's VNet), its pod network, node OS channel and Entra ID. A stack that
    # creates its cluster finds it only when `exists` (an earlier `up` created it).
    agent_pools: tuple[Mapping[str, Any], ...] | None = None
    network_plugin: str = "azure"
    network_plugin_mode: str | None = "overlay"
    pod_subnet: bool = False
    node_os_channel: str = "NodeImage"
    entra_id: bool = True
    # AKS: the address space of the VNet a stack's given node subnet is in.
    vnet_address_space: tuple[str, ...] = ("10.224.0.0/12",)
    # AKS: the control plane's user-assigned identity (None: what the stack names, else a
    # system-assigned one), and the capacity reservation groups by "<resource group>/<name>"
    # in lower case, each {"location", "zones", "reservations": [{"name", "vmSize", "zones",
    # "capacity"}]} (None: the groups the stack's pools name, reserving what they say).
    control_plane_identity_id: str | None = None
    capacity_reservation_groups: Mapping[str, Mapping[str, Any]] | None = None
    # AKS: the `createdOn` ARM reports for the role assignments this `up` creates (None: none,
    # so nothing waits for a grant to propagate, as in every plan but the tests of that wait).
    grants_created_on: str | None = None
    # GKE: an Autopilot cluster; the owner's node pools, and pools gpufleet created in an
    # earlier `up` (their nodes carry gpufleet.io/pool).
    autopilot: bool = False
    node_pools: tuple[str, ...] = ("default-pool",)
    gpufleet_pools: tuple[str, ...] = ()
    # GKE: how the control plane is reached. Its DNS endpoint admits external traffic; else the
    # IP endpoint is the cluster's private address (`gke_private_endpoint`), open to the master
    # authorized networks listed (None: the setting off), or both.
    gke_dns_external: bool = True
    gke_private_endpoint: bool = False
    gke_authorized_networks: tuple[str, ...] | None = None
    # GKE: the cluster's location is this zone of the stack's region (a zonal cluster; None:
    # the region). A lookup elsewhere finds nothing, as GKE's API answers.
    gke_zone: str | None = None
    # GKE: the cluster's datapath (`networkConfig.datapathProvider`; ADVANCED_DATAPATH is
    # Dataplane V2) and multi-networking, which a GPUDirect (fabric) pool needs.
    gke_datapath_provider: str = "ADVANCED_DATAPATH"
    gke_multi_networking: bool = True
    # Every cluster, created or adopted, presents another API endpoint and CA (a credential
    # rotation, GKE's move between its IP and DNS endpoints): what each mock cloud lists in its
    # ROTATED table is answered rotated.
    endpoint_rotated: bool = False
    # The stack's own config as written (`cluster`, `gpuPools`, ...): what a look-up of
    # something the stack names answers "as the stack describes it".
    stack: Mapping[str, Any] = field(default_factory=dict)


class NotFound(Exception):
    """What the cloud answers a look-up of something that does not exist; the engine returns it
    as the invoke's failure, as a provider does, so the program can catch it."""


# The outputs a provider adds to a created resource (type, name, inputs, world); the answer of
# a call from its arguments; of a look-up, which also depends on the world.
ResourceFake = Callable[[str, Mapping[str, Any], "World"], dict[str, Any]]
CallFake = Callable[[Mapping[str, Any]], dict[str, Any]]
LookupFake = Callable[[Mapping[str, Any], "World"], dict[str, Any]]
# Outputs every resource of the cloud gets beyond its fake's (type, name, state, world).
Finish = Callable[[str, str, Mapping[str, Any], "World"], dict[str, Any]]


@dataclass(frozen=True)
class CloudMock:
    """One cloud's plausible answers, by resource type and invoke token: only what the program
    reads (endpoints, ARNs, certificates); everything else echoes the inputs."""

    resources: Mapping[str, ResourceFake]
    calls: Mapping[str, CallFake]
    # Calls whose answer depends on the world: the stack's region, or the cluster it adopts.
    lookups: Mapping[str, LookupFake] = field(default_factory=dict)
    # What a rotated control plane answers instead (World.endpoint_rotated): endpoint hosts and
    # CA data, as (before, after) text.
    rotated: tuple[tuple[str, str], ...] = ()
    # Input paths (regular expressions) of each resource type whose values the mock makes up,
    # with what the real value will be (`diff` marks them).
    mocked_inputs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    finish: Finish | None = None
