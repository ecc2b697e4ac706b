"""The Kubernetes cluster autoscaler for EKS: Helm chart, IRSA role, least-privilege policy.

It discovers node groups by the cluster's tags, sizes groups at zero from their node-template
tags, and may resize only groups tagged as this cluster's (the IAM policy's condition).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws import iam
from components.aws.event_queue import irsa_role
from components.aws.model import autoscaler_tags, names, provisioners
from components.aws.model import provisioning_requests as provisioning_requests_model
from components.kubernetes.helm import pinned_release
from components.model.catalog import charts
from components.model.pools import POOL_LABEL
from components.model.schema import SYSTEM_POOL_NAME

RELEASE_NAME = "cluster-autoscaler"
# Named explicitly: the IRSA trust policy names this exact service account.
SERVICE_ACCOUNT = "cluster-autoscaler"
IRSA_ANNOTATION = "eks.amazonaws.com/role-arn"
# Priority expander: Spot groups first (cheaper), then everything else.
SPOT_PRIORITY = 20
DEFAULT_PRIORITY = 10


def expander_priorities(spot_group_patterns: Sequence[str]) -> dict[str, list[str]]:
    """Priority -> regexes over auto scaling group names (the chart renders the ConfigMap)."""
    priorities = {str(DEFAULT_PRIORITY): [".*"]}
    if spot_group_patterns:
        priorities[str(SPOT_PRIORITY)] = sorted(spot_group_patterns)
    return priorities


SCALE_DOWN_UNNEEDED_TIME = "10m"
SCALE_DOWN_DELAY_AFTER_ADD = "10m"


def autoscaler_values(
    cluster_name: str,
    region: str,
    kubernetes_version: str,
    expander: str,
    role_arn: pulumi.Input[str],
    spot_group_patterns: Sequence[str],
    node_selector: Mapping[str, str] | None = None,
    own_tag: str | None = None,
    provisioning_requests: bool = False,
) -> dict[str, Any]:
    """Helm values for the pinned chart (keys checked against its values.yaml by the tests).

    `own_tag`: on a cluster gpufleet adopts, the autoscaler discovers only groups carrying
    gpufleet's tag (the chart renders `--node-group-auto-discovery=asg:tag=<tags>`, which finds
    groups having all of them; cluster-autoscaler cloudprovider/aws/README.md), never the
    owner's managed node groups, and never evicts system pods (the owner's).

    `provisioning_requests`: a pool is queued, so the autoscaler serves ProvisioningRequests
    (components/aws/model/provisioning_requests.py)."""
    discovery: dict[str, Any] = {"clusterName": cluster_name}
    if own_tag:
        discovery["tags"] = autoscaler_tags.discovery_keys(cluster_name, own_tag)
    values: dict[str, Any] = {
        "cloudProvider": "aws",
        "awsRegion": region,  # so the autoscaler never needs the node's metadata service
        "autoDiscovery": discovery,
        "fullnameOverride": RELEASE_NAME,
        # The autoscaler's minor must match the cluster's (config rejects unknown minors).
        "image": {"tag": charts.CLUSTER_AUTOSCALER_IMAGE_TAGS[kubernetes_version]},
        "rbac": {
            "serviceAccount": {
                "create": True,
                "name": SERVICE_ACCOUNT,
                "annotations": {IRSA_ANNOTATION: role_arn},
            }
        },
        "extraArgs": {
            "balance-similar-node-groups": True,
            # A pool's per-zone groups are similar because they share this label, unless the
            # pool sets aws.maxNodesPerZone (provisioners.BALANCING_LABEL); the built-in
            # comparison stops matching once one zone's nodes carry labels the others'
            # templates lack (review eks.md S2).
            "balancing-label": provisioners.BALANCING_LABEL,
            "skip-nodes-with-system-pods": bool(own_tag),
            # GPU pods routinely use emptyDir (datasets, caches); left at true, a GPU node
            # running one is never scaled down.
            "skip-nodes-with-local-storage": False,
            # An idle GPU node goes after 10 minutes, and not sooner than 10 minutes after a
            # scale-up (the autoscaler's defaults, stated so they are reviewed, not assumed).
            "scale-down-unneeded-time": SCALE_DOWN_UNNEEDED_TIME,
            "scale-down-delay-after-add": SCALE_DOWN_DELAY_AFTER_ADD,
            "expander": expander,
        },
        # On the on-demand system pool: never on a Spot GPU node it might scale away (on an
        # adopted cluster, its CPU nodes: the GPU nodes are tainted).
        "nodeSelector": dict(
            {POOL_LABEL: SYSTEM_POOL_NAME} if node_selector is None else node_selector
        ),
        "podAnnotations": {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"},
        "resources": {
            "requests": {"cpu": "100m", "memory": "600Mi"},
            "limits": {"memory": "600Mi"},
        },
    }
    if "priority" in expander.split(","):
        values["expanderPriorities"] = expander_priorities(spot_group_patterns)
    if provisioning_requests:
        extra = provisioning_requests_model.helm_values()
        values["extraArgs"].update(extra["extraArgs"])
        values["rbac"].update(extra["rbac"])
    return values


@dataclass(frozen=True)
class ClusterAutoscalerArgs:
    cluster_name: str
    region: str
    kubernetes_version: str
    expander: str
    oidc_provider_arn: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    spot_group_patterns: Sequence[str]
    node_selector: Mapping[str, str]
    aws_provider: aws.Provider
    k8s_provider: k8s.Provider
    depends_on: Sequence[pulumi.Resource] = ()
    # gpufleet's own discovery tag on an adopted cluster (see autoscaler_values).
    own_tag: str | None = None
    # Some pool is queued: serve ProvisioningRequests (flag, CRD, RBAC).
    provisioning_requests: bool = False


class ClusterAutoscaler(pulumi.ComponentResource):
    role: aws.iam.Role
    release: k8s.helm.v3.Release
    # The ProvisioningRequest CRD of the autoscaler's release (only with queued pools).
    provisioning_request_crd: k8s.yaml.v2.ConfigFile | None

    def __init__(
        self, name: str, args: ClusterAutoscalerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:aws:ClusterAutoscaler", name, None, opts)
        pin = charts.CLUSTER_AUTOSCALER
        aws_child = pulumi.ResourceOptions(parent=self, provider=args.aws_provider)
        self.role = irsa_role(
            f"{name}-irsa",
            f"cluster-autoscaler of EKS {args.cluster_name} (IRSA)",
            args.oidc_provider_arn,
            args.oidc_issuer_url,
            pin.namespace,
            SERVICE_ACCOUNT,
            aws_child,
        )
        policy = aws.iam.RolePolicy(
            f"{name}-scaling",
            **names.name_args(names.ROLE_POLICY, f"{name}-scaling"),
            role=self.role.id,
            policy=json.dumps(iam.autoscaler_policy_document(args.cluster_name, args.own_tag)),
            opts=aws_child,
        )
        self.provisioning_request_crd = None
        needs: list[pulumi.Resource] = [policy, *args.depends_on]
        if args.provisioning_requests:
            # yaml/v2 expands the pinned file in the provider (at preview and up); the
            # autoscaler watches ProvisioningRequests from its start, so the CRD comes first.
            self.provisioning_request_crd = k8s.yaml.v2.ConfigFile(
                f"{name}-provisioning-request-crd",
                file=provisioning_requests_model.crd_url(
                    charts.CLUSTER_AUTOSCALER_IMAGE_TAGS[args.kubernetes_version]
                ),
                opts=pulumi.ResourceOptions(parent=self, provider=args.k8s_provider),
            )
            needs.append(self.provisioning_request_crd)
        self.release = pinned_release(
            f"{name}-release",
            pin,
            RELEASE_NAME,
            pin.namespace,
            autoscaler_values(
                args.cluster_name,
                args.region,
                args.kubernetes_version,
                args.expander,
                self.role.arn,
                args.spot_group_patterns,
                args.node_selector,
                args.own_tag,
                args.provisioning_requests,
            ),
            pulumi.ResourceOptions(parent=self, provider=args.k8s_provider, depends_on=needs),
        )
        self.register_outputs({"roleArn": self.role.arn, "release": self.release.name})
