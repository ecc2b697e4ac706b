"""GPUDirect on GKE (`gpuPools[].interconnect: fabric`): each machine type's GPU network, the
extra VPCs its nodes need, what pods carry to use it, and where the nodes are placed.

A3 High (GPUDirect-TCPX), A3 Mega (GPUDirect-TCPXO), A3 Ultra and A4 (GPUDirect RDMA) move GPU
traffic over NICs beyond the node's first one. GKE gives them to pods through multi-networking:
the node pool lists the extra VPC subnets (`network_config.additional_node_network_configs`),
the cluster has multi-networking and Dataplane V2, a `GKENetworkParamSet` + `Network` pair names
each extra network, and a pod lists the networks it joins in annotations. No extended resource
is requested (`FabricFacts.resource` is None): `fit` reads the annotations.

Sources (read 2026-11-28; repository snapshots at the commit given):
- MACHINE: cloud.google.com/compute/docs/gpus/gpu-network-bandwidth (GPU NICs and maximum
  network bandwidth per A3/A4 machine type).
- TOOLKIT: GoogleCloudPlatform/cluster-toolkit @10470803 examples/gke-a3-highgpu/
  gke-a3-highgpu.yaml (`network_count: 4`, `mtu: 8244`), examples/gke-a3-megagpu/
  gke-a3-megagpu.yaml (`network_count: 8`, `mtu: 8244`), examples/gke-a3-ultragpu/
  gke-a3-ultragpu.yaml L53-83 (one gVNIC VPC + one RDMA VPC of 8 subnets, `mtu: 8896`),
  modules/scheduler/gke-cluster/templates/gke-network-paramset.yaml.tftpl (`deviceMode`).
- RDMA_VPC: docs.cloud.google.com/vpc/docs/rdma-network-profiles (profile `ZONE-vpc-roce`,
  zonal, only MRDMA NICs, implicit allow firewall).
- CEA: GoogleCloudPlatform/container-engine-accelerators @992db812 gpudirect-tcpx/
  nccl-test-latest.yaml, gpudirect-tcpxo/nccl-test-latest.yaml, gpudirect-rdma/nccl-test.yaml
  (pod annotations: interface names, network names, device lists).
- COMPACT: cloud.google.com/kubernetes-engine/docs/how-to/compact-placement ("available for
  Pods grouped on up to 1,500 nodes"; the GPU list there names A100, L4 and H100, not H200 or
  B200, and cluster-toolkit's A3 Ultra/A4 blueprints use a reservation and no placement policy).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from components.gcp.model.config import pool_options
from components.gcp.model.fabric_pod import fabric_pod
from components.model.fabric import FabricFacts, NcclFigure, PoolFabric
from components.model.problems import Problem
from components.model.schema import GpuPoolConfig, StackConfig

MACHINE = "https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth"
TOOLKIT = "GoogleCloudPlatform/cluster-toolkit@10470803"
CEA = "GoogleCloudPlatform/container-engine-accelerators@992db812"
RDMA_VPC = "https://docs.cloud.google.com/vpc/docs/rdma-network-profiles"
COMPACT = "https://cloud.google.com/kubernetes-engine/docs/how-to/compact-placement"

ModeKey = Literal["tcpx", "tcpxo", "rdma"]
INTERFACES_ANNOTATION = "networking.gke.io/interfaces"
DEFAULT_INTERFACE_ANNOTATION = "networking.gke.io/default-interface"
# The GPU devices the TCPX/TCPXO receive-datapath sidecar needs, given by the NRI device
# injector from this annotation (CEA nccl-test-latest.yaml of each mode).
_GPU_DEVICES: Final = (
    *tuple(f"/dev/nvidia{i}" for i in range(8)),
    "/dev/nvidiactl",
    "/dev/nvidia-uvm",
)


@dataclass(frozen=True)
class GpuDirectMode:
    """One GPUDirect stack: its networks, MTU, installer and what its pods run beside NCCL."""

    key: ModeKey
    kind: str
    # Networks pods join for GPU traffic (each one `Network` object and one node NIC).
    gpu_networks: int
    # Extra gVNIC networks the node has that pods do not join (A3 Ultra/A4's second gVNIC).
    node_only_networks: int
    # The GPU networks are subnets of one RDMA VPC (profile ZONE-vpc-roce), not VPCs each.
    rdma: bool
    mtu: int
    # GKENetworkParamSet.spec.deviceMode of the GPU networks.
    device_mode: str
    # The pod interface of the first GPU network (eth1; RDMA: eth2, after the second gVNIC).
    first_pod_interface: int
    # Vendored installer manifest (components/gcp/model/data/).
    installer: str
    # The receive-datapath sidecar container pods run (None: RDMA needs none) and its devices.
    sidecar: str | None
    sidecar_devices: tuple[str, ...]
    source: str


MODES: Final[Mapping[ModeKey, GpuDirectMode]] = MappingProxyType(
    {
        "tcpx": GpuDirectMode(
            "tcpx",
            "GPUDirect-TCPX",
            gpu_networks=4,
            node_only_networks=0,
            rdma=False,
            mtu=8244,
            device_mode="NetDevice",
            first_pod_interface=1,
            installer="nccl-tcpx-installer.yaml",
            sidecar="tcpx-daemon",
            sidecar_devices=_GPU_DEVICES,
            source=f"{TOOLKIT} examples/gke-a3-highgpu/gke-a3-highgpu.yaml; {CEA} "
            "gpudirect-tcpx/nccl-test-latest.yaml",
        ),
        "tcpxo": GpuDirectMode(
            "tcpxo",
            "GPUDirect-TCPXO",
            gpu_networks=8,
            node_only_networks=0,
            rdma=False,
            mtu=8244,
            device_mode="NetDevice",
            first_pod_interface=1,
            installer="nccl-tcpxo-installer.yaml",
            sidecar="tcpxo-daemon",
            sidecar_devices=(*_GPU_DEVICES, "/dev/dmabuf_import_helper"),
            source=f"{TOOLKIT} examples/gke-a3-megagpu/gke-a3-megagpu.yaml; {CEA} "
            "gpudirect-tcpxo/nccl-test-latest.yaml",
        ),
        "rdma": GpuDirectMode(
            "rdma",
            "GPUDirect RDMA",
            gpu_networks=8,
            node_only_networks=1,
            rdma=True,
            mtu=8896,
            device_mode="RDMA",
            first_pod_interface=2,
            installer="nccl-rdma-installer.yaml",
            sidecar=None,
            sidecar_devices=(),
            source=f"{TOOLKIT} examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml L53-83; {RDMA_VPC}; "
            f"{CEA} gpudirect-rdma/nccl-test.yaml",
        ),
    }
)

_TCPX_FIGURE = NcclFigure(
    "all_gather",
    70.9,
    512 * 2**20,
    2,
    f"{TOOLKIT} examples/gke-a3-highgpu/multi-node-test-plan.md L115-133 (largest size run)",
)
_TCPXO_FIGURE = NcclFigure(
    "all_gather",
    188.7,
    8 * 2**30,
    2,
    f"{TOOLKIT} examples/gke-a3-megagpu/README.md L110-148 (out-of-place busbw)",
)
_RDMA_SOURCE = (
    f"{MACHINE} (8 CX-7 NICs, 3,200 Gbps GPU network + 2 gVNIC, 3,600 Gbps); "
    f"{TOOLKIT} examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml; no published 2-node NCCL "
    "figure found (the toolkit's benchmark README prints XXX.XX)"
)
_DELIVERED = "NCCL plugin installer DaemonSet (container-engine-accelerators, pinned)"

# machine type -> (mode, facts). Bandwidth: the machine's maximum network bandwidth (MACHINE).
FABRICS: Final[Mapping[str, tuple[ModeKey, FabricFacts]]] = MappingProxyType(
    {
        "a3-highgpu-8g": (
            "tcpx",
            FabricFacts(
                "a3-highgpu-8g",
                "GPUDirect-TCPX",
                interfaces=4,
                bandwidth_gbps=1000,
                resource=None,
                resource_per_node=0,
                delivered_by=f"{_DELIVERED} + NRI device injector",
                expected_busbw=_TCPX_FIGURE,
                source=f"{MACHINE} (4 GPU gVNICs, 1,000 Gbps); {MODES['tcpx'].source}",
            ),
        ),
        "a3-megagpu-8g": (
            "tcpxo",
            FabricFacts(
                "a3-megagpu-8g",
                "GPUDirect-TCPXO",
                interfaces=8,
                bandwidth_gbps=1800,
                resource=None,
                resource_per_node=0,
                delivered_by=f"{_DELIVERED} + NRI device injector",
                expected_busbw=_TCPXO_FIGURE,
                source=f"{MACHINE} (8 GPU gVNICs of 200 Gbps, 1,800 Gbps); {MODES['tcpxo'].source}",
            ),
        ),
        "a3-ultragpu-8g": (
            "rdma",
            FabricFacts(
                "a3-ultragpu-8g",
                "GPUDirect RDMA",
                interfaces=8,
                bandwidth_gbps=3600,
                resource=None,
                resource_per_node=0,
                delivered_by=_DELIVERED,
                expected_busbw=None,
                source=_RDMA_SOURCE,
            ),
        ),
        "a4-highgpu-8g": (
            "rdma",
            FabricFacts(
                "a4-highgpu-8g",
                "GPUDirect RDMA",
                interfaces=8,
                bandwidth_gbps=3600,
                resource=None,
                resource_per_node=0,
                delivered_by=_DELIVERED,
                expected_busbw=None,
                source=_RDMA_SOURCE,
            ),
        ),
    }
)

# Compact placement: the documented node cap (COMPACT). A3 Ultra and A4 are not in the doc's
# GPU list: their blueprints place nodes through the reservation instead, with no policy. A pool
# on a specific reservation takes its placement from the reservation too, as cluster-toolkit's
# A3 Mega blueprint does (SPECIFIC_RESERVATION, no placement_policy; examples/gke-a3-megagpu/
# gke-a3-megagpu.yaml): whether GKE starts COMPACT nodes in a reservation made without a
# compact policy is not documented where we looked, so gpufleet does not ask it to.
COMPACT_PLACEMENT = "compact placement"
COMPACT_MAX_NODES: Final = 1500
_COMPACT_MODES: Final[frozenset[ModeKey]] = frozenset({"tcpx", "tcpxo"})


def mode_of(machine_type: str) -> GpuDirectMode | None:
    entry = FABRICS.get(machine_type)
    return MODES[entry[0]] if entry else None


RESERVATION_PLACEMENT = "one zone (the reservation's placement)"


def compact(mode: GpuDirectMode, pool: GpuPoolConfig) -> bool:
    """Whether the pool's node pool asks for compact placement."""
    return mode.key in _COMPACT_MODES and pool_options(pool).reservation is None


@dataclass(frozen=True)
class FabricNetwork:
    """One extra node NIC: its VPC and subnet, and the `Network` object pods name it by."""

    vpc: str
    subnet: str
    cidr: str
    # The Kubernetes `Network` (and `GKENetworkParamSet`) name; None: a node-only gVNIC.
    k8s_network: str | None
    device_mode: str


@dataclass(frozen=True)
class FabricGroup:
    """The extra networks of one GPUDirect mode in one zone, shared by its fabric pools."""

    mode: GpuDirectMode
    zone: str
    region: str
    networks: tuple[FabricNetwork, ...]
    pools: tuple[str, ...]

    @property
    def vpcs(self) -> tuple[str, ...]:
        """The VPC names, each once, in NIC order."""
        return tuple(dict.fromkeys(n.vpc for n in self.networks))

    @property
    def pod_networks(self) -> tuple[str, ...]:
        return tuple(n.k8s_network for n in self.networks if n.k8s_network)


def _zone_letter(zone: str) -> str:
    return zone.rsplit("-", 1)[-1]


# Each (mode, zone) group has a block of its own: a /16 per mode (TCPXO keeps 192.168.0.0/16,
# where the first groups were made) and 16 /24s per zone letter in it, apart from the cluster's
# own ranges (10.x and the control plane's 172.16.0.0/28, components/gcp/model/config.py). GKE
# refuses Pod-networks of one cluster with overlapping ranges (GKE docs,
# setup-multinetwork-support-for-pods, "General limitations"; review fix7-gke F7G-1), and a
# group's ranges depend on nothing but its own (mode, zone), so adding or removing another group
# never moves a running subnet: the provider replaces a subnet whose new range does not contain
# the old one (terraform-provider-google @e03b7622 resource_compute_subnetwork.go L62-80,
# L384-385: ForceNewIfChange IsShrinkageIpCidr), which fails while a node pool's NICs use it
# (review rev-gke6 G6-1).
_MODE_BLOCKS: Final[Mapping[str, str]] = MappingProxyType(
    {"tcpxo": "192.168", "tcpx": "172.20", "rdma": "172.21"}
)
# /24s per zone letter: a group has at most 9 networks (RDMA: 1 gVNIC + 8).
_ZONE_STRIDE: Final = 16


def _letter_index(zone: str) -> int | None:
    """The zone letter's block (a: 0 ... p: 15); None for a zone with no block."""
    letter = _zone_letter(zone)
    return ord(letter) - ord("a") if len(letter) == 1 and "a" <= letter <= "p" else None


def _third_octet(zone: str, n: int) -> int:
    # zone_block_problems refuses a zone without a block before anything is planned.
    return (_letter_index(zone) or 0) * _ZONE_STRIDE + n


def zone_block_problems(pool: GpuPoolConfig, zone: str | None, path: str) -> list[Problem]:
    """A fabric pool's zone must have a GPU subnet block (zone letters a-p: GCE's are a-f)."""
    if pool.interconnect != "fabric" or zone is None or _letter_index(zone) is not None:
        return []
    return [
        Problem(
            f"{path}.zones",
            "gpufleet gives each fabric zone its own GPU subnet block by the zone's letter "
            "(a to p); this zone's has none: name a zone of the region that ends in -a to -p",
            zone,
        )
    ]


def _group(cluster: str, mode: GpuDirectMode, zone: str) -> FabricGroup:
    """The networks of one (mode, zone): /24 subnets in the group's own block, one per NIC."""
    prefix = f"{cluster}-{mode.key}-{_zone_letter(zone)}"
    tag = f"{mode.key}-{_zone_letter(zone)}"
    networks: list[FabricNetwork] = []
    nics = mode.node_only_networks + mode.gpu_networks

    def cidr(n: int) -> str:
        return f"{_MODE_BLOCKS[mode.key]}.{_third_octet(zone, n)}.0/24"

    for n in range(mode.node_only_networks):
        name = f"{prefix}-gvnic-{n + 1}"
        networks.append(FabricNetwork(name, name, cidr(n), None, "NetDevice"))
    for g in range(mode.gpu_networks):
        n = mode.node_only_networks + g
        if mode.rdma:
            vpc = f"{prefix}-rdma"
            networks.append(
                FabricNetwork(vpc, f"{vpc}-{g}", cidr(n), f"{tag}-rdma-{g}", mode.device_mode)
            )
        else:
            name = f"{prefix}-{g + 1}"
            networks.append(FabricNetwork(name, name, cidr(n), f"{tag}-{g + 1}", mode.device_mode))
    assert len(networks) == nics <= _ZONE_STRIDE
    return FabricGroup(mode, zone, zone.rsplit("-", 1)[0], tuple(networks), ())


def fabric_zone(pool: GpuPoolConfig, cluster_zones: Sequence[str] | None) -> str | None:
    """The one zone a fabric pool runs in (its zones, else the cluster's, name exactly one;
    else None: the shared check refuses it, components/model/fabric_checks.py)."""
    zones = pool.zones or cluster_zones or []
    return zones[0] if len(zones) == 1 else None


def fabric_groups(config: StackConfig) -> tuple[FabricGroup, ...]:
    """Every (mode, zone) of the stack's fabric pools, with the pools using it, sorted by key
    (the order only lists them: each group's networks depend on its own key alone)."""
    pools: dict[tuple[ModeKey, str], list[str]] = {}
    for pool in config.gpu_pools:
        mode = mode_of(pool.machine_type or "") if pool.interconnect == "fabric" else None
        zone = fabric_zone(pool, config.cluster.zones)
        if mode is not None and zone is not None:
            pools.setdefault((mode.key, zone), []).append(pool.name)
    groups = []
    for key, zone in sorted(pools):
        group = _group(config.cluster.name, MODES[key], zone)
        groups.append(
            FabricGroup(group.mode, zone, group.region, group.networks, tuple(pools[(key, zone)]))
        )
    return tuple(groups)


def group_of(config: StackConfig, pool_name: str) -> FabricGroup | None:
    return next((g for g in fabric_groups(config) if pool_name in g.pools), None)


def pod_annotations(group: FabricGroup) -> dict[str, str]:
    """What a pod on the group's pools carries to join the GPU networks (CEA samples)."""
    first = group.mode.first_pod_interface
    interfaces = [{"interfaceName": "eth0", "network": "default"}] + [
        {"interfaceName": f"eth{first + i}", "network": name}
        for i, name in enumerate(group.pod_networks)
    ]
    annotations = {
        DEFAULT_INTERFACE_ANNOTATION: "eth0",
        INTERFACES_ANNOTATION: json.dumps(interfaces),
    }
    if group.mode.sidecar:
        devices = "".join(f"- path: {d}\n" for d in group.mode.sidecar_devices)
        annotations[f"devices.gke.io/container.{group.mode.sidecar}"] = devices
    return annotations


def pool_fabric(
    config: StackConfig, pool: GpuPoolConfig, facts: FabricFacts, zone: str
) -> PoolFabric:
    """A fabric pool's placement and pod contract (`Cloud.pool_fabric`)."""
    mode = MODES[FABRICS[facts.machine_type][0]]
    group = _group(config.cluster.name, mode, zone)
    for candidate in fabric_groups(config):
        if pool.name in candidate.pools:
            group = candidate
    notes = [
        f"pods join the GPU networks by annotation ({INTERFACES_ANNOTATION}); no resource is "
        "requested"
    ]
    if mode.sidecar:
        notes.append(
            f"pods run the `{mode.sidecar}` receive-datapath sidecar beside NCCL ({mode.source})"
        )
    pod = fabric_pod(mode.key)
    return PoolFabric(
        facts=facts,
        zone=zone,
        placement=COMPACT_PLACEMENT if compact(mode, pool) else RESERVATION_PLACEMENT,
        placement_max_nodes=COMPACT_MAX_NODES if compact(mode, pool) else None,
        pod_annotations=pod_annotations(group),
        request_annotation_keys=(INTERFACES_ANNOTATION,),
        notes=tuple(notes),
        sidecars=pod.sidecars,
        volumes=pod.volumes,
        container_env=pod.env,
        container_mounts=pod.volume_mounts,
        # Unbuilt: name the sidecar the device annotation is for, to copy from the source.
        pod_source=pod.source if pod.rendered else f"container `{mode.sidecar}` of {pod.source}",
        pod_rendered=pod.rendered,
    )


def fabric_pools(config: StackConfig) -> Sequence[str]:
    """The names of the stack's fabric pools GKE builds GPUDirect for."""
    return tuple(name for group in fabric_groups(config) for name in group.pools)


@dataclass(frozen=True)
class NodePoolFabric:
    """What a fabric pool's node pool sends: its extra NICs and whether it is compact."""

    # (VPC, subnet) per extra NIC, in NIC order (the pod interfaces follow it).
    networks: tuple[tuple[str, str], ...]
    compact: bool


def node_pool_fabric(config: StackConfig, pool: GpuPoolConfig) -> NodePoolFabric | None:
    group = group_of(config, pool.name)
    if group is None:
        return None
    networks = tuple((n.vpc, n.subnet) for n in group.networks)
    return NodePoolFabric(networks, compact(group.mode, pool))
