"""What gpufleet knows of its Google Cloud resource types, handed to shared code as `RESOURCES`
(`Cloud.resource_knowledge`): how Google Cloud changes them (`change_rules.py`), why each
gpufleet:gcp component exists, what `plan`'s tree shows of them, how the Mermaid chart reads
their node pools, and where the offline mock answers for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from components.gcp.model import change_rules, node_effects
from components.model.labels import POOL_LABEL
from components.model.resource_knowledge import (
    ClusterShape,
    DeclaredPool,
    ResourceKnowledge,
    input_at,
)

# Why each of gpufleet's GKE components exists (read after "exists while").
COMPONENT_ROLES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "gpufleet:gcp:Cluster": "the stack creates its GKE cluster (not `cluster.existing`)",
        "gpufleet:gcp:AdoptedCluster": "the stack adds GPU pools to an existing GKE cluster",
        "gpufleet:gcp:GpuNodePool": "the GPU pool of that name is in `gpuPools`",
        "gpufleet:gcp:GpuDirect": (
            "a GPU pool has `interconnect: fabric` (GPUDirect's extra VPCs, Network objects "
            "and NCCL plugin installers)"
        ),
        "gpufleet:gcp:ComputeClassPool": (
            "the GPU pool of that name is in `gpuPools` with a capacity list one node pool "
            "cannot express (a GKE compute class over a node pool per capacity)"
        ),
        "gpufleet:gcp:DriverInstaller": (
            "`gpuSoftware.mode` is gpu-operator on GKE (Google's driver installer feeds the "
            "operator)"
        ),
    }
)

# The input properties worth seeing at a glance in `plan`'s tree (dotted camelCase paths).
HIGHLIGHTS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "gcp:container/cluster:Cluster": (
            "name",
            "location",
            "minMasterVersion",
            "releaseChannel.channel",
        ),
        "gcp:container/nodePool:NodePool": (
            "name",
            "nodeConfig.machineType",
            "nodeConfig.guestAccelerators",
            "nodeConfig.spot",
            "autoscaling",
            "nodeLocations",
            "nodeConfig.taints",
            "networkConfig.additionalNodeNetworkConfigs",
            "placementPolicy.type",
        ),
        node_effects.COMPUTE_CLASS: (
            "metadata.name",
            "spec.priorities",
            "spec.activeMigration",
            "spec.whenUnsatisfiable",
        ),
    }
)


def _node_pool(inputs: Mapping[str, Any], name: str) -> list[DeclaredPool]:
    auto = inputs.get("autoscaling") or {}
    count = inputs.get("nodeCount")
    return [
        DeclaredPool(
            str(inputs.get("name") or name),
            str(input_at(inputs, "nodeConfig.machineType") or "?"),
            auto.get("totalMinNodeCount", auto.get("minNodeCount", count)),
            auto.get("totalMaxNodeCount", auto.get("maxNodeCount", count)),
            str((input_at(inputs, "nodeConfig.labels") or {}).get(POOL_LABEL, "")),
        )
    ]


RESOURCES: Final = ResourceKnowledge(
    replacement_paths=change_rules.REPLACEMENT_PATHS,
    replaced_unless_widened=change_rules.REPLACED_UNLESS_WIDENED,
    refused_in_place=change_rules.REFUSED_IN_PLACE,
    name_inputs=change_rules.NAME_INPUTS,
    downtime=change_rules.DOWNTIME,
    same_name_instead=change_rules.SAME_NAME_INSTEAD,
    replacement_notes=change_rules.REPLACEMENT_NOTES,
    component_roles=COMPONENT_ROLES,
    moves_managed_resources=change_rules.MOVES_MANAGED_RESOURCES,
    moves_source=change_rules.MOVES_SOURCE,
    moves_note=change_rules.MOVES_NOTE,
    managed_downtime=change_rules.MANAGED_DOWNTIME,
    highlights=HIGHLIGHTS,
    clusters=MappingProxyType(
        {
            "gcp:container/cluster:Cluster": ClusterShape(
                "GKE", name="name", version="minMasterVersion", location="location"
            )
        }
    ),
    adopted_clusters=MappingProxyType({"gpufleet:gcp:AdoptedCluster": "GKE"}),
    pool_readers=MappingProxyType({"gcp:container/nodePool:NodePool": _node_pool}),
    node_effects=node_effects.NODE_EFFECTS,
    removal_effects=node_effects.REMOVAL_EFFECTS,
    control_plane_version=node_effects.CONTROL_PLANE_VERSION,
    version_bump_effects=node_effects.VERSION_BUMP_EFFECTS,
    # The API groups of GKE's custom resources (ComputeClass; multi-network objects such as
    # GKENetworkParamSet), for the architecture test.
    crd_groups=("cloud.google.com", "networking.gke.io"),
    mock_module="components.gcp.mock",
)
