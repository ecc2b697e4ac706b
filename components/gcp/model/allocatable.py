"""GKE Standard node allocatable, from GKE's documented reservations.

Source: "Plan GKE Standard node sizes", section "Memory and CPU reservations"
(cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes):
- memory: 25% of the first 4 GiB, 20% of the next 4 GiB (up to 8), 10% of the next 8 GiB (up to
  16), 6% of the next 112 GiB (up to 128), 2% above 128 GiB, plus a 100 MiB eviction threshold
  (the page's worked numbers: a 150 GiB machine keeps 140.1423 GiB);
- CPU: 6% of the first core, 1% of the next, 0.5% of the next two, 0.25% of every core above
  four (the page's example node: 4 vCPU, `allocatable: cpu: 3920m`);
- pods: 110, GKE Standard's default maximum Pods per node (gpufleet sets no other).

Before those reservations, the kernel keeps memory of its own: a node's memory capacity (its
MemTotal) is below the machine's. The cluster autoscaler's GCE template, which decides whether a
pending pod fits a node of a pool at zero, subtracts this estimate from the machine's memory
before kube-reserved and the eviction threshold (kubernetes/autoscaler @55c37cd5,
cluster-autoscaler/cloudprovider/gce/gce_reserved.go `CalculateKernelReserved`, used by
templates.go `BuildCapacity`: `memTotal := mem - CalculateKernelReserved(...)`), for Linux on
COS, x86 (gpufleet's GPU pools): 1/64 of the memory, 16 MiB, 64 MiB of software IO TLB above
3 GiB, 8 MiB more at or below 8 GiB, and a correction of 0.175 % of the memory capped at
248 MiB. On large GPU machines that is 1.6 % (21.6 GiB of a2-ultragpu-8g's 1360 GiB; review
gke-2.md N3): a pod sized to 1/8 of the figure without it would leave the eighth pod pending
and the autoscaler buying another node.
Image streaming (gcfsConfig, on by default on gpufleet's GPU pools) reserves memory of its own on
top of those tiers (GKE docs, how-to/image-streaming, section "Memory reservation for Image
streaming", anchor #memory_reservation_for): nothing at or below 1 GiB, 10% of the first 4 GiB,
8% of the next 4 GiB, 4% of the next 8 GiB, 2.4% of the next 112 GiB and 0.8% above 128 GiB. The
page body could not be read from here; the tiers are as transcribed from it by
github.com/hatemosphere/gke-node-allocatable-memory-calculator (gke_memory_calculator.py
`container_streaming_reserved_memory`, which cites that section; review gke-3.md R3-2). That is
1.42 GiB of a g2-standard-8 and 13.6 GiB of an a2-ultragpu-8g.
Ephemeral storage is left out: GKE's reservation depends on the node image and the page's
example (a 100 GB boot disk keeping about 44 GiB) was not matched to a formula read first-hand.
"""

from __future__ import annotations

from components.model.allocatable import (
    GIB,
    MEMORY_EVICTION_BYTES,
    MIB,
    NodeAllocatable,
    cpu_after_tiers,
    tiered,
)

MEMORY_TIERS_GIB: tuple[tuple[float | None, float], ...] = (
    (4, 0.25),
    (8, 0.20),
    (16, 0.10),
    (128, 0.06),
    (None, 0.02),
)
MAX_PODS = 110
# Image streaming's reservation (module docstring): none on machines of at most 1 GiB.
IMAGE_STREAMING_TIERS_GIB: tuple[tuple[float | None, float], ...] = (
    (4, 0.10),
    (8, 0.08),
    (16, 0.04),
    (128, 0.024),
    (None, 0.008),
)
IMAGE_STREAMING_FREE_GIB = 1

# gce_reserved.go constants (Linux, COS).
KERNEL_RESERVED_RATIO = 64
KERNEL_RESERVED_BYTES = 16 * MIB
SWIOTLB_RESERVED_BYTES = 64 * MIB
SWIOTLB_THRESHOLD_BYTES = 3 * GIB
LOW_MEMORY_OFFSET_BYTES = 8 * MIB
LOW_MEMORY_THRESHOLD_BYTES = 8 * GIB
CORRECTION_RATIO = 0.00175
MAX_CORRECTION_BYTES = 248 * MIB


def kernel_reserved_bytes(memory: int) -> int:
    """The memory the kernel keeps of a COS node with `memory` bytes, as the autoscaler
    estimates it (module docstring)."""
    reserved = memory // KERNEL_RESERVED_RATIO + KERNEL_RESERVED_BYTES
    if memory > SWIOTLB_THRESHOLD_BYTES:
        reserved += SWIOTLB_RESERVED_BYTES
    if memory <= LOW_MEMORY_THRESHOLD_BYTES:
        reserved += LOW_MEMORY_OFFSET_BYTES
    return reserved + int(min(CORRECTION_RATIO * memory, MAX_CORRECTION_BYTES))


def memory_reserved_bytes(memory_gib: float) -> int:
    """kube-reserved and the eviction threshold, from GKE's tiers of the machine's memory."""
    return round(tiered(memory_gib, MEMORY_TIERS_GIB) * GIB) + MEMORY_EVICTION_BYTES


def image_streaming_reserved_bytes(memory_gib: float) -> int:
    """What image streaming keeps of a node with `memory_gib` of memory (module docstring)."""
    if memory_gib <= IMAGE_STREAMING_FREE_GIB:
        return 0
    return round(tiered(memory_gib, IMAGE_STREAMING_TIERS_GIB) * GIB)


def node_allocatable(
    vcpus: int, memory_gib: float, image_streaming: bool = False
) -> NodeAllocatable:
    memory = round(memory_gib * GIB)
    reserved = kernel_reserved_bytes(memory) + memory_reserved_bytes(memory_gib)
    if image_streaming:
        reserved += image_streaming_reserved_bytes(memory_gib)
    return NodeAllocatable(
        cpu_millis=cpu_after_tiers(vcpus), memory_bytes=memory - reserved, pods=MAX_PODS
    )
