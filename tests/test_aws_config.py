"""EKS config rules: what the autoscaler and one-group-per-zone cannot express fails before any
resource exists, with the key path, the bad value and what is allowed."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest

from components.model.config import ConfigError, parse_config
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

BASE = load_stack("aws-dev").gpufleet


def config_with(pools: list[dict[str, Any]] | None = None, **cluster: Any) -> dict[str, Any]:
    raw = copy.deepcopy(BASE)
    if pools is not None:
        raw["gpuPools"] = pools
    raw["cluster"] = {**raw["cluster"], **cluster}
    return raw


def pool(**fields: Any) -> dict[str, Any]:
    return {"name": "gpu", "accelerator": "t4", "zones": ["us-east-1a"], "maxNodes": 2, **fields}


TODAY = date(2026, 11, 22)


def problems_of(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def test_shipped_aws_stacks_are_valid() -> None:
    for stack in ("aws-dev", "aws-training"):
        config = parse_config(load_stack(stack).gpufleet)
        assert config.cloud == "aws"
        assert all(p.zones or config.cluster.zones for p in config.gpu_pools)


def test_instance_types_with_different_gpu_counts_are_rejected() -> None:
    # g4dn.xlarge has 1 T4, g4dn.12xlarge 4: the autoscaler would size the group from the first.
    problems = problems_of(config_with([pool(machineTypes=["g4dn.xlarge", "g4dn.12xlarge"])]))
    (problem,) = [p for p in problems if p.startswith("gpuPools[0].machineTypes:")]
    assert "same GPU count" in problem
    assert "'g4dn.xlarge': 1" in problem and "'g4dn.12xlarge': 4" in problem


def test_different_vcpu_or_memory_is_a_warning_naming_the_type_the_autoscaler_uses() -> None:
    config = parse_config(config_with([pool(machineTypes=["g4dn.2xlarge", "g4dn.xlarge"])]))
    (warning,) = [w for w in config.warnings if w.startswith("gpuPools[0].machineTypes")]
    assert warning.startswith("gpuPools[0].machineTypes: vCPU or memory differ")
    assert warning.endswith("from the first type, g4dn.2xlarge")
    same_shape = parse_config(config_with([pool(machineTypes=["g4dn.xlarge"])]))
    # (Only the zone ids warning of tests/test_offerings.py: g4dn misses use1-az3.)
    assert [w.split(":")[0] for w in same_shape.warnings] == ["gpuPools[0].zones"]


def test_instance_type_of_another_gpu_is_rejected() -> None:
    problems = problems_of(config_with([pool(machineTypes=["g4dn.xlarge", "g6.xlarge"])]))
    assert any(
        p.startswith("gpuPools[0].machineTypes[1]: cannot carry t4 on aws (it carries l4)")
        for p in problems
    ), problems


def test_a_minor_without_a_pinned_autoscaler_is_rejected() -> None:
    # EKS 1.37 is GA (2026-10-01) but no cluster-autoscaler 1.37 release is pinned.
    with pytest.raises(ConfigError) as caught:
        parse_config(config_with(kubernetesVersion="1.37"), today=TODAY)
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.startswith(
        "cluster.kubernetesVersion: gpufleet pins no cluster-autoscaler release for this minor"
    )
    assert "minors with a pinned autoscaler: 1.32, 1.33, 1.34, 1.35, 1.36" in problem


def test_only_a_stack_running_gpufleet_s_autoscaler_needs_its_pinned_release() -> None:
    """Auto Mode and Karpenter run no cluster autoscaler of gpufleet's, nor does an adopted
    cluster whose own autoscaler is installed (review eks-3.md R3-5)."""
    auto_mode = load_stack("aws-auto-mode").gpufleet
    raw = {**auto_mode, "cluster": {**auto_mode["cluster"], "kubernetesVersion": "1.37"}}
    assert parse_config(raw, today=TODAY).cluster.kubernetes_version == "1.37"
    karpenter = load_stack("aws-karpenter").gpufleet
    raw = {**karpenter, "cluster": {**karpenter["cluster"], "kubernetesVersion": "1.37"}}
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, today=TODAY)
    (problem,) = [str(p) for p in caught.value.problems]  # Karpenter's matrix, alone
    assert "Karpenter 1.14.1 (pinned) supports Kubernetes" in problem
    adopted = copy.deepcopy(load_stack("aws-existing").gpufleet)
    adopted["cluster"].update(kubernetesVersion="1.37", existing={"autoscalerInstalled": True})
    assert parse_config(adopted, today=TODAY).cluster.kubernetes_version == "1.37"
    adopted["cluster"]["existing"] = {}
    with pytest.raises(ConfigError, match="pins no cluster-autoscaler release"):
        parse_config(adopted, today=TODAY)


def test_extended_support_needs_support_type_extended() -> None:
    # 1.33 left EKS standard support on 2026-07-28 (its last day); STANDARD would auto-upgrade.
    with pytest.raises(ConfigError) as caught:
        parse_config(config_with(kubernetesVersion="1.33"), today=TODAY)
    (problem,) = [str(p) for p in caught.value.problems]
    assert "cluster.aws.supportType: EXTENDED to pay for extended support" in problem
    extended = config_with(kubernetesVersion="1.33")
    extended["cluster"]["aws"]["supportType"] = "EXTENDED"
    config = parse_config(extended, today=TODAY)
    assert any("past EKS standard support" in warning for warning in config.warnings)


def test_every_zone_group_gets_at_least_one_node_of_max() -> None:
    three_zones = ["us-east-1a", "us-east-1b", "us-east-1c"]
    problems = problems_of(config_with([pool(zones=three_zones, maxNodes=2)]))
    assert any(
        p.startswith("gpuPools[0].maxNodes: must be at least the number of zones (3)")
        for p in problems
    ), problems
    # Managed pools too: one managed node group per zone, and EKS refuses maxSize 0.
    managed = pool(zones=three_zones, maxNodes=2, aws={"nodeGroup": "managed"})
    assert any("number of zones (3)" in p for p in problems_of(config_with([managed])))


def test_taint_keys_must_be_unique_because_each_is_one_asg_tag() -> None:
    problems = problems_of(
        config_with([pool(taints=[{"key": "nvidia.com/gpu", "value": "x", "effect": "NoExecute"}])])
    )
    assert any(p.startswith("gpuPools[0].taints: taint keys must be unique") for p in problems)


@pytest.mark.parametrize(
    ("aws", "expected"),
    [
        ({"vpcCidr": "10.0.0.0/24"}, "cluster.aws.vpcCidr: must be an IPv4 CIDR from /12 to /20"),
        ({"vpcCidr": "banana"}, "cluster.aws.vpcCidr: must be an IPv4 CIDR such as"),
        ({"serviceCidr": "fd00::/108"}, "cluster.aws.serviceCidr: must be an IPv4 CIDR"),
        ({"autoscalerExpander": "cheapest"}, "cluster.aws.autoscalerExpander: comma-separated"),
        ({"autoscalerExpander": "priority,priority"}, "cluster.aws.autoscalerExpander"),
        ({"publicSubnetIds": ["subnet-1"]}, "cluster.aws.publicSubnetIds: needs privateSubnetIds"),
        (
            {"natGateways": "none"},
            "cluster.aws.natGateways: Input should be 'single' or 'per-zone'",
        ),
        ({"serviceCidr": "10.0.128.0/20"}, "cluster.aws.serviceCidr: must not overlap vpcCidr"),
    ],
)
def test_bad_eks_cluster_options(aws: dict[str, Any], expected: str) -> None:
    problems = problems_of(config_with(aws={**BASE["cluster"]["aws"], **aws}))
    assert any(p.startswith(expected) for p in problems), problems


def test_zones_are_required_on_aws() -> None:
    cluster = {k: v for k, v in BASE["cluster"].items() if k != "zones"}
    raw = copy.deepcopy(BASE)
    raw["cluster"] = cluster
    assert any(p.startswith("cluster.zones: is required on aws") for p in problems_of(raw))


def test_no_zones_anywhere_is_a_config_error_not_a_crash() -> None:
    # Neither the cluster nor the pool names zones: the pool's per-zone sizing has nothing to
    # split over, and the missing key is reported like every other problem.
    raw = copy.deepcopy(BASE)
    raw["cluster"] = {k: v for k, v in BASE["cluster"].items() if k != "zones"}
    raw["gpuPools"] = [{k: v for k, v in p.items() if k != "zones"} for p in raw["gpuPools"]]
    problems = problems_of(raw)
    assert any(p.startswith("cluster.zones: is required on aws") for p in problems), problems


def test_eks_needs_two_zones() -> None:
    problems = problems_of(config_with([pool()], zones=["us-east-1a"]))
    assert any(
        p.startswith("cluster.zones: EKS needs subnets in at least two zones") for p in problems
    )


def aws_pool(**fields: Any) -> dict[str, Any]:
    return {"name": "l4", "accelerator": "l4", "maxNodes": 4, **fields}


def test_asg_tags_stay_within_aws_limits() -> None:
    raw = load_stack("aws-dev").gpufleet
    # 17 of gpufleet's own (nodeadm's nvidia.com/gpu.present from 1.35, the termination
    # handler's tag and the autoscaler's balancing label among them) + 33 = 50; a pool with
    # maxNodesPerZone has no balancing label: 16 + 34.
    per_zone = {"aws": {"maxNodesPerZone": 2}, "zones": ["us-east-1a"], "maxNodes": 2}
    for own, extra in ((17, {}), (16, per_zone)):
        labels = {f"team{i}": "x" for i in range(50 - own)}
        pools = [aws_pool(labels=labels, **extra)]
        plan = plan_of("aws-dev", {"gpufleet:gpuPools": pools})
        groups = [r for r in plan.resources if r.type == "aws:autoscaling/group:Group"]
        assert groups and all(len(g.inputs["tags"]) == 50 for g in groups)
        over = aws_pool(labels={**labels, "one-more": "x"}, **extra)
        with pytest.raises(ConfigError) as caught:
            parse_config({**raw, "gpuPools": [over]})
        assert str(caught.value.problems[0]).startswith(
            "gpuPools[0].labels: too many labels and taints for one auto scaling group: "
            f"51 tags where AWS takes 50 ({own} are gpufleet's own)"
        )
    long_key = "example.com/" + "k" * 71  # 83 characters: tag key 46 + 83 > 128
    with pytest.raises(ConfigError) as caught:
        parse_config({**raw, "gpuPools": [aws_pool(labels={long_key: "x"})]})
    assert "at most 82 characters on aws self-managed pools" in str(caught.value)


def test_managed_group_label_limits() -> None:
    raw = load_stack("aws-dev").gpufleet
    managed = aws_pool(aws={"nodeGroup": "managed"}, labels={"team": "", ("x" * 64): "y"})
    with pytest.raises(ConfigError) as caught:
        parse_config({**raw, "gpuPools": [managed]})
    problems = [str(p) for p in caught.value.problems]
    assert any("take no empty label value" in p for p in problems)
    assert any("label keys of at most 63 characters" in p for p in problems)


def test_shared_pools_tell_the_autoscaler_the_gpus_the_node_advertises() -> None:
    shared = aws_pool(sharing={"strategy": "time-sharing", "maxSharedClientsPerGpu": 4})
    plan = plan_of("aws-dev", {"gpufleet:gpuPools": [shared]})
    gpu_tag = "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"
    for group in (r for r in plan.resources if r.type == "aws:autoscaling/group:Group"):
        tags = {t["key"]: t["value"] for t in group.inputs["tags"]}
        assert tags[gpu_tag] == "4"


def test_admin_principals_become_cluster_admin_access_entries() -> None:
    cluster = {**load_stack("aws-dev").gpufleet["cluster"]}
    ci = "arn:aws:iam::123456789012:role/github-actions-deploy"
    cluster["aws"] = {**cluster["aws"], "adminPrincipalArns": [ci]}
    plan = plan_of("aws-dev", {"gpufleet:cluster": cluster})
    entries = [
        r
        for r in plan.resources
        if r.type == "aws:eks/accessEntry:AccessEntry" and r.inputs["principalArn"] == ci
    ]
    (association,) = [
        r
        for r in plan.resources
        if r.type == "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
    ]
    assert [e.inputs["type"] for e in entries] == ["STANDARD"]
    assert association.inputs["policyArn"].endswith(
        ":eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
    )
    assert association.inputs["accessScope"] == {"type": "cluster"}
    assert entries[0].urn in association.depends_on


def test_admin_principals_must_be_iam_arns() -> None:
    raw = load_stack("aws-dev").gpufleet
    cluster = {**raw["cluster"]}
    cluster["aws"] = {
        **cluster["aws"],
        "adminPrincipalArns": ["github-actions", "arn:aws:iam::123456789012:role/ci"],
    }
    with pytest.raises(ConfigError) as caught:
        parse_config({**raw, "cluster": cluster})
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.startswith("cluster.aws.adminPrincipalArns[0]: must be an IAM role or user ARN")


def test_managed_group_taints_need_a_value_for_the_autoscaler_at_zero() -> None:
    raw = load_stack("aws-dev").gpufleet
    managed = aws_pool(aws={"nodeGroup": "managed"}, taints=[{"key": "dedicated"}])
    with pytest.raises(ConfigError) as caught:
        parse_config({**raw, "gpuPools": [managed]})
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.startswith("gpuPools[0].taints[0].value: EKS managed node groups need a taint")


def test_a_managed_pool_name_leaves_room_for_each_zones_group_name() -> None:
    name = "h" * 53  # + "-us-west-2a" is 64: one more than EKS takes
    raw = copy.deepcopy(load_stack("aws-training").gpufleet)
    raw["gpuPools"][0]["name"] = name
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, today=TODAY)
    problems = [str(p) for p in caught.value.problems]
    assert any(
        p.startswith("gpuPools[0].name: at most 52 characters for an EKS managed pool")
        for p in problems
    ), problems
    raw["gpuPools"][0]["name"] = name[:52]
    parse_config(raw, today=TODAY)
