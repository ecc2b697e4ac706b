"""Every IAM policy gpufleet writes on EKS fits IAM's size limits whatever the stack's size
(review eks-3.md R3-1): a role's inline policies together take at most 10,240 characters, a
trust policy 2,048 (IAM and AWS STS quotas: "Role policy size ... aggregate of all inline
policies", "Role trust policy length"; IAM counts no whitespace). The node termination handler's
policy listed one auto scaling group ARN per group, about 116 characters plus the name each,
and passed the limit at 45-60 groups; the mock gives ASGs their real ARNs, so a policy sized
from them would be sized as for real here."""

from __future__ import annotations

import copy
import json
import re
from collections import defaultdict
from typing import Any

import pytest

from components.aws.model import termination
from components.mock_world import World
from components.tooling.engine import Plan
from components.tooling.mockcloud import resource_state
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ROLE = "aws:iam/role:Role"
ASG = "aws:autoscaling/group:Group"
HOOK = "aws:autoscaling/lifecycleHook:LifecycleHook"
INLINE_POLICIES_PER_ROLE = 10_240
TRUST_POLICY = 2_048
LONGEST = "L" + "o" * 98 + "g"  # EKS's longest cluster name (100)
ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]


def _pools(self_managed: int, managed: int) -> list[dict[str, Any]]:
    """Spot T4 pools over three zones: one auto scaling group (or managed group) per zone."""
    pools = [
        {
            "name": f"spot-pool-{index:02d}-with-a-long-name",
            "accelerator": "t4",
            "machineTypes": ["g4dn.xlarge"],
            "maxNodes": 3,
            "spot": True,
            "zones": ZONES,
        }
        for index in range(self_managed)
    ]
    pools += [
        {
            "name": f"managed-{index:02d}",
            "accelerator": "t4",
            "machineTypes": ["g4dn.xlarge"],
            "maxNodes": 3,
            "zones": ZONES,
            "aws": {"nodeGroup": "managed"},
        }
        for index in range(managed)
    ]
    return pools


def _plan(name: str, self_managed: int, managed: int) -> Plan:
    cluster = {**load_stack("aws-dev").gpufleet["cluster"], "name": name}
    return plan_of(
        "aws-dev",
        {"gpufleet:cluster": cluster, "gpufleet:gpuPools": _pools(self_managed, managed)},
    )


def _size(document: str) -> int:
    """A policy's size as IAM counts it: the JSON without whitespace outside its strings."""
    return len(json.dumps(json.loads(document), separators=(",", ":")))


def inline_policy_sizes(plan: Plan) -> dict[str, int]:
    """Each role's inline policies together, by the role they are put on."""
    sizes: dict[str, int] = defaultdict(int)
    for policy in plan.of_type(ROLE_POLICY):
        sizes[str(policy.inputs["role"])] += _size(policy.inputs["policy"])
    return dict(sizes)


# 16 Spot pools of 3 zones: 48 self-managed groups, as many hooks for the drainer (their ARNs
# alone would take about 12,000 characters with this name); 3 managed pools of 3 zones.
MANY = (16, 3)


@pytest.mark.slow
def test_every_role_s_inline_policies_fit_iam_s_limit_with_many_groups() -> None:
    plan = _plan(LONGEST, *MANY)
    assert len(plan.of_type(ASG)) == 48
    sizes = inline_policy_sizes(plan)
    assert len(sizes) >= 3, sizes  # the drainer's, the autoscaler's, the secrets key's
    assert all(size <= INLINE_POLICIES_PER_ROLE for size in sizes.values()), sizes
    for role in plan.of_type(ROLE):
        assert _size(role.inputs["assumeRolePolicy"]) <= TRUST_POLICY, role.name


def test_no_policy_grows_with_the_number_of_groups() -> None:
    """The same policies, to the character, for 3 groups and for 57."""
    few, many = _plan(LONGEST, 1, 0), _plan(LONGEST, *MANY)
    few_sizes = {p.name: _size(p.inputs["policy"]) for p in few.of_type(ROLE_POLICY)}
    many_sizes = {p.name: _size(p.inputs["policy"]) for p in many.of_type(ROLE_POLICY)}
    assert few_sizes == {name: many_sizes[name] for name in few_sizes}
    assert any(name.endswith("-draining") for name in few_sizes)


def test_karpenter_s_policies_do_not_grow_with_the_pools_either() -> None:
    cluster = copy.deepcopy(dict(load_stack("aws-karpenter").gpufleet["cluster"]))
    cluster["name"] = LONGEST

    def sizes(count: int) -> dict[str, int]:
        pools = [
            {**pool, "name": f"pool-{i}", "maxNodes": 3} for i, pool in enumerate(_pools(count, 0))
        ]
        plan = plan_of("aws-karpenter", {"gpufleet:cluster": cluster, "gpufleet:gpuPools": pools})
        assert len(plan.of_type("kubernetes:karpenter.sh/v1:NodePool")) == count
        return {p.name: _size(p.inputs["policy"]) for p in plan.of_type(ROLE_POLICY)}

    few, many = sizes(1), sizes(12)
    assert few == many and any(name.endswith("-karpenter-controller") for name in few)
    assert all(size <= INLINE_POLICIES_PER_ROLE for size in many.values())


def _drainer_statement(plan: Plan) -> dict[str, Any]:
    (policy,) = [p for p in plan.of_type(ROLE_POLICY) if p.name.endswith("-draining")]
    (statement,) = [
        s
        for s in json.loads(policy.inputs["policy"])["Statement"]
        if "autoscaling:CompleteLifecycleAction" in s["Action"]
    ]
    return dict(statement)


def test_the_drainer_completes_lifecycle_actions_only_in_groups_tagged_as_this_cluster_s() -> None:
    plan = plan_of("aws-dev")
    statement = _drainer_statement(plan)
    assert statement["Action"] == list(termination.LIFECYCLE_ACTIONS)
    # Groups of this account and region, by ARN; which ones, by their tags.
    assert statement["Resource"] == (
        "arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:*:autoScalingGroupName/*"
    )
    required = {
        key.removeprefix("aws:ResourceTag/"): value
        for key, value in statement["Condition"]["StringEquals"].items()
    }
    assert required == {termination.MANAGED_TAG: "true", "gpufleet-cluster": "gpufleet-dev"}
    hooked = {h.inputs["autoscalingGroupName"] for h in plan.of_type(HOOK)}
    groups = [g for g in plan.of_type(ASG) if g.inputs["name"] in hooked]
    assert groups
    for group in groups:
        tags = {t["key"]: t["value"] for t in group.inputs["tags"]}
        assert required.items() <= tags.items(), group.name


def test_the_mock_names_auto_scaling_groups_as_ec2_auto_scaling_does() -> None:
    _, state = resource_state(ASG, "logical", {"name": "gpufleet-dev-l4-us-east-1a"}, World())
    assert re.fullmatch(
        r"arn:aws:autoscaling:us-east-1:\d{12}:autoScalingGroup:"
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:"
        r"autoScalingGroupName/gpufleet-dev-l4-us-east-1a",
        state["arn"],
    )
    assert state["name"] == "gpufleet-dev-l4-us-east-1a"
