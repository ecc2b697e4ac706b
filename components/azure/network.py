"""The AKS node network: the resource group and node subnet gpufleet creates, or the given ones."""

from __future__ import annotations

import pulumi
from pulumi_azure_native import network, resources

from components.azure.model.config import AzureClusterOptions

NODE_SUBNET = "nodes"


def resource_group_name_of(cluster_name: str, options: AzureClusterOptions) -> str:
    """The cluster's resource group: the configured one, or the `<cluster>-rg` gpufleet makes."""
    return options.resource_group_name or f"{cluster_name}-rg"


def resource_group(
    name: str,
    cluster_name: str,
    location: str,
    options: AzureClusterOptions,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> pulumi.Input[str]:
    """The name of the cluster's resource group: the configured one, or a new `<cluster>-rg`."""
    if options.resource_group_name is not None:
        return options.resource_group_name
    group = resources.ResourceGroup(
        f"{name}-rg",
        # Explicit name: Pulumi's random suffix would make the group hard to find.
        resource_group_name=resource_group_name_of(cluster_name, options),
        location=location,
        tags=tags,
        opts=opts,
    )
    return group.name


def node_subnet(
    name: str,
    cluster_name: str,
    location: str,
    resource_group_name: pulumi.Input[str],
    options: AzureClusterOptions,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> pulumi.Input[str]:
    """The id of the subnet every node joins: the configured one, or a new VNet and subnet.

    With Azure CNI overlay only nodes take VNet addresses (pods use `podCidr`), so one subnet
    serves the system pool and every GPU pool.
    """
    if options.vnet_subnet_id is not None:
        return options.vnet_subnet_id
    vnet = network.VirtualNetwork(
        f"{name}-vnet",
        virtual_network_name=f"{cluster_name}-vnet",
        resource_group_name=resource_group_name,
        location=location,
        address_space=network.AddressSpaceArgs(address_prefixes=[options.vnet_cidr]),
        tags=tags,
        # Subnets are separate resources; the VNet must not claim (and delete) them on update.
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(ignore_changes=["subnets"])),
    )
    subnet = network.Subnet(
        f"{name}-nodes",
        subnet_name=NODE_SUBNET,
        virtual_network_name=vnet.name,
        resource_group_name=resource_group_name,
        address_prefix=options.subnet_cidr,
        # Private subnet: nodes reach the internet only through the cluster's load balancer.
        default_outbound_access=False,
        opts=opts,
    )
    return subnet.id
