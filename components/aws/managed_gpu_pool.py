"""A GPU pool as EKS managed node groups, one per zone (the alternative to self-managed groups).

EKS picks the accelerated AMI from `ami_type`, registers labels and taints from the API, tags the
underlying auto scaling group for autoscaler discovery, and lets the autoscaler read labels,
taints and node-template tags through `eks:DescribeNodegroup` when the group is at zero.

One group per zone, as for self-managed pools: the autoscaler labels a group's template with the
group's first zone only ("Found multiple availability zones ... using first", cluster-autoscaler
aws_manager.go), so a multi-zone group is misjudged at zero for zone-bound pods (EBS volumes,
zonal affinity) and may scale up in the wrong zone (review eks.md S2-7; the autoscaler's README
recommends one group per zone). The groups of a pool share `gpufleet.io/pool`, the autoscaler's
balancing label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from components.aws.amis import managed_release_version
from components.aws.fabric_network import FabricNetwork, fabric_network, network_interfaces
from components.aws.launch_template import (
    METADATA_OPTIONS,
    block_devices,
    reservation_args,
    tag_specifications,
)
from components.aws.live_groups import LiveNodeGroups
from components.aws.model import autoscaler_tags, names
from components.aws.model.autoscaler_tags import default_tags
from components.aws.model.fabric import fabric_resources
from components.aws.model.group_settings import EksGroupSettings
from components.aws.model.groups import (
    applied_bounds_tag,
    group_max_sizes,
    scaling_to_send,
    zone_sizes,
)
from components.aws.user_data import AmiFamily, ClusterJoin, encode, merged_user_data
from components.model.pools import PoolSpec

AMI_TYPES: Mapping[AmiFamily, str] = {
    "al2023": "AL2023_x86_64_NVIDIA",
    "bottlerocket": "BOTTLEROCKET_x86_64_NVIDIA",
}
EKS_TAINT_EFFECTS = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}


def node_group_name(pool: str, zone: str) -> str:
    """The managed group of a pool in one zone (the node label eks.amazonaws.com/nodegroup)."""
    return f"{pool}-{zone}"


def group_name_pattern(pool: str, zone: str) -> str:
    """A regex for the auto scaling group EKS makes for a managed group: `eks-<group>-<uuid>`."""
    return f"^eks-{re.escape(node_group_name(pool, zone))}-[0-9a-f-]{{36}}$"


@dataclass(frozen=True)
class ManagedGpuPoolArgs:
    pool: PoolSpec
    cluster_name: pulumi.Input[str]
    cluster_version: pulumi.Input[str]
    # The stack's minor (the cluster's, also when adopted): picks the pinned image release.
    kubernetes_version: str
    # The image family, capacity and image start (components/aws/model/group_settings.py).
    settings: EksGroupSettings
    node_role_arn: pulumi.Input[str]
    subnets_by_zone: Mapping[str, pulumi.Input[Sequence[pulumi.Input[str]]]]
    provider: aws.Provider
    # gpufleet's own discovery tag, put on each group's auto scaling group (an adopted
    # cluster's autoscaler finds only gpufleet's groups; EKS tags every managed group's ASG
    # with the standard pair, and node group tags never reach the ASG).
    autoscaler_tag: str | None = None
    # Security groups for the nodes (None: EKS applies the cluster security group itself; a
    # launch template that names any gets only those, EKS user guide launch-templates.adoc).
    security_group_ids: Sequence[pulumi.Input[str]] | None = None
    # The cluster's groups as they run (None: nothing to read, the cluster is new): a group
    # whose bounds change gets its live desired size (groups.scaling_to_send).
    live_groups: LiveNodeGroups | None = None
    # The cluster's coordinates, which a Bottlerocket group's user data must name beside its
    # image start settings.
    join: pulumi.Input[ClusterJoin] | None = None
    # The cluster's VPC, where a fabric pool's EFA security group goes (fabric pools only).
    vpc_id: pulumi.Input[str] | None = None


def _user_data(args: ManagedGpuPoolArgs) -> pulumi.Output[str] | None:
    """Fast image start settings, which EKS merges with its own bootstrap; None otherwise (the
    launch template keeps having no user data, so no group rolls for it)."""
    start = args.settings.image_start
    if not start.adds_user_data:
        return None
    if start.family != "bottlerocket":
        return pulumi.Output.from_input(encode(merged_user_data(start) or ""))
    if args.join is None:
        raise ValueError("a Bottlerocket group's user data names the cluster: pass `join`")
    return pulumi.Output.from_input(args.join).apply(
        lambda join: encode(merged_user_data(start, join) or "")
    )


class ManagedGpuPool(pulumi.ComponentResource):
    node_groups: dict[str, aws.eks.NodeGroup]
    fabric_network: FabricNetwork | None

    def _placement(self, zones: Sequence[str]) -> dict[str, Any]:
        """A managed group takes its placement group from its launch template (the node group
        has no input for one); a fabric pool of managed groups has one zone (checked by the
        kind's fabric_problems), whose cluster placement group the template names."""
        if self.fabric_network is None or not self.fabric_network.placement_groups:
            return {}
        (zone,) = zones
        return {
            "placement": aws.ec2.LaunchTemplatePlacementArgs(
                group_name=self.fabric_network.placement_group_name(zone)
            )
        }

    def _security(self, args: ManagedGpuPoolArgs) -> dict[str, Any]:
        """The nodes' security groups: on the template (None: EKS applies the cluster security
        group), or with EFA on each interface, the EFA group added (a template with interfaces
        must name every group: EKS then adds none of its own)."""
        fabric = args.settings.fabric
        if self.fabric_network is None or fabric is None:
            return {"vpc_security_group_ids": args.security_group_ids}
        assert args.security_group_ids is not None, "a fabric pool names its security groups"
        efa_group = self.fabric_network.security_group.id
        return {
            "network_interfaces": network_interfaces(fabric, args.security_group_ids, efa_group)
        }

    def __init__(
        self, name: str, args: ManagedGpuPoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:aws:ManagedGpuPool", name, None, opts)
        pool = args.pool
        family = args.settings.ami_family
        capacity = args.settings.capacity
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        release = managed_release_version(
            family,
            args.kubernetes_version,
            pulumi.InvokeOutputOptions(parent=self, provider=args.provider),
        )
        block = capacity.capacity_block
        fabric = args.settings.fabric
        self.fabric_network = (
            fabric_network(name, fabric, pool.zones, args.vpc_id or "", args.cluster_name, child)
            if fabric is not None
            else None
        )
        template = aws.ec2.LaunchTemplate(
            f"{name}-template",
            **names.name_args(names.LAUNCH_TEMPLATE, f"{name}-template"),
            description=f"gpufleet GPU pool {pool.name}",
            metadata_options=METADATA_OPTIONS,
            **self._security(args),
            block_device_mappings=block_devices(
                family, pool.disk_size_gb, args.settings.image_start
            ),
            user_data=_user_data(args),
            tag_specifications=tag_specifications(
                {**default_tags(args.cluster_name), "Name": pool.name, "gpufleet-pool": pool.name}
            ),
            # A Capacity Block group's template names the block's market type and instance
            # type, and no instance type may then be given to the group (EKS user guide
            # capacity-blocks-mng.adoc, launch-templates.adoc).
            **reservation_args(capacity.reservation_id, block, pool.machine_types if block else ()),
            **self._placement(pool.zones),
            update_default_version=True,
            opts=child,
        )
        mins = zone_sizes(pool.min_nodes, pool.zones)
        maxes = group_max_sizes(pool.max_nodes, pool.zones, capacity.max_nodes_per_zone)
        self.node_groups = {}
        for zone in pool.zones:
            live = (
                args.live_groups.scaling(node_group_name(pool.name, zone))
                if args.live_groups
                else None
            )
            scaling = scaling_to_send(mins[zone], maxes[zone], live)
            self.node_groups[zone] = aws.eks.NodeGroup(
                f"{name}-{zone}",
                cluster_name=args.cluster_name,
                node_group_name=node_group_name(pool.name, zone),
                node_role_arn=args.node_role_arn,
                subnet_ids=args.subnets_by_zone[zone],
                version=args.cluster_version,
                # The pinned release, as self-managed groups and Karpenter pin theirs.
                release_version=release,
                ami_type=AMI_TYPES[family],
                capacity_type=capacity.capacity_type,
                instance_types=None if block else list(pool.machine_types),
                labels=dict(pool.declared_labels),
                taints=[
                    aws.eks.NodeGroupTaintArgs(
                        key=t.key, value=t.value or None, effect=EKS_TAINT_EFFECTS[t.effect]
                    )
                    for t in pool.declared_taints
                ],
                scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                    min_size=scaling.min_size,
                    max_size=scaling.max_size,
                    desired_size=scaling.desired_size,
                ),
                update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
                # EKS reboots or replaces a node whose GPU fails (XID errors, ECC, NVLink) as the
                # node monitoring agent reports it (components/aws/model/health.py).
                node_repair_config=aws.eks.NodeGroupNodeRepairConfigArgs(enabled=True),
                launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                    id=template.id, version=template.latest_version.apply(str)
                ),
                # Resources the autoscaler cannot derive at zero (it reads them from the node
                # group's tags). Labels and taints it takes from the node group itself
                # (eks:DescribeNodegroup), so tags for them would only count toward AWS's
                # 50-tag limit (review eks.md S3-3).
                tags={
                    **autoscaler_tags.node_template_tags(
                        {}, (), pool.autoscaler_resources[pool.gpu_resource], pool.ephemeral_storage
                    ),
                    # A pod asking for EFA devices scales a fabric pool from zero only if the
                    # autoscaler's template node has them.
                    **autoscaler_tags.resource_tags(fabric_resources(fabric)),
                    **applied_bounds_tag(scaling.min_size, scaling.max_size),
                },
                opts=pulumi.ResourceOptions.merge(
                    child,
                    pulumi.ResourceOptions(
                        # The autoscaler owns the size; when the bounds change, the live one
                        # is sent instead, since the provider sends the whole scaling config.
                        ignore_changes=["scalingConfig.desiredSize"]
                        if scaling.ignore_desired
                        else [],
                        # The name is fixed (a node label), so a replacement must free it first.
                        delete_before_replace=True,
                    ),
                ),
            )
            if args.autoscaler_tag:
                group = self.node_groups[zone]
                aws.autoscaling.Tag(
                    f"{name}-{zone}-autoscaler",
                    autoscaling_group_name=group.resources.apply(_auto_scaling_group),
                    tag=aws.autoscaling.TagTagArgs(
                        key=args.autoscaler_tag, value="owned", propagate_at_launch=False
                    ),
                    opts=child,
                )
        self.register_outputs(
            {"nodeGroupNames": [group.node_group_name for group in self.node_groups.values()]}
        )


def _auto_scaling_group(resources: Sequence[aws.eks.outputs.NodeGroupResource]) -> str:
    """The name of the auto scaling group EKS made for the node group."""
    return resources[0].autoscaling_groups[0].name or ""
