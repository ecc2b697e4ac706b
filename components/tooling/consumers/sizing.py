"""How much CPU and memory a pod that takes one GPU (or one GPU share) of a pool's node may ask for.

The node's room for such pods:

1. its allocatable CPU and memory when `PoolSpec.allocatable_per_node` has `cpu` / `memory`
   entries (Kubernetes quantities such as "7910m" or "26.5Gi"); otherwise
2. the machine's vCPUs and memory (the smallest of the pool's machine types) minus a
   conservative reserve for the kubelet, the OS and eviction, the largest the three clouds
   document:
   - CPU: AKS's kube-reserved table, 60m for the first core, 40m for the second, 20m each for
     the third and fourth, 10m for every further core (GKE and EKS reserve less);
   - memory: GKE's kube-reserved tiers, 25% of the first 4 GiB, 20% of the next 4, 10% of the
     next 8, 6% of the next 112 and 2% above 128 GiB, plus a 750 MiB eviction threshold
     (AKS's before Kubernetes 1.29; GKE and EKS keep 100 MiB);

then, in both cases, minus an allowance for the DaemonSets on every GPU node whose requests
allocatablePerNode does not already take off (`components/model/daemonsets.py`: kube-proxy,
logging and metrics agents, CSI node plugins, whose requests no source gives): 500m CPU, 1 GiB.

A pod that takes one of the node's N GPUs (or GPU shares: time-sharing clients, MIG slices)
gets 1/N of that room, minus what the tool adds to each pod beside it (FiftyOne's telemetry
sidecar), rounded down: whole cores from 4 cores up, else steps of 100m; whole GiB from 8 GiB
up, else steps of 256 MiB. So N such pods, and the node's DaemonSets, fit on one node.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.model.allocatable import GIB, MIB, tiered
from components.model.pools import PoolSpec
from components.model.registry import all_machine_types
from components.tooling.scheduling import quantity

DAEMONSET_CPU_MILLIS = 500
DAEMONSET_MEMORY_BYTES = 1 * GIB
EVICTION_MEMORY_BYTES = 750 * MIB
# (cores up to, millicores reserved per core in that band), for `model.allocatable.tiered`
_CPU_RESERVE_BANDS: tuple[tuple[float | None, float], ...] = ((1, 60), (2, 40), (4, 20), (None, 10))
# (bytes up to, fraction reserved of the memory in that band)
_MEMORY_RESERVE_BANDS: tuple[tuple[float | None, float], ...] = (
    (4 * GIB, 0.25),
    (8 * GIB, 0.20),
    (16 * GIB, 0.10),
    (128 * GIB, 0.06),
    (None, 0.02),
)
# Smallest requests worth writing down.
MIN_CPU_MILLIS = 100
MIN_MEMORY_BYTES = 256 * MIB


def cpu_reserve_millis(cores: int) -> int:
    return round(tiered(cores, _CPU_RESERVE_BANDS))


def memory_reserve_bytes(memory: int) -> int:
    return int(tiered(memory, _MEMORY_RESERVE_BANDS)) + EVICTION_MEMORY_BYTES


def machine_shape(spec: PoolSpec) -> tuple[int, int] | None:
    """(vCPUs, memory bytes) of the pool's smallest machine type, or None when unknown."""
    shapes = {
        (machine.vcpus, int(machine.memory_gib * GIB))
        for machine in all_machine_types()
        if machine.name in spec.machine_types and machine.vcpus > 0 and machine.memory_gib > 0
    }
    if shapes:
        return min(shape[0] for shape in shapes), min(shape[1] for shape in shapes)
    if spec.vcpus > 0 and spec.memory_gib > 0:
        return spec.vcpus, int(spec.memory_gib * GIB)
    return None


@dataclass(frozen=True)
class NodeRoom:
    """CPU and memory of one node left for GPU pods, and where the numbers came from."""

    cpu_millis: int
    memory_bytes: int
    source: str


def node_room(spec: PoolSpec) -> NodeRoom | None:
    """What one node of the pool has for GPU pods (module docstring); None when unknown."""
    allocatable = spec.allocatable_per_node
    shape = machine_shape(spec)
    if "cpu" in allocatable:
        cpu = quantity.cpu_millis(allocatable["cpu"])
    elif shape:
        cpu = shape[0] * 1000 - cpu_reserve_millis(shape[0])
    else:
        return None
    if "memory" in allocatable:
        memory = quantity.memory_bytes(allocatable["memory"])
    elif shape:
        memory = shape[1] - memory_reserve_bytes(shape[1])
    else:
        return None
    known = [name for name in ("cpu", "memory") if name in allocatable]
    source = (
        "machine minus reserve"
        if not known
        else f"allocatable {' and '.join(known)}"
        + ("" if len(known) == 2 else ", the rest machine minus reserve")
    )
    return NodeRoom(cpu - DAEMONSET_CPU_MILLIS, memory - DAEMONSET_MEMORY_BYTES, source)


def round_cpu(millis: int) -> int:
    return millis // 1000 * 1000 if millis >= 4000 else millis // 100 * 100


def round_memory(size: int) -> int:
    return size // GIB * GIB if size >= 8 * GIB else size // (256 * MIB) * (256 * MIB)


def cpu_text(millis: int) -> int | str:
    """A CPU quantity as the charts write it: 4 (cores) or "1600m"."""
    return millis // 1000 if millis % 1000 == 0 else f"{millis}m"


def memory_text(size: int) -> str:
    return f"{size // GIB}Gi" if size % GIB == 0 else f"{size // MIB}Mi"


@dataclass(frozen=True)
class PodShare:
    """CPU and memory for a pod that takes one GPU (share) of a node; `shares` pods per node."""

    cpu_millis: int
    memory_bytes: int
    shares: int
    room: NodeRoom

    @property
    def cpu(self) -> int | str:
        return cpu_text(self.cpu_millis)

    @property
    def memory(self) -> str:
        return memory_text(self.memory_bytes)

    def summary(self) -> str:
        return (
            f"1/{self.shares} of {self.room.cpu_millis / 1000:g} CPU and "
            f"{self.room.memory_bytes / GIB:.1f} GiB per node ({self.room.source}, less "
            "DaemonSets)"
        )


def pod_share(
    spec: PoolSpec, *, overhead_cpu_millis: int = 0, overhead_memory_bytes: int = 0
) -> PodShare | None:
    """The share of one GPU (or GPU share) of the pool's node; None when the node's shape is
    unknown or the share would be smaller than 100m CPU / 256 MiB."""
    room = node_room(spec)
    shares = quantity.count(spec.allocatable_per_node.get(spec.gpu_resource, 0))
    if room is None or shares < 1:
        return None
    cpu = round_cpu(room.cpu_millis // shares - overhead_cpu_millis)
    memory = round_memory(room.memory_bytes // shares - overhead_memory_bytes)
    if cpu < MIN_CPU_MILLIS or memory < MIN_MEMORY_BYTES:
        return None
    return PodShare(cpu, memory, shares, room)
