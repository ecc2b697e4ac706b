"""EKS node allocatable on the AL2023 accelerated AMI, from nodeadm's own defaults.

Source: awslabs/amazon-eks-ami at 81fec2e8 (2026-07-23), nodeadm/internal/kubelet/config.go:
- kube-reserved CPU: 6% of the first core, 1% of the second, 0.5% of the third and fourth,
  0.25% of every further core (`getCPUMillicoresToReserve`);
- kube-reserved memory: 11 MiB per pod of maxPods + 255 MiB (`getMemoryMebibytesToReserve`);
- kube-reserved ephemeral-storage: 1Gi; hard eviction: memory.available 100Mi,
  nodefs.available 10%;
- maxPods: the default network card's ENIs x (IPv4 addresses per ENI - 1) + 2
  (eni_max_pods.go, `calculateStandardMaxPods`).
`MAX_PODS` is that figure per instance type as AWS publishes it in aws/amazon-vpc-cni-k8s
misc/eni-max-pods.txt (commit b5218838, 2026-08-20). Bottlerocket pools are given the same
figures; Bottlerocket's own defaults were not read for this.
Ephemeral storage is the root volume (`diskSizeGb`) minus those reservations; the filesystem's
own overhead makes the real figure slightly smaller.
"""

from __future__ import annotations

from collections.abc import Mapping

from components.model.allocatable import (
    GIB,
    MEMORY_EVICTION_BYTES,
    MIB,
    NodeAllocatable,
    cpu_after_tiers,
)

MAX_PODS: Mapping[str, int] = {
    "g4dn.xlarge": 29,
    "g4dn.2xlarge": 29,
    "g4dn.4xlarge": 29,
    "g4dn.8xlarge": 58,
    "g4dn.12xlarge": 234,
    "g4dn.16xlarge": 58,
    "g4dn.metal": 737,
    "g5.xlarge": 58,
    "g5.2xlarge": 58,
    "g5.4xlarge": 234,
    "g5.8xlarge": 234,
    "g5.12xlarge": 737,
    "g5.16xlarge": 234,
    "g5.24xlarge": 737,
    "g5.48xlarge": 345,
    "g6.xlarge": 58,
    "g6.2xlarge": 58,
    "g6.4xlarge": 234,
    "g6.8xlarge": 234,
    "g6.12xlarge": 234,
    "g6.16xlarge": 737,
    "g6.24xlarge": 737,
    "g6.48xlarge": 737,
    "g6e.xlarge": 58,
    "g6e.2xlarge": 58,
    "g6e.4xlarge": 234,
    "g6e.8xlarge": 234,
    "g6e.12xlarge": 292,
    "g6e.16xlarge": 737,
    "g6e.24xlarge": 492,
    "g6e.48xlarge": 492,
    "p4d.24xlarge": 737,
    "p4de.24xlarge": 737,
    "p5.4xlarge": 118,
    "p5.48xlarge": 100,
    "p5e.48xlarge": 100,
    "p5en.48xlarge": 198,
    # The system pool's general-purpose types.
    "m6i.large": 29,
    "m6i.xlarge": 58,
    "m6i.2xlarge": 58,
}
KUBE_RESERVED_EPHEMERAL_BYTES = 1 * GIB
NODEFS_EVICTION_FRACTION = 0.10


def memory_reserved_bytes(max_pods: int) -> int:
    return (11 * max_pods + 255) * MIB + MEMORY_EVICTION_BYTES


def node_allocatable(
    machine: str, vcpus: int, memory_gib: float, disk_size_gb: int
) -> NodeAllocatable | None:
    """None for an instance type whose max pods gpufleet does not know."""
    max_pods = MAX_PODS.get(machine)
    if max_pods is None:
        return None
    disk = disk_size_gb * GIB
    return NodeAllocatable(
        cpu_millis=cpu_after_tiers(vcpus),
        memory_bytes=round(memory_gib * GIB) - memory_reserved_bytes(max_pods),
        pods=max_pods,
        ephemeral_bytes=round(disk * (1 - NODEFS_EVICTION_FRACTION))
        - KUBE_RESERVED_EPHEMERAL_BYTES,
    )
