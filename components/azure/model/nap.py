"""AKS node auto-provisioning (NAP, AKS's managed Karpenter) as data: what the cluster and each
GPU pool must be for it, and the AKSNodeClass gpufleet writes per pool (its NodePool is the
shared `components/model/karpenter_pool.py` shape).

Sources (read 2026-11-28):
- Azure/karpenter-provider-azure v1.14.2 (commit d1552b7e96e3d3bf44acc55be5786b25cdbfaaf4, the
  newest release; NAP "always runs the latest version": MicrosoftDocs/azure-aks-docs
  articles/aks/use-node-auto-provisioning.md): `pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml`
  (AKSNodeClass v1beta1, the storage version: imageFamily, osDiskSizeGB 30-2048, gpu.mode
  Driver|None, vnetSubnetID, tags; no field for a MIG profile or a capacity reservation),
  `pkg/apis/v1beta1/labels.go` (the karpenter.azure.com domain NodePools may not set; the
  sku-gpu-* labels; capacity types `on-demand` and `spot` only).
- pulumi-azure-native 3.29.0 (API 2025-09-01) `containerservice` NodeProvisioningMode.AUTO:
  "Fixed size Node Pools can still be created, but autoscaling Node Pools cannot be";
  ManagedClusterNodeProvisioningProfileArgs.default_node_pools ("Changing this from Auto to None
  on an existing cluster will cause the default Karpenter NodePools to be deleted, which will
  drain and delete the nodes associated with those pools").
- MicrosoftDocs/azure-aks-docs articles/aks/node-auto-provisioning.md (limitations: no Windows
  pools, no IPv6, no service principal, no cluster stop),
  node-auto-provisioning-networking.md (Azure CNI Overlay, with or without Cilium, and Azure
  CNI; not Calico network policy), migrate-from-autoscaler-to-node-auto-provisioning.md (the
  cluster autoscaler and NAP together only behind a preview flag).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from components.azure.model.config import cluster_options, pool_options
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

NODE_CLASS_GROUP: Final = "karpenter.azure.com"
NODE_CLASS_API_VERSION: Final = f"{NODE_CLASS_GROUP}/v1beta1"
NODE_CLASS_KIND: Final = "AKSNodeClass"
PROVIDER_RELEASE: Final = "Azure/karpenter-provider-azure v1.14.2 (d1552b7)"
GPU_MANUFACTURER_LABEL: Final = f"{NODE_CLASS_GROUP}/sku-gpu-manufacturer"
GPU_COUNT_LABEL: Final = f"{NODE_CLASS_GROUP}/sku-gpu-count"
# Azure's Karpenter writes `spot` or `regular` on every node it launches (cloudprovider.go).
SCALE_SET_PRIORITY_LABEL: Final = "kubernetes.azure.com/scalesetpriority"
PRIORITY_OF_CAPACITY: Final[Mapping[str, str]] = {"spot": "spot", "on-demand": "regular"}
# The AKSNodeClass's OS disk bounds (CRD: osDiskSizeGB minimum 30, maximum 2048).
OS_DISK_GB_MIN: Final = 30
OS_DISK_GB_MAX: Final = 2048
# AKS's node image family the agent pools use too (osSKU Ubuntu); the CRD's default.
IMAGE_FAMILY: Final = "Ubuntu"
# gpufleet's agent pool driver setting -> the AKSNodeClass's gpu.mode (CRD enum Driver|None:
# Driver, AKS installs NVIDIA's driver; None, the GPU Operator does).
GPU_MODE: Final[Mapping[str, str]] = {"Install": "Driver", "None": "None"}
# The cluster's provisioning profile: Auto, with AKS's default NodePools (`default` for CPU pods
# that fit nowhere else, `system-surge`) kept; turning those off later drains their nodes.
PROVISIONING_MODE: Final = "Auto"
DEFAULT_NODE_POOLS: Final = "Auto"
# The NodePool and AKSNodeClass names AKS's default NodePools own (defaultNodePools: Auto), which
# a gpufleet pool (its NodePool and AKSNodeClass are named after it) must not take: AKS creates
# NodePools `default` and `system-surge`, both on AKSNodeClass `default`, and an AKSNodeClass
# `system-surge` (Azure/karpenter-provider-azure examples/v1/general-purpose.yaml and
# system-surge.yaml, the shapes NAP installs; docs.azure.cn/en-us/aks/node-autoprovision-node-pools:
# "a default NodePool is created", `name: default`).
AKS_OWNED_NAMES: Final = frozenset({"default", "system-surge"})
# What NAP needs of a cluster that gpufleet's own cluster already is, said by `plan`'s docs
# (docs/aks.md) and asserted by the tests on the planned ManagedCluster: Azure CNI Overlay
# without a network policy, a managed identity, Linux pools only, IPv4.
CLUSTER_NETWORK: Final = ("azure", "overlay")
_SOURCE_CRD = f"{PROVIDER_RELEASE} pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml"
_SOURCE_LABELS = f"{PROVIDER_RELEASE} pkg/apis/v1beta1/labels.go"
_ELSEWHERE = "or keep this pool under cluster.azure.provisioner: cluster-autoscaler"


def cluster_problems(cluster: ClusterConfig, adopted: bool) -> list[Problem]:
    """What Auto mode refuses in gpufleet's cluster settings: an autoscaling system pool, and
    the cluster autoscaler's priority expander (whose ConfigMap nothing would read)."""
    problems = []
    system = cluster.system_pool
    if not adopted and system.max_nodes != system.min_nodes:
        problems.append(
            Problem(
                "cluster.systemPool.maxNodes",
                "node auto-provisioning (Auto mode) creates no autoscaling agent pool "
                "(pulumi-azure-native 3.29 NodeProvisioningMode.AUTO: 'autoscaling Node Pools "
                "cannot be'), so the system pool keeps a fixed size; set maxNodes equal to "
                f"minNodes ({system.min_nodes}): CPU pods that do not fit go to NAP's own "
                "`default` NodePool",
                system.max_nodes,
            )
        )
    if cluster_options(cluster).autoscaler_expander == "priority":
        problems.append(
            Problem(
                "cluster.azure.autoscalerExpander",
                "is the cluster autoscaler's, which does not scale node auto-provisioning's "
                "pools (Karpenter picks the cheapest type that fits); leave it out",
                "priority",
            )
        )
    return problems


def pool_problems(pool: GpuPoolConfig, path: str, adopted: bool = False) -> list[Problem]:
    """What an AKSNodeClass and Azure's Karpenter cannot express for the pool."""
    problems = []
    if pool.name in AKS_OWNED_NAMES:
        # An adopted cluster's defaultNodePools is not read (review fix7-aks F7A-1): the name
        # is refused there too, saying it may be free, since a clash fails `up` half-way.
        which = (
            "AKS's own default NodePools, when the cluster's defaultNodePools is Auto (the "
            "default; gpufleet does not read it on an adopted cluster, so it cannot tell), use"
            if adopted
            else "AKS's own default NodePools (defaultNodePools: Auto) already use"
        )
        problems.append(
            Problem(
                f"{path}.name",
                f"{which} a NodePool and an AKSNodeClass of this name "
                f"({', '.join(sorted(AKS_OWNED_NAMES))}), and gpufleet names the pool's NodePool "
                "and AKSNodeClass after the pool: `pulumi up` would fail (AlreadyExists) or "
                "fight AKS over them; rename the pool",
                pool.name,
            )
        )
    options = pool_options(pool)
    for key, value in (
        ("capacityReservationGroupId", options.capacity_reservation_group_id),
        ("reservedNodes", options.reserved_nodes),
    ):
        if value is not None:
            problems.append(
                Problem(
                    f"{path}.azure.{key}",
                    "node auto-provisioning places no node in a capacity reservation group "
                    f"(AKSNodeClass has no such field: {_SOURCE_CRD}); leave it out, {_ELSEWHERE}",
                    value,
                )
            )
    if pool.mig_partition_size:
        problems.append(
            Problem(
                f"{path}.migPartitionSize",
                "an AKSNodeClass has no MIG profile (agent pools' gpuInstanceProfile has no "
                f"counterpart: {_SOURCE_CRD}); leave it out, {_ELSEWHERE}",
                pool.mig_partition_size,
            )
        )
    if pool.sharing:
        problems.append(
            Problem(
                f"{path}.sharing",
                "AKS's managed Karpenter plans nodes with the VM size's physical GPU count; only "
                "a NodeOverlay behind Karpenter's alpha nodeOverlay gate makes it plan shared "
                "GPUs, and AKS neither documents nor lets gpufleet turn that gate on, so a pod "
                f"asking for more shares than a node has GPUs would never get a node; {_ELSEWHERE}",
                pool.sharing.strategy,
            )
        )
    if not OS_DISK_GB_MIN <= pool.disk_size_gb <= OS_DISK_GB_MAX:
        problems.append(
            Problem(
                f"{path}.diskSizeGb",
                f"an AKSNodeClass's osDiskSizeGB is {OS_DISK_GB_MIN} to {OS_DISK_GB_MAX} "
                f"({_SOURCE_CRD})",
                pool.disk_size_gb,
            )
        )
    if pool.interconnect == "fabric":
        problems.append(
            Problem(
                f"{path}.interconnect",
                "gpufleet builds the GPU fabric on agent pools only; under node "
                f"auto-provisioning it is not built yet: write none, {_ELSEWHERE}",
                pool.interconnect,
            )
        )
    return problems


def default_node_pool_cost_note() -> str:
    """What `plan`'s cost leaves out under NAP: the CPU nodes of AKS's own `default` NodePool."""
    return (
        "AKS node auto-provisioning: AKS's own NodePool `default` (defaultNodePools: Auto) "
        "launches on-demand CPU VMs for pods that fit neither the system pool nor a GPU pool "
        "(an MPIJob launcher, Kueue, any chart a team adds); those VMs are not counted here, so "
        "full scale is not this stack's ceiling. gpufleet leaves that NodePool to AKS; to cap "
        "it, set spec.limits.cpu on NodePool default (AKS lets you modify it: "
        "aks/node-autoprovision-node-pools)"
    )


def adopted_name_warning(pool: GpuPoolConfig, path: str) -> str:
    """An adopted cluster's own NodePools and AKSNodeClasses are not read offline."""
    return (
        f"{path} ({pool.name}): not checked: NodePool/AKSNodeClass names already on the cluster; "
        f"`pulumi up` creates NodePool and AKSNodeClass {pool.name!r} and fails if the cluster "
        "has one of that name (kubectl get nodepools,aksnodeclasses lists them)"
    )


def capacity_advice() -> str:
    return (
        "AKS node auto-provisioning launches on-demand and Spot VMs only (capacity types "
        f"on-demand and spot: {_SOURCE_LABELS}): write on-demand, spot or [spot, on-demand]; "
        "reserved capacity (capacityReservationGroupId) and queued pools (ProvisioningRequests) "
        "are the cluster autoscaler's: cluster.azure.provisioner: cluster-autoscaler"
    )


def node_class_spec(disk_size_gb: int, driver: str, tags: Mapping[str, str]) -> dict[str, Any]:
    """The pool's AKSNodeClass spec: AKS's Ubuntu image, the pool's disk, who installs the
    driver and gpufleet's tags (the component adds the node subnet, `vnetSubnetID`, where the
    stack knows it; without one NAP uses the cluster's own)."""
    return {
        "imageFamily": IMAGE_FAMILY,
        "osDiskSizeGB": disk_size_gb,
        "gpu": {"mode": GPU_MODE[driver]},
        "tags": dict(tags),
    }
