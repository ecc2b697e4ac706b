"""The SQS queue EventBridge feeds EC2 interruption events to, as the node termination handler
and Karpenter both use one: who may send to it.

Sources: Karpenter's cloudformation.yaml (aws/karpenter-provider-aws v1.14.1,
KarpenterInterruptionQueuePolicy: the EventBridge Allow and the DenyHTTP statement); the NTH
README, queue-processor step 1 (the same Allow); EventBridge user guide, "Amazon SQS
permissions" (bind the Allow to the rule with `aws:SourceArn`, against the confused deputy); SQS
developer guide, security best practices ("Enforce encryption of data in transit",
`aws:SecureTransport`). Security review SEC-13.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

EVENTBRIDGE = "events.amazonaws.com"


def queue_policy(queue_arn: str, rule_arns: Sequence[str]) -> dict[str, Any]:
    """Only the stack's own EventBridge rules may send to the queue: without the `aws:SourceArn`
    condition a rule in any account that knows the queue's ARN could deliver forged
    interruption events and have GPU nodes drained. Nothing reaches it without TLS."""
    if not rule_arns:
        raise ValueError("an interruption queue needs the rules that feed it")
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "EventBridgeRulesOfThisStack",
                "Effect": "Allow",
                "Principal": {"Service": EVENTBRIDGE},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
                "Condition": {"ArnEquals": {"aws:SourceArn": sorted(rule_arns)}},
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            },
        ],
    }
