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

Two more facts (review eks-2.md N10):
- A node's memory capacity is less than the instance type's nominal GiB (the hypervisor and
  firmware keep some). How much varies by type and AMI; Karpenter estimates it as 7.5% of the
  nominal memory (chart settings.vmMemoryOverheadPercent, default 0.075), a figure "chosen since
  it ensured Karpenter wouldn't overestimate available resources for known instance type - AMI
  combinations" (aws/karpenter-provider-aws#7929); large types keep less (#6611: an i4i.32xlarge
  reported about 3.5% less). gpufleet takes the same 7.5%: a pod that fits these figures fits the
  real node, and Karpenter plans new nodes with exactly them.
- EKS managed node groups cap maxPods: 110 on instance types with fewer than 30 vCPUs, 250 above,
  and the smallest value of the group's types on every node (EKS user guide,
  create-managed-node-group.adoc). nodeadm still reserves kube-reserved memory for its own ENI
  figure: it computes the reservation before the node group's kubelet settings are merged in as
  a drop-in (nodeadm/internal/kubelet/config.go, withDefaultReservedResources and
  writeKubeletConfig).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
    "p6-b200.48xlarge": 198,
    # The system pool's general-purpose types.
    "m6i.large": 29,
    "m6i.xlarge": 58,
    "m6i.2xlarge": 58,
}
# Karpenter's ENI-limited max pods (v1.14.1 pkg/providers/instancetype/types.go `ENILimitedPods`):
# (the default card's interfaces - reserved ENIs - EFA-only interfaces on card 0) x (IPv4 per
# interface - 1) + 2, since "EFA-only interfaces consume an ENI and don't support IP networking";
# Karpenter writes it into the kubelet's maxPods (pkg/providers/amifamily/resolver.go). Per EFA
# type (components/aws/model/fabric.py): card 0's MaximumNetworkInterfaces and IPv4PerInterface,
# from aws/karpenter-provider-aws v1.14.1 (bde00654)
# pkg/providers/instancetype/zz_generated.vpclimits.go (DefaultNetworkCardIndex 0 on each).
CARD0_INTERFACES: Mapping[str, tuple[int, int]] = {
    "p4d.24xlarge": (15, 50),
    "p4de.24xlarge": (15, 50),
    "p5.48xlarge": (2, 50),
    "p5.4xlarge": (4, 30),
    "p5e.48xlarge": (2, 50),
    "p5en.48xlarge": (4, 50),
    "p6-b200.48xlarge": (4, 50),
    "g6e.48xlarge": (10, 50),
    "g6e.24xlarge": (10, 50),
    "g6e.16xlarge": (15, 50),
    "g6e.12xlarge": (10, 30),
    "g6e.8xlarge": (8, 30),
    "g6.48xlarge": (15, 50),
    "g6.24xlarge": (15, 50),
    "g6.16xlarge": (15, 50),
    "g6.12xlarge": (8, 30),
    "g6.8xlarge": (8, 30),
    "g5.48xlarge": (7, 50),
    "g5.24xlarge": (15, 50),
    "g5.16xlarge": (8, 30),
    "g5.12xlarge": (15, 50),
    "g5.8xlarge": (8, 30),
    "g4dn.metal": (15, 50),
    "g4dn.16xlarge": (4, 15),
    "g4dn.12xlarge": (8, 30),
    "g4dn.8xlarge": (4, 15),
}
KUBE_RESERVED_EPHEMERAL_BYTES = 1 * GIB
NODEFS_EVICTION_FRACTION = 0.10
# Of the nominal memory, what a node does not report as capacity (see the module's docstring).
NOMINAL_MEMORY_GAP = 0.075
# EKS managed node groups' maxPods cap, below and above 30 vCPUs.
MANAGED_MAX_PODS = (110, 250)
MANAGED_MAX_PODS_VCPUS = 30


def managed_max_pods(machines: Sequence[tuple[str, int]]) -> int | None:
    """The maxPods an EKS managed node group gives every node, from its (type, vCPUs); None when
    a type's ENI figure is not known."""
    caps = []
    for machine, vcpus in machines:
        eni = MAX_PODS.get(machine)
        if eni is None:
            return None
        small, large = MANAGED_MAX_PODS
        caps.append(min(eni, small if vcpus < MANAGED_MAX_PODS_VCPUS else large))
    return min(caps, default=None)


def karpenter_max_pods(machine: str, efa_only_on_card0: int) -> int | None:
    """Karpenter's maxPods for a node whose node class has `efa_only_on_card0` EFA-only
    interfaces on network card 0 (Karpenter's default of no reserved ENIs); None when the
    type's card-0 figures are not known."""
    figures = CARD0_INTERFACES.get(machine)
    if figures is None:
        return None
    interfaces, ipv4_per_interface = figures
    usable = max(interfaces - efa_only_on_card0, 0)
    return usable * (ipv4_per_interface - 1) + 2 if usable else 0


def memory_reserved_bytes(max_pods: int) -> int:
    return (11 * max_pods + 255) * MIB + MEMORY_EVICTION_BYTES


def node_allocatable(
    machine: str, vcpus: int, memory_gib: float, disk_size_gb: int, pods: int | None = None
) -> NodeAllocatable | None:
    """None for an instance type whose max pods gpufleet does not know. `pods`: a maxPods the
    node is given (a managed node group's), where it is not the ENI figure."""
    max_pods = MAX_PODS.get(machine)
    if max_pods is None:
        return None
    disk = disk_size_gb * GIB
    capacity = round(memory_gib * GIB * (1 - NOMINAL_MEMORY_GAP))
    return NodeAllocatable(
        cpu_millis=cpu_after_tiers(vcpus),
        memory_bytes=capacity - memory_reserved_bytes(max_pods),
        pods=max_pods if pods is None else pods,
        ephemeral_bytes=round(disk * (1 - NODEFS_EVICTION_FRACTION))
        - KUBE_RESERVED_EPHEMERAL_BYTES,
    )
