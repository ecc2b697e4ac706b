"""AWS Node Termination Handler for self-managed GPU groups (queue-processor mode).

The queue, its EventBridge rules, a termination lifecycle hook per self-managed group, the
handler's IRSA role and its pinned Helm release on the system pool: with them a Spot
interruption, a rebalance, a scheduled EC2 maintenance event or the group's own scale-in
cordons and drains the GPU node before the instance goes (facts and sources:
`components.aws.model.termination`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws.event_queue import interruption_queue, irsa_role
from components.aws.model import names, termination
from components.kubernetes.helm import pinned_release


@dataclass(frozen=True)
class NodeTerminationHandlerArgs:
    cluster_name: str
    region: str
    # The self-managed groups whose nodes must be drained before they go, by a name for their
    # lifecycle hooks (unique in the stack).
    groups: Mapping[str, aws.autoscaling.Group]
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    node_selector: Mapping[str, str]
    aws_provider: aws.Provider
    k8s_provider: k8s.Provider


class NodeTerminationHandler(pulumi.ComponentResource):
    queue: aws.sqs.Queue
    release: k8s.helm.v3.Release

    def __init__(
        self,
        name: str,
        args: NodeTerminationHandlerArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpufleet:aws:NodeTerminationHandler", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=args.aws_provider)
        self.queue = interruption_queue(
            f"{name}-queue",
            name,
            termination.EVENT_PATTERNS,
            lambda event: f"{event} events for the node termination handler of {args.cluster_name}",
            retention_seconds=termination.MESSAGE_RETENTION_SECONDS,
            opts=child,
        )
        for key, group in args.groups.items():
            aws.autoscaling.LifecycleHook(
                f"{name}-{key}-hook",
                **names.name_args(names.LIFECYCLE_HOOK, f"{name}-{key}-hook"),
                autoscaling_group_name=group.name,
                lifecycle_transition="autoscaling:EC2_INSTANCE_TERMINATING",
                default_result="CONTINUE",
                heartbeat_timeout=termination.LIFECYCLE_HEARTBEAT_TIMEOUT,
                opts=child,
            )
        role = irsa_role(
            f"{name}-irsa",
            f"node termination handler of EKS {args.cluster_name} (IRSA)",
            args.oidc_provider_arn,
            args.oidc_issuer_url,
            termination.NAMESPACE,
            termination.SERVICE_ACCOUNT,
            child,
        )
        policy = aws.iam.RolePolicy(
            f"{name}-draining",
            **names.name_args(names.ROLE_POLICY, f"{name}-draining"),
            role=role.id,
            # The same size whatever the number of groups (IAM: 10,240 characters per role).
            policy=self.queue.arn.apply(
                lambda arn: json.dumps(termination.handler_policy(arn, args.cluster_name))
            ),
            opts=child,
        )
        self.release = pinned_release(
            f"{name}-release",
            termination.PIN,
            termination.CHART,
            termination.NAMESPACE,
            pulumi.Output.all(self.queue.url, role.arn).apply(
                lambda parts: termination.handler_values(
                    parts[0], args.region, parts[1], args.node_selector
                )
            ),
            pulumi.ResourceOptions(parent=self, provider=args.k8s_provider, depends_on=[policy]),
            timeout=None,
        )
        self.register_outputs({"queueUrl": self.queue.url, "release": self.release.name})
