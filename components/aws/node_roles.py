"""The IAM roles GPU and system nodes run with, for a cluster gpufleet creates or adopts.

Managed and self-managed nodes get separate roles: EKS creates the access entry of a managed
group's role itself, while self-managed nodes (and Karpenter's) need an EC2_LINUX entry. Neither
carries the VPC CNI's policy, unless an adopted cluster's vpc-cni runs on its nodes' credentials
(`node_policies`, components/aws/model/vpc_cni.py).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.aws import iam
from components.aws.model import names, vpc_cni


def node_policies(owners_cni: vpc_cni.OwnersCni | None = None) -> tuple[str, ...]:
    """The managed policies of gpufleet's node roles (`owners_cni`: an adopted cluster's
    vpc-cni as the add-on API describes it; None on a cluster gpufleet creates)."""
    if vpc_cni.node_roles_keep_cni_policy(owners_cni):
        return (*iam.NODE_POLICIES, iam.CNI_POLICY)
    return iam.NODE_POLICIES


def service_role(
    name: str,
    service: str,
    policies: tuple[str, ...],
    partition: pulumi.Output[str],
    child: pulumi.ResourceOptions,
) -> tuple[aws.iam.Role, list[aws.iam.RolePolicyAttachment]]:
    """A role for an AWS service with AWS-managed policies."""
    role = aws.iam.Role(
        name,
        assume_role_policy=iam.service_trust_policy(service),
        opts=child,
        **names.name_args(names.ROLE, name),
    )
    attachments = [
        aws.iam.RolePolicyAttachment(
            f"{name}-{policy}",
            role=role.name,
            policy_arn=partition.apply(functools.partial(iam.managed_policy_arn, name=policy)),
            opts=child,
        )
        for policy in policies
    ]
    return role, attachments


@dataclass(frozen=True)
class SelfManagedNodeRole:
    role: aws.iam.Role
    # Karpenter creates its node classes' instance profiles from the role itself (None).
    instance_profile: aws.iam.InstanceProfile | None
    # API authentication mode: without this entry the nodes cannot join.
    access: aws.eks.AccessEntry


def self_managed_nodes(
    name: str,
    cluster_name: pulumi.Input[str],
    partition: pulumi.Output[str],
    instance_profile: bool,
    child: pulumi.ResourceOptions,
    policies: tuple[str, ...] = iam.NODE_POLICIES,
) -> SelfManagedNodeRole:
    """`<name>-self-managed-nodes`: the role, its instance profile and its EC2_LINUX entry."""
    resource = f"{name}-self-managed-nodes"
    role, _ = service_role(resource, "ec2.amazonaws.com", policies, partition, child)
    profile = (
        aws.iam.InstanceProfile(
            resource,
            role=role.name,
            opts=child,
            **names.name_args(names.INSTANCE_PROFILE, resource),
        )
        if instance_profile
        else None
    )
    access = aws.eks.AccessEntry(
        resource,
        cluster_name=cluster_name,
        principal_arn=role.arn,
        type="EC2_LINUX",
        opts=child,
    )
    return SelfManagedNodeRole(role=role, instance_profile=profile, access=access)
