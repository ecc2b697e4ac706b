"""IAM policy documents for the cluster, its nodes and the cluster autoscaler (pure data).

Kept free of resources so tests can check the exact permissions, and so every document is
reviewed in one place.
"""

from __future__ import annotations

import json
from typing import Any

from components.aws.model.autoscaler_tags import resize_condition

# Managed policies by role (EKS user guide: cluster IAM role, node IAM role).
CLUSTER_POLICIES = ("AmazonEKSClusterPolicy",)
NODE_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    # Pull-only is the least privilege that lets nodes pull images from ECR.
    "AmazonEC2ContainerRegistryPullOnly",
)
# The VPC CNI's ENI and IP permissions: on the vpc-cni add-on's own role, never on a node role
# gpufleet's cluster creates (EKS user guide, "Amazon EKS node IAM role": only "if you don't use
# IRSA or EKS Pod Identity"; review security-1 SEC-2). On an adopted cluster whose vpc-cni runs
# on its nodes' credentials, gpufleet's node roles keep it (components/aws/model/vpc_cni.py).
CNI_POLICY = "AmazonEKS_CNI_Policy"

# kubernetes/autoscaler cloudprovider/aws/README.md, "Full Cluster Autoscaler Features Policy".
AUTOSCALER_READ_ACTIONS = (
    "autoscaling:DescribeAutoScalingGroups",
    "autoscaling:DescribeAutoScalingInstances",
    "autoscaling:DescribeLaunchConfigurations",
    "autoscaling:DescribeScalingActivities",
    "ec2:DescribeImages",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeLaunchTemplateVersions",
    "ec2:GetInstanceTypesFromInstanceRequirements",
    "eks:DescribeNodegroup",
)
AUTOSCALER_WRITE_ACTIONS = (
    "autoscaling:SetDesiredCapacity",
    "autoscaling:TerminateInstanceInAutoScalingGroup",
)


def managed_policy_arn(partition: str, name: str) -> str:
    return f"arn:{partition}:iam::aws:policy/{name}"


def service_trust_policy(service: str) -> str:
    """Trust for an AWS service principal (EKS for the cluster, EC2 for nodes)."""
    actions = (
        ["sts:AssumeRole", "sts:TagSession"]
        if service == "eks.amazonaws.com"
        else ["sts:AssumeRole"]
    )
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"Service": service}, "Action": actions}
            ],
        }
    )


def pod_identity_trust_policy(cluster_arn: str, namespace: str, service_account: str) -> str:
    """Trust for EKS Pod Identity, for exactly one service account of one cluster: the session
    tags EKS Pod Identity sets on AssumeRole, pinned in the trust policy (EKS user guide, "Create
    IAM role with trust policy required by EKS Pod Identity", Setting Conditions, and "List of
    session tags added by EKS Pod Identity")."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "pods.eks.amazonaws.com"},
                    "Action": ["sts:AssumeRole", "sts:TagSession"],
                    "Condition": {
                        "StringEquals": {
                            "aws:RequestTag/eks-cluster-arn": cluster_arn,
                            "aws:RequestTag/kubernetes-namespace": namespace,
                            "aws:RequestTag/kubernetes-service-account": service_account,
                        }
                    },
                }
            ],
        }
    )


def irsa_trust_policy(
    oidc_provider_arn: str, issuer_url: str, namespace: str, service_account: str
) -> str:
    """Trust for exactly one Kubernetes service account through the cluster's OIDC issuer."""
    host = issuer_url.removeprefix("https://")
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": oidc_provider_arn},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {
                        "StringEquals": {
                            f"{host}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                            f"{host}:aud": "sts.amazonaws.com",
                        }
                    },
                }
            ],
        }
    )


def autoscaler_policy_document(cluster_name: str, own_tag: str | None = None) -> dict[str, Any]:
    """Read anywhere; resize and terminate only in groups tagged as this cluster's (EKS best
    practices), or, on an adopted cluster, only in gpufleet's groups (`own_tag`)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ReadScalingState",
                "Effect": "Allow",
                "Action": list(AUTOSCALER_READ_ACTIONS),
                "Resource": "*",
            },
            {
                "Sid": "ScaleOwnGroupsOnly",
                "Effect": "Allow",
                "Action": list(AUTOSCALER_WRITE_ACTIONS),
                "Resource": "*",
                "Condition": {
                    "StringEquals": {
                        f"aws:ResourceTag/{key}": value
                        for key, value in resize_condition(cluster_name, own_tag).items()
                    }
                },
            },
        ],
    }


def secrets_key_policy_document(key_arn: str) -> str:
    """Lets the cluster role use the secrets-encryption KMS key (and nothing else)."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ListGrants", "kms:DescribeKey"],
                    "Resource": key_arn,
                }
            ],
        }
    )
