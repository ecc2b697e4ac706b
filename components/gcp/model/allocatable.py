"""GKE Standard node allocatable, from GKE's documented reservations.

Source: "Plan GKE Standard node sizes", section "Memory and CPU reservations"
(cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes):
- memory: 25% of the first 4 GiB, 20% of the next 4 GiB (up to 8), 10% of the next 8 GiB (up to
  16), 6% of the next 112 GiB (up to 128), 2% above 128 GiB, plus a 100 MiB eviction threshold
  (the page's worked numbers: a 150 GiB machine keeps 140.1423 GiB);
- CPU: 6% of the first core, 1% of the next, 0.5% of the next two, 0.25% of every core above
  four (the page's example node: 4 vCPU, `allocatable: cpu: 3920m`);
- pods: 110, GKE Standard's default maximum Pods per node (gpufleet sets no other).
Ephemeral storage is left out: GKE's reservation depends on the node image and the page's
example (a 100 GB boot disk keeping about 44 GiB) was not matched to a formula read first-hand.
"""

from __future__ import annotations

from components.model.allocatable import (
    GIB,
    MEMORY_EVICTION_BYTES,
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


def memory_reserved_bytes(memory_gib: float) -> int:
    return round(tiered(memory_gib, MEMORY_TIERS_GIB) * GIB) + MEMORY_EVICTION_BYTES


def node_allocatable(vcpus: int, memory_gib: float) -> NodeAllocatable:
    memory = round(memory_gib * GIB)
    return NodeAllocatable(
        cpu_millis=cpu_after_tiers(vcpus),
        memory_bytes=memory - memory_reserved_bytes(memory_gib),
        pods=MAX_PODS,
    )
