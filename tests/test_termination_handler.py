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

import copy
import json
from typing import Any

import pytest

from components.aws.mock import ACCOUNT, AUTONAME_SUFFIX
from components.aws.model import termination
from components.aws.model.event_queue import queue_policy
from components.model.pools import POOL_LABEL
from components.model.schema import SYSTEM_POOL_NAME
from components.tooling.diff import diff_plans
from components.tooling.engine import Plan, RecordedResource
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


POLICY = "aws:sqs/queuePolicy:QueuePolicy"


@pytest.mark.parametrize("stack", ["aws-dev", "aws-karpenter"])  # the handler's, Karpenter's
def test_only_the_stacks_own_rules_may_send_to_an_interruption_queue_and_only_over_tls(
    stack: str,
) -> None:
    """Security review SEC-13: a rule in another account that knows the queue's ARN must not
    deliver forged interruption events (the nodes would be drained), and no request may reach
    the queue without TLS."""
    plan = plan_of(stack)
    (queue,) = plan.of_type(QUEUE)
    url, arn = queue_of(plan)
    (policy,) = [p for p in plan.of_type(POLICY) if p.inputs["queueUrl"] == url]
    region = load_stack(stack).gpufleet["cluster"]["region"]
    feeding = {
        f"arn:aws:events:{region}:{ACCOUNT}:rule/{target.inputs['rule']}"
        for target in plan.of_type(TARGET)
        if target.inputs["arn"] == arn
    }
    assert len(feeding) == len(plan.of_type(RULE)) > 1
    statements = json.loads(policy.inputs["policy"])["Statement"]
    allows = [s for s in statements if s["Effect"] == "Allow"]
    # One Allow, for EventBridge only, bound to exactly the rules that feed this queue.
    assert len(allows) == 1
    (allow,) = allows
    assert allow["Principal"] == {"Service": "events.amazonaws.com"}
    assert allow["Action"] == "sqs:SendMessage" and allow["Resource"] == arn
    assert set(allow["Condition"]) == {"ArnEquals"}
    assert set(allow["Condition"]["ArnEquals"]["aws:SourceArn"]) == feeding
    # Every action by anyone without TLS is denied.
    (deny,) = [s for s in statements if s["Effect"] == "Deny"]
    assert deny["Principal"] == "*" and deny["Action"] == "sqs:*" and deny["Resource"] == arn
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    # The policy waits for the rules it names: no cycle, the queue does not wait for it.
    rule_urns = {rule.urn for rule in plan.of_type(RULE)}
    assert rule_urns <= set(policy.dependencies)
    assert policy.urn not in queue.dependencies


def test_a_queue_policy_without_rules_is_refused() -> None:
    with pytest.raises(ValueError, match="rules"):
        queue_policy("arn:aws:sqs:us-east-1:123456789012:q", [])


# The policy running stacks had before SEC-13 (the handler's queue: no source, no TLS rule).
_UNBOUND_POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
            "Action": "sqs:SendMessage",
        }
    ],
}


def test_binding_a_running_queue_to_its_rules_updates_the_policy_in_place() -> None:
    """`pulumi up` on a stack deployed before SEC-13 rewrites the queue policy with
    SetQueueAttributes; the queue, whose messages are drains in progress, stays."""
    new = plan_of("aws-dev").to_json()
    old = copy.deepcopy(new)
    (policy,) = [r for r in old["resources"] if r["type"] == POLICY]
    unbound = copy.deepcopy(_UNBOUND_POLICY)
    unbound["Statement"][0]["Resource"] = queue_of(plan_of("aws-dev"))[1]
    policy["inputs"]["policy"] = json.dumps(unbound)
    result = diff_plans(old, new)
    assert not result.added and not result.removed
    (change,) = result.changed
    assert change.type == POLICY and not change.replaces and not change.refusals
    assert [c.path for c in change.changes] == ["policy"]
    # What would replace them, for the record: a new queue URL or name.
    moved = copy.deepcopy(old)
    renamed = {POLICY: "queueUrl", QUEUE: "name"}
    for resource in moved["resources"]:
        if resource["type"] in renamed:
            resource["inputs"][renamed[resource["type"]]] = "another-queue"
    replaced = {c.type for c in diff_plans(moved, new).changed if c.replaces}
    assert replaced == {POLICY, QUEUE}
