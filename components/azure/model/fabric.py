"""InfiniBand on AKS (`gpuPools[].interconnect: fabric`): which ND sizes have it, where a pool
must run for all its nodes to share one fabric, and what AKS refuses or gpufleet cannot check.

Azure wires InfiniBand between the VMs of one scale set (one AKS agent pool) in one placement
group, so a fabric pool is one agent pool in one zone whose nodes never outgrow the scale set's
single placement group; a gang (an NCCL job's pods) must fit in that one pool.

Sources (cited per row): MicrosoftDocs/azure-docs size summaries, Azure/aks-rdma-infiniband at
700dabb4fe0451d482ae09a373617ed68658b021 (2026-07-16), the Compute API's `singlePlacementGroup`
reference and Azure/AKS's changelog.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Final

from components.azure.model.catalog import CATALOG
from components.model.fabric import FabricFacts, NcclFigure, PoolFabric
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

RDMA_GUIDE = "github.com/Azure/aks-rdma-infiniband @700dabb4fe0451d482ae09a373617ed68658b021"

# The resource the SR-IOV device plugin advertises (resourcePrefix "rdma", resourceName "ib"),
# one per InfiniBand HCA; the guide's "maximum performance" pod takes all eight.
RDMA_RESOURCE = "rdma/ib"

# Two ND nodes, all_reduce_perf over InfiniBand with GPUDirect RDMA (SR-IOV plugin, 8 GPUs and
# rdma/ib 8 per worker): 187.22 GB/s busbw at 8 GiB, "less than 180 indicates a problem". The
# file does not say which ND size ran it. 187 GB/s is 94 % of the 200 GB/s of eight HDR links and
# 47 % of eight NDR links' 400 GB/s, so it is attached to the HDR sizes (ND A100 v4) only: on an
# NDR size it would pass a fabric running at half its links.
GUIDE_FIGURE: Final = NcclFigure(
    collective="all_reduce",
    busbw_gbytes_per_s=187.22,
    message_bytes=8589934592,
    nodes=2,
    source=f"{RDMA_GUIDE} tests/expected-output.md (section 1.1; VM size not stated)",
)
# Below this the guide calls the setup broken (same file).
GUIDE_BROKEN_BELOW_GBYTES_PER_S: Final = 180.0

_DELIVERED_BY = "NVIDIA Network Operator (DOCA OFED driver + SR-IOV device plugin)"
_SIZES_DOCS = "MicrosoftDocs/azure-docs articles/virtual-machines/sizes/gpu-accelerated/includes/"


def _nd(
    machine: str, kind: str, link_gbps: int, source: str, figure: NcclFigure | None
) -> FabricFacts:
    # Every ND size here has one InfiniBand HCA per GPU (8), exposed as rdma/ib: 8 per node.
    return FabricFacts(
        machine_type=machine,
        kind=kind,
        interfaces=8,
        bandwidth_gbps=8 * link_gbps,
        resource=RDMA_RESOURCE,
        resource_per_node=8,
        delivered_by=_DELIVERED_BY,
        expected_busbw=figure,
        source=source,
    )


FABRIC_FACTS: Final[Mapping[str, FabricFacts]] = MappingProxyType(
    {
        facts.machine_type: facts
        for facts in (
            # ND A100 v4: "its own dedicated, topology-agnostic 200 GB/s [sic] NVIDIA Mellanox HDR
            # InfiniBand connection" per GPU, "1.6 TB/s of interconnect bandwidth per VM".
            _nd(
                "Standard_ND96asr_v4",
                "InfiniBand HDR",
                200,
                f"{_SIZES_DOCS}ndasra100v4-series-summary.md @6acc6f60",
                GUIDE_FIGURE,
            ),
            # NDm A100 v4: "its own dedicated, topology-agnostic 200 GB/s [sic] NVIDIA Mellanox
            # HDR InfiniBand connection" per GPU, "1.6 TB/s of interconnect bandwidth per VM".
            _nd(
                "Standard_ND96amsr_A100_v4",
                "InfiniBand HDR",
                200,
                f"{_SIZES_DOCS}ndma100v4-series-summary.md @516167e9",
                GUIDE_FIGURE,
            ),
            # "one 400 Gb/s NDR Quantum-2 CX7 InfiniBand link per GPU, 3.2 Tb/s per VM".
            _nd(
                "Standard_ND96isr_H100_v5",
                "InfiniBand NDR",
                400,
                f"{_SIZES_DOCS}ndh100v5-series-summary.md @2467ea47",
                None,
            ),
            # Microsoft's own page was not in the stored material: the figure is as third parties
            # quote learn.microsoft.com (sizes/gpu-accelerated/nd-h200-v5-series, "400 Gb/s
            # InfiniBand per GPU"), the same links as ND H100 v5. Re-check.
            _nd(
                "Standard_ND96isr_H200_v5",
                "InfiniBand NDR",
                400,
                "learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/"
                "nd-h200-v5-series, as quoted (Microsoft's text not read: unverified)",
                None,
            ),
        )
    }
)

# A scale set with singlePlacementGroup true holds at most 100 VMs; AKS creates pools of RDMA
# ("r") sizes with it set, since InfiniBand works within one placement group.
PLACEMENT = "one scale set (single placement group)"
PLACEMENT_MAX_NODES: Final = 100
PLACEMENT_SOURCE = (
    "learn.microsoft.com dotnet Azure.ResourceManager.Compute VirtualMachineScaleSetProperties."
    "SinglePlacementGroup ('limits the scale set to a single placement group, of max size 100 "
    "virtual machines'); github.com/Azure/AKS CHANGELOG 2022-03-20 (PR 2863: new pools of "
    "InfiniBand sizes get singlePlacementGroup)"
)

# What gpufleet cannot see offline: the subscription's AKS feature registration.
FEATURE_REGISTRATION = (
    "AKS feature AKSInfinibandSupport registered on the subscription ('az feature register "
    "--namespace Microsoft.ContainerService --name AKSInfinibandSupport', so the pool's VMs land "
    f"on one physical InfiniBand network; {RDMA_GUIDE} website/docs/getting-started/"
    "02-prerequisites.md): not checked"
)


# AKS's cluster autoscaler builds a pool at zero from its scale set: the GPU from the VM size,
# any other extended resource only from these tags, `/` written `_` (kubernetes/autoscaler
# @55c37cd5eb550756c5ccc5a89e9068d77797e575 cluster-autoscaler/cloudprovider/azure/
# azure_util.go `nodeResourcesTagName`, azure_template.go extractAllocatableResourcesFromScaleSet).
# AKS copies an agent pool's tags to its scale set (learn.microsoft.com/azure/aks/use-tags);
# a tag change updates the pool in place (tags are not among POOL_REPLACE_ON_CHANGES).
AUTOSCALER_RESOURCE_TAG: Final = "k8s.io_cluster-autoscaler_node-template_resources_"


def autoscaler_resource_tags(resources: Mapping[str, int], gpu_resource: str) -> dict[str, str]:
    """The agent pool tags that give AKS's autoscaler the pool's extended resources at zero."""
    return {
        AUTOSCALER_RESOURCE_TAG + name.replace("/", "_"): str(count)
        for name, count in sorted(resources.items())
        if name != gpu_resource
    }


def fabric_facts(machine_type: str) -> FabricFacts | None:
    return FABRIC_FACTS.get(machine_type)


def vm_size(pool: GpuPoolConfig) -> str:
    """The pool's VM size, as AKS gets it (the catalog's default when only the GPU is named)."""
    return pool.machine_type or CATALOG.defaults.get(pool.accelerator, "")


def fabric_pools(pools: Sequence[GpuPoolConfig]) -> tuple[str, ...]:
    """The names of the stack's pools that run on InfiniBand (`interconnect: fabric` on a size
    that has it; the shared checks refuse the key on any other size)."""
    return tuple(
        pool.name
        for pool in pools
        if pool.interconnect == "fabric" and fabric_facts(vm_size(pool)) is not None
    )


def pool_fabric(facts: FabricFacts, zone: str) -> PoolFabric:
    """A fabric pool's placement: one agent pool (one scale set) in one zone."""
    return PoolFabric(
        facts=facts,
        zone=zone,
        placement=PLACEMENT,
        placement_max_nodes=PLACEMENT_MAX_NODES,
        # The guide's pods (tests/scenarios/k8s/values.yaml) and gpufleet's NCCL sample.
        capabilities=("IPC_LOCK",),
        shared_memory=True,
        notes=(
            f"pods request {RDMA_RESOURCE} (8 per node for the whole fabric) and add the "
            "IPC_LOCK capability (unlimited locked memory for RDMA)",
            f"a Job's pods must all run in this one pool: InfiniBand links only the VMs of one "
            f"scale set ({PLACEMENT_SOURCE})",
        ),
    )


# On a cluster another team runs: what gpufleet installs cluster-wide for InfiniBand and cannot
# see offline (a second Network Operator release or NicClusterPolicy fails `pulumi up`; a second
# NFD labels the same nodes).
EXISTING_OPERATORS = (
    "an existing NVIDIA Network Operator (Helm release network-operator, the cluster singleton "
    "NicClusterPolicy nic-cluster-policy) or Node Feature Discovery on the cluster: not "
    "checked; gpufleet installs both, with NFD's worker on the fabric pools only"
)


def fabric_warnings(pools: Sequence[GpuPoolConfig], adopted: bool) -> list[str]:
    """What `plan` cannot check offline for the stack's InfiniBand pools."""
    names = fabric_pools(pools)
    if not names:
        return []
    prefix = f"gpuPools ({', '.join(names)})"
    warnings = [f"{prefix}: {FEATURE_REGISTRATION}"]
    if adopted:
        warnings.append(f"{prefix}: {EXISTING_OPERATORS}")
    return warnings


def fabric_problems(cluster: ClusterConfig, pool: GpuPoolConfig, path: str) -> list[Problem]:
    """What keeps an AKS fabric pool off one fabric beyond the shared one-zone rule
    (components/model/fabric_checks.py): more nodes than one placement group holds (the cap
    passes, one over is refused)."""
    if pool.interconnect != "fabric" or fabric_facts(vm_size(pool)) is None:
        return []
    problems = []
    if pool.max_nodes > PLACEMENT_MAX_NODES:
        problems.append(
            Problem(
                f"{path}.maxNodes",
                f"an InfiniBand pool is one scale set in a single placement group, which holds "
                f"at most {PLACEMENT_MAX_NODES} VMs; set maxNodes to {PLACEMENT_MAX_NODES} or "
                "less and add another pool for more (a job's pods still run in one pool)",
                pool.max_nodes,
            )
        )
    return problems
