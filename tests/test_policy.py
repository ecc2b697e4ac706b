"""The CrossGuard pack in policy/: each rule on resources built directly (passing and failing),
then the whole pack over the mocked graph of every shipped stack."""

from __future__ import annotations

import base64
import copy
import json
import runpy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)

from components.model.catalog.index import MACHINE_TYPES
from components.model.pools import GPU_TAINTS, SYSTEM_MACHINE_SHAPES
from components.tooling.stacks import PROJECT_DIR, STACKS_DIR, shipped_stacks
from policy import pack_config
from policy.gpufleet_policy import PACK_NAME, POLICIES
from policy.gpufleet_policy.offline import run_pack
from policy.gpufleet_policy.resources import AZURE_GPU_SIZE, EC2_GPU_TYPE, is_gpu_taint
from tests.conftest import over_every_stack, plan_of

BY_NAME: dict[str, Policy] = {p.name: p for p in POLICIES}
GPU_ACCELERATOR = [{"type": "nvidia-l4", "count": 1}]
GKE_TAINT = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]


def options(protect: bool = False) -> PolicyResourceOptions:
    return PolicyResourceOptions(protect, [], False, [], PolicyCustomTimeouts(0, 0, 0), [])


def check(
    policy: str,
    type_: str,
    props: Mapping[str, Any],
    *,
    protect: bool = False,
    config: Mapping[str, Any] | None = None,
) -> list[str]:
    """Messages the named policy reports for one resource."""
    args = ResourceValidationArgs(
        type_, props, f"urn:test::{type_}::r", "r", options(protect), None, config
    )
    found: list[str] = []
    BY_NAME[policy].validate(args, lambda message, urn=None: found.append(message))  # type: ignore[attr-defined]
    return found


def resource(
    type_: str, props: Mapping[str, Any], name: str, deps: list[PolicyResource] | None = None
) -> PolicyResource:
    return PolicyResource(
        type_, props, f"urn:test::{type_}::{name}", name, options(), None, None, deps or [], {}
    )


def check_stack(resources: list[PolicyResource]) -> list[str]:
    found: list[str] = []
    BY_NAME["eks-gpu-groups-autoscaled"].validate(  # type: ignore[attr-defined]
        StackValidationArgs(resources), lambda message, urn=None: found.append(message)
    )
    return found


# --- GPU pools scale to zero ---------------------------------------------------------------

GKE_POOL = "gcp:container/nodePool:NodePool"
AKS_POOL = "azure-native:containerservice:AgentPool"
AKS_CLUSTER = "azure-native:containerservice:ManagedCluster"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ASG = "aws:autoscaling/group:Group"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def gke(autoscaling: Any, gpu: bool = True, taints: Any = GKE_TAINT) -> dict[str, Any]:
    node_config: dict[str, Any] = {"machineType": "g2-standard-8", "taints": taints}
    if gpu:
        node_config["guestAccelerators"] = GPU_ACCELERATOR
    props: dict[str, Any] = {"name": "l4", "nodeConfig": node_config}
    if autoscaling is not None:
        props["autoscaling"] = autoscaling
    return props


def aks(**fields: Any) -> dict[str, Any]:
    return {
        "agentPoolName": "t4",
        "vmSize": "Standard_NC4as_T4_v3",
        "enableAutoScaling": True,
        "minCount": 0,
        "maxCount": 2,
        "nodeTaints": ["sku=gpu:NoSchedule"],
        **fields,
    }


def asg_tags(changes: Mapping[str, str | None] | None = None) -> list[dict[str, Any]]:
    """A GPU group's autoscaler tags; `changes` sets (or, with None, drops) tags by the key
    after `k8s.io/cluster-autoscaler/`."""
    tags = {
        "enabled": "true",
        "ml": "owned",
        "node-template/label/gpufleet.io/pool": "l4",
        "node-template/resources/nvidia.com/gpu": "1",
        "node-template/taint/nvidia.com/gpu": "true:NoSchedule",
    }
    for key, value in (changes or {}).items():
        if value is None:
            tags.pop(key)
        else:
            tags[key] = value
    return [
        {"key": f"k8s.io/cluster-autoscaler/{k}", "value": v, "propagateAtLaunch": False}
        for k, v in tags.items()
    ]


def asg(
    min_size: Any = 0, tags: Any = None, types: tuple[str, ...] = ("g6.xlarge",)
) -> dict[str, Any]:
    return {
        "name": "ml-l4-us-east-1a",
        "minSize": min_size,
        "maxSize": 2,
        "mixedInstancesPolicy": {
            "launchTemplate": {"overrides": [{"instanceType": t} for t in types]}
        },
        "tags": asg_tags() if tags is None else tags,
    }


@pytest.mark.parametrize(
    ("type_", "props", "problem"),
    [
        (GKE_POOL, gke({"totalMinNodeCount": 0, "totalMaxNodeCount": 4}), None),
        (GKE_POOL, gke({"minNodeCount": 0, "maxNodeCount": 2}), None),
        # The engine hands numbers over as floats.
        (GKE_POOL, gke({"totalMinNodeCount": 0.0, "totalMaxNodeCount": 4.0}), None),
        (GKE_POOL, gke({"totalMaxNodeCount": 4}), None),  # GKE's minimum defaults to 0
        (GKE_POOL, gke({"totalMinNodeCount": 1, "totalMaxNodeCount": 4}), "totalMinNodeCount is 1"),
        (GKE_POOL, gke({"minNodeCount": 2}), "minNodeCount is 2"),
        (GKE_POOL, gke(None), "fixed size"),
        (GKE_POOL, gke({"totalMinNodeCount": 1}, gpu=False), None),  # the system pool
        (AKS_POOL, aks(), None),
        (AKS_POOL, aks(minCount=1), "minCount is 1"),
        (AKS_POOL, aks(enableAutoScaling=False, count=1), "fixed size"),
        (AKS_POOL, aks(vmSize="Standard_D4s_v5", gpuProfile=None, minCount=1), None),
        (
            AKS_POOL,
            aks(vmSize="Standard_X", gpuInstanceProfile="MIG1g", minCount=1),
            "minCount is 1",
        ),
        (AKS_CLUSTER, {"agentPoolProfiles": [aks(mode="System", minCount=1)]}, "minCount is 1"),
        (AKS_CLUSTER, {"agentPoolProfiles": [aks(vmSize="Standard_D4s_v5", minCount=1)]}, None),
        (NODE_GROUP, {"amiType": "AL2023_x86_64_NVIDIA", "scalingConfig": {"minSize": 0}}, None),
        (
            NODE_GROUP,
            {"amiType": "AL2023_x86_64_NVIDIA", "scalingConfig": {"minSize": 1}},
            "minSize is 1",
        ),
        (
            NODE_GROUP,
            {"instanceTypes": ["p5.48xlarge"], "scalingConfig": {"minSize": 2}},
            "minSize is 2",
        ),
        (NODE_GROUP, {"instanceTypes": ["m6i.large"], "scalingConfig": {"minSize": 1}}, None),
        (ASG, asg(), None),
        (ASG, asg(min_size=1), "minSize is 1"),
        (ASG, asg(min_size=1, tags=[], types=("g4dn.xlarge",)), "minSize is 1"),
        (ASG, asg(min_size=1, tags=[], types=("m6i.large",)), None),
    ],
)
def test_gpu_pools_scale_to_zero(type_: str, props: dict[str, Any], problem: str | None) -> None:
    found = check("gpu-pools-scale-to-zero", type_, props)
    if problem is None:
        assert found == []
    else:
        assert len(found) == 1 and problem in found[0] and "cannot scale to zero" in found[0]


# --- GPU taint -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_", "props", "tainted"),
    [
        (GKE_POOL, gke({"totalMinNodeCount": 0}), True),
        (GKE_POOL, gke({}, taints=[]), False),
        (GKE_POOL, gke({}, taints=[{**GKE_TAINT[0], "effect": "PREFER_NO_SCHEDULE"}]), False),
        (
            GKE_POOL,
            gke({}, taints=[{"key": "workload", "value": "training", "effect": "NO_SCHEDULE"}]),
            False,
        ),
        (AKS_POOL, aks(), True),
        (
            AKS_POOL,
            aks(nodeTaints=["kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]),
            False,
        ),
        (AKS_POOL, aks(nodeTaints=["sku=cpu:NoSchedule"]), False),
        (AKS_POOL, aks(nodeTaints=None), False),
        (
            NODE_GROUP,
            {
                "amiType": "BOTTLEROCKET_x86_64_NVIDIA",
                "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
            },
            True,
        ),
        (NODE_GROUP, {"amiType": "BOTTLEROCKET_x86_64_NVIDIA", "taints": []}, False),
        (ASG, asg(), True),
        (ASG, asg(tags=asg_tags({"node-template/taint/nvidia.com/gpu": None})), False),
        (ASG, asg(tags=asg_tags({"node-template/taint/nvidia.com/gpu": "NoSchedule"})), False),
    ],
)
def test_gpu_pools_carry_the_gpu_taint(type_: str, props: dict[str, Any], tainted: bool) -> None:
    found = check("gpu-pools-tainted", type_, props)
    assert (found == []) == tainted, found


# --- EKS: the autoscaler's view of a GPU group at zero ---------------------------------------


@pytest.mark.parametrize(
    ("tags", "problem"),
    [
        (asg_tags(), None),
        (asg_tags({"enabled": None}), "k8s.io/cluster-autoscaler/enabled=true missing"),
        (asg_tags({"enabled": "false"}), "k8s.io/cluster-autoscaler/enabled=true missing"),
        (asg_tags({"ml": None}), "<cluster>=owned missing"),
        # An adopted cluster's group: gpufleet's own tag alone (review eks-3.md N18).
        (
            [
                *asg_tags({"enabled": None, "ml": None}),
                {"key": "gpufleet.io/autoscaler/ml", "value": "owned", "propagateAtLaunch": False},
            ],
            None,
        ),
        (asg_tags({"node-template/resources/nvidia.com/gpu": "0"}), "GPUs per node"),
        (asg_tags({"node-template/resources/nvidia.com/gpu": "a lot"}), "GPUs per node"),
        (
            asg_tags({"node-template/taint/nvidia.com/gpu": "NoSchedule"}),
            "must read `<value>:<Effect>`",
        ),
        (
            asg_tags({"node-template/taint/workload": "training:NoScheduled"}),
            "must read `<value>:<Effect>`",
        ),
    ],
)
def test_eks_gpu_groups_carry_autoscaler_template_tags(
    tags: list[dict[str, Any]], problem: str | None
) -> None:
    found = check("eks-gpu-groups-visible-at-zero", ASG, asg(tags=tags))
    if problem is None:
        assert found == []
    else:
        assert any(problem in m for m in found), found


def test_gpu_resources_tag_missing_is_reported_for_groups_known_by_instance_type() -> None:
    found = check(
        "eks-gpu-groups-visible-at-zero",
        ASG,
        asg(tags=asg_tags({"node-template/resources/nvidia.com/gpu": None})),
    )
    assert any("GPUs per node" in m for m in found)
    assert check("eks-gpu-groups-visible-at-zero", ASG, asg(tags=[], types=("m6i.large",))) == []


def nodeadm(taints: str | None) -> str:
    flags = ["--node-labels=gpufleet.io/pool=l4"] + (
        [f"--register-with-taints={taints}"] if taints else []
    )
    text = (
        'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\n'
        "Content-Type: application/node.eks.aws\n\n---\napiVersion: node.eks.aws/v1alpha1\n"
        "kind: NodeConfig\nspec:\n  kubelet:\n    flags:\n"
        + "".join(f"    - {f}\n" for f in flags)
        + "\n--B--\n"
    )
    return base64.b64encode(text.encode()).decode()


BOTTLEROCKET = base64.b64encode(
    b'[settings.kubernetes]\ncluster-name = "ml"\n\n[settings.kubernetes.node-taints]\n"nvidia.com/gpu" = ["true:NoSchedule"]\n'
).decode()
AUTOSCALER = resource(
    "kubernetes:helm.sh/v3:Release", {"chart": "cluster-autoscaler", "version": "9.59.0"}, "ca"
)


def eks_stack(
    asg_props: dict[str, Any],
    user_data: str | None,
    lt_type: str | None = None,
    with_ca: bool = True,
) -> list[PolicyResource]:
    lt_props: dict[str, Any] = {"userData": user_data}
    if lt_type:
        lt_props["instanceType"] = lt_type
    template = resource(LAUNCH_TEMPLATE, lt_props, "lt")
    return [
        template,
        resource(ASG, asg_props, "group", [template]),
        *([AUTOSCALER] if with_ca else []),
    ]


def test_eks_stack_passes_when_nodes_register_what_the_tags_announce() -> None:
    assert check_stack(eks_stack(asg(), nodeadm("nvidia.com/gpu=true:NoSchedule"))) == []
    assert check_stack(eks_stack(asg(), BOTTLEROCKET)) == []
    # A CPU group needs nothing of this.
    cpu = asg(min_size=1, tags=[], types=("m6i.large",))
    assert check_stack(eks_stack(cpu, None, with_ca=False)) == []


@pytest.mark.parametrize(
    ("stack", "problem"),
    [
        (eks_stack(asg(), nodeadm(None)), "registers no taints"),
        (eks_stack(asg(), nodeadm("workload=training:NoSchedule")), "register no GPU taint"),
        (
            eks_stack(
                asg(), nodeadm("nvidia.com/gpu=true:NoSchedule,workload=training:NoSchedule")
            ),
            "workload=training:NoSchedule that its",
        ),
        (
            eks_stack(
                asg(tags=[], types=()),
                nodeadm("nvidia.com/gpu=true:NoSchedule"),
                lt_type="p4d.24xlarge",
            ),
            "launches GPU instances but has no",
        ),
        (
            eks_stack(asg(), nodeadm("nvidia.com/gpu=true:NoSchedule"), with_ca=False),
            "no cluster-autoscaler",
        ),
    ],
)
def test_eks_stack_problems(stack: list[PolicyResource], problem: str) -> None:
    found = check_stack(stack)
    assert any(problem in m for m in found), found


# --- Launch templates ----------------------------------------------------------------------


def template(**fields: Any) -> dict[str, Any]:
    return {
        "metadataOptions": {"httpTokens": "required", "httpPutResponseHopLimit": 1},
        "blockDeviceMappings": [
            {"deviceName": "/dev/xvda", "ebs": {"encrypted": "true", "volumeSize": 100}}
        ],
        **fields,
    }


@pytest.mark.parametrize(
    ("props", "problem"),
    [
        (template(), None),
        (template(metadataOptions={"httpTokens": "optional"}), "httpTokens is 'optional'"),
        (template(metadataOptions=None), "httpTokens is None"),
        (
            template(
                blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"encrypted": "false"}}]
            ),
            "ebs.encrypted is 'false'",
        ),
        (
            template(blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"volumeSize": 100}}]),
            "ebs.encrypted is None",
        ),
        (template(blockDeviceMappings=[]), "no blockDeviceMappings"),
        (
            template(
                blockDeviceMappings=[
                    {"deviceName": "/dev/xvda", "ebs": {"encrypted": "true"}},
                    {"deviceName": "/dev/sdb", "ebs": {"encrypted": "false"}},
                ]
            ),
            "/dev/sdb",
        ),
    ],
)
def test_launch_templates_require_imdsv2_and_encrypted_disks(
    props: dict[str, Any], problem: str | None
) -> None:
    found = check("launch-templates-imdsv2-encrypted", LAUNCH_TEMPLATE, props)
    if problem is None:
        assert found == []
    else:
        assert any(problem in m for m in found), found


# --- Autoscaler IAM ------------------------------------------------------------------------

READ = {
    "Sid": "Read",
    "Effect": "Allow",
    "Action": [
        "autoscaling:DescribeAutoScalingGroups",
        "ec2:DescribeInstanceTypes",
        "eks:DescribeNodegroup",
    ],
    "Resource": "*",
}
SCALE = {
    "Sid": "Scale",
    "Effect": "Allow",
    "Action": ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
    "Resource": "*",
    "Condition": {
        "StringEquals": {
            "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true",
            "aws:ResourceTag/k8s.io/cluster-autoscaler/ml": "owned",
        }
    },
}


def doc(*statements: Mapping[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


@pytest.mark.parametrize(
    ("type_", "props", "problem"),
    [
        ("aws:iam/rolePolicy:RolePolicy", {"policy": doc(READ, SCALE)}, None),
        ("aws:iam/policy:Policy", {"policy": doc(READ, SCALE)}, None),
        (
            "aws:iam/rolePolicy:RolePolicy",
            {
                "policy": doc(
                    {
                        **SCALE,
                        "Condition": {
                            "StringEquals": {
                                "autoscaling:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true",
                                "autoscaling:ResourceTag/k8s.io/cluster-autoscaler/ml": "owned",
                            }
                        },
                    }
                )
            },
            None,
        ),
        (
            "aws:iam/rolePolicy:RolePolicy",
            {
                "policy": doc(
                    {
                        **SCALE,
                        "Condition": None,
                        "Resource": [
                            "arn:aws:autoscaling:us-east-1:1:autoScalingGroup:x:autoScalingGroupName/ml-l4"
                        ],
                    }
                )
            },
            None,
        ),
        (
            "aws:iam/rolePolicy:RolePolicy",
            {
                "policy": doc(
                    {
                        **SCALE,
                        "Condition": {
                            "StringEquals": {"aws:ResourceTag/gpufleet.io/autoscaler/ml": "owned"}
                        },
                    }
                )
            },
            None,
        ),
        (
            "aws:iam/rolePolicy:RolePolicy",
            {"policy": doc({**READ, "Action": "*"})},
            "wildcard action '*'",
        ),
        (
            "aws:iam/rolePolicy:RolePolicy",
            {"policy": doc({**READ, "Action": ["ec2:*"]})},
            "wildcard action 'ec2:*'",
        ),
        (
            "aws:iam/rolePolicy:RolePolicy",
            {"policy": doc({**SCALE, "Condition": None})},
            "on any group",
        ),
        (
            "aws:iam/rolePolicy:RolePolicy",
            {
                "policy": doc(
                    {
                        **SCALE,
                        "Condition": {
                            "StringEquals": {
                                "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true"
                            }
                        },
                    }
                )
            },
            "on any group",
        ),
        (
            "aws:iam/rolePolicy:RolePolicy",
            {"policy": doc({**SCALE, "Action": "autoscaling:Set*", "Condition": None})},
            "on any group",
        ),
        (
            "aws:iam/rolePolicy:RolePolicy",
            {"policy": doc({"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"})},
            "NotAction",
        ),
        ("aws:iam/rolePolicy:RolePolicy", {"policy": "{not json"}, "not valid JSON"),
        (
            "aws:iam/role:Role",
            {"inlinePolicies": [{"name": "x", "policy": doc({**READ, "Action": "*"})}]},
            "inlinePolicies[0]",
        ),
        (
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            {"policyArn": "arn:aws:iam::aws:policy/AdministratorAccess", "role": "r"},
            "AdministratorAccess",
        ),
        (
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            {"policyArn": "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"},
            None,
        ),
        # A Deny statement restricts; wildcards there are fine.
        (
            "aws:iam/rolePolicy:RolePolicy",
            {"policy": doc(READ, {"Effect": "Deny", "Action": "*", "Resource": "*"})},
            None,
        ),
    ],
)
def test_autoscaler_iam_least_privilege(
    type_: str, props: dict[str, Any], problem: str | None
) -> None:
    found = check("autoscaler-iam-least-privilege", type_, props)
    if problem is None:
        assert found == []
    else:
        assert any(problem in m for m in found), found


# --- Chart pins ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "pinned"),
    [
        ("0.20.0", True),
        ("v26.7.0", True),
        ("9.59.0", True),
        ("1.2.3-rc.1", True),
        (None, False),
        ("", False),
        ("latest", False),
        ("^1.2.0", False),
        ("~1.2", False),
        (">=1.0.0", False),
        ("1.x", False),
        ("1.2", False),
        ("1.2.*", False),
    ],
)
def test_helm_charts_pin_one_exact_version(version: str | None, pinned: bool) -> None:
    props = {
        "chart": "nvidia-device-plugin",
        **({"version": version} if version is not None else {}),
    }
    for type_ in ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart"):
        assert (check("helm-charts-pinned", type_, props) == []) == pinned


# --- Protected clusters in production ------------------------------------------------------


@pytest.mark.parametrize(
    "type_",
    [
        "gcp:container/cluster:Cluster",
        "aws:eks/cluster:Cluster",
        "azure-native:containerservice:ManagedCluster",
    ],
)
def test_production_clusters_must_be_protected(type_: str) -> None:
    rule = "clusters-protected-in-production"
    assert check(rule, type_, {}, protect=False, config={"production": True})
    assert check(rule, type_, {}, protect=True, config={"production": True}) == []
    assert check(rule, type_, {}, protect=False, config={"production": False}) == []
    assert check(rule, type_, {}, protect=False) == []  # no pack config: not production
    assert check(rule, GKE_POOL, {}, protect=False, config={"production": True}) == []


def test_pack_config_marks_production_from_the_stack_file(tmp_path: Path) -> None:
    def marker(name: str, protect: bool | None) -> bool:
        cluster = {"name": "c"} | ({"protect": protect} if protect is not None else {})
        path = tmp_path / f"Pulumi.{name}.yaml"
        path.write_text(yaml.safe_dump({"config": {"gpufleet:cluster": cluster}}))
        config = pack_config.pack_config(path)
        return bool(config["clusters-protected-in-production"]["production"])

    assert marker("gcp-dev", None) is False
    assert marker("gcp-dev", True) is True
    assert marker("ml-prod", None) is True  # named prod: production even if the file forgot protect
    assert marker("production-eu", False) is True
    assert marker("product-demo", None) is False


# --- The whole pack over every shipped stack -----------------------------------------------


def stack_config(stack: str) -> dict[str, Any]:
    return pack_config.pack_config(STACKS_DIR / f"Pulumi.{stack}.yaml")


@over_every_stack
def test_every_stack_passes_the_whole_pack(stack: str) -> None:
    violations = run_pack(plan_of(stack).to_json(), stack_config(stack))
    assert [str(v) for v in violations] == []


def test_production_stacks_are_checked_as_production() -> None:
    production = {
        s
        for s in shipped_stacks()
        if stack_config(s)["clusters-protected-in-production"]["production"]
    }
    clouds = {plan_of(s).outputs["cloud"] for s in production}
    assert clouds >= {"gcp", "azure"}, production
    for stack in production:
        document = plan_of(stack).to_json()
        clusters = [r for r in document["resources"] if r["type"] in BY_NAME_CLUSTERS]
        assert clusters, stack
        for cluster in clusters:
            cluster["options"]["protect"] = False
        found = run_pack(document, stack_config(stack))
        assert {v.policy for v in found} == {"clusters-protected-in-production"}, found


BY_NAME_CLUSTERS = (
    "gcp:container/cluster:Cluster",
    "aws:eks/cluster:Cluster",
    "azure-native:containerservice:ManagedCluster",
)


def mutate(stack: str, type_: str, change: Any, pick: Any = lambda inputs: True) -> list[str]:
    """Policies violated after `change(inputs)` on the first resource of `type_` that `pick`s."""
    document = copy.deepcopy(plan_of(stack).to_json())
    targets = [r for r in document["resources"] if r["type"] == type_ and pick(r["inputs"])]
    assert targets, f"{stack} has no such {type_}"
    change(targets[0]["inputs"])
    return sorted({v.policy for v in run_pack(document, stack_config(stack))})


def test_the_pack_catches_unsafe_changes_in_real_graphs() -> None:
    def no_scale_to_zero_gke(i: dict[str, Any]) -> None:
        i["autoscaling"]["totalMinNodeCount"] = 1

    def untaint_aks(i: dict[str, Any]) -> None:
        i["nodeTaints"] = [t for t in i["nodeTaints"] if not t.startswith("sku=")]

    def drop_gpu_tag(i: dict[str, Any]) -> None:
        i["tags"] = [t for t in i["tags"] if not t["key"].endswith("resources/nvidia.com/gpu")]

    def imdsv1(i: dict[str, Any]) -> None:
        i["metadataOptions"]["httpTokens"] = "optional"

    def unpin(i: dict[str, Any]) -> None:
        i["version"] = "latest"

    def gke_gpu(i: dict[str, Any]) -> bool:
        return bool(i["nodeConfig"].get("guestAccelerators"))

    assert mutate("gcp-dev", GKE_POOL, no_scale_to_zero_gke, gke_gpu) == ["gpu-pools-scale-to-zero"]
    assert mutate("azure-dev", AKS_POOL, untaint_aks) == ["gpu-pools-tainted"]
    assert mutate("aws-dev", ASG, drop_gpu_tag) == [
        "eks-gpu-groups-autoscaled",
        "eks-gpu-groups-visible-at-zero",
    ]
    assert mutate("aws-dev", LAUNCH_TEMPLATE, imdsv1) == ["launch-templates-imdsv2-encrypted"]
    assert mutate("existing-dev", "kubernetes:helm.sh/v3:Release", unpin) == ["helm-charts-pinned"]


def test_the_pack_understands_karpenter_pools() -> None:
    stack, node_pool = "aws-karpenter", "kubernetes:karpenter.sh/v1:NodePool"

    def fixed_size(i: dict[str, Any]) -> None:
        i["spec"]["replicas"] = 1

    def untainted(i: dict[str, Any]) -> None:
        i["spec"]["template"]["spec"]["taints"] = []

    def unlimited(i: dict[str, Any]) -> None:
        del i["spec"]["limits"]["nvidia.com/gpu"]

    def no_queue(i: dict[str, Any]) -> None:
        i["values"]["settings"]["interruptionQueue"] = ""

    def no_spot_rule(i: dict[str, Any]) -> None:
        i["eventPattern"] = json.dumps({"source": ["aws.ec2"], "detail-type": ["Other"]})

    def karpenter_release(i: dict[str, Any]) -> bool:
        return str(i["chart"]).endswith("/karpenter")

    def spot_rule(i: dict[str, Any]) -> bool:
        return "Spot Instance Interruption" in str(i["eventPattern"])

    assert mutate(stack, node_pool, fixed_size) == ["gpu-pools-scale-to-zero"]
    assert mutate(stack, node_pool, untainted) == ["gpu-pools-tainted"]
    assert mutate(stack, node_pool, unlimited) == ["karpenter-gpu-pools-limited"]
    release = "kubernetes:helm.sh/v3:Release"
    assert mutate(stack, release, no_queue, karpenter_release) == [
        "karpenter-handles-interruptions"
    ]
    rule = "aws:cloudwatch/eventRule:EventRule"
    assert mutate(stack, rule, no_spot_rule, spot_rule) == ["karpenter-handles-interruptions"]


# --- The pack itself -----------------------------------------------------------------------


def test_constants_agree_with_gpufleets_catalog() -> None:
    for cloud, _, machine in MACHINE_TYPES:
        if cloud == "aws":
            assert EC2_GPU_TYPE.match(machine), machine
        if cloud == "azure":
            assert AZURE_GPU_SIZE.match(machine), machine
    for machine in SYSTEM_MACHINE_SHAPES:
        assert not EC2_GPU_TYPE.match(machine) and not AZURE_GPU_SIZE.match(machine), machine
    for key, value in GPU_TAINTS.values():
        assert is_gpu_taint(key, value, "NoSchedule")


def test_main_serves_every_policy_as_mandatory(monkeypatch: pytest.MonkeyPatch) -> None:
    served: dict[str, Any] = {}

    def fake_pack(**kwargs: Any) -> None:  # the real one starts a gRPC server and never returns
        served.update(kwargs)

    monkeypatch.setattr("pulumi_policy.PolicyPack", fake_pack)
    monkeypatch.syspath_prepend(str(PROJECT_DIR / "policy"))
    runpy.run_path(str(PROJECT_DIR / "policy"), run_name="__main__")
    assert served["name"] == PACK_NAME
    assert served["enforcement_level"] == EnforcementLevel.MANDATORY
    assert [p.name for p in served["policies"]] == [p.name for p in POLICIES]
    assert len(POLICIES) == len({p.name for p in POLICIES}) == 20
    assert all(p.enforcement_level == EnforcementLevel.MANDATORY for p in POLICIES)


def test_pack_project_files_pin_what_the_tests_ran() -> None:
    manifest = yaml.safe_load((PROJECT_DIR / "policy" / "PulumiPolicy.yaml").read_text())
    assert manifest["runtime"]["name"] == "python"
    assert manifest["runtime"]["options"]["virtualenv"] == "venv"
    pins = {
        line.split("==")[0]: line.split("==")[1]
        for path in ("requirements.txt", "requirements-dev.txt")
        for line in (PROJECT_DIR / path).read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    pack = dict(
        line.split("==")
        for line in (PROJECT_DIR / "policy" / "requirements.txt").read_text().splitlines()
        if "==" in line
    )
    assert pack == {"pulumi-policy": pins["pulumi-policy"], "pulumi": pins["pulumi"]}


def test_the_real_analyzer_reports_what_the_offline_runner_reports() -> None:
    """pulumi_policy's own analyzer service (what `pulumi preview --policy-pack` talks to over
    gRPC), fed the graph as protobuf: numbers arrive as floats, config through Configure."""
    from google.protobuf import struct_pb2
    from pulumi.runtime.proto import analyzer_pb2 as proto
    from pulumi_policy.policy import _PolicyAnalyzerServicer

    def struct(value: Mapping[str, Any]) -> struct_pb2.Struct:
        message = struct_pb2.Struct()
        message.update(value)
        return message

    document = copy.deepcopy(plan_of("aws-training").to_json())
    for r in document["resources"]:
        if r["type"] == ASG:
            r["inputs"]["tags"] = [
                t for t in r["inputs"]["tags"] if "resources/nvidia.com/gpu" not in t["key"]
            ]
        if r["type"] == LAUNCH_TEMPLATE:
            r["inputs"]["metadataOptions"]["httpTokens"] = "optional"
        if r["type"] in BY_NAME_CLUSTERS:
            r["options"]["protect"] = False
    config = stack_config("aws-training")
    assert config["clusters-protected-in-production"]["production"] is True

    servicer = _PolicyAnalyzerServicer(PACK_NAME, "0.1.0", POLICIES, EnforcementLevel.MANDATORY)
    info = servicer.GetAnalyzerInfo(None, None)
    assert sorted(p.name for p in info.policies) == sorted(BY_NAME)
    servicer.Configure(
        proto.ConfigureAnalyzerRequest(
            policyConfig={
                name: proto.PolicyConfig(properties=struct(value)) for name, value in config.items()
            }
        ),
        None,
    )
    reported: set[tuple[str, str]] = set()
    stack_resources = []
    for r in document["resources"]:
        opts = proto.AnalyzerResourceOptions(
            protect=r["options"]["protect"], parent=r["parent"] or ""
        )
        response = servicer.Analyze(
            proto.AnalyzeRequest(
                type=r["type"],
                properties=struct(r["inputs"]),
                urn=r["urn"],
                name=r["name"],
                options=opts,
            ),
            None,
        )
        reported |= {(d.policyName, d.message.split("\n", 1)[1]) for d in response.diagnostics}
        stack_resources.append(
            proto.AnalyzerResource(
                type=r["type"],
                properties=struct(r["inputs"]),
                urn=r["urn"],
                name=r["name"],
                options=opts,
                parent=r["parent"] or "",
                dependencies=r["dependencies"],
            )
        )
    response = servicer.AnalyzeStack(proto.AnalyzeStackRequest(resources=stack_resources), None)
    reported |= {(d.policyName, d.message.split("\n", 1)[1]) for d in response.diagnostics}

    offline = {(v.policy, v.message) for v in run_pack(document, config)}
    assert reported == offline
    assert {policy for policy, _ in reported} == {
        "eks-gpu-groups-visible-at-zero",
        "eks-gpu-groups-autoscaled",
        "launch-templates-imdsv2-encrypted",
        "clusters-protected-in-production",
    }
