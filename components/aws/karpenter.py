"""Karpenter on EKS: the controller (IRSA role, interruption queue and its EventBridge rules,
pinned Helm release on the system pool) and, per GPU pool, an EC2NodeClass and a NodePool.

Facts and sources: `components.aws.model.karpenter` and `components.aws.model.karpenter_iam`.
The chart installs Karpenter's CRDs, so the custom resources wait for the release.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws import iam
from components.aws.model import karpenter, karpenter_iam
from components.aws.model.amis import AmiFamily
from components.model.pool_spec import PoolSpec


@dataclass(frozen=True)
class KarpenterArgs:
    cluster_name: str
    region: str
    # The node role every NodePool's instances run with (it has an EC2_LINUX access entry).
    node_role: aws.iam.Role
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    node_selector: Mapping[str, str]
    replicas: int
    # What the node classes select by the discovery tag: the cluster security group, and
    # subnets the stack was given (gpufleet's own subnets carry the tag from creation).
    security_group_id: pulumi.Input[str]
    given_subnet_ids: Sequence[str]
    aws_provider: aws.Provider
    k8s_provider: k8s.Provider


class Karpenter(pulumi.ComponentResource):
    queue: aws.sqs.Queue
    release: k8s.helm.v3.Release

    def __init__(
        self, name: str, args: KarpenterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:aws:Karpenter", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=args.aws_provider)
        invoke = pulumi.InvokeOutputOptions(parent=self, provider=args.aws_provider)
        discovered = {"security-group": args.security_group_id} | {
            subnet: subnet for subnet in args.given_subnet_ids
        }
        for key, resource_id in discovered.items():
            aws.ec2.Tag(
                f"{name}-discovery-{key}",
                resource_id=resource_id,
                key=karpenter.DISCOVERY_TAG,
                value=args.cluster_name,
                opts=child,
            )
        self.queue = aws.sqs.Queue(
            f"{name}-interruptions",
            message_retention_seconds=karpenter_iam.MESSAGE_RETENTION_SECONDS,
            sqs_managed_sse_enabled=True,
            opts=child,
        )
        aws.sqs.QueuePolicy(
            f"{name}-interruptions-policy",
            queue_url=self.queue.url,
            policy=self.queue.arn.apply(lambda arn: json.dumps(karpenter_iam.queue_policy(arn))),
            opts=child,
        )
        for event, pattern in karpenter_iam.EVENT_PATTERNS.items():
            rule = aws.cloudwatch.EventRule(
                f"{name}-{event}",
                description=f"{event} events for Karpenter of EKS {args.cluster_name}",
                event_pattern=json.dumps(pattern),
                opts=child,
            )
            aws.cloudwatch.EventTarget(
                f"{name}-{event}-target", rule=rule.name, arn=self.queue.arn, opts=child
            )
        role = aws.iam.Role(
            f"{name}-controller",
            description=f"Karpenter controller of EKS {args.cluster_name} (IRSA)",
            assume_role_policy=pulumi.Output.all(
                args.oidc_provider_arn, args.oidc_issuer_url
            ).apply(
                lambda parts: iam.irsa_trust_policy(
                    parts[0], parts[1], karpenter.NAMESPACE, karpenter.SERVICE_ACCOUNT
                )
            ),
            opts=child,
        )
        partition = aws.get_partition_output(opts=invoke).partition
        account = aws.get_caller_identity_output(opts=invoke).account_id
        policy = aws.iam.RolePolicy(
            f"{name}-controller",
            role=role.id,
            policy=pulumi.Output.all(partition, account, args.node_role.arn, self.queue.arn).apply(
                lambda parts: json.dumps(
                    karpenter_iam.controller_policy(
                        partition=parts[0],
                        region=args.region,
                        account=parts[1],
                        cluster_name=args.cluster_name,
                        node_role_arn=parts[2],
                        queue_arn=parts[3],
                    )
                )
            ),
            opts=child,
        )
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            k8s.helm.v3.ReleaseArgs(
                name=karpenter.CHART,
                # An OCI chart: the reference carries the repository.
                chart=f"{karpenter.CHART_REPOSITORY}/{karpenter.CHART}",
                version=karpenter.CHART_VERSION,
                namespace=karpenter.NAMESPACE,
                create_namespace=False,
                values=pulumi.Output.all(self.queue.name, role.arn).apply(
                    lambda parts: karpenter.helm_values(
                        args.cluster_name, parts[0], parts[1], args.node_selector, args.replicas
                    )
                ),
                atomic=True,
                cleanup_on_fail=True,
                max_history=5,
            ),
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.k8s_provider, depends_on=[policy]
            ),
        )
        self.register_outputs({"queueUrl": self.queue.url, "release": self.release.name})


@dataclass(frozen=True)
class KarpenterGpuPoolArgs:
    pool: PoolSpec
    cluster_name: str
    ami_family: AmiFamily
    node_role_name: pulumi.Input[str]
    capacity_types: Sequence[str]
    # (vCPUs, GiB) of the largest allowed instance type: the NodePool's limits.
    largest: tuple[int, float]
    consolidate_underutilized: bool
    tags: Mapping[str, str]
    controller: Karpenter
    k8s_provider: k8s.Provider


class KarpenterGpuPool(pulumi.ComponentResource):
    """One GPU pool as Karpenter sees it: an EC2NodeClass and a NodePool, both named after it."""

    node_class: k8s.apiextensions.CustomResource
    node_pool: k8s.apiextensions.CustomResource

    def __init__(
        self, name: str, args: KarpenterGpuPoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:aws:KarpenterGpuPool", name, None, opts)
        pool = args.pool
        # The CRDs come with the controller's chart.
        child = pulumi.ResourceOptions(
            parent=self, provider=args.k8s_provider, depends_on=[args.controller.release]
        )
        node_class = pulumi.Output.from_input(args.node_role_name).apply(
            lambda role: karpenter.ec2_node_class(
                pool.name,
                cluster_name=args.cluster_name,
                family=args.ami_family,
                node_role=role,
                disk_size_gb=pool.disk_size_gb,
                tags=args.tags,
            )
        )
        self.node_class = k8s.apiextensions.CustomResource(
            f"{name}-node-class",
            api_version=karpenter.NODE_CLASS_API_VERSION,
            kind="EC2NodeClass",
            metadata={"name": pool.name},
            spec=node_class.apply(lambda document: document["spec"]),
            opts=child,
        )
        node_pool = karpenter.node_pool(
            pool,
            pool.name,
            capacity=args.capacity_types,
            largest=args.largest,
            consolidate_underutilized=args.consolidate_underutilized,
        )
        self.node_pool = k8s.apiextensions.CustomResource(
            f"{name}-node-pool",
            api_version=karpenter.NODE_POOL_API_VERSION,
            kind="NodePool",
            metadata=node_pool["metadata"],
            spec=node_pool["spec"],
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=[self.node_class])
            ),
        )
        self.register_outputs({"nodePool": pool.name})
