"""What the rules look at: resource type tokens, GPU pool detection and taint parsing per cloud.

The pack runs in its own virtualenv (only `pulumi_policy`), so it cannot import gpufleet's
`components`; the constants here are checked against gpufleet's catalog by the tests. That is
why the provider type tokens are written out here, where gpufleet's own code keeps them in its
cloud folders and asks through the registry (tests/test_architecture.py lets policy/ keep them). Values
come from the Pulumi engine wrapped in `pulumi_policy`'s proxies, which are `Mapping` and
`Sequence` but not `dict` and `list`, so every check here uses the abstract types.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import Secret

GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
EKS_ASG = "aws:autoscaling/group:Group"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
AKS_CLUSTER = "azure-native:containerservice:ManagedCluster"
AKS_AGENT_POOL = "azure-native:containerservice:AgentPool"
CLUSTERS = (GKE_CLUSTER, EKS_CLUSTER, AKS_CLUSTER)
HELM_TYPES = (
    "kubernetes:helm.sh/v3:Release",
    "kubernetes:helm.sh/v3:Chart",
    "kubernetes:helm.sh/v4:Chart",
)

# The taints gpufleet puts on GPU nodes: `nvidia.com/gpu` (GKE, EKS; any value) and AKS's
# documented `sku=gpu`. Both with effect NoSchedule, so only pods that ask for GPUs land there.
GPU_TAINTS: Mapping[str, str | None] = {"nvidia.com/gpu": None, "sku": "gpu"}
GPU_RESOURCE = "nvidia.com/gpu"

# Cluster autoscaler (EKS) discovery and scale-from-zero template tags on an ASG.
CA_TAG = "k8s.io/cluster-autoscaler/"
CA_ENABLED_TAG = CA_TAG + "enabled"
# On a cluster gpufleet adopts, its autoscaler discovers (and may resize) only groups tagged
# `gpufleet.io/autoscaler/<cluster>=owned`, and its groups carry that tag alone, so an autoscaler
# of the cluster's owner does not find them (components/aws/model/autoscaler_tags.py).
GPUFLEET_OWNER_TAG = "gpufleet.io/autoscaler/"
NODE_TEMPLATE = CA_TAG + "node-template/"
NODE_TEMPLATE_LABEL = NODE_TEMPLATE + "label/"
NODE_TEMPLATE_TAINT = NODE_TEMPLATE + "taint/"
NODE_TEMPLATE_GPUS = NODE_TEMPLATE + "resources/" + GPU_RESOURCE
EKS_ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"

# EC2 GPU families (p2..p6, g3..g6 incl. g4dn/g5g/g6e, gr6); AKS N-series (NC, ND, NV, NG).
EC2_GPU_TYPE = re.compile(r"^(p\d+|g\d+|gr\d+)[a-z0-9-]*\.")
AZURE_GPU_SIZE = re.compile(r"^Standard_N[CDVG]", re.IGNORECASE)
EFFECTS = {
    "NO_SCHEDULE": "NoSchedule",
    "PREFER_NO_SCHEDULE": "PreferNoSchedule",
    "NO_EXECUTE": "NoExecute",
}


def unwrap(value: Any) -> Any:
    """A secret's plain value (the engine hands secrets to policies wrapped)."""
    return value.value if isinstance(value, Secret) else value


def get(value: Any, *path: str | int) -> Any:
    """The value at a path of mapping keys / sequence indexes, or None."""
    value = unwrap(value)
    for part in path:
        if isinstance(part, int):
            if not is_seq(value) or not -len(value) <= part < len(value):
                return None
            value = unwrap(value[part])
        elif isinstance(value, Mapping) and part in value:
            value = unwrap(value[part])
        else:
            return None
    return value


def is_seq(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def seq(value: Any) -> list[Any]:
    """A sequence as a list, a single value as a one-item list, None as []."""
    value = unwrap(value)
    if value is None:
        return []
    return list(value) if is_seq(value) else [value]


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and float(value).is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def is_gpu_taint(key: str, value: str | None, effect: str) -> bool:
    if key not in GPU_TAINTS or normalize_effect(effect) != "NoSchedule":
        return False
    wanted = GPU_TAINTS[key]
    return wanted is None or value == wanted


def normalize_effect(effect: Any) -> str:
    return EFFECTS.get(str(effect), str(effect))


def parse_taint(text: str) -> tuple[str, str | None, str] | None:
    """`key=value:Effect` (AKS, kubelet flags) as (key, value, effect); None when malformed."""
    if ":" not in text:
        return None
    head, effect = text.rsplit(":", 1)
    key, _, value = head.partition("=")
    return (key, value if "=" in head else None, effect) if key else None


# --- GPU pools, per cloud -------------------------------------------------------------------


def asg_tags(props: Mapping[str, Any]) -> dict[str, str]:
    """An ASG's tags as key -> value (`tags` blocks, or the older `tag` blocks)."""
    tags: dict[str, str] = {}
    for block in seq(props.get("tags")) + seq(props.get("tag")):
        if isinstance(block, Mapping) and isinstance(block.get("key"), str):
            tags[block["key"]] = str(block.get("value", ""))
    return tags


def asg_instance_types(props: Mapping[str, Any]) -> list[str]:
    overrides = seq(get(props, "mixedInstancesPolicy", "launchTemplate", "overrides"))
    return [
        str(o["instanceType"])
        for o in overrides
        if isinstance(o, Mapping) and o.get("instanceType")
    ]


def is_gpu_asg(props: Mapping[str, Any]) -> bool:
    """An ASG that launches GPU nodes, as far as its own properties tell."""
    tags = asg_tags(props)
    return (
        NODE_TEMPLATE_GPUS in tags
        or NODE_TEMPLATE_LABEL + EKS_ACCELERATOR_LABEL in tags
        or any(EC2_GPU_TYPE.match(t) for t in asg_instance_types(props))
    )


def is_gpu_node_group(props: Mapping[str, Any]) -> bool:
    ami = str(props.get("amiType") or "").upper()
    types = [str(t) for t in seq(props.get("instanceTypes"))]
    return "NVIDIA" in ami or "GPU" in ami or any(EC2_GPU_TYPE.match(t) for t in types)


def is_gpu_agent_pool(props: Mapping[str, Any]) -> bool:
    return bool(
        AZURE_GPU_SIZE.match(str(props.get("vmSize") or ""))
        or props.get("gpuProfile")
        or props.get("gpuInstanceProfile")
    )


def karpenter_requirements(props: Mapping[str, Any]) -> dict[str, list[str]]:
    """A NodePool's requirements as key -> values (operator In only)."""
    found: dict[str, list[str]] = {}
    for requirement in seq(get(props, "spec", "template", "spec", "requirements")):
        if isinstance(requirement, Mapping) and requirement.get("operator") == "In":
            found[str(requirement.get("key"))] = [str(v) for v in seq(requirement.get("values"))]
    return found


def is_gpu_karpenter_pool(props: Mapping[str, Any]) -> bool:
    """A NodePool that launches GPU instances: GPU instance types, families or GPU counts."""
    requirements = karpenter_requirements(props)
    types = requirements.get("node.kubernetes.io/instance-type", [])
    families = requirements.get("karpenter.k8s.aws/instance-family", [])
    return (
        any(EC2_GPU_TYPE.match(t) for t in types)
        or any(EC2_GPU_TYPE.match(f + ".") for f in families)
        or "karpenter.k8s.aws/instance-gpu-count" in requirements
        or GPU_RESOURCE in (get(props, "spec", "limits") or {})
    )


def is_gpu_gke_pool(props: Mapping[str, Any]) -> bool:
    return bool(seq(get(props, "nodeConfig", "guestAccelerators")))


def gpu_pools(resource_type: str, props: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The GPU pools a resource declares, as (name, pool properties); [] for anything else."""
    if resource_type == GKE_NODE_POOL and is_gpu_gke_pool(props):
        return [(str(props.get("name") or "node pool"), props)]
    if resource_type == EKS_NODE_GROUP and is_gpu_node_group(props):
        name = props.get("nodeGroupName") or props.get("nodeGroupNamePrefix") or "node group"
        return [(str(name), props)]
    if resource_type == EKS_ASG and is_gpu_asg(props):
        return [(str(props.get("name") or props.get("namePrefix") or "group"), props)]
    if resource_type == KARPENTER_NODE_POOL and is_gpu_karpenter_pool(props):
        return [(str(get(props, "metadata", "name") or "NodePool"), props)]
    if resource_type == AKS_AGENT_POOL and is_gpu_agent_pool(props):
        return [(str(props.get("agentPoolName") or "agent pool"), props)]
    if resource_type == AKS_CLUSTER:
        return [
            (str(p.get("name") or "inline pool"), p)
            for p in seq(props.get("agentPoolProfiles"))
            if isinstance(p, Mapping) and is_gpu_agent_pool(p)
        ]
    return []


def pool_taints(resource_type: str, props: Mapping[str, Any]) -> list[tuple[str, str | None, str]]:
    """The taints a pool registers on its nodes (EKS ASGs: as the autoscaler's template sees them)."""
    taints: list[tuple[str, str | None, str]] = []
    if resource_type in (GKE_NODE_POOL, EKS_NODE_GROUP, KARPENTER_NODE_POOL):
        blocks = {
            GKE_NODE_POOL: lambda: get(props, "nodeConfig", "taints"),
            EKS_NODE_GROUP: lambda: props.get("taints"),
            KARPENTER_NODE_POOL: lambda: get(props, "spec", "template", "spec", "taints"),
        }[resource_type]()
        for t in seq(blocks):
            if isinstance(t, Mapping) and t.get("key"):
                value = t.get("value")
                taints.append(
                    (
                        str(t["key"]),
                        None if value is None else str(value),
                        normalize_effect(t.get("effect")),
                    )
                )
    elif resource_type in (AKS_AGENT_POOL, AKS_CLUSTER):
        for text in seq(props.get("nodeTaints")):
            parsed = parse_taint(str(text))
            if parsed:
                taints.append(parsed)
    elif resource_type == EKS_ASG:
        for key, value in asg_tags(props).items():
            if key.startswith(NODE_TEMPLATE_TAINT):
                # `<value>:<Effect>`; a bare effect is ignored by the autoscaler (no effect).
                value_part, colon, effect = value.rpartition(":")
                taints.append(
                    (key[len(NODE_TEMPLATE_TAINT) :], value_part, effect if colon else "")
                )
    return taints


def min_size(resource_type: str, props: Mapping[str, Any]) -> tuple[int | None, str]:
    """A pool's lower autoscaling bound and the property that sets it ((None, why) if none)."""
    if resource_type == GKE_NODE_POOL:
        auto = props.get("autoscaling")
        if not isinstance(auto, Mapping):
            return None, "no `autoscaling`: the pool has a fixed size"
        for key in ("totalMinNodeCount", "minNodeCount"):
            if auto.get(key) is not None:
                return as_int(auto[key]), f"autoscaling.{key}"
        return 0, "autoscaling (GKE's default minimum is 0)"
    if resource_type == EKS_NODE_GROUP:
        return as_int(get(props, "scalingConfig", "minSize")), "scalingConfig.minSize"
    if resource_type == EKS_ASG:
        return as_int(props.get("minSize")), "minSize"
    if resource_type == KARPENTER_NODE_POOL:
        replicas = get(props, "spec", "replicas")
        if replicas is not None:
            return as_int(replicas), "spec.replicas (a fixed-size NodePool)"
        return 0, "NodePool (Karpenter launches nodes for pending pods only)"
    # AKS agent pools (separate or inline profiles).
    if not props.get("enableAutoScaling"):
        return None, "enableAutoScaling is off: the pool has a fixed size"
    return as_int(props.get("minCount")), "minCount"
