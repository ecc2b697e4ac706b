"""EKS's own add-ons as managed `aws.eks.Addon` resources that follow the cluster's minor.

EKS bootstraps vpc-cni, kube-proxy and coredns as self-managed copies that never move: after a
`kubernetesVersion` bump the control plane and nodes are upgraded and kube-proxy and CoreDNS are
left at the creation version (review eks.md S2-8; AWS recommends "adding the Amazon EKS type of the
add-on", docs "Update the kube-proxy self-managed add-on"). Each add-on here takes the version
EKS names as the default for the cluster's minor (`DescribeAddonVersions`, what
terraform-aws-modules/eks reads through `aws_eks_addon_version`), so a minor bump updates them
with it and `diff` shows the new versions. `OVERWRITE` adopts the bootstrapped copies on create
and keeps the add-ons as declared on update. eks-pod-identity-agent is added for Pod Identity.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components.aws.model import health

# The add-ons every gpufleet EKS cluster runs, and whether they need nodes to become ACTIVE
# (CoreDNS is a Deployment: it waits for the system pool). The node monitoring agent sets the
# GPU health conditions managed node groups' auto repair and Karpenter's node repair act on
# (components/aws/model/health.py); Auto Mode has it built in.
ADDONS: dict[str, bool] = {
    "vpc-cni": False,
    "kube-proxy": False,
    "coredns": True,
    "eks-pod-identity-agent": False,
    health.MONITORING_AGENT_ADDON: True,
}
# Each add-on's `configurationValues` (checked against its configuration schema by the tests).
ADDON_CONFIGURATION: Mapping[str, Mapping[str, Any]] = {
    health.MONITORING_AGENT_ADDON: health.MONITORING_AGENT_CONFIGURATION,
}


@dataclass(frozen=True)
class EksAddonsArgs:
    cluster_name: pulumi.Input[str]
    cluster_version: pulumi.Input[str]
    provider: aws.Provider
    # Resources the add-ons needing nodes wait for (the system node group).
    nodes: list[pulumi.Resource] = field(default_factory=list)
    # False on Auto Mode, whose nodes run the node monitoring agent as a capability.
    node_monitoring: bool = True


class EksAddons(pulumi.ComponentResource):
    addons: dict[str, aws.eks.Addon]

    def __init__(
        self, name: str, args: EksAddonsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:aws:EksAddons", name, None, opts)
        self.addons = {}
        for addon, needs_nodes in ADDONS.items():
            if addon == health.MONITORING_AGENT_ADDON and not args.node_monitoring:
                continue
            version = aws.eks.get_addon_version_output(
                addon_name=addon,
                kubernetes_version=args.cluster_version,
                most_recent=False,  # EKS's default for the minor, not the newest build
                opts=pulumi.InvokeOutputOptions(parent=self, provider=args.provider),
            )
            configuration = ADDON_CONFIGURATION.get(addon)
            self.addons[addon] = aws.eks.Addon(
                f"{name}-{addon}",
                cluster_name=args.cluster_name,
                addon_name=addon,
                addon_version=version.version,
                configuration_values=json.dumps(configuration) if configuration else None,
                resolve_conflicts_on_create="OVERWRITE",
                resolve_conflicts_on_update="OVERWRITE",
                opts=pulumi.ResourceOptions(
                    parent=self,
                    provider=args.provider,
                    depends_on=list(args.nodes) if needs_nodes else [],
                ),
            )
        self.register_outputs(
            {addon: resource.addon_version for addon, resource in self.addons.items()}
        )
