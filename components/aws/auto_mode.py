"""EKS Auto Mode's node side: the node role its NodeClasses name, that role's access entry
(type EC2 with AmazonEKSAutoNodePolicy), and the discovery tags (the NodeClasses select by id).

Facts and sources: `components.aws.model.auto_mode`. The cluster's own Auto Mode settings are in
`components.aws.cluster` (one request enables compute, block storage and load balancing).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.aws import iam
from components.aws.karpenter import discovery_tags
from components.aws.model import auto_mode, names


@dataclass(frozen=True)
class AutoModeNodesArgs:
    cluster_name: str
    eks_cluster_name: pulumi.Input[str]
    security_group_id: pulumi.Input[str]
    given_subnet_ids: Sequence[str]
    # False on an adopted cluster: its network is the owner's and is never tagged.
    tag_for_discovery: bool
    aws_provider: aws.Provider


class AutoModeNodes(pulumi.ComponentResource):
    role: aws.iam.Role
    access: aws.eks.AccessPolicyAssociation

    def __init__(
        self, name: str, args: AutoModeNodesArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:aws:AutoModeNodes", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=args.aws_provider)
        partition = aws.get_partition_output(
            opts=pulumi.InvokeOutputOptions(parent=self, provider=args.aws_provider)
        ).partition
        self.role = aws.iam.Role(
            f"{name}-role",
            **names.name_args(names.ROLE, f"{name}-role"),
            description=f"EKS Auto Mode GPU nodes of {args.cluster_name}",
            assume_role_policy=iam.service_trust_policy("ec2.amazonaws.com"),
            opts=child,
        )
        for policy in auto_mode.NODE_POLICIES:
            aws.iam.RolePolicyAttachment(
                f"{name}-{policy}",
                role=self.role.name,
                policy_arn=partition.apply(functools.partial(iam.managed_policy_arn, name=policy)),
                opts=child,
            )
        entry = aws.eks.AccessEntry(
            f"{name}-access",
            cluster_name=args.eks_cluster_name,
            principal_arn=self.role.arn,
            type=auto_mode.NODE_ACCESS_ENTRY_TYPE,
            opts=child,
        )
        self.access = aws.eks.AccessPolicyAssociation(
            f"{name}-access-policy",
            cluster_name=args.eks_cluster_name,
            principal_arn=self.role.arn,
            policy_arn=partition.apply(
                lambda p: f"arn:{p}:eks::aws:cluster-access-policy/{auto_mode.NODE_ACCESS_POLICY}"
            ),
            access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[entry])),
        )
        if args.tag_for_discovery:
            discovery_tags(
                name, args.cluster_name, args.security_group_id, args.given_subnet_ids, child
            )
        self.register_outputs({"nodeRole": self.role.arn})
