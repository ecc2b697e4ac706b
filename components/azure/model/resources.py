"""What gpufleet knows of its Azure resource types, handed to shared code as `RESOURCES`
(`Cloud.resource_knowledge`): how Azure changes them (`change_rules.py`), why each gpufleet:azure
component exists, what `plan`'s tree shows of them, how the Mermaid chart reads their agent
pools, and where the offline mock answers for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from components.azure.model import change_rules, node_effects, rbac
from components.model.labels import POOL_LABEL
from components.model.resource_knowledge import ClusterShape, DeclaredPool, ResourceKnowledge

# Why each of gpufleet's AKS components exists (read after "exists while").
COMPONENT_ROLES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "gpufleet:azure:Cluster": "the stack creates its AKS cluster (not `cluster.existing`)",
        "gpufleet:azure:AdoptedCluster": "the stack adds GPU pools to an existing AKS cluster",
        "gpufleet:azure:GpuAgentPool": "the GPU pool of that name is in `gpuPools`",
        "gpufleet:azure:Infiniband": "a GPU pool has `interconnect: fabric` (InfiniBand)",
        "gpufleet:azure:NapGpuPool": (
            "the GPU pool of that name is in `gpuPools` under node auto-provisioning (a "
            "NodePool and its AKSNodeClass)"
        ),
    }
)

# The input properties worth seeing at a glance in `plan`'s tree (dotted camelCase paths).
HIGHLIGHTS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "azure-native:containerservice:ManagedCluster": (
            "resourceName",
            "kubernetesVersion",
            "autoScalerProfile",
            "nodeProvisioningProfile",
        ),
        node_effects.AKS_NODE_CLASS: (
            "metadata.name",
            "spec.imageFamily",
            "spec.osDiskSizeGB",
            "spec.gpu",
        ),
        "azure-native:containerservice:AgentPool": (
            "agentPoolName",
            "vmSize",
            "minCount",
            "maxCount",
            "scaleSetPriority",
            "nodeTaints",
            "gpuInstanceProfile",
            "gpuProfile",
        ),
        # Which pools get InfiniBand, and the driver a node loads.
        "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy": (
            "spec.nodeAffinity",
            "spec.ofedDriver.version",
            "spec.ofedDriver.upgradePolicy",
        ),
    }
)


def _pool(profile: Mapping[str, Any], name: str) -> DeclaredPool:
    auto = profile.get("enableAutoScaling")
    return DeclaredPool(
        name,
        str(profile.get("vmSize") or "?"),
        profile.get("minCount") if auto else profile.get("count"),
        profile.get("maxCount") if auto else profile.get("count"),
        str((profile.get("nodeLabels") or {}).get(POOL_LABEL, "")),
    )


def _agent_pool(inputs: Mapping[str, Any], name: str) -> list[DeclaredPool]:
    return [_pool(inputs, str(inputs.get("agentPoolName") or name))]


def _inline_pools(inputs: Mapping[str, Any], name: str) -> list[DeclaredPool]:
    """The cluster's inline agent pool profiles (its system pool)."""
    return [
        _pool(profile, str(profile.get("name") or "?"))
        for profile in inputs.get("agentPoolProfiles") or []
    ]


_MANAGED_CLUSTER: Final = "azure-native:containerservice:ManagedCluster"
RESOURCES: Final = ResourceKnowledge(
    replacement_paths=change_rules.REPLACEMENT_PATHS,
    refused_in_place=change_rules.REFUSED_IN_PLACE,
    unsafe_together=change_rules.UNSAFE_TOGETHER,
    unsafe_moves=change_rules.UNSAFE_MOVES,
    name_inputs=change_rules.NAME_INPUTS,
    downtime=change_rules.DOWNTIME,
    same_name_instead=change_rules.SAME_NAME_INSTEAD,
    component_roles=COMPONENT_ROLES,
    highlights=HIGHLIGHTS,
    clusters=MappingProxyType(
        {
            _MANAGED_CLUSTER: ClusterShape(
                "AKS", name="resourceName", version="kubernetesVersion", location="location"
            )
        }
    ),
    adopted_clusters=MappingProxyType({"gpufleet:azure:AdoptedCluster": "AKS"}),
    pool_readers=MappingProxyType(
        {"azure-native:containerservice:AgentPool": _agent_pool, _MANAGED_CLUSTER: _inline_pools}
    ),
    node_effects=node_effects.NODE_EFFECTS,
    control_plane_version=node_effects.CONTROL_PLANE_VERSION,
    version_bump_effects=node_effects.VERSION_BUMP_EFFECTS,
    grant_waits=rbac.GRANT_WAITS,
    # The API groups of AKS node auto-provisioning's AKSNodeClass and of the Network Operator's
    # NicClusterPolicy (InfiniBand pools), for the architecture test.
    crd_groups=("karpenter.azure.com", "mellanox.com"),
    mock_module="components.azure.mock",
)
