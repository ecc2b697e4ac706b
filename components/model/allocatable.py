"""What the kubelet leaves a node's pods: the machine minus the cloud's reservations.

Kubernetes' node allocatable is capacity minus kube-reserved, system-reserved and the hard
eviction threshold. Each cloud documents its own reservations (in
`components/<cloud>/model/allocatable.py`, with sources); this module holds the shared shape
and the arithmetic, and renders the result as the Kubernetes quantities a node reports
(`cpu: 3920m`, `memory: 13498Mi`, `ephemeral-storage`, `pods`).

Machine memory is taken as the catalog's GiB; a real node reports a little less capacity
(firmware and kernel), so these figures are an upper bound by that margin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MIB = 2**20
GIB = 2**30


@dataclass(frozen=True)
class NodeAllocatable:
    """Allocatable resources of one node; `None` where the cloud's figure is not known."""

    cpu_millis: int
    memory_bytes: int
    pods: int
    ephemeral_bytes: int | None = None

    def quantities(self) -> dict[str, str]:
        """As a node's `status.allocatable` lists them (memory and storage floored to MiB)."""
        found = {
            "cpu": f"{self.cpu_millis}m",
            "memory": f"{self.memory_bytes // MIB}Mi",
            "pods": str(self.pods),
        }
        if self.ephemeral_bytes is not None:
            found["ephemeral-storage"] = f"{self.ephemeral_bytes // MIB}Mi"
        return found


def tiered(total: float, tiers: Sequence[tuple[float | None, float]]) -> float:
    """Sum of `rate * part` over consecutive bands of `total`: tiers are (band top, rate),
    the last band's top None (unbounded). E.g. GKE's memory: 25% of the first 4 GiB, ..."""
    reserved, below = 0.0, 0.0
    for top, rate in tiers:
        upper = total if top is None else min(total, top)
        if upper > below:
            reserved += (upper - below) * rate
        if top is None or total <= top:
            break
        below = top
    return reserved


# CPU kube-reserved shared by GKE and EKS (nodeadm): 6% of the first core, 1% of the second,
# 0.5% of the third and fourth, 0.25% of every core above four (in millicores).
CPU_TIERS_MILLIS: tuple[tuple[float | None, float], ...] = (
    (1000, 0.06),
    (2000, 0.01),
    (4000, 0.005),
    (None, 0.0025),
)
# Kubelet's hard eviction threshold for memory that GKE, EKS and AKS (1.29+) configure.
MEMORY_EVICTION_BYTES = 100 * MIB


def cpu_after_tiers(vcpus: int) -> int:
    millis = vcpus * 1000
    return millis - round(tiered(millis, CPU_TIERS_MILLIS))
