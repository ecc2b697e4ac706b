"""An adopted EKS cluster stays its owner's (review eks-2.md N4, N5): gpufleet's cluster
autoscaler discovers and may resize only gpufleet's groups, never the managed node groups EKS
tagged for the autoscaler on the owner's behalf; and GPU nodes can get the owner's node security
groups (`cluster.existing.nodeSecurityGroupIds`) on every launch template and node class."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import pytest

from components.aws.mock import CLUSTER_SECURITY_GROUP
from components.aws.model import autoscaler_tags
from components.mock_world import World
from components.model.config import ConfigError, parse_config
from components.tooling import pool_views
from components.tooling.engine import Plan, plan_stack
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

STACK = "aws-existing"
CLUSTER = "platform-prod"
OWNER_SG = "sg-0123456789abcdef0"
RELEASE = "kubernetes:helm.sh/v3:Release"


def _variant(pools: list[dict[str, Any]] | None = None, **cluster: Any) -> dict[str, Any]:
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    raw["cluster"].update(cluster)
    if pools is not None:
        raw["gpuPools"] = pools
    return {f"gpufleet:{key}": value for key, value in raw.items()}


MANAGED_L4 = {
    "name": "l4",
    "accelerator": "l4",
    "machineTypes": ["g6.xlarge"],
    "maxNodes": 2,
    "zones": ["us-east-1a", "us-east-1b"],
    "aws": {"nodeGroup": "managed"},
}
WITH_GROUPS = {"existing": {"nodeSecurityGroupIds": [OWNER_SG]}}


def _autoscaler(plan: Plan) -> tuple[dict[str, Any], dict[str, Any]]:
    (release,) = [r for r in plan.of_type(RELEASE) if r.inputs["name"] == "cluster-autoscaler"]
    (policy,) = [r for r in plan.resources if r.name.endswith("-autoscaler-scaling")]
    return dict(release.inputs["values"]), json.loads(policy.inputs["policy"])


def _discovers(values: Mapping[str, Any], tags: Mapping[str, str]) -> bool:
    """cluster-autoscaler `asg:tag=k1,k2`: a group with all of the keys (any value)."""
    keys = values["autoDiscovery"].get("tags") or [
        autoscaler_tags.ENABLED_TAG,
        autoscaler_tags.owner_tag(values["autoDiscovery"]["clusterName"]),
    ]
    return all(key in tags for key in keys)


def _may_resize(policy: Mapping[str, Any], tags: Mapping[str, str]) -> bool:
    (write,) = [s for s in policy["Statement"] if s["Sid"] == "ScaleOwnGroupsOnly"]
    wanted = write["Condition"]["StringEquals"]
    return all(tags.get(key.removeprefix("aws:ResourceTag/")) == v for key, v in wanted.items())


# What EKS puts on every managed node group's auto scaling group (EKS user guide,
# managed-node-groups: "automatically tagged for auto-discovery by the Cluster Autoscaler").
OWNERS_GROUP = {autoscaler_tags.ENABLED_TAG: "true", autoscaler_tags.owner_tag(CLUSTER): "owned"}


def test_the_autoscaler_finds_and_resizes_only_gpufleets_groups() -> None:
    plan = plan_of(STACK)
    values, policy = _autoscaler(plan)
    assert not _discovers(values, OWNERS_GROUP) and not _may_resize(policy, OWNERS_GROUP)
    groups = plan.of_type("aws:autoscaling/group:Group")
    assert groups
    for group in groups:
        tags = {t["key"]: t["value"] for t in group.inputs["tags"]}
        assert _discovers(values, tags) and _may_resize(policy, tags), group.name
    # The owner's system pods are never evicted for a scale-down.
    assert values["extraArgs"]["skip-nodes-with-system-pods"] is True


def test_gpufleets_managed_groups_carry_its_tag_on_their_auto_scaling_groups() -> None:
    plan = plan_of(STACK, _variant([MANAGED_L4]))
    values, policy = _autoscaler(plan)
    tags = plan.of_type("aws:autoscaling/tag:Tag")
    assert len(tags) == 2  # one per zone's node group
    for tag in tags:
        assert tag.inputs["autoscalingGroupName"].startswith("eks-l4-us-east-1")
        group_tags = {**OWNERS_GROUP, tag.inputs["tag"]["key"]: tag.inputs["tag"]["value"]}
        assert _discovers(values, group_tags) and _may_resize(policy, group_tags)


# What an autoscaler of the owner's finds groups by: the chart's default autoDiscovery.tags
# (cluster-autoscaler values.yaml), the pair EKS puts on every managed group.
OWNERS_AUTOSCALER = {"autoDiscovery": {"clusterName": CLUSTER}}


def _tags(group: Any) -> dict[str, str]:
    return {t["key"]: t["value"] for t in group.inputs["tags"]}


def test_an_owners_autoscaler_does_not_find_gpufleets_groups() -> None:
    """Review eks-3.md N18: on an adopted cluster gpufleet's self-managed groups carry only
    gpufleet's discovery tag, so two autoscalers never fight over them."""
    groups = plan_of(STACK).of_type("aws:autoscaling/group:Group")
    assert groups
    for group in groups:
        tags = _tags(group)
        assert autoscaler_tags.gpufleet_owner_tag(CLUSTER) in tags, group.name
        assert autoscaler_tags.ENABLED_TAG not in tags, group.name
        assert autoscaler_tags.owner_tag(CLUSTER) not in tags, group.name
        assert not _discovers(OWNERS_AUTOSCALER, tags), group.name


def test_groups_the_owners_autoscaler_is_meant_to_scale_carry_its_pair() -> None:
    """With cluster.existing.autoscalerInstalled the owner's autoscaler scales gpufleet's groups:
    they carry the pair it discovers by, and no tag of gpufleet's."""
    plan = plan_of(STACK, _variant(existing={"autoscalerInstalled": True}))
    groups = plan.of_type("aws:autoscaling/group:Group")
    assert groups
    for group in groups:
        tags = _tags(group)
        assert _discovers(OWNERS_AUTOSCALER, tags), group.name
        assert not any(k.startswith(autoscaler_tags.GPUFLEET_PREFIX) for k in tags), group.name


def test_plan_says_what_it_cannot_see_of_the_owners_controllers() -> None:
    self_managed = plan_of(STACK).warnings
    (said,) = [w for w in self_managed if "not checked: whether its owner already runs" in w]
    assert "cluster autoscaler or aws-node-termination-handler" in said
    assert any("carry only its own discovery tag" in w for w in self_managed)
    assert not any("managed node groups carry that pair anyway" in w for w in self_managed)
    managed = plan_of(STACK, _variant([MANAGED_L4])).warnings
    (note,) = [w for w in managed if "managed node groups carry that pair anyway" in w]
    assert "gpuPools[].aws.nodeGroup: self-managed" in note
    installed = plan_of(STACK, _variant(existing={"autoscalerInstalled": True})).warnings
    (said,) = [w for w in installed if "not checked: whether its owner already runs" in w]
    assert "aws-node-termination-handler" in said and "cluster autoscaler" not in said
    # Security groups: said unless the stack names the owner's (review eks-2 N5).
    (network,) = [w for w in self_managed if "cluster security group alone" in w]
    assert "cluster.existing.nodeSecurityGroupIds" in network
    named = _variant(existing={"nodeSecurityGroupIds": ["sg-0123456789abcdef0"]})
    assert not any("cluster security group alone" in w for w in plan_of(STACK, named).warnings)


def _karpenter_pools() -> list[dict[str, Any]]:
    pools = copy.deepcopy(list(load_stack(STACK).gpufleet["gpuPools"]))
    for pool in pools:
        pool.pop("aws", None)
    return pools


def test_under_karpenter_plan_says_an_owner_s_karpenter_conflicts() -> None:
    """gpufleet's Karpenter next to the owner's: the CRD release fails on Helm ownership, or two
    controllers act on one cluster's NodePools; and NodePools share the cluster's one space
    (review eks-3.md R3-6)."""
    karpenter = _variant(_karpenter_pools(), aws={"provisioner": "karpenter"})
    warnings = plan_of(STACK, karpenter).warnings
    (said,) = [w for w in warnings if "whether its owner already runs Karpenter" in w]
    assert "cannot be imported into the release" in said
    assert "cluster.existing.autoscalerInstalled: true" in said
    assert "karpenterNodeRole" in said
    assert any("NodePools named like gpufleet's pools" in w for w in warnings)
    assert not any("cluster autoscaler or aws-node-termination-handler" in w for w in warnings)
    # With the owner's Karpenter taking the pools, only the names can still collide.
    installed = _variant(
        _karpenter_pools(),
        aws={"provisioner": "karpenter"},
        existing={"autoscalerInstalled": True, "karpenterNodeRole": "owner-karpenter-nodes"},
    )
    warnings = plan_of(STACK, installed).warnings
    assert not any("whether its owner already runs Karpenter" in w for w in warnings)
    assert any("NodePools named like gpufleet's pools" in w for w in warnings)


def test_fit_reads_gpufleets_own_discovery_tag() -> None:
    assert pool_views.GPUFLEET_DISCOVERY_PREFIX == autoscaler_tags.GPUFLEET_PREFIX + "/"
    (group, *_) = plan_of(STACK).of_type("aws:autoscaling/group:Group")
    assert pool_views.read_asg(group).discoverable


def test_a_created_cluster_keeps_the_standard_discovery() -> None:
    plan = plan_of("aws-dev")
    values, policy = _autoscaler(plan)
    groups = plan.of_type("aws:autoscaling/group:Group")
    assert groups and all(_discovers(values, _tags(group)) for group in groups)
    assert "tags" not in values["autoDiscovery"]
    assert values["extraArgs"]["skip-nodes-with-system-pods"] is False
    assert _may_resize(policy, {**OWNERS_GROUP, autoscaler_tags.owner_tag("gpufleet-dev"): "owned"})


def test_owner_security_groups_reach_every_launch_template() -> None:
    plan = plan_of(
        STACK,
        _variant(
            [*load_stack(STACK).gpufleet["gpuPools"], MANAGED_L4 | {"name": "l4m"}], **WITH_GROUPS
        ),
    )
    templates = plan.of_type("aws:ec2/launchTemplate:LaunchTemplate")
    assert len(templates) == 3
    for template in templates:
        assert template.inputs["vpcSecurityGroupIds"] == [CLUSTER_SECURITY_GROUP, OWNER_SG]


@pytest.mark.parametrize("provisioner", ["karpenter", "auto-mode"])
def test_owner_security_groups_reach_every_node_class(provisioner: str) -> None:
    pools = [{k: v for k, v in MANAGED_L4.items() if k != "aws"}]
    overrides = _variant(pools, aws={"provisioner": provisioner}, **WITH_GROUPS)
    world = World("1.35.3", auto_mode=provisioner == "auto-mode")
    plan = plan_stack(load_stack(STACK), overrides, world)
    kind = "EC2NodeClass" if provisioner == "karpenter" else "NodeClass"
    (node_class,) = [r for r in plan.resources if r.type.endswith(f":{kind}")]
    terms = node_class.inputs["spec"]["securityGroupSelectorTerms"]
    assert terms == [{"id": CLUSTER_SECURITY_GROUP}, {"id": OWNER_SG}]


def test_bad_security_group_ids_are_refused() -> None:
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    raw["cluster"]["existing"] = {"nodeSecurityGroupIds": ["sg-123", OWNER_SG]}
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.startswith("cluster.existing.nodeSecurityGroupIds[0]: must be a security")
    raw["cluster"]["existing"] = {"nodeSecurityGroupIds": []}
    with pytest.raises(ConfigError, match="must name at least one security group"):
        parse_config(raw)
