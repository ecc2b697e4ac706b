"""Self-managed GPU nodes, Spot or on-demand, are cordoned and drained before they go.

Review eks.md S2-4: with Capacity Rebalance the group terminates an at-risk instance after
launching its replacement, and nothing drained it; on-demand groups lose nodes undrained too
(scale-in, EC2 scheduled maintenance; issue 22, point 8). The node termination handler in queue
mode (facts in components/aws/model/termination.py) needs every piece below, or it silently does
nothing: the queue EventBridge can write to, the rules, a termination lifecycle hook on each
group (else the instance is gone before the drain), the tag on the instances (else the handler
skips them), its own permissions, and heartbeats that keep a long drain alive (review eks-2.md
N11).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.aws.model import termination
from components.model.pools import POOL_LABEL
from components.model.schema import SYSTEM_POOL_NAME
from components.tooling.engine import Plan, RecordedResource
from components.tooling.mockcloud.aws import ACCOUNT, AUTONAME_SUFFIX
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

ASG = "aws:autoscaling/group:Group"
HOOK = "aws:autoscaling/lifecycleHook:LifecycleHook"
QUEUE = "aws:sqs/queue:Queue"
RULE = "aws:cloudwatch/eventRule:EventRule"
TARGET = "aws:cloudwatch/eventTarget:EventTarget"
RELEASE = "kubernetes:helm.sh/v3:Release"


def tags_of(group: RecordedResource) -> dict[str, dict[str, Any]]:
    return {tag["key"]: tag for tag in group.inputs["tags"]}


def spot_groups(plan: Plan) -> list[RecordedResource]:
    return [g for g in plan.of_type(ASG) if "mixedInstancesPolicy" in g.inputs and _is_spot(g)]


def self_managed_groups(plan: Plan) -> list[RecordedResource]:
    return [g for g in plan.of_type(ASG) if "mixedInstancesPolicy" in g.inputs]


def _is_spot(group: RecordedResource) -> bool:
    distribution = group.inputs["mixedInstancesPolicy"]["instancesDistribution"]
    return distribution.get("onDemandPercentageAboveBaseCapacity") == 0


def queue_of(plan: Plan) -> tuple[str, str]:
    """The queue's URL and ARN, as the mock cloud names an autonamed queue."""
    (queue,) = plan.of_type(QUEUE)
    name = f"{queue.name}{AUTONAME_SUFFIX}"
    region = load_stack(plan.stack).gpufleet["cluster"]["region"]  # the stack's, as AWS's
    return (
        f"https://sqs.{region}.amazonaws.com/{ACCOUNT}/{name}",
        f"arn:aws:sqs:{region}:{ACCOUNT}:{name}",
    )


def handler_release(plan: Plan) -> RecordedResource:
    (release,) = [r for r in plan.of_type(RELEASE) if termination.CHART in r.inputs["chart"]]
    return release


@pytest.mark.parametrize("stack", ["aws-dev", "aws-training"])
def test_every_self_managed_group_is_drained_through_the_queue(stack: str) -> None:
    plan = plan_of(stack)
    groups = self_managed_groups(plan)
    assert groups, f"{stack} has self-managed pools"
    if stack == "aws-dev":  # its on-demand L4 groups are drained as well as the Spot ones
        assert len(groups) > len(spot_groups(plan))
    (queue,) = plan.of_type(QUEUE)
    assert queue.inputs["sqsManagedSseEnabled"] is True
    assert queue.inputs["messageRetentionSeconds"] == 300

    # Each group waits in Terminating:Wait for the drain, and its instances carry the tag.
    hooks = {hook.inputs["autoscalingGroupName"]: hook for hook in plan.of_type(HOOK)}
    assert set(hooks) == {group.inputs["name"] for group in groups}
    for group in groups:
        hook = hooks[group.inputs["name"]]
        assert hook.inputs["lifecycleTransition"] == "autoscaling:EC2_INSTANCE_TERMINATING"
        assert hook.inputs["defaultResult"] == "CONTINUE"
        # NTH renews the hook while it drains: an interval below the hook's timeout.
        assert hook.inputs["heartbeatTimeout"] > termination.HEARTBEAT_INTERVAL
        tag = tags_of(group)[termination.MANAGED_TAG]
        assert tag["propagateAtLaunch"] is True

    # Interruptions, rebalances, lifecycle actions, state changes and maintenance reach it.
    rules = plan.of_type(RULE)
    patterns = sorted(json.loads(rule.inputs["eventPattern"])["detail-type"][0] for rule in rules)
    assert patterns == sorted(
        pattern["detail-type"][0] for pattern in termination.EVENT_PATTERNS.values()
    )
    targets = plan.of_type(TARGET)
    assert len(targets) == len(rules)
    assert {target.inputs["arn"] for target in targets} == {queue_of(plan)[1]}


def test_the_handler_runs_in_queue_mode_on_the_system_pool_with_scoped_permissions() -> None:
    plan = plan_of("aws-dev")
    release = handler_release(plan)
    assert release.inputs["chart"] == f"{termination.CHART_REPOSITORY}/{termination.CHART}"
    assert release.inputs["version"] == "0.27.6"
    values = release.inputs["values"]
    url, arn = queue_of(plan)
    assert values["enableSqsTerminationDraining"] is True
    assert values["queueURL"] == url
    assert values["nodeSelector"] == {POOL_LABEL: SYSTEM_POOL_NAME}
    assert values["awsRegion"] == load_stack("aws-dev").gpufleet["cluster"]["region"]
    # Heartbeats within NTH's ranges (README "Issuing Lifecycle Heartbeats"): 30-3600 s apart,
    # for 60-172800 s.
    assert 30 <= values["heartbeatInterval"] <= 3600
    assert 60 <= values["heartbeatUntil"] <= 172800

    (role,) = [r for r in plan.of_type("aws:iam/role:Role") if r.name.endswith("spot-drainer-irsa")]
    trust = json.loads(role.inputs["assumeRolePolicy"])
    conditions = trust["Statement"][0]["Condition"]["StringEquals"]
    assert f"system:serviceaccount:kube-system:{termination.SERVICE_ACCOUNT}" in conditions.values()
    (policy,) = [
        p for p in plan.of_type("aws:iam/rolePolicy:RolePolicy") if p.name.endswith("-draining")
    ]
    statements = json.loads(policy.inputs["policy"])["Statement"]
    by_action = {action: s["Resource"] for s in statements for action in s["Action"]}
    assert by_action["sqs:ReceiveMessage"] == arn
    # Lifecycle actions on tagged groups only (tests/test_eks_iam_sizes.py).
    groups = by_action["autoscaling:CompleteLifecycleAction"]
    assert by_action["autoscaling:RecordLifecycleActionHeartbeat"] == groups


def test_no_handler_without_self_managed_pools() -> None:
    pools = [
        {**pool, "aws": {"nodeGroup": "managed"}}
        for pool in load_stack("aws-dev").gpufleet["gpuPools"]
    ]
    plan = plan_of("aws-dev", {"gpufleet:gpuPools": pools})
    assert plan.of_type(QUEUE) == [] and plan.of_type(HOOK) == []
    assert not [r for r in plan.of_type(RELEASE) if termination.CHART in r.inputs["chart"]]
