"""An SSE SQS queue fed EC2 interruption events by EventBridge rules, and an IRSA role: the
plumbing the node termination handler and Karpenter both need (facts in their model modules)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pulumi
import pulumi_aws as aws

from components.aws import iam
from components.aws.model import event_queue, names


def interruption_queue(
    name: str,
    rule_prefix: str,
    patterns: Mapping[str, Mapping[str, Any]],
    describe: Callable[[str], str],
    *,
    retention_seconds: int,
    opts: pulumi.ResourceOptions,
) -> aws.sqs.Queue:
    """The queue `name` (policy `<name>-policy`: only these rules may send, only over TLS) and
    one EventBridge rule `<rule_prefix>-<event>` with its target per pattern, described by
    `describe(event)`."""
    queue = aws.sqs.Queue(
        name,
        message_retention_seconds=retention_seconds,
        sqs_managed_sse_enabled=True,
        opts=opts,
        **names.name_args(names.QUEUE, name),
    )
    rule_arns: list[pulumi.Output[str]] = []
    for event, pattern in patterns.items():
        rule_name = f"{rule_prefix}-{event}"
        rule = aws.cloudwatch.EventRule(
            rule_name,
            description=describe(event),
            event_pattern=json.dumps(pattern),
            opts=opts,
            **names.name_args(names.EVENT_RULE, rule_name),
        )
        aws.cloudwatch.EventTarget(
            f"{rule_name}-target",
            rule=rule.name,
            arn=queue.arn,
            opts=opts,
            **names.name_args(names.EVENT_TARGET, f"{rule_name}-target"),
        )
        rule_arns.append(rule.arn)
    # The rules depend on nothing here, so the policy can name them (no cycle); a change of it
    # is an update in place of the policy alone (queue_url is its only ForceNew argument).
    aws.sqs.QueuePolicy(
        f"{name}-policy",
        queue_url=queue.url,
        policy=pulumi.Output.all(queue.arn, *rule_arns).apply(
            lambda arns: json.dumps(event_queue.queue_policy(arns[0], arns[1:]))
        ),
        opts=opts,
    )
    return queue


def irsa_role(
    name: str,
    description: str,
    oidc_provider_arn: pulumi.Input[str],
    oidc_issuer_url: pulumi.Input[str],
    namespace: str,
    service_account: str,
    opts: pulumi.ResourceOptions,
) -> aws.iam.Role:
    """A role exactly one Kubernetes service account assumes through the cluster's OIDC issuer."""
    return aws.iam.Role(
        name,
        **names.name_args(names.ROLE, name),
        description=description,
        assume_role_policy=pulumi.Output.all(oidc_provider_arn, oidc_issuer_url).apply(
            lambda parts: iam.irsa_trust_policy(parts[0], parts[1], namespace, service_account)
        ),
        opts=opts,
    )
