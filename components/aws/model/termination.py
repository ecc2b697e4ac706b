"""Draining self-managed GPU nodes: AWS Node Termination Handler in queue-processor mode.

Self-managed groups with Capacity Rebalance launch a replacement and then terminate the
at-risk instance, and nothing cordons or drains it first, so the 2-minute Spot notice goes unused
(review eks.md S2-4). On-demand groups lose nodes too, undrained: a scale-in or a manual instance
refresh terminates through the group, and EC2's scheduled events (instance retirement, system
reboot, AWS Health scheduledChange) stop the instance under its pods. So every self-managed
group gets a termination lifecycle hook and the handler's tag, Spot or not (issue 22, point 8).
EKS drains managed groups' nodes itself on its own terminations and updates (EKS user guide,
managed-node-groups: "Amazon EKS automatically drains nodes using the Kubernetes API during
terminations or updates"); what it does not drain there is said in docs/eks.md.

Everything here is from aws/aws-node-termination-handler (snapshot at commit 62a8761d, 2026-07-21,
release v1.25.6): README "Queue Processor" (infrastructure: SQS queue with SSE-SQS and a policy for
EventBridge, a termination lifecycle hook on each group, the managed tag on instances, EventBridge
rules, and the pods' IAM policy) and config/helm/aws-node-termination-handler (Chart.yaml 0.27.6,
values.yaml keys enableSqsTerminationDraining, queueURL, awsRegion, checkTagBeforeDraining,
managedTag, serviceAccount.{create,name,annotations}, nodeSelector).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.aws.model.autoscaler_tags import CLUSTER_TAG
from components.model.catalog.charts import ChartPin

# The chart is published to ECR Public as an OCI artifact.
CHART_REPOSITORY = "oci://public.ecr.aws/aws-ec2/helm"
CHART = "aws-node-termination-handler"
CHART_VERSION = "0.27.6"
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "aws-node-termination-handler"
# NTH drains only instances carrying this tag (checkTagBeforeDraining, on by default).
MANAGED_TAG = "aws-node-termination-handler/managed"
# Seconds an instance waits in Terminating:Wait for NTH to drain it before the hook's default
# result (CONTINUE) lets it go; NTH renews it every HEARTBEAT_INTERVAL seconds while it drains,
# for at most HEARTBEAT_UNTIL seconds, so a GPU pod checkpointing on SIGTERM gets up to an hour
# (NTH README, "Issuing Lifecycle Heartbeats": interval 30-3600 s and below the hook's timeout;
# until 60-172800 s; review eks-2.md N11). A Spot interruption still leaves two minutes.
LIFECYCLE_HEARTBEAT_TIMEOUT = 300
HEARTBEAT_INTERVAL = 120
HEARTBEAT_UNTIL = 3600
# Events are useless after the instance is gone: keep them five minutes, as NTH's README does.
MESSAGE_RETENTION_SECONDS = 300
PIN = ChartPin(CHART, CHART_VERSION, CHART_REPOSITORY, NAMESPACE)

# EventBridge patterns that feed the queue (README step 4): the groups' termination lifecycle
# actions, Spot interruption warnings, rebalance recommendations, instance state changes and
# scheduled EC2 maintenance.
EVENT_PATTERNS: Mapping[str, Mapping[str, Any]] = {
    "asg-termination": {
        "source": ["aws.autoscaling"],
        "detail-type": ["EC2 Instance-terminate Lifecycle Action"],
    },
    "spot-interruption": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Spot Instance Interruption Warning"],
    },
    "rebalance": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Instance Rebalance Recommendation"],
    },
    "state-change": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Instance State-change Notification"],
    },
    "scheduled-change": {
        "source": ["aws.health"],
        "detail-type": ["AWS Health Event"],
        "detail": {"service": ["EC2"], "eventTypeCategory": ["scheduledChange"]},
    },
}

# The pods' permissions (README step 5), with the queue actions scoped to the one queue.
DESCRIBE_ACTIONS = (
    "autoscaling:DescribeAutoScalingInstances",
    "autoscaling:DescribeTags",
    "ec2:DescribeInstances",
)
QUEUE_ACTIONS = ("sqs:DeleteMessage", "sqs:ReceiveMessage")
LIFECYCLE_ACTIONS = (
    "autoscaling:CompleteLifecycleAction",
    # The heartbeats (NTH pkg/monitor/sqsevent/asg-lifecycle-event.go).
    "autoscaling:RecordLifecycleActionHeartbeat",
)


def handler_policy(queue_arn: str, cluster_name: str) -> dict[str, Any]:
    """Describe anywhere (no resource-level scoping exists for them); read and delete only its
    own queue's messages; complete lifecycle actions only in the groups that carry the handler's
    tag and this cluster's gpufleet tag.

    The lifecycle statement names no group: listing one ARN per group (about 116 characters plus
    the name each) passed IAM's 10,240 characters of inline policy per role at 45-60 groups
    (review eks-3.md R3-1). NTH's README grants the lifecycle actions on `*`; kops conditions
    them on a cluster tag (kubernetes/kops pkg/model/iam/iam_builder.go,
    AddNodeTerminationHandlerSQSPermissions); both actions take `aws:ResourceTag` on the
    autoScalingGroup resource (Service Authorization Reference, Amazon EC2 Auto Scaling). Every
    group gpufleet hooks carries both tags (components/aws/gpu_pool.py), an owner's group on an
    adopted cluster not gpufleet's, and the resource stays in the queue's account and region."""
    partition, _, region, account = queue_arn.split(":")[1:5]
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": list(DESCRIBE_ACTIONS), "Resource": "*"},
            {
                "Effect": "Allow",
                "Action": list(LIFECYCLE_ACTIONS),
                "Resource": f"arn:{partition}:autoscaling:{region}:{account}:"
                "autoScalingGroup:*:autoScalingGroupName/*",
                "Condition": {
                    "StringEquals": {
                        f"aws:ResourceTag/{key}": value
                        for key, value in drained_group_tags(cluster_name).items()
                    }
                },
            },
            {"Effect": "Allow", "Action": list(QUEUE_ACTIONS), "Resource": queue_arn},
        ],
    }


def drained_group_tags(cluster_name: str) -> dict[str, str]:
    """The tags (key: value) of a group whose lifecycle actions the handler may complete."""
    return {MANAGED_TAG: "true", CLUSTER_TAG: cluster_name}


def handler_values(
    queue_url: str, region: str, role_arn: str, node_selector: Mapping[str, str]
) -> dict[str, Any]:
    """Helm values for the pinned chart: queue-processor mode, IRSA, on the system pool."""
    return {
        "enableSqsTerminationDraining": True,
        "queueURL": queue_url,
        "awsRegion": region,
        "checkTagBeforeDraining": True,
        "managedTag": MANAGED_TAG,
        "heartbeatInterval": HEARTBEAT_INTERVAL,
        "heartbeatUntil": HEARTBEAT_UNTIL,
        "serviceAccount": {
            "create": True,
            "name": SERVICE_ACCOUNT,
            "annotations": {"eks.amazonaws.com/role-arn": role_arn},
        },
        "nodeSelector": dict(node_selector),
    }
