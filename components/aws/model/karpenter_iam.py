"""Karpenter's controller permissions and interruption queue, scoped as its v1.14 guide scopes
them (aws/karpenter-provider-aws, website/content/en/v1.14/getting-started/
getting-started-with-karpenter/cloudformation.yaml): launches and tags only with the cluster's
ownership tag and a NodePool tag, deletes only what it launched, passes only the node role, and
manages only the instance profiles it creates for its node classes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# EventBridge rules feeding the interruption queue (same guide).
EVENT_PATTERNS: Mapping[str, Mapping[str, Any]] = {
    "health": {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
    "spot-interruption": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Spot Instance Interruption Warning"],
    },
    "rebalance": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]},
    "state-change": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Instance State-change Notification"],
    },
    "reservation-interruption": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"],
    },
}
MESSAGE_RETENTION_SECONDS = 300
QUEUE_ACTIONS = ("sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage")
READ_ACTIONS = (
    "ec2:DescribeCapacityReservations",
    "ec2:DescribeImages",
    "ec2:DescribeInstances",
    "ec2:DescribeInstanceStatus",
    "ec2:DescribeInstanceTypeOfferings",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeLaunchTemplates",
    "ec2:DescribePlacementGroups",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeSpotPriceHistory",
    "ec2:DescribeSubnets",
)
LAUNCH_ACTIONS = ("ec2:RunInstances", "ec2:CreateFleet")
_LAUNCHED_KINDS = (
    "fleet",
    "instance",
    "volume",
    "network-interface",
    "launch-template",
    "spot-instances-request",
)
_LAUNCH_INPUTS = (
    "image/*",
    "snapshot/*",
    "*:security-group/*",
    "*:subnet/*",
    "*:capacity-reservation/*",
    "*:placement-group/*",
)


def _statement(sid: str, actions: Any, resource: Any, **condition: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"Sid": sid, "Effect": "Allow", "Action": actions, "Resource": resource}
    if condition:
        found["Condition"] = condition
    return found


def controller_policy(
    *,
    partition: str,
    region: str,
    account: str,
    cluster_name: str,
    node_role_arn: str,
    queue_arn: str,
) -> dict[str, Any]:
    """One document with every statement the controller needs."""
    ec2 = f"arn:{partition}:ec2:{region}"
    profiles = f"arn:{partition}:iam::{account}:instance-profile/*"
    cluster_arn = f"arn:{partition}:eks:{region}:{account}:cluster/{cluster_name}"
    owned = f"kubernetes.io/cluster/{cluster_name}"
    launched = [f"{ec2}:*:{kind}/*" for kind in _LAUNCHED_KINDS]
    request_owned = {
        f"aws:RequestTag/{owned}": "owned",
        "aws:RequestTag/eks:eks-cluster-name": cluster_name,
    }
    any_nodepool_request = {"aws:RequestTag/karpenter.sh/nodepool": "*"}
    any_nodepool_resource = {"aws:ResourceTag/karpenter.sh/nodepool": "*"}
    resource_owned = {f"aws:ResourceTag/{owned}": "owned"}
    profile_tags = {
        **resource_owned,
        "aws:ResourceTag/topology.kubernetes.io/region": region,
    }
    request_profile = {**request_owned, "aws:RequestTag/topology.kubernetes.io/region": region}
    nodeclass_request = {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"}
    nodeclass_resource = {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"}
    statements = [
        _statement(
            "LaunchFromSharedInputs",
            list(LAUNCH_ACTIONS),
            [
                f"arn:{partition}:ec2:{region}::{part}"
                if part.startswith(("image", "snapshot"))
                else f"{ec2}:{part}"
                for part in _LAUNCH_INPUTS
            ],
        ),
        _statement(
            "LaunchFromOwnLaunchTemplates",
            list(LAUNCH_ACTIONS),
            f"{ec2}:*:launch-template/*",
            StringEquals=resource_owned,
            StringLike=any_nodepool_resource,
        ),
        _statement(
            "LaunchTagged",
            [*LAUNCH_ACTIONS, "ec2:CreateLaunchTemplate"],
            launched,
            StringEquals=request_owned,
            StringLike=any_nodepool_request,
        ),
        _statement(
            "TagOnLaunch",
            "ec2:CreateTags",
            launched,
            StringEquals={
                **request_owned,
                "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"],
            },
            StringLike=any_nodepool_request,
        ),
        _statement(
            "TagOwnInstances",
            "ec2:CreateTags",
            f"{ec2}:*:instance/*",
            StringEquals=resource_owned,
            StringLike=any_nodepool_resource,
            StringEqualsIfExists={"aws:RequestTag/eks:eks-cluster-name": cluster_name},
            **{
                "ForAllValues:StringEquals": {
                    "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]
                }
            },
        ),
        _statement(
            "DeleteOwn",
            ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
            [f"{ec2}:*:instance/*", f"{ec2}:*:launch-template/*"],
            StringEquals=resource_owned,
            StringLike=any_nodepool_resource,
        ),
        _statement(
            "PassNodeRole",
            "iam:PassRole",
            node_role_arn,
            StringEquals={"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]},
        ),
        _statement(
            "CreateNodeClassProfiles",
            "iam:CreateInstanceProfile",
            profiles,
            StringEquals=request_profile,
            StringLike=nodeclass_request,
        ),
        _statement(
            "TagNodeClassProfiles",
            "iam:TagInstanceProfile",
            profiles,
            StringEquals={**profile_tags, **request_profile},
            StringLike={**nodeclass_resource, **nodeclass_request},
        ),
        _statement(
            "ManageNodeClassProfiles",
            [
                "iam:AddRoleToInstanceProfile",
                "iam:RemoveRoleFromInstanceProfile",
                "iam:DeleteInstanceProfile",
            ],
            profiles,
            StringEquals=profile_tags,
            StringLike=nodeclass_resource,
        ),
        _statement("DiscoverCluster", "eks:DescribeCluster", cluster_arn),
        _statement("ReadInterruptions", list(QUEUE_ACTIONS), queue_arn),
        _statement(
            "ReadRegion",
            list(READ_ACTIONS),
            "*",
            StringEquals={"aws:RequestedRegion": region},
        ),
        _statement(
            "ReadPublicParameters",
            "ssm:GetParameter",
            f"arn:{partition}:ssm:{region}::parameter/aws/service/*",
        ),
        _statement("ReadPrices", "pricing:GetProducts", "*"),
        _statement("ListProfiles", "iam:ListInstanceProfiles", "*"),
        _statement("ReadProfiles", "iam:GetInstanceProfile", profiles),
    ]
    return {"Version": "2012-10-17", "Statement": statements}
