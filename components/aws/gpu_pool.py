"""A GPU pool on self-managed auto scaling groups: one launch template, one group per zone.

One group per zone lets the cluster autoscaler pick the zone that has capacity (and, with
`--balance-similar-node-groups`, spread a pool evenly). Every group starts empty, runs Spot
through a mixed instances policy when the pool is Spot, and carries the tags through which the
autoscaler discovers it and simulates its nodes at zero.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from components.aws import user_data
from components.aws.fabric_network import FabricNetwork, fabric_network, network_interfaces
from components.aws.launch_template import (
    METADATA_OPTIONS,
    block_devices,
    reservation_args,
    tag_specifications,
)
from components.aws.model import autoscaler_tags, names, termination
from components.aws.model.amis import ami_parameter
from components.aws.model.autoscaler_tags import default_tags
from components.aws.model.fabric import fabric_resources
from components.aws.model.group_settings import EksGroupCapacity, EksGroupSettings
from components.aws.model.groups import group_max_sizes, zone_sizes
from components.model.pools import PoolSpec

POOL_TAG = "gpufleet-pool"


def group_name(cluster_name: str, pool: str, zone: str) -> str:
    """The auto scaling group's name (the autoscaler's priority expander matches on it)."""
    return f"{cluster_name}-{pool}-{zone}"


@dataclass(frozen=True)
class SelfManagedGpuPoolArgs:
    pool: PoolSpec
    cluster_name: str
    kubernetes_version: str
    # The image family, capacity and image start (components/aws/model/group_settings.py).
    settings: EksGroupSettings
    join: pulumi.Input[user_data.ClusterJoin]
    instance_profile_arn: pulumi.Input[str]
    # The EKS cluster security group: lets nodes and control plane talk.
    security_group_ids: Sequence[pulumi.Input[str]]
    subnets_by_zone: Mapping[str, pulumi.Input[Sequence[pulumi.Input[str]]]]
    provider: aws.Provider
    # gpufleet's own discovery tag (an adopted cluster's autoscaler finds only gpufleet's groups).
    autoscaler_tag: str | None = None
    # The cluster's VPC, where a fabric pool's EFA security group goes (fabric pools only).
    vpc_id: pulumi.Input[str] | None = None


def _group_reservations(capacity: EksGroupCapacity) -> dict[str, Any]:
    """The group's own Capacity Reservation preference and targets, when it has one."""
    if capacity.group_preference is None:
        return {}
    return {
        "capacity_reservation_specification": aws.autoscaling.GroupCapacityReservationSpecificationArgs(
            capacity_reservation_preference=capacity.group_preference,
            capacity_reservation_target=aws.autoscaling.GroupCapacityReservationSpecificationCapacityReservationTargetArgs(
                capacity_reservation_ids=list(capacity.group_reservation_ids)
            ),
        )
    }


class SelfManagedGpuPool(pulumi.ComponentResource):
    launch_template: aws.ec2.LaunchTemplate
    fabric_network: FabricNetwork | None
    groups: dict[str, aws.autoscaling.Group]

    def __init__(
        self, name: str, args: SelfManagedGpuPoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:aws:SelfManagedGpuPool", name, None, opts)
        pool = args.pool
        family = args.settings.ami_family
        capacity = args.settings.capacity
        start = args.settings.image_start
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        image = aws.ssm.get_parameter_output(
            name=ami_parameter(family, args.kubernetes_version),
            opts=pulumi.InvokeOutputOptions(parent=self, provider=args.provider),
        )
        labels = dict(pool.declared_labels)
        taints = tuple(pool.declared_taints)
        rendered = pulumi.Output.from_input(args.join).apply(
            lambda join: user_data.encode(user_data.render(family, join, labels, taints, start))
        )
        instance_tags = {
            # The provider's default tags reach neither groups nor the instances they launch.
            **default_tags(args.cluster_name),
            "Name": f"{args.cluster_name}-{pool.name}",
            POOL_TAG: pool.name,
            f"kubernetes.io/cluster/{args.cluster_name}": "owned",
            # The node termination handler drains every self-managed node (Spot or on-demand)
            # before it goes, and acts only on instances carrying its tag.
            termination.MANAGED_TAG: "true",
        }
        fabric = args.settings.fabric
        self.fabric_network = (
            fabric_network(name, fabric, pool.zones, args.vpc_id or "", args.cluster_name, child)
            if fabric is not None
            else None
        )
        self.launch_template = aws.ec2.LaunchTemplate(
            f"{name}-template",
            **names.name_args(names.LAUNCH_TEMPLATE, f"{name}-template"),
            description=f"gpufleet GPU pool {pool.name} of EKS {args.cluster_name}",
            # insecure_value: an AMI id is no secret, and a preview must show when it changes
            # (`value` is always marked secret; review eks.md S3-1).
            image_id=image.insecure_value,
            user_data=rendered,
            iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(
                arn=args.instance_profile_arn
            ),
            **self._security(args),
            metadata_options=METADATA_OPTIONS,
            block_device_mappings=block_devices(family, pool.disk_size_gb, start),
            tag_specifications=tag_specifications(instance_tags),
            # On a reservation: its target and its one instance type (the group launches from
            # the template itself, as the EKS user guide's capacity-blocks.adoc group does).
            **reservation_args(capacity.reservation_id, False, pool.machine_types),
            # Reserved first: the group targets the reservation; the template has its type.
            **(
                {"instance_type": pool.machine_types[0]}
                if capacity.group_preference and len(pool.machine_types) == 1
                else {}
            ),
            update_default_version=True,
            opts=child,
        )

        tags = {
            **autoscaler_tags.discovery_tags(args.cluster_name, args.autoscaler_tag),
            **autoscaler_tags.node_template_tags(
                labels, taints, pool.autoscaler_resources[pool.gpu_resource], pool.ephemeral_storage
            ),
            # A pod asking for EFA devices scales a fabric pool from zero only if the
            # autoscaler's template node has them.
            **autoscaler_tags.resource_tags(fabric_resources(fabric)),
        }
        mins = zone_sizes(pool.min_nodes, pool.zones)
        maxes = group_max_sizes(pool.max_nodes, pool.zones, capacity.max_nodes_per_zone)
        self.groups = {}
        for zone in pool.zones:
            self.groups[zone] = aws.autoscaling.Group(
                f"{name}-{zone}",
                name=group_name(args.cluster_name, pool.name, zone),
                vpc_zone_identifiers=args.subnets_by_zone[zone],
                min_size=mins[zone],
                max_size=maxes[zone],
                desired_capacity=mins[zone],
                **self._instances(pool, capacity.one_instance_type),
                **_group_reservations(capacity),
                # A cluster placement group is one zone's: each zone's group has its own.
                placement_group=self.fabric_network.placement_group_name(zone)
                if self.fabric_network
                else None,
                capacity_rebalance=pool.spot,
                # GPU capacity may not exist right now; never block `pulumi up` waiting for it.
                wait_for_capacity_timeout="0",
                tags=[
                    *(
                        aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=True)
                        for k, v in instance_tags.items()
                    ),
                    # Read by the autoscaler from the group itself; instances need not carry them.
                    *(
                        aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=False)
                        for k, v in tags.items()
                    ),
                ],
                opts=pulumi.ResourceOptions.merge(
                    child,
                    # The autoscaler owns the size; `pulumi up` must never undo its decisions.
                    pulumi.ResourceOptions(ignore_changes=["desiredCapacity"]),
                ),
            )
        self.register_outputs(
            {
                "launchTemplateId": self.launch_template.id,
                "groupNames": [g.name for g in self.groups.values()],
            }
        )

    def _security(self, args: SelfManagedGpuPoolArgs) -> dict[str, Any]:
        """The node's security groups: on the template, or with EFA on each interface (the
        EFA group added)."""
        fabric = args.settings.fabric
        if self.fabric_network is None or fabric is None:
            return {"vpc_security_group_ids": args.security_group_ids}
        efa_group = self.fabric_network.security_group.id
        return {
            "network_interfaces": network_interfaces(fabric, args.security_group_ids, efa_group)
        }

    def _instances(self, pool: PoolSpec, reserved: bool) -> dict[str, Any]:
        """What the group launches: the template alone (a reservation's one instance type), or
        a mixed instances policy over the pool's types."""
        if reserved:
            return {
                "launch_template": aws.autoscaling.GroupLaunchTemplateArgs(
                    id=self.launch_template.id,
                    version=self.launch_template.latest_version.apply(str),
                )
            }
        return {"mixed_instances_policy": self._mixed_instances(pool)}

    def _mixed_instances(self, pool: PoolSpec) -> aws.autoscaling.GroupMixedInstancesPolicyArgs:
        """All of the pool's instance types (same GPU count, checked in config); Spot only when asked."""
        if pool.spot:
            distribution = aws.autoscaling.GroupMixedInstancesPolicyInstancesDistributionArgs(
                on_demand_base_capacity=0,
                on_demand_percentage_above_base_capacity=0,  # the default is 100 (on-demand)
                spot_allocation_strategy="price-capacity-optimized",
            )
        else:
            distribution = aws.autoscaling.GroupMixedInstancesPolicyInstancesDistributionArgs(
                on_demand_base_capacity=0,
                on_demand_percentage_above_base_capacity=100,
                on_demand_allocation_strategy="prioritized",
            )
        return aws.autoscaling.GroupMixedInstancesPolicyArgs(
            instances_distribution=distribution,
            launch_template=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateArgs(
                launch_template_specification=aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateLaunchTemplateSpecificationArgs(
                    launch_template_id=self.launch_template.id,
                    version=self.launch_template.latest_version.apply(str),
                ),
                overrides=[
                    aws.autoscaling.GroupMixedInstancesPolicyLaunchTemplateOverrideArgs(
                        instance_type=machine
                    )
                    for machine in pool.machine_types
                ],
            ),
        )
