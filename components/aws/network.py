"""The cluster's network: a VPC across the zones (private node subnets, public load balancer
subnets, NAT for egress), or the subnets a user already has.

Nodes never get public addresses; they reach the internet (images, the EKS API) through NAT.
Either way the result is a `NetworkHandle` with the private subnets of each zone, which is what
one-auto-scaling-group-per-zone needs.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.aws.model import karpenter, kinds
from components.aws.model.config import cluster_options
from components.model.schema import ClusterConfig

# Subnet tags the AWS load balancer controller and cloud provider use to place load balancers.
PUBLIC_ELB_TAG = "kubernetes.io/role/elb"
INTERNAL_ELB_TAG = "kubernetes.io/role/internal-elb"


@dataclass(frozen=True)
class NetworkHandle:
    """Subnets for the control plane, nodes (private, per zone) and public load balancers."""

    private_subnet_ids: Sequence[pulumi.Input[str]]
    public_subnet_ids: Sequence[pulumi.Input[str]]
    private_subnets_by_zone: Mapping[str, pulumi.Input[Sequence[pulumi.Input[str]]]]

    def private_subnets_in(self, zones: Sequence[str]) -> pulumi.Output[list[str]]:
        """The private subnets of some zones, as one list (e.g. for a managed node group)."""
        return pulumi.Output.all(*[self.private_subnets_by_zone[z] for z in zones]).apply(
            lambda lists: [subnet for subnets in lists for subnet in subnets]
        )


def subnet_cidrs(vpc_cidr: str, zone_count: int) -> tuple[list[str], list[str]]:
    """Private (large, one eighth of the VPC each) and public (small) subnet ranges per zone.

    Private subnets hold every node and pod IP (the VPC CNI gives pods VPC addresses), so they
    get the space; public subnets only hold load balancers and NAT gateways.
    """
    vpc = ipaddress.IPv4Network(vpc_cidr)
    eighths = list(vpc.subnets(prefixlen_diff=3))
    if zone_count > len(eighths) - 1:
        raise ValueError(f"at most {len(eighths) - 1} zones fit in {vpc_cidr}")
    public = list(eighths[-1].subnets(prefixlen_diff=3))
    return [str(n) for n in eighths[:zone_count]], [str(n) for n in public[:zone_count]]


class EksNetwork(pulumi.ComponentResource):
    """VPC, internet gateway, public and private subnets per zone, NAT gateway(s), routes."""

    handle: NetworkHandle
    vpc: aws.ec2.Vpc

    def __init__(
        self, name: str, config: ClusterConfig, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:aws:Network", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        zones = list(config.zones or [])
        cluster_tag = {f"kubernetes.io/cluster/{config.name}": "shared"}
        # The discovery tag (node classes select the subnets by id since SEC-18; kept so a
        # running stack's subnets are not updated for nothing).
        discovery_tag = (
            {karpenter.DISCOVERY_TAG: config.name} if kinds.cluster_kind(config).node_pools else {}
        )
        private_cidrs, public_cidrs = subnet_cidrs(cluster_options(config).vpc_cidr, len(zones))

        self.vpc = aws.ec2.Vpc(
            f"{name}-vpc",
            cidr_block=cluster_options(config).vpc_cidr,
            enable_dns_hostnames=True,  # EKS nodes register by private DNS name
            enable_dns_support=True,
            tags={"Name": f"{config.name}-vpc"},
            opts=child,
        )
        # The default security group is open inside the VPC; nothing should use it.
        aws.ec2.DefaultSecurityGroup(
            f"{name}-default-sg", vpc_id=self.vpc.id, ingress=[], egress=[], opts=child
        )
        gateway = aws.ec2.InternetGateway(
            f"{name}-igw", vpc_id=self.vpc.id, tags={"Name": f"{config.name}-igw"}, opts=child
        )
        public_routes = aws.ec2.RouteTable(
            f"{name}-public",
            vpc_id=self.vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=gateway.id)],
            tags={"Name": f"{config.name}-public"},
            opts=child,
        )

        public_subnets: list[aws.ec2.Subnet] = []
        private_subnets: dict[str, aws.ec2.Subnet] = {}
        nat_gateways: list[aws.ec2.NatGateway] = []
        for index, zone in enumerate(zones):
            public = aws.ec2.Subnet(
                f"{name}-public-{zone}",
                vpc_id=self.vpc.id,
                availability_zone=zone,
                cidr_block=public_cidrs[index],
                map_public_ip_on_launch=False,
                tags={"Name": f"{config.name}-public-{zone}", PUBLIC_ELB_TAG: "1", **cluster_tag},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{zone}",
                subnet_id=public.id,
                route_table_id=public_routes.id,
                opts=child,
            )
            public_subnets.append(public)
            if index == 0 or cluster_options(config).nat_gateways == "per-zone":
                address = aws.ec2.Eip(
                    f"{name}-nat-{zone}",
                    domain="vpc",
                    tags={"Name": f"{config.name}-nat-{zone}"},
                    opts=child,
                )
                nat_gateways.append(
                    aws.ec2.NatGateway(
                        f"{name}-nat-{zone}",
                        subnet_id=public.id,
                        allocation_id=address.id,
                        tags={"Name": f"{config.name}-nat-{zone}"},
                        opts=pulumi.ResourceOptions(parent=self, depends_on=[gateway]),
                    )
                )
            private = aws.ec2.Subnet(
                f"{name}-private-{zone}",
                vpc_id=self.vpc.id,
                availability_zone=zone,
                cidr_block=private_cidrs[index],
                map_public_ip_on_launch=False,
                tags={
                    "Name": f"{config.name}-private-{zone}",
                    INTERNAL_ELB_TAG: "1",
                    **cluster_tag,
                    **discovery_tag,
                },
                opts=child,
            )
            routes = aws.ec2.RouteTable(
                f"{name}-private-{zone}",
                vpc_id=self.vpc.id,
                routes=[
                    aws.ec2.RouteTableRouteArgs(
                        cidr_block="0.0.0.0/0", nat_gateway_id=nat_gateways[-1].id
                    )
                ],
                tags={"Name": f"{config.name}-private-{zone}"},
                opts=child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{zone}", subnet_id=private.id, route_table_id=routes.id, opts=child
            )
            private_subnets[zone] = private

        self.handle = NetworkHandle(
            private_subnet_ids=[s.id for s in private_subnets.values()],
            public_subnet_ids=[s.id for s in public_subnets],
            private_subnets_by_zone={zone: [s.id] for zone, s in private_subnets.items()},
        )
        self.register_outputs(
            {
                "vpcId": self.vpc.id,
                "privateSubnetIds": self.handle.private_subnet_ids,
                "publicSubnetIds": self.handle.public_subnet_ids,
            }
        )


def existing_network(
    config: ClusterConfig, provider: aws.Provider, parent: pulumi.Resource
) -> NetworkHandle:
    """The user's subnets; each zone's private subnets are looked up by availability zone."""
    private = list(cluster_options(config).private_subnet_ids or [])
    by_zone: dict[str, pulumi.Input[Sequence[pulumi.Input[str]]]] = {}
    for zone in config.zones or []:
        found = aws.ec2.get_subnets_output(
            filters=[
                aws.ec2.GetSubnetsFilterArgs(name="subnet-id", values=private),
                aws.ec2.GetSubnetsFilterArgs(name="availability-zone", values=[zone]),
            ],
            opts=pulumi.InvokeOutputOptions(provider=provider, parent=parent),
        )
        by_zone[zone] = found.ids.apply(functools.partial(_non_empty, zone=zone))
    return NetworkHandle(
        private_subnet_ids=private,
        public_subnet_ids=list(cluster_options(config).public_subnet_ids or []),
        private_subnets_by_zone=by_zone,
    )


def _non_empty(ids: Sequence[str], zone: str) -> list[str]:
    if not ids:
        raise ValueError(
            f"cluster.aws.privateSubnetIds has no subnet in zone {zone}; "
            "give one per zone of cluster.zones"
        )
    return sorted(ids)
