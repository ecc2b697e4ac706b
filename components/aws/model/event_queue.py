"""The SQS queue EventBridge feeds EC2 interruption events to, as the node termination handler
and Karpenter both use one: who may send to it."""

from __future__ import annotations

from typing import Any


def queue_policy(queue_arn: str, *, tls_only: bool) -> dict[str, Any]:
    """EventBridge (and SQS) may send to the queue (NTH README step 1; Karpenter's
    cloudformation.yaml KarpenterInterruptionQueuePolicy); with `tls_only`, nothing may reach
    it without TLS (Karpenter's DenyHTTP)."""
    statements: list[dict[str, Any]] = [
        {
            "Effect": "Allow",
            "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
            "Action": "sqs:SendMessage",
            "Resource": queue_arn,
        }
    ]
    if tls_only:
        statements.append(
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            }
        )
    return {"Version": "2012-10-17", "Statement": statements}
