"""What a fabric pool's nodes need around them: EFA interfaces in the launch template (group
pools; a Karpenter pool's are in its EC2NodeClass, components/aws/model/karpenter.py), a
security group that lets EFA traffic through, and a cluster placement group per zone.

EFA's security group must allow all inbound and all outbound traffic from and to itself
(docs.aws.amazon.com/AWSEC2/latest/UserGuide/create-efa.html, "Prepare an EFA-enabled security
group"; terraform-aws-modules/eks puts the same `all_self_efa` ingress and egress rules on its
node group security group, modules/eks-managed-node-group/main.tf L719-758 @bef29c4d). gpufleet
makes a group of its own per pool rather than adding the rules to the EKS cluster security
group: that group is EKS's (on an adopted cluster, its owner's), it already allows all traffic
from itself, and a second identical rule is refused by EC2 (InvalidPermission.Duplicate).

With network interfaces in a launch template, security groups go on each interface and not on
the template (docs.aws.amazon.com/pcs/latest/userguide/working-with_networking_efa_create-lt.html;
terraform-aws-modules/eks main.tf L267-323). The primary interface (EFA with ENA, the node's IP)
carries the node security groups and the EFA group; the EFA-only ones carry the EFA group alone,
as AWS PCS's EFA launch template does ("Every EFA needs the security group that enables EFA
traffic ... Other security groups ... only need to be attached to the primary network
interface", same page): they have no IP address, so no IP traffic for the other groups to
filter. None gets a public IP.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.aws.model.autoscaler_tags import default_tags
from components.aws.model.fabric import EFA_ONLY, PLACEMENT_STRATEGY, EksFabric


@dataclass(frozen=True)
class FabricNetwork:
    """A fabric pool's EFA security group and its placement group per zone (none on a
    reservation, which places the instances itself)."""

    security_group: aws.ec2.SecurityGroup
    placement_groups: dict[str, aws.ec2.PlacementGroup]

    def placement_group_name(self, zone: str) -> pulumi.Output[str] | None:
        group = self.placement_groups.get(zone)
        return group.name if group is not None else None


def fabric_network(
    name: str,
    fabric: EksFabric,
    zones: Sequence[str],
    vpc_id: pulumi.Input[str],
    cluster_name: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
) -> FabricNetwork:
    """The EFA security group with its self rules, and a cluster placement group per zone."""
    tags = {**default_tags(cluster_name), "Name": f"{name}-efa"}
    group = aws.ec2.SecurityGroup(
        f"{name}-efa",
        description="EFA: all traffic between the nodes of one gpufleet fabric pool",
        vpc_id=vpc_id,
        # No inline rules: the two below are the group's only ones (the provider removes the
        # allow-all egress rule EC2 adds to a new group).
        tags=tags,
        opts=opts,
    )
    aws.vpc.SecurityGroupIngressRule(
        f"{name}-efa-in",
        security_group_id=group.id,
        referenced_security_group_id=group.id,
        ip_protocol="-1",
        description="EFA: all traffic from the pool's nodes",
        tags=tags,
        opts=opts,
    )
    aws.vpc.SecurityGroupEgressRule(
        f"{name}-efa-out",
        security_group_id=group.id,
        referenced_security_group_id=group.id,
        ip_protocol="-1",
        description="EFA: all traffic to the pool's nodes",
        tags=tags,
        opts=opts,
    )
    placement_groups = {}
    if fabric.placement_group:
        for zone in zones:
            placement_groups[zone] = aws.ec2.PlacementGroup(
                f"{name}-{zone}-placement",
                strategy=PLACEMENT_STRATEGY,
                tags={**default_tags(cluster_name), "Name": f"{name}-{zone}"},
                opts=opts,
            )
    return FabricNetwork(group, placement_groups)


def network_interfaces(
    fabric: EksFabric,
    node_security_group_ids: Sequence[pulumi.Input[str]],
    efa_security_group_id: pulumi.Input[str],
) -> list[aws.ec2.LaunchTemplateNetworkInterfaceArgs]:
    """One interface per network card (components/aws/model/fabric.py `efa_interfaces`): the
    primary with the node's security groups and the EFA group, the EFA-only ones with the EFA
    group alone; strings where pulumi-aws takes them."""
    return [
        aws.ec2.LaunchTemplateNetworkInterfaceArgs(
            network_card_index=interface.network_card_index,
            device_index=interface.device_index,
            interface_type=interface.interface_type,
            security_groups=(
                [efa_security_group_id]
                if interface.interface_type == EFA_ONLY
                else [*node_security_group_ids, efa_security_group_id]
            ),
            associate_public_ip_address="false",
            delete_on_termination="true",
        )
        for interface in fabric.interfaces
    ]
