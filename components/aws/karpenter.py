"""Karpenter on EKS: the controller (IRSA role, interruption queue and its EventBridge rules,
pinned Helm release on the system pool); each GPU pool's node class and NodePool are the shared
`components/kubernetes/karpenter_pool.py: KarpenterGpuPool`, under EKS's type token.

Facts and sources: `components.aws.model.karpenter` and `components.aws.model.karpenter_iam`.
Karpenter's CRDs are a release of their own (karpenter-crd, upgraded with the controller); the
controller waits for them and the custom resources wait for the controller.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws.event_queue import interruption_queue, irsa_role
from components.aws.model import karpenter, karpenter_iam, names
from components.kubernetes.helm import pinned_release


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
    # What carries the discovery tag: the cluster security group, and subnets the stack was
    # given (gpufleet's own subnets carry it from creation). Node classes select by id.
    security_group_id: pulumi.Input[str]
    given_subnet_ids: Sequence[str]
    # False on an adopted cluster: its network is the owner's and is never tagged.
    tag_for_discovery: bool
    aws_provider: aws.Provider
    k8s_provider: k8s.Provider
    # Some pool shares its GPUs: turn on the NodeOverlay gate (its overlays say the count).
    node_overlays: bool = False


class Karpenter(pulumi.ComponentResource):
    queue: aws.sqs.Queue
    crds: k8s.helm.v3.Release
    release: k8s.helm.v3.Release

    def __init__(
        self, name: str, args: KarpenterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:aws:Karpenter", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=args.aws_provider)
        invoke = pulumi.InvokeOutputOptions(parent=self, provider=args.aws_provider)
        if args.tag_for_discovery:
            discovery_tags(
                name, args.cluster_name, args.security_group_id, args.given_subnet_ids, child
            )
        self.queue = interruption_queue(
            f"{name}-interruptions",
            name,
            karpenter_iam.EVENT_PATTERNS,
            lambda event: f"{event} events for Karpenter of EKS {args.cluster_name}",
            retention_seconds=karpenter_iam.MESSAGE_RETENTION_SECONDS,
            opts=child,
        )
        role = irsa_role(
            f"{name}-controller",
            f"Karpenter controller of EKS {args.cluster_name} (IRSA)",
            args.oidc_provider_arn,
            args.oidc_issuer_url,
            karpenter.NAMESPACE,
            karpenter.SERVICE_ACCOUNT,
            child,
        )
        partition = aws.get_partition_output(opts=invoke).partition
        account = aws.get_caller_identity_output(opts=invoke).account_id
        policy = aws.iam.RolePolicy(
            f"{name}-controller",
            **names.name_args(names.ROLE_POLICY, f"{name}-controller"),
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
        self.crds = pinned_release(
            f"{name}-crds",
            karpenter.CRD_PIN,
            karpenter.CRD_CHART,
            karpenter.NAMESPACE,
            None,
            pulumi.ResourceOptions(parent=self, provider=args.k8s_provider),
            timeout=None,
        )
        self.release = pinned_release(
            f"{name}-release",
            karpenter.PIN,
            karpenter.CHART,
            karpenter.NAMESPACE,
            pulumi.Output.all(self.queue.name, role.arn).apply(
                lambda parts: karpenter.helm_values(
                    args.cluster_name,
                    parts[0],
                    parts[1],
                    args.node_selector,
                    args.replicas,
                    node_overlays=args.node_overlays,
                )
            ),
            pulumi.ResourceOptions(
                parent=self, provider=args.k8s_provider, depends_on=[policy, self.crds]
            ),
            timeout=None,
            # The CRDs are the karpenter-crd release's.
            skip_crds=True,
        )
        self.register_outputs({"queueUrl": self.queue.url, "release": self.release.name})


# The component type of EKS's Karpenter and Auto Mode pools (the shared KarpenterGpuPool in
# components/kubernetes/karpenter_pool.py): part of every running EKS stack's URNs.
KARPENTER_GPU_POOL_TYPE = "gpufleet:aws:KarpenterGpuPool"


def discovery_tags(
    name: str,
    cluster_name: str,
    security_group_id: pulumi.Input[str],
    given_subnet_ids: Sequence[str],
    opts: pulumi.ResourceOptions,
) -> None:
    """The discovery tag on the cluster security group and on subnets the stack was given
    (gpufleet's own subnets carry it from creation). Node classes select by id since SEC-18;
    the tag stays on running stacks rather than adding tag deletions to their `up`."""
    discovered = {"security-group": security_group_id} | {s: s for s in given_subnet_ids}
    for key, resource_id in discovered.items():
        aws.ec2.Tag(
            f"{name}-discovery-{key}",
            resource_id=resource_id,
            key=karpenter.DISCOVERY_TAG,
            value=cluster_name,
            opts=opts,
        )
