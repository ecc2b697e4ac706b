"""The EKS stacks' whole graph under mocks: GPU groups the autoscaler can scale to and from zero,
and nothing the autoscaler, a pod or `pulumi up` can do beyond that.

Expected autoscaler tags are derived from the user data the nodes really boot with (parsed back
from the recorded launch templates), never from a second copy of the label list.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from components.aws import iam
from components.aws.autoscaler import autoscaler_values
from components.aws.cluster import eks_kubeconfig
from components.aws.mock import (
    ACCOUNT,
    AUTONAME_SUFFIX,
    CLUSTER_SECURITY_GROUP,
    fake_ami,
)
from components.aws.model.amis import RELEASES, ami_parameter
from components.aws.user_data import parse_registration
from components.model.catalog import charts
from components.model.catalog import index as gpus
from components.model.config import GpuPoolConfig, StackConfig, parse_config
from components.model.pools import Taint, resolve_pools
from components.tooling.engine import Plan, RecordedResource
from components.tooling.stacks import load_stack
from tests.conftest import chart_defaults, plan_of

AWS_STACKS = ["aws-dev", "aws-training"]
ASG = "aws:autoscaling/group:Group"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
CLUSTER = "aws:eks/cluster:Cluster"
SUBNET = "aws:ec2/subnet:Subnet"
RELEASE = "kubernetes:helm.sh/v3:Release"
TEMPLATE = "k8s.io/cluster-autoscaler/node-template/"
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# kubernetes/autoscaler cloudprovider/aws/README.md, "Full Cluster Autoscaler Features Policy".
CA_READ = {
    "autoscaling:DescribeAutoScalingGroups",
    "autoscaling:DescribeAutoScalingInstances",
    "autoscaling:DescribeLaunchConfigurations",
    "autoscaling:DescribeScalingActivities",
    "ec2:DescribeImages",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeLaunchTemplateVersions",
    "ec2:GetInstanceTypesFromInstanceRequirements",
    "eks:DescribeNodegroup",
}
CA_WRITE = {"autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"}


def config_of(stack: str) -> StackConfig:
    return parse_config(load_stack(stack).gpufleet)


def self_managed(config: StackConfig) -> list[GpuPoolConfig]:
    return [p for p in config.gpu_pools if p.aws.node_group == "self-managed"]


def tags_of(asg: RecordedResource) -> dict[str, str]:
    return {t["key"]: t["value"] for t in asg.inputs["tags"]}


def groups_of(plan: Plan, pool: str) -> list[RecordedResource]:
    return [g for g in plan.of_type(ASG) if tags_of(g).get("gpufleet-pool") == pool]


def template_of(plan: Plan, asg: RecordedResource) -> RecordedResource:
    """The launch template the group launches from (the one beside it in its pool component)."""
    (template,) = [t for t in plan.of_type(LAUNCH_TEMPLATE) if t.parent == asg.parent]
    return template


def zone_of(plan: Plan, asg: RecordedResource) -> str:
    (subnet_id,) = asg.inputs["vpcZoneIdentifiers"]
    return subnets_by_id(plan)[subnet_id].inputs["availabilityZone"]


def subnets_by_id(plan: Plan) -> dict[str, RecordedResource]:
    # The mock gives each subnet the id "subnet-<resource name>".
    return {f"subnet-{s.name}": s for s in plan.of_type(SUBNET)}


def node_template(tags: Mapping[str, str], kind: str) -> dict[str, str]:
    prefix = f"{TEMPLATE}{kind}/"
    return {k.removeprefix(prefix): v for k, v in tags.items() if k.startswith(prefix)}


def only(plan: Plan, type_: str, name_suffix: str) -> RecordedResource:
    (resource,) = [r for r in plan.of_type(type_) if r.name.endswith(name_suffix)]
    return resource


def autoscaler_release(plan: Plan) -> RecordedResource:
    (release,) = [r for r in plan.of_type(RELEASE) if r.inputs["chart"] == "cluster-autoscaler"]
    return release


# A pool variant: an extra label and an empty-valued NoExecute taint (tag value ":NoExecute").
L4_VARIANT = {
    "name": "l4",
    "accelerator": "l4",
    "machineTypes": ["g6.2xlarge"],
    "maxNodes": 5,
    "zones": ["us-east-1a", "us-east-1b"],
    "labels": {"team": "vision"},
    "taints": [{"key": "dedicated", "effect": "NoExecute"}],
}


def variant_plan() -> Plan:
    raw = load_stack("aws-dev").config["gpufleet:gpuPools"]
    return plan_of("aws-dev", {"gpufleet:gpuPools": [raw[0], L4_VARIANT]})


# --- self-managed groups: one per zone, from zero, on spot ---------------------------------


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_one_group_per_zone_in_that_zones_private_subnet(stack: str) -> None:
    plan, config = plan_of(stack), config_of(stack)
    subnets = subnets_by_id(plan)
    for pool in self_managed(config):
        groups = groups_of(plan, pool.name)
        zones = [zone_of(plan, g) for g in groups]
        assert sorted(zones) == sorted(pool.zones or []), pool.name
        for group in groups:
            (subnet_id,) = group.inputs["vpcZoneIdentifiers"]
            subnet = subnets[subnet_id].inputs
            assert subnet["mapPublicIpOnLaunch"] is False
            assert subnet["tags"].get("kubernetes.io/role/internal-elb") == "1"
        # All zones launch from the pool's one launch template.
        assert len({template_of(plan, g).urn for g in groups}) == 1


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_groups_start_empty_and_pulumi_never_undoes_the_autoscaler(stack: str) -> None:
    plan, config = plan_of(stack), config_of(stack)
    for pool in self_managed(config):
        groups = groups_of(plan, pool.name)
        assert sum(g.inputs["minSize"] for g in groups) == pool.min_nodes == 0
        # The zones share the pool's maxNodes: together they never exceed it.
        assert sum(g.inputs["maxSize"] for g in groups) == pool.max_nodes
        for group in groups:
            assert group.inputs["maxSize"] >= 1
            assert group.inputs["desiredCapacity"] == group.inputs["minSize"]
            assert "desiredCapacity" in group.ignore_changes
            assert group.inputs["waitForCapacityTimeout"] == "0"
            assert "launchConfiguration" not in group.inputs


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_spot_through_mixed_instances_with_every_configured_type(stack: str) -> None:
    plan, config = plan_of(stack), config_of(stack)
    for pool in self_managed(config):
        for group in groups_of(plan, pool.name):
            policy = group.inputs["mixedInstancesPolicy"]
            overrides = policy["launchTemplate"]["overrides"]
            assert [o["instanceType"] for o in overrides] == pool.machine_types
            distribution = policy["instancesDistribution"]
            assert distribution["onDemandBaseCapacity"] == 0
            if pool.spot:
                assert distribution["onDemandPercentageAboveBaseCapacity"] == 0
                assert distribution["spotAllocationStrategy"] == "price-capacity-optimized"
                assert group.inputs["capacityRebalance"] is True
            else:
                assert distribution["onDemandPercentageAboveBaseCapacity"] == 100
                assert group.inputs["capacityRebalance"] is False
    # The dev stack really has several Spot types per group.
    if stack == "aws-dev":
        spot = [p for p in config.gpu_pools if p.spot]
        assert spot and len(spot[0].machine_types or []) >= 2


# --- what the autoscaler sees at zero == what the nodes register ---------------------------


@pytest.mark.parametrize("stack", [*AWS_STACKS, "variant"])
def test_node_template_tags_are_exactly_what_the_user_data_registers(stack: str) -> None:
    plan = variant_plan() if stack == "variant" else plan_of(stack)
    cluster = only(plan, CLUSTER, "-cluster").inputs["name"]
    groups = [g for g in plan.of_type(ASG) if "gpufleet-pool" in tags_of(g)]
    assert groups
    for group in groups:
        tags = tags_of(group)
        registration = parse_registration(template_of(plan, group).inputs["userData"])
        assert registration.cluster_name == cluster
        assert tags["k8s.io/cluster-autoscaler/enabled"] == "true"
        assert tags[f"k8s.io/cluster-autoscaler/{cluster}"] == "owned"
        assert node_template(tags, "label") == registration.labels
        assert node_template(tags, "taint") == {
            t.key: f"{t.value}:{t.effect}" for t in registration.taints
        }
        # GPU nodes: the GPU label, the accelerator label CA waits on, the pool label, the taint.
        assert registration.labels["nvidia.com/gpu"] == "true"
        assert registration.labels["k8s.amazonaws.com/accelerator"].startswith("nvidia-")
        assert registration.labels["gpufleet.io/pool"] == tags["gpufleet-pool"]
        assert Taint("nvidia.com/gpu", "true", "NoSchedule") in registration.taints


@pytest.mark.parametrize("stack", [*AWS_STACKS, "variant"])
def test_gpu_count_and_storage_tags_match_every_instance_type(stack: str) -> None:
    plan = variant_plan() if stack == "variant" else plan_of(stack)
    for group in (g for g in plan.of_type(ASG) if "gpufleet-pool" in tags_of(g)):
        resources = node_template(tags_of(group), "resources")
        overrides = group.inputs["mixedInstancesPolicy"]["launchTemplate"]["overrides"]
        counts = {
            m.gpus
            for m in gpus.MACHINE_TYPES.values()
            if m.cloud == "aws" and m.name in {o["instanceType"] for o in overrides}
        }
        assert counts == {int(resources["nvidia.com/gpu"])}
        images_disk = max(
            d["ebs"].get("volumeSize", 0)
            for d in template_of(plan, group).inputs["blockDeviceMappings"]
        )
        # What the kubelet leaves pods of the disk (nodeadm: 10% nodefs eviction, 1Gi
        # kube-reserved), not the whole disk (review eks.md S2-10).
        expected_mib = (round(images_disk * 2**30 * 0.9) - 2**30) // 2**20
        assert resources["ephemeral-storage"] == f"{expected_mib}Mi"


def test_taint_tags_are_value_colon_effect_even_for_empty_values() -> None:
    plan = variant_plan()
    (group, *_) = groups_of(plan, "l4")
    taints = node_template(tags_of(group), "taint")
    assert taints == {"nvidia.com/gpu": "true:NoSchedule", "dedicated": ":NoExecute"}
    for value in taints.values():
        assert re.fullmatch(r"[^:]*:(NoSchedule|PreferNoSchedule|NoExecute)", value)
    assert node_template(tags_of(group), "label")["team"] == "vision"


# --- the autoscaler may only touch this cluster's groups ----------------------------------


def test_autoscaler_policy_is_exactly_the_documented_permissions() -> None:
    document = iam.autoscaler_policy_document("c1")
    actions = [a for s in document["Statement"] for a in s["Action"]]
    assert sorted(actions) == sorted(CA_READ | CA_WRITE)
    for statement in document["Statement"]:
        assert statement["Effect"] == "Allow"
        if set(statement["Action"]) & CA_WRITE:
            assert set(statement["Action"]) == CA_WRITE
            assert statement["Condition"] == {
                "StringEquals": {
                    "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true",
                    "aws:ResourceTag/k8s.io/cluster-autoscaler/c1": "owned",
                }
            }


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_autoscaler_can_resize_only_groups_tagged_for_this_cluster(stack: str) -> None:
    plan = plan_of(stack)
    cluster = only(plan, CLUSTER, "-cluster").inputs["name"]
    (component,) = plan.of_type("gpufleet:aws:ClusterAutoscaler")
    children = plan.children(component.urn)
    # No managed policy attached: the inline policy is all the autoscaler may do.
    assert not [
        c for c in children if c.type == "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
    ]
    (policy,) = [c for c in children if c.type == "aws:iam/rolePolicy:RolePolicy"]
    document = json.loads(policy.inputs["policy"])
    required = {
        "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true",
        f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster}": "owned",
    }
    for statement in document["Statement"]:
        mutating = set(statement["Action"]) - CA_READ
        if mutating:
            assert mutating <= CA_WRITE
            assert statement["Condition"]["StringEquals"] == required
    # ...and every GPU group carries exactly those tags, so it can be scaled.
    for group in (g for g in plan.of_type(ASG) if "gpufleet-pool" in tags_of(g)):
        tags = tags_of(group)
        assert {k.removeprefix("aws:ResourceTag/"): v for k, v in required.items()}.items() <= (
            tags.items()
        )


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_autoscaler_service_account_is_the_irsa_trust_subject(stack: str) -> None:
    plan = plan_of(stack)
    release = autoscaler_release(plan)
    account = release.inputs["values"]["rbac"]["serviceAccount"]
    assert account["create"] is True
    (component,) = plan.of_type("gpufleet:aws:ClusterAutoscaler")
    (role,) = [c for c in plan.children(component.urn) if c.type == "aws:iam/role:Role"]
    (statement,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    oidc = only(plan, "aws:iam/openIdConnectProvider:OpenIdConnectProvider", "-oidc")
    issuer_host = oidc.inputs["url"].removeprefix("https://")
    assert statement["Principal"]["Federated"].endswith(f":oidc-provider/{issuer_host}")
    assert statement["Condition"]["StringEquals"] == {
        f"{issuer_host}:sub": f"system:serviceaccount:{release.inputs['namespace']}:{account['name']}",
        f"{issuer_host}:aud": "sts.amazonaws.com",
    }
    assert oidc.inputs["clientIdLists"] == ["sts.amazonaws.com"]
    # The annotation names this role (the mock ARN ends in the role's generated name).
    role_arn = account["annotations"]["eks.amazonaws.com/role-arn"]
    assert role_arn.split(":role/")[1].startswith(role.name)


# --- the autoscaler's Helm release ---------------------------------------------------------


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_autoscaler_release_is_pinned_and_configured_for_this_cluster(stack: str) -> None:
    plan, config = plan_of(stack), config_of(stack)
    release = autoscaler_release(plan)
    assert release.inputs["version"] == "9.59.0"
    assert release.inputs["repositoryOpts"]["repo"] == "https://kubernetes.github.io/autoscaler"
    assert release.inputs["namespace"] == "kube-system"
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    assert release.provider and release.provider.startswith(provider.urn)
    values = release.inputs["values"]
    assert values["cloudProvider"] == "aws"
    assert values["awsRegion"] == config.cluster.region
    assert values["autoDiscovery"]["clusterName"] == config.cluster.name
    minor = config.cluster.kubernetes_version
    assert values["image"]["tag"] == charts.CLUSTER_AUTOSCALER_IMAGE_TAGS[minor]
    assert values["image"]["tag"].startswith(f"v{minor}.")
    args = values["extraArgs"]
    assert args["balance-similar-node-groups"] is True
    assert args["skip-nodes-with-system-pods"] is False
    # GPU nodes whose pods use emptyDir still scale down; zones of one pool stay balanced
    # whatever labels one zone's running nodes carry.
    assert args["skip-nodes-with-local-storage"] is False
    assert args["balancing-label"] == "gpufleet.io/balancing-group"
    assert (args["scale-down-unneeded-time"], args["scale-down-delay-after-add"]) == ("10m", "10m")
    assert args["expander"] == config.cluster.aws.autoscaler_expander == "priority,least-waste"
    # It runs on the on-demand system pool.
    assert values["nodeSelector"] == {"gpufleet.io/pool": "system"}


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_priority_expander_prefers_exactly_the_spot_groups(stack: str) -> None:
    plan, config = plan_of(stack), config_of(stack)
    priorities = autoscaler_release(plan).inputs["values"]["expanderPriorities"]
    assert priorities["10"] == [".*"]
    spot_patterns = priorities.get("20", [])
    spot = {p.name for p in config.gpu_pools if p.spot}
    groups = [g for g in plan.of_type(ASG) if "gpufleet-pool" in tags_of(g)]
    for group in groups:
        matched = any(re.search(p, group.inputs["name"]) for p in spot_patterns)
        assert matched == (tags_of(group)["gpufleet-pool"] in spot), group.inputs["name"]
    for pattern in (p for p in spot_patterns if not p.startswith("^eks-")):
        # Exact names: a pool whose name prefixes another's must not drag it along.
        assert len([g for g in groups if re.search(pattern, g.inputs["name"])]) == 1, pattern
    for pool in (p for p in config.gpu_pools if p.aws.node_group == "managed"):
        # EKS names a managed group's auto scaling group eks-<node group>-<uuid>.
        name = f"eks-{pool.name}-3ec6b6e4-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
        assert any(re.search(p, name) for p in spot_patterns) == pool.spot


def test_other_expanders_drop_the_priority_config() -> None:
    values = autoscaler_values("c", "us-east-1", "1.34", "least-waste", "arn:role", ["^x$"])
    assert values["extraArgs"]["expander"] == "least-waste"
    assert "expanderPriorities" not in values
    assert values["image"]["tag"] == "v1.34.5"


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_autoscaler_values_use_only_keys_the_chart_has(stack: str) -> None:
    chart = chart_defaults("cluster-autoscaler")
    # Maps the chart's templates range over (extraArgs -> container flags, priorities -> ConfigMap).
    free_form = {("extraArgs",), ("expanderPriorities",)}

    def check(
        values: Mapping[str, Any], defaults: Mapping[str, Any], path: tuple[str, ...]
    ) -> None:
        for key, value in values.items():
            here = (*path, key)
            assert key in defaults, f"{'.'.join(here)} is not a key of the chart's values.yaml"
            default = defaults[key]
            if isinstance(value, Mapping) and here not in free_form and default != {}:
                assert isinstance(default, Mapping), ".".join(here)
                check(value, default, here)

    check(autoscaler_release(plan_of(stack)).inputs["values"], chart, ())


# --- every node: IMDSv2, encrypted disks, private subnets, allowed to join ----------------


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_every_launch_template_requires_imdsv2_and_encrypts_every_disk(stack: str) -> None:
    plan = plan_of(stack)
    templates = plan.of_type(LAUNCH_TEMPLATE)
    assert len(templates) == 1 + len(config_of(stack).gpu_pools)  # system + one per pool
    for template in templates:
        metadata = template.inputs["metadataOptions"]
        assert metadata["httpTokens"] == "required"
        assert metadata["httpPutResponseHopLimit"] == 1
        disks = template.inputs["blockDeviceMappings"]
        assert disks
        for disk in disks:
            assert disk["ebs"]["encrypted"] == "true"
            assert disk["ebs"]["volumeType"] == "gp3"
        assert "networkInterfaces" not in template.inputs  # never a public address
    for group in plan.of_type(NODE_GROUP):
        assert "launchTemplate" in group.inputs
        assert "diskSize" not in group.inputs and "remoteAccess" not in group.inputs


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_gpu_disks_are_sized_for_gpu_images(stack: str) -> None:
    plan, config = plan_of(stack), config_of(stack)
    for pool in config.gpu_pools:
        template = only(plan, LAUNCH_TEMPLATE, f"-{pool.name}-template")
        sizes = [d["ebs"].get("volumeSize") for d in template.inputs["blockDeviceMappings"]]
        assert pool.disk_size_gb in sizes and pool.disk_size_gb >= 100


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_self_managed_nodes_join_through_an_ec2_linux_access_entry(stack: str) -> None:
    plan = plan_of(stack)
    (entry,) = plan.of_type("aws:eks/accessEntry:AccessEntry")
    assert entry.inputs["type"] == "EC2_LINUX"
    profiles = {
        f"arn:aws:iam::{ACCOUNT}:instance-profile/{p.name}{AUTONAME_SUFFIX}": p
        for p in plan.of_type("aws:iam/instanceProfile:InstanceProfile")
    }
    for group in (g for g in plan.of_type(ASG) if "gpufleet-pool" in tags_of(g)):
        template = template_of(plan, group)
        profile = profiles[template.inputs["iamInstanceProfile"]["arn"]]
        assert entry.inputs["principalArn"].endswith(f":role/{profile.inputs['role']}")
        # From the pinned release's SSM parameter (read as a plain value, so diffs show it).
        version = config_of(stack).cluster.kubernetes_version
        assert template.inputs["imageId"] in {
            fake_ami(ami_parameter(family, version)) for family in ("al2023", "bottlerocket")
        }
        # The cluster security group, so nodes and control plane can talk.
        assert template.inputs["vpcSecurityGroupIds"] == [CLUSTER_SECURITY_GROUP]
        assert entry.urn in plan.by_urn()[group.parent].depends_on


def test_ami_is_a_pinned_release_of_the_eks_optimized_nvidia_image() -> None:
    assert RELEASES == {"al2023": "v20261023", "bottlerocket": "1.66.0"}
    assert ami_parameter("al2023", "1.35") == (
        "/aws/service/eks/optimized-ami/1.35/amazon-linux-2023/x86_64/nvidia/"
        "amazon-eks-node-al2023-x86_64-nvidia-1.35-v20261023/image_id"
    )
    assert (
        ami_parameter("bottlerocket", "1.34")
        == "/aws/service/bottlerocket/aws-k8s-1.34-nvidia/x86_64/1.66.0/image_id"
    )


def test_a_release_bump_shows_in_the_diff_as_a_new_image(monkeypatch: pytest.MonkeyPatch) -> None:
    from components.aws.model import amis
    from components.tooling.diff import diff_plans
    from components.tooling.engine import plan_stack

    before = plan_stack(load_stack("aws-dev")).to_json()
    monkeypatch.setitem(amis.RELEASES, "al2023", "v20261120")  # type: ignore[index]
    after = plan_stack(load_stack("aws-dev")).to_json()
    templates = [c for c in diff_plans(before, after).changed if c.type == LAUNCH_TEMPLATE]
    assert templates and all(c.verdict == "update" for c in templates)
    assert all(any(p.path == "imageId" for p in c.changes) for c in templates)


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_nodeadm_config_joins_this_cluster(stack: str) -> None:
    plan, config = plan_of(stack), config_of(stack)
    for pool in (p for p in self_managed(config) if p.aws.ami_family == "al2023"):
        template = only(plan, LAUNCH_TEMPLATE, f"-{pool.name}-template")
        document = base64.b64decode(template.inputs["userData"]).decode()
        assert "Content-Type: application/node.eks.aws" in document
        assert "/etc/eks/bootstrap.sh" not in document
        body = document.split("---\n", 1)[1].split("\n--", 1)[0]
        node_config = yaml.safe_load(body)
        assert node_config["apiVersion"] == "node.eks.aws/v1alpha1"
        assert node_config["kind"] == "NodeConfig"
        cluster = node_config["spec"]["cluster"]
        assert cluster["name"] == config.cluster.name
        assert cluster["cidr"] == config.cluster.aws.service_cidr
        assert cluster["apiServerEndpoint"].startswith("https://")
        assert base64.b64decode(cluster["certificateAuthority"]).startswith(b"-----BEGIN")


def test_bottlerocket_pools_register_labels_and_taints_through_toml_settings() -> None:
    plan = plan_of("aws-training")
    template = only(plan, LAUNCH_TEMPLATE, "-a100-spot-template")
    document = base64.b64decode(template.inputs["userData"]).decode()
    assert "[settings.kubernetes.node-labels]" in document
    assert "[settings.kubernetes.node-taints]" in document
    assert 'cluster-dns-ip = "172.20.0.10"' in document  # 10th address of serviceCidr
    registration = parse_registration(template.inputs["userData"])
    assert registration.labels["workload"] == "training"
    assert registration.taints == (Taint("nvidia.com/gpu", "true", "NoSchedule"),)
    disks = {d["deviceName"]: d["ebs"] for d in template.inputs["blockDeviceMappings"]}
    assert disks["/dev/xvdb"]["volumeSize"] == 300  # Bottlerocket keeps images on xvdb
    # Its own device plugin runs with Bottlerocket's defaults (a GPU per physical GPU), which
    # gpufleet's tags and `fit` assume: nothing of gpufleet's configures it (review eks-3 R3-12).
    assert "kubelet-device-plugins" not in document
    (plugin,) = [
        r
        for r in plan.of_type("kubernetes:helm.sh/v3:Release")
        if r.inputs["chart"] == "nvidia-device-plugin"
    ]
    terms = plugin.inputs["values"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert "a100-spot" not in json.dumps(terms)  # gpufleet's plugin stays off these nodes


def test_parser_reads_a_hand_written_nodeadm_document() -> None:
    document = (
        'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="//"\n\n--//\n'
        "Content-Type: application/node.eks.aws\n\n---\napiVersion: node.eks.aws/v1alpha1\n"
        "kind: NodeConfig\nspec:\n  cluster:\n    name: c\n    apiServerEndpoint: https://x\n"
        "    certificateAuthority: Y2E=\n    cidr: 10.100.0.0/16\n  kubelet:\n    flags:\n"
        "      - --node-labels=a=1,b.io/c=d\n"
        "      - --register-with-taints=nvidia.com/gpu=true:NoSchedule,x:NoExecute\n\n--//--\n"
    )
    registration = parse_registration(base64.b64encode(document.encode()).decode())
    assert registration.cluster_name == "c"
    assert registration.labels == {"a": "1", "b.io/c": "d"}
    assert registration.taints == (
        Taint("nvidia.com/gpu", "true", "NoSchedule"),
        Taint("x", "", "NoExecute"),
    )


# --- managed node groups ------------------------------------------------------------------


def test_managed_gpu_pool_is_one_node_group_per_zone_named_after_the_pool() -> None:
    # The autoscaler labels a group's template with its first zone only (review eks.md S2-7).
    plan, config = plan_of("aws-training"), config_of("aws-training")
    (spec,) = [p for p in resolve_pools(config) if p.name == "h100"]
    subnets = subnets_by_id(plan)
    sizes = []
    for zone in spec.zones:
        group = only(plan, NODE_GROUP, f"-h100-{zone}")
        inputs = group.inputs
        assert inputs["nodeGroupName"] == f"h100-{zone}"
        assert inputs["amiType"] == "AL2023_x86_64_NVIDIA"
        assert inputs["capacityType"] == ("SPOT" if spec.spot else "ON_DEMAND")
        assert inputs["instanceTypes"] == list(spec.machine_types)
        assert inputs["labels"] == dict(spec.declared_labels)
        assert inputs["taints"] == [
            {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"},
            {"key": "workload", "value": "training", "effect": "NO_SCHEDULE"},
        ]
        assert "scalingConfig.desiredSize" in group.ignore_changes
        assert group.delete_before_replace  # the fixed name must be free before a replacement
        assert inputs["tags"][f"{TEMPLATE}resources/nvidia.com/gpu"] == "8"
        # Its subnets are the private subnets of its one zone.
        assert {subnets[s].inputs["availabilityZone"] for s in inputs["subnetIds"]} == {zone}
        sizes.append(inputs["scalingConfig"])
    # The pool's bounds, split over its zones: together never more than maxNodes.
    assert sum(size["maxSize"] for size in sizes) == spec.max_nodes
    assert sum(size["minSize"] for size in sizes) == spec.min_nodes
    assert all(size["desiredSize"] == size["minSize"] for size in sizes)
    # Each zone's group has its own eks.amazonaws.com/nodegroup: not a label of the pool.
    assert "eks.amazonaws.com/nodegroup" not in spec.node_labels


def test_spot_managed_pool_uses_spot_capacity() -> None:
    raw = load_stack("aws-dev").config["gpufleet:gpuPools"]
    managed = {**raw[0], "aws": {"nodeGroup": "managed", "amiFamily": "bottlerocket"}}
    plan = plan_of("aws-dev", {"gpufleet:gpuPools": [managed, raw[1]]})
    for zone in managed["zones"]:
        group = only(plan, NODE_GROUP, f"-t4-spot-{zone}")
        assert group.inputs["capacityType"] == "SPOT"
        assert group.inputs["amiType"] == "BOTTLEROCKET_x86_64_NVIDIA"
        assert group.inputs["instanceTypes"] == ["g4dn.xlarge", "g4dn.2xlarge"]
    assert not groups_of(plan, "t4-spot")


# --- cluster -------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_cluster_is_administrable_private_encrypted_and_logged(stack: str) -> None:
    plan, config = plan_of(stack), config_of(stack)
    cluster = only(plan, CLUSTER, "-cluster")
    inputs = cluster.inputs
    assert inputs["name"] == config.cluster.name
    assert inputs["version"] == config.cluster.kubernetes_version
    assert inputs["accessConfig"]["authenticationMode"] in ("API", "API_AND_CONFIG_MAP")
    assert inputs["accessConfig"]["bootstrapClusterCreatorAdminPermissions"] is True
    vpc = inputs["vpcConfig"]
    assert vpc["endpointPrivateAccess"] is True and vpc["endpointPublicAccess"] is True
    assert vpc["publicAccessCidrs"] == config.cluster.aws.public_endpoint_cidrs
    private = {k for k, s in subnets_by_id(plan).items() if "internal-elb" in str(s.inputs["tags"])}
    assert set(vpc["subnetIds"]) == private
    assert inputs["encryptionConfig"]["resources"] == ["secrets"]
    assert set(inputs["enabledClusterLogTypes"]) >= {"api", "audit", "authenticator"}
    assert cluster.protect is config.cluster.protect
    (key,) = plan.of_type("aws:kms/key:Key")
    assert key.inputs["enableKeyRotation"] is True


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_system_node_group_keeps_on_demand_cpu_nodes(stack: str) -> None:
    plan, config = plan_of(stack), config_of(stack)
    group = only(plan, NODE_GROUP, "-system")
    scaling = group.inputs["scalingConfig"]
    assert scaling["minSize"] >= 1 and scaling["minSize"] == config.cluster.system_pool.min_nodes
    assert group.inputs["capacityType"] == "ON_DEMAND"
    assert group.inputs["amiType"] == "AL2023_x86_64_STANDARD"
    assert group.inputs["labels"] == {"gpufleet.io/pool": "system"}
    assert "scalingConfig.desiredSize" in group.ignore_changes


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_kubernetes_provider_is_explicit_and_built_from_the_cluster(stack: str) -> None:
    plan = plan_of(stack)
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == "[secret]"
    assert only(plan, CLUSTER, "-cluster").urn in provider.dependencies
    for resource in plan.resources:
        if resource.type.startswith("kubernetes:"):
            assert resource.provider and resource.provider.startswith(provider.urn)
    for resource in plan.resources:
        if resource.type.startswith("aws:"):
            assert resource.provider and "pulumi:providers:aws" in resource.provider


def test_kubeconfig_gets_tokens_from_aws_eks_get_token() -> None:
    document = yaml.safe_load(eks_kubeconfig("c1", "eu-west-1", "https://api", "Q0E="))
    (user,) = document["users"]
    exec_ = user["user"]["exec"]
    assert exec_["command"] == "aws"
    assert exec_["args"][:2] == ["eks", "get-token"]
    assert exec_["args"][exec_["args"].index("--cluster-name") + 1] == "c1"
    assert exec_["args"][exec_["args"].index("--region") + 1] == "eu-west-1"
    assert document["clusters"][0]["cluster"]["server"] == "https://api"


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_vpc_spans_the_zones_with_private_nodes_public_load_balancers_and_nat(stack: str) -> None:
    plan, config = plan_of(stack), config_of(stack)
    zones = config.cluster.zones or []
    subnets = plan.of_type(SUBNET)
    public = [s for s in subnets if s.inputs["tags"].get("kubernetes.io/role/elb") == "1"]
    private = [s for s in subnets if s.inputs["tags"].get("kubernetes.io/role/internal-elb") == "1"]
    assert sorted(s.inputs["availabilityZone"] for s in public) == sorted(zones)
    assert sorted(s.inputs["availabilityZone"] for s in private) == sorted(zones)
    nats = plan.of_type("aws:ec2/natGateway:NatGateway")
    expected = len(zones) if config.cluster.aws.nat_gateways == "per-zone" else 1
    assert len(nats) == expected
    public_ids = {f"subnet-{s.name}" for s in public}
    assert all(n.inputs["subnetId"] in public_ids for n in nats)
    for table in plan.of_type("aws:ec2/routeTable:RouteTable"):
        (route,) = table.inputs["routes"]
        assert ("natGatewayId" in route) == ("-private-" in table.name)


def test_existing_subnets_replace_the_vpc() -> None:
    ids = ["subnet-0aaa", "subnet-0bbb", "subnet-0ccc"]
    cluster = {**load_stack("aws-dev").config["gpufleet:cluster"]}
    cluster["aws"] = {**cluster["aws"], "privateSubnetIds": ids}
    plan = plan_of("aws-dev", {"gpufleet:cluster": cluster})
    assert not plan.of_type("aws:ec2/vpc:Vpc") and not plan.of_type(SUBNET)
    assert only(plan, CLUSTER, "-cluster").inputs["vpcConfig"]["subnetIds"] == ids
    for group in (g for g in plan.of_type(ASG) if "gpufleet-pool" in tags_of(g)):
        assert set(group.inputs["vpcZoneIdentifiers"]) <= set(ids)


def test_changing_a_gpu_pool_never_touches_the_cluster() -> None:
    base, changed = plan_of("aws-dev"), variant_plan()
    for suffix, type_ in (("-cluster", CLUSTER), ("-system", NODE_GROUP)):
        assert only(base, type_, suffix).inputs == only(changed, type_, suffix).inputs
    assert sum(g.inputs["maxSize"] for g in groups_of(changed, "l4")) == 5


# --- the gpuPools output --------------------------------------------------------------------


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_gpu_pools_output_is_the_contract_and_node_labels_are_what_nodes_carry(stack: str) -> None:
    plan, config = plan_of(stack), config_of(stack)
    assert plan.outputs["gpuPools"] == [p.to_output() for p in resolve_pools(config)]
    assert plan.outputs["kubeconfig"] == "[secret]"
    kubernetes_set = {
        "kubernetes.io/os",
        "kubernetes.io/arch",
        "topology.kubernetes.io/region",
        "topology.kubernetes.io/zone",
        "node.kubernetes.io/instance-type",
    }
    for entry in plan.outputs["gpuPools"]:
        labels = entry["nodeLabels"]
        pool = next(p for p in config.gpu_pools if p.name == entry["name"])
        if pool.aws.node_group == "self-managed":
            template = only(plan, LAUNCH_TEMPLATE, f"-{pool.name}-template")
            registration = parse_registration(template.inputs["userData"])
            registered = registration.labels
            taints = [Taint(**t) for t in entry["nodeTaints"]]
            assert sorted(taints) == sorted(registration.taints)
        else:
            zone = (pool.zones or [])[0]
            registered = only(plan, NODE_GROUP, f"-{pool.name}-{zone}").inputs["labels"]
            kubernetes_set |= {"eks.amazonaws.com/nodegroup", "eks.amazonaws.com/capacityType"}
        assert registered.items() <= labels.items()
        assert set(labels) - set(registered) <= kubernetes_set
        assert entry["podScheduling"]["nodeSelector"].items() <= registered.items()
        assert entry["machineTypes"] == pool.machine_types


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_eks_support_policy_is_explicit_so_nobody_is_billed_extended_support(stack: str) -> None:
    (cluster,) = plan_of(stack).of_type("aws:eks/cluster:Cluster")
    assert cluster.inputs["upgradePolicy"] == {"supportType": "STANDARD"}


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_eks_add_ons_are_managed_at_the_default_version_of_the_clusters_minor(stack: str) -> None:
    plan = plan_of(stack)
    minor = config_of(stack).cluster.kubernetes_version
    addons = {a.inputs["addonName"]: a for a in plan.of_type("aws:eks/addon:Addon")}
    assert set(addons) == {
        "vpc-cni",
        "kube-proxy",
        "coredns",
        "eks-pod-identity-agent",
        "eks-node-monitoring-agent",
    }
    for addon in addons.values():
        # The mock answers EKS's default build for (add-on, minor): it follows the minor.
        assert addon.inputs["addonVersion"] == f"v{minor}.0-eksbuild.1"
        assert addon.inputs["resolveConflictsOnCreate"] == "OVERWRITE"
    (system,) = [
        g for g in plan.of_type("aws:eks/nodeGroup:NodeGroup") if g.name.endswith("-system")
    ]
    assert system.urn in addons["coredns"].depends_on  # a Deployment: it needs nodes


def test_a_minor_bump_updates_the_add_ons_in_place() -> None:
    from components.tooling.diff import diff_plans

    cluster = dict(load_stack("aws-dev").config["gpufleet:cluster"])
    before = plan_of("aws-dev").to_json()
    after = plan_of("aws-dev", {"gpufleet:cluster": {**cluster, "kubernetesVersion": "1.36"}})
    changed = [
        c for c in diff_plans(before, after.to_json()).changed if c.type == "aws:eks/addon:Addon"
    ]
    assert len(changed) == 5 and all(c.verdict == "update" for c in changed)


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_every_self_managed_node_shuts_down_gracefully(stack: str) -> None:
    # nodeadm turns graceful shutdown on only from 1.34, Bottlerocket never (review eks.md S2-4).
    plan = plan_of(stack)
    templates = [t for t in plan.of_type(LAUNCH_TEMPLATE) if "userData" in t.inputs]
    assert templates
    for template in templates:
        registration = parse_registration(template.inputs["userData"])
        assert registration.shutdown_grace == ("150s", "30s"), template.name
