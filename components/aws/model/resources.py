"""What gpufleet knows of its AWS resource types, handed to shared code as `RESOURCES`
(`Cloud.resource_knowledge`): how AWS changes them (`change_rules.py`), why each gpufleet:aws
component exists, what `plan`'s tree shows of them, how the Mermaid chart and `fit` read their
node groups, and where the offline mock answers for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from components.aws.model import change_rules, node_effects
from components.model.labels import POOL_LABEL
from components.model.resource_knowledge import (
    ClusterShape,
    DeclaredPool,
    ResourceKnowledge,
    input_at,
)

# Why each of gpufleet's EKS components exists (read after "exists while").
COMPONENT_ROLES: Final[Mapping[str, str]] = MappingProxyType(
    {
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
        "gpufleet:aws:EfaDevicePlugin": (
            "a GPU pool (node groups or a Karpenter NodePool) has `interconnect: fabric` (it "
            "advertises the nodes' EFA devices as vpc.amazonaws.com/efa); it goes with the last "
            "such pool"
        ),
        "gpufleet:aws:NodeTerminationHandler": (
            "a GPU pool runs on self-managed groups (the handler drains their nodes before EC2 "
            "or the group terminates them, Spot or on-demand); it goes with the last such pool"
        ),
    }
)

# The input properties worth seeing at a glance in `plan`'s tree (dotted camelCase paths). A
# Karpenter or Auto Mode pool's node class shows what a launch template shows of a node group.
HIGHLIGHTS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "aws:eks/cluster:Cluster": ("name", "version"),
        "aws:eks/nodeGroup:NodeGroup": (
            "nodeGroupName",
            "amiType",
            "capacityType",
            "instanceTypes",
            "scalingConfig",
            "taints",
        ),
        "aws:ec2/launchTemplate:LaunchTemplate": (
            "imageId",
            "metadataOptions.httpTokens",
            "blockDeviceMappings",
        ),
        "aws:autoscaling/group:Group": (
            "name",
            "minSize",
            "maxSize",
            "availabilityZones",
            "mixedInstancesPolicy.launchTemplate.overrides",
            "capacityRebalance",
        ),
        "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": (
            "metadata.name",
            "spec.amiSelectorTerms",
            "spec.metadataOptions.httpTokens",
            "spec.blockDeviceMappings",
        ),
        "kubernetes:eks.amazonaws.com/v1:NodeClass": (
            "metadata.name",
            "spec.ephemeralStorage",
        ),
    }
)

# What cluster-autoscaler's node-template tags start with (its AWS provider reads them).
_LABEL_TAG = "k8s.io/cluster-autoscaler/node-template/label/"
_AUTO_SCALING_GROUP: Final = "aws:autoscaling/group:Group"


def group_tags(inputs: Mapping[str, Any]) -> dict[str, str]:
    """An auto scaling group's tags as key -> value (pulumi-aws `tags=[GroupTagArgs(key, value,
    ...)]`)."""
    tags: dict[str, str] = {}
    raw = inputs.get("tags") or []
    for tag in raw if isinstance(raw, list) else []:
        if isinstance(tag, Mapping) and isinstance(tag.get("key"), str):
            value = tag.get("value")
            tags[tag["key"]] = value if isinstance(value, str) else str(value or "")
    return tags


def _managed_group(inputs: Mapping[str, Any], name: str) -> list[DeclaredPool]:
    scaling = inputs.get("scalingConfig") or {}
    return [
        DeclaredPool(
            str(inputs.get("nodeGroupName") or inputs.get("nodeGroupNamePrefix") or name),
            ", ".join(inputs.get("instanceTypes") or []) or "?",
            scaling.get("minSize"),
            scaling.get("maxSize"),
            str((inputs.get("labels") or {}).get(POOL_LABEL, "")),
        )
    ]


def _auto_scaling_group(inputs: Mapping[str, Any], name: str) -> list[DeclaredPool]:
    tags = {
        t.get("key"): t.get("value") for t in inputs.get("tags") or [] if isinstance(t, Mapping)
    }
    overrides = input_at(inputs, "mixedInstancesPolicy.launchTemplate.overrides") or []
    machines = [o.get("instanceType") for o in overrides if isinstance(o, Mapping)]
    return [
        DeclaredPool(
            str(inputs.get("name") or name),
            ", ".join(m for m in machines if m)
            or str(tags.get(_LABEL_TAG + "node.kubernetes.io/instance-type") or "?"),
            inputs.get("minSize"),
            inputs.get("maxSize"),
            str(tags.get(_LABEL_TAG + POOL_LABEL) or ""),
        )
    ]


RESOURCES: Final = ResourceKnowledge(
    replacement_paths=change_rules.REPLACEMENT_PATHS,
    refused_in_place=change_rules.REFUSED_IN_PLACE,
    refusal_instead=change_rules.REFUSAL_INSTEAD,
    name_inputs=change_rules.NAME_INPUTS,
    downtime=change_rules.DOWNTIME,
    create_first=change_rules.CREATE_FIRST,
    same_name_instead=change_rules.SAME_NAME_INSTEAD,
    unsafe_together=change_rules.UNSAFE_TOGETHER,
    unsafe_moves=change_rules.UNSAFE_MOVES,
    component_roles=COMPONENT_ROLES,
    highlights=HIGHLIGHTS,
    clusters=MappingProxyType(
        {"aws:eks/cluster:Cluster": ClusterShape("EKS", name="name", version="version")}
    ),
    adopted_clusters=MappingProxyType({"gpufleet:aws:AdoptedCluster": "EKS"}),
    pool_readers=MappingProxyType(
        {"aws:eks/nodeGroup:NodeGroup": _managed_group, _AUTO_SCALING_GROUP: _auto_scaling_group}
    ),
    node_template_tags=MappingProxyType({_AUTO_SCALING_GROUP: group_tags}),
    node_effects=node_effects.NODE_EFFECTS,
    control_plane_version=node_effects.CONTROL_PLANE_VERSION,
    version_bump_effects=node_effects.VERSION_BUMP_EFFECTS,
    removal_effects=node_effects.REMOVAL_EFFECTS,
    split_from_roll=node_effects.SPLIT_FROM_ROLL,
    # The API groups of its custom resources: Karpenter's EC2NodeClass and Auto Mode's NodeClass.
    crd_groups=("karpenter.k8s.aws", "eks.amazonaws.com"),
    mock_module="components.aws.mock",
)
