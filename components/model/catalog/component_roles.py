"""Why each of gpufleet's components exists: `diff` says it when a component comes or goes with
everything under it, so a reviewer sees one cause instead of a list of resources.

Keyed by the component's type token (``gpufleet:<cloud>:<Kind>``); the sentence is read after
"exists while" / "built while".
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

COMPONENT_ROLES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "gpufleet:gcp:Cluster": "the stack creates its GKE cluster (not `cluster.existing`)",
        "gpufleet:gcp:AdoptedCluster": "the stack adds GPU pools to an existing GKE cluster",
        "gpufleet:gcp:GpuNodePool": "the GPU pool of that name is in `gpuPools`",
        "gpufleet:gcp:DriverInstaller": (
            "`gpuSoftware.mode` is gpu-operator on GKE (Google's driver installer feeds the "
            "operator)"
        ),
        "gpufleet:aws:Cluster": "the stack creates its EKS cluster (not `cluster.existing`)",
        "gpufleet:aws:AdoptedCluster": "the stack adds GPU pools to an existing EKS cluster",
        "gpufleet:aws:Network": "the stack creates its EKS cluster's VPC",
        "gpufleet:aws:EksAddons": "the stack creates its EKS cluster outside Auto Mode",
        "gpufleet:aws:SelfManagedGpuPool": (
            "the GPU pool of that name is in `gpuPools` with self-managed node groups"
        ),
        "gpufleet:aws:ManagedGpuPool": (
            "the GPU pool of that name is in `gpuPools` with EKS managed node groups"
        ),
        "gpufleet:aws:KarpenterGpuPool": (
            "the GPU pool of that name is in `gpuPools` under Karpenter (a NodePool and its "
            "EC2NodeClass)"
        ),
        "gpufleet:aws:AutoModeNodes": (
            "`cluster.aws.provisioner` is auto-mode (the Auto Mode node role and node pools)"
        ),
        "gpufleet:aws:ClusterAutoscaler": (
            "`cluster.aws.provisioner` is cluster-autoscaler and gpufleet runs the autoscaler "
            "(not `cluster.existing.autoscalerInstalled`)"
        ),
        "gpufleet:aws:Karpenter": (
            "`cluster.aws.provisioner` is karpenter and gpufleet runs Karpenter (not "
            "`cluster.existing.autoscalerInstalled`)"
        ),
        "gpufleet:aws:NodeTerminationHandler": (
            "a GPU pool runs on self-managed groups (the handler drains their nodes before EC2 "
            "or the group terminates them, Spot or on-demand); it goes with the last such pool"
        ),
        "gpufleet:azure:Cluster": "the stack creates its AKS cluster (not `cluster.existing`)",
        "gpufleet:azure:AdoptedCluster": "the stack adds GPU pools to an existing AKS cluster",
        "gpufleet:azure:GpuAgentPool": "the GPU pool of that name is in `gpuPools`",
        "gpufleet:kubernetes:ExistingCluster": "`cloud` is existing (a cluster from a kubeconfig)",
        "gpufleet:kubernetes:GpuSoftware": (
            "`gpuSoftware.mode` installs software (device plugin or GPU Operator, DCGM exporter)"
        ),
        "gpufleet:kubernetes:Samples": "`samples.enabled` is true",
        "gpufleet:kubernetes:Kueue": (
            "a GPU pool has `capacity: queued` (Kueue admits its Jobs whole, once the autoscaler "
            "can provision every node at once); it goes with the last such pool"
        ),
    }
)


def role(type_token: str) -> str | None:
    """Why a component of this type exists, or None for a type that is not gpufleet's."""
    return COMPONENT_ROLES.get(type_token)
