"""The AKS node network: the resource group and node subnet gpufleet creates, or the given ones."""

from __future__ import annotations

import re

import pulumi
from pulumi_azure_native import network, resources

from components.azure.model.cluster_checks import vnet_overlap_problems
from components.azure.model.config import AzureClusterOptions
from components.model.problems import ConfigError

_SUBNET_ID = re.compile(
    r"/resourceGroups/(?P<group>[^/]+)/providers/Microsoft\.Network/virtualNetworks/"
    r"(?P<vnet>[^/]+)/subnets/",
    re.IGNORECASE,
)

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
        check_given_vnet(options, opts)
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


def check_given_vnet(options: AzureClusterOptions, opts: pulumi.ResourceOptions) -> None:
    """Stop the plan when the cluster's service or pod range overlaps the given subnet's VNet;
    say it was not checked when the VNet cannot be read."""
    found = _SUBNET_ID.search(options.vnet_subnet_id or "")
    if found is None:
        return  # the config check names a malformed id
    try:
        vnet = network.get_virtual_network(
            resource_group_name=found["group"],
            virtual_network_name=found["vnet"],
            opts=pulumi.InvokeOptions(parent=opts.parent, provider=opts.provider),
        )
    except Exception as error:  # the provider's message says why (not found, no access)
        pulumi.log.warn(
            f"cluster.azure.serviceCidr and podCidr not checked against VNet {found['vnet']}: "
            f"it could not be read ({error})"
        )
        return
    prefixes = list(getattr(vnet.address_space, "address_prefixes", None) or [])
    problems = vnet_overlap_problems(options, prefixes)
    if problems:
        raise pulumi.RunError(ConfigError(problems).render())
