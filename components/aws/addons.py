"""EKS's own add-ons as managed `aws.eks.Addon` resources that follow the cluster's minor.

EKS bootstraps vpc-cni, kube-proxy and coredns as self-managed copies that never move: after a
`kubernetesVersion` bump the control plane and nodes are upgraded and kube-proxy and CoreDNS are
left at the creation version (review eks.md S2-8; AWS recommends "adding the Amazon EKS type of the
add-on", docs "Update the kube-proxy self-managed add-on"). Each add-on here takes the version
EKS names as the default for the cluster's minor (`DescribeAddonVersions`, what
terraform-aws-modules/eks reads through `aws_eks_addon_version`), so a minor bump updates them
with it and `diff` shows the new versions. `OVERWRITE` adopts the bootstrapped copies on create
and keeps the add-ons as declared on update. eks-pod-identity-agent is added for Pod Identity,
which vpc-cni uses for its own role (components/aws/model/vpc_cni.py): the add-ons that need no
node come before the system node group, so its first nodes start with pod networking.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from components.aws import iam
from components.aws.model import health, names, vpc_cni

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
POD_IDENTITY_AGENT = "eks-pod-identity-agent"
# Each add-on's `configurationValues` (checked against its configuration schema by the tests).
ADDON_CONFIGURATION: Mapping[str, Mapping[str, Any]] = {
    health.MONITORING_AGENT_ADDON: health.MONITORING_AGENT_CONFIGURATION,
}


@dataclass(frozen=True)
class EksAddonsArgs:
    cluster_name: pulumi.Input[str]
    cluster_version: pulumi.Input[str]
    # What the vpc-cni role's trust pins (the cluster's ARN).
    cluster_arn: pulumi.Input[str]
    provider: aws.Provider
    # False on Auto Mode, whose nodes run the node monitoring agent as a capability.
    node_monitoring: bool = True


class EksAddons(pulumi.ComponentResource):
    """The cluster's add-ons, in two steps: those that need no node (the network: vpc-cni on its
    own role, kube-proxy, the Pod Identity agent) when built, so the first nodes start with pod
    networking, and those that run as Deployments once nodes exist (`after_nodes`)."""

    addons: dict[str, aws.eks.Addon]
    vpc_cni_role: aws.iam.Role

    def __init__(
        self, name: str, args: EksAddonsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:aws:EksAddons", name, None, opts)
        self._name = name
        self._args = args
        self.addons = {}
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        self.vpc_cni_role, cni_policy = self._vpc_cni_role(name, args, child)
        agent = self._addon(POD_IDENTITY_AGENT, [])
        self._addon(vpc_cni.ADDON, [agent, cni_policy], self.vpc_cni_role)
        for addon, needs_nodes in ADDONS.items():
            if not needs_nodes and addon not in self.addons:
                self._addon(addon, [])

    @property
    def network(self) -> aws.eks.Addon:
        """What a node needs before it starts: vpc-cni, on its own role."""
        return self.addons[vpc_cni.ADDON]

    def after_nodes(self, nodes: Sequence[pulumi.Resource]) -> None:
        """The add-ons that need nodes to become ACTIVE, waiting for `nodes`; then the outputs."""
        for addon, needs_nodes in ADDONS.items():
            if not needs_nodes:
                continue
            if addon == health.MONITORING_AGENT_ADDON and not self._args.node_monitoring:
                continue
            self._addon(addon, list(nodes))
        self.register_outputs(
            {addon: resource.addon_version for addon, resource in self.addons.items()}
        )

    def _addon(
        self,
        addon: str,
        depends_on: list[pulumi.Resource],
        role: aws.iam.Role | None = None,
    ) -> aws.eks.Addon:
        args = self._args
        version = aws.eks.get_addon_version_output(
            addon_name=addon,
            kubernetes_version=args.cluster_version,
            most_recent=False,  # EKS's default for the minor, not the newest build
            opts=pulumi.InvokeOutputOptions(parent=self, provider=args.provider),
        )
        configuration = ADDON_CONFIGURATION.get(addon)
        self.addons[addon] = aws.eks.Addon(
            f"{self._name}-{addon}",
            cluster_name=args.cluster_name,
            addon_name=addon,
            addon_version=version.version,
            configuration_values=json.dumps(configuration) if configuration else None,
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            pod_identity_associations=[
                aws.eks.AddonPodIdentityAssociationArgs(
                    role_arn=role.arn, service_account=vpc_cni.SERVICE_ACCOUNT
                )
            ]
            if role is not None
            else None,
            opts=pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=depends_on),
        )
        return self.addons[addon]

    @staticmethod
    def _vpc_cni_role(
        name: str, args: EksAddonsArgs, child: pulumi.ResourceOptions
    ) -> tuple[aws.iam.Role, aws.iam.RolePolicyAttachment]:
        """vpc-cni's role: trusted by EKS Pod Identity for kube-system/aws-node of this cluster
        only, with the CNI policy (components/aws/model/vpc_cni.py)."""
        resource = f"{name}-vpc-cni"
        role = aws.iam.Role(
            resource,
            **names.name_args(names.ROLE, resource),
            description="vpc-cni (aws-node) of one EKS cluster, through EKS Pod Identity",
            assume_role_policy=pulumi.Output.from_input(args.cluster_arn).apply(
                lambda arn: iam.pod_identity_trust_policy(
                    arn, vpc_cni.NAMESPACE, vpc_cni.SERVICE_ACCOUNT
                )
            ),
            opts=child,
        )
        partition = aws.get_partition_output(
            opts=pulumi.InvokeOutputOptions(parent=child.parent, provider=args.provider)
        ).partition
        policy = aws.iam.RolePolicyAttachment(
            f"{resource}-{iam.CNI_POLICY}",
            role=role.name,
            policy_arn=partition.apply(
                functools.partial(iam.managed_policy_arn, name=iam.CNI_POLICY)
            ),
            opts=child,
        )
        return role, policy
