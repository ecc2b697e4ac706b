"""AKS node allocatable (Linux, Kubernetes 1.29 and later), from AKS's documented reservations.

Source: Microsoft Learn, "Node resource reservations in AKS"
(learn.microsoft.com/azure/aks/node-resource-reservations):
- CPU kube-reserved by cores on the host: 1: 60m, 2: 100m, 4: 140m, 8: 180m, 16: 260m,
  32: 420m, 64: 740m. Between and beyond those points the table's own steps continue
  (40m for the second core, 20m each for the third and fourth, 10m per core above four: every
  point of the table is on that line), so a 24-core VM reserves 340m and a 96-core VM 1060m;
  a core count that is not a row of the table (24, 40, 48, 96...) is therefore an estimate,
  which `fit` says (estimate_notes; review aks-2.md A-P3);
- memory kube-reserved: the lesser of 20 MB per pod of maxPods + 50 MB and 25% of the VM's
  memory (the page's examples: 8 GB and 30 pods reserve 650 MB; 4 GB and 70 pods 1000 MB),
  read as MiB, plus the kubelet's memory.available < 100Mi eviction rule;
- maxPods: 250, AKS's default with Azure CNI Overlay (gpufleet's network plugin), as AKS's node
  auto provisioning page states the defaults ("Azure CNI with overlay networking: 250 pods").
Ephemeral storage is left out: the page documents no reservation for it.
"""

from __future__ import annotations

from components.model.allocatable import (
    GIB,
    MEMORY_EVICTION_BYTES,
    MIB,
    NodeAllocatable,
    tiered,
)

# (core band top, millicores per core in the band): the table's steps.
CPU_TIERS: tuple[tuple[float | None, float], ...] = ((1, 60), (2, 40), (4, 20), (None, 10))
# The core counts the page's CPU table has a row for.
CPU_TABLE_CORES = (1, 2, 4, 8, 16, 32, 64)
MAX_PODS = 250
MEMORY_PER_POD_MIB = 20
MEMORY_BASE_MIB = 50
MEMORY_CAP_FRACTION = 0.25


def cpu_reserved_millis(cores: int) -> int:
    return round(tiered(cores, CPU_TIERS))


def memory_reserved_bytes(memory_gib: float, max_pods: int = MAX_PODS) -> int:
    by_pods = (MEMORY_PER_POD_MIB * max_pods + MEMORY_BASE_MIB) * MIB
    capped = min(by_pods, round(memory_gib * GIB * MEMORY_CAP_FRACTION))
    return capped + MEMORY_EVICTION_BYTES


def node_allocatable(vcpus: int, memory_gib: float) -> NodeAllocatable:
    return NodeAllocatable(
        cpu_millis=vcpus * 1000 - cpu_reserved_millis(vcpus),
        memory_bytes=round(memory_gib * GIB) - memory_reserved_bytes(memory_gib),
        pods=MAX_PODS,
    )


def estimate_notes(vcpus: int) -> tuple[str, ...]:
    """What of a node's allocatable is extrapolated rather than read from AKS's table."""
    if vcpus in CPU_TABLE_CORES:
        return ()
    beyond = "continues" if vcpus > CPU_TABLE_CORES[-1] else "follows"
    return (
        f"cpu allocatable is an estimate: AKS documents its CPU reservation for "
        f"{', '.join(map(str, CPU_TABLE_CORES))} cores, and for {vcpus} cores gpufleet "
        f"{beyond} the table's steps ({cpu_reserved_millis(vcpus)}m reserved)",
    )
