"""AKS cluster options the API would reject: network ranges, resource ids and durations."""

from __future__ import annotations

import ipaddress
import re

from components.azure.model.config import AzureClusterOptions
from components.model.problems import Problem

_AZURE_SUBNET_ID = re.compile(
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/"
    r"virtualNetworks/[^/]+/subnets/[^/]+$",
    re.IGNORECASE,
)
_AZURE_RESOURCE_GROUP = re.compile(r"^[-\w.()]{0,89}[-\w()]$")
_GUID = re.compile(r"^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")


def check_cluster_options(
    azure: AzureClusterOptions, creates_cluster: bool = True
) -> list[Problem]:
    """AKS network ranges (overlay pods and services outside the VNet), ids and durations;
    what only a cluster gpufleet creates needs (`creates_cluster`), such as who may reach it."""
    problems = []
    where = "cluster.azure"
    networks: dict[str, ipaddress.IPv4Network] = {}
    keys = {"podCidr": azure.pod_cidr, "serviceCidr": azure.service_cidr}
    if azure.vnet_subnet_id is None:
        keys = {"vnetCidr": azure.vnet_cidr, "subnetCidr": azure.subnet_cidr, **keys}
    for key, cidr in keys.items():
        try:
            network = ipaddress.ip_network(cidr)
        except ValueError:
            network = None
        if not isinstance(network, ipaddress.IPv4Network):
            problems.append(
                Problem(f"{where}.{key}", "must be an IPv4 CIDR such as 10.0.0.0/16", cidr)
            )
            continue
        networks[key] = network
    vnet, subnet = networks.get("vnetCidr"), networks.get("subnetCidr")
    if vnet and subnet and not subnet.subnet_of(vnet):
        problems.append(
            Problem(f"{where}.subnetCidr", f"must lie inside vnetCidr {vnet}", str(subnet))
        )
    for key in ("podCidr", "serviceCidr"):
        network = networks.get(key)
        if network is None:
            continue
        clash = [
            k
            for k, other in networks.items()
            if k not in (key, "subnetCidr") and other.overlaps(network)
        ]
        if key == "serviceCidr":
            clash = [k for k in clash if k != "podCidr"]
        if clash:
            problems.append(
                Problem(f"{where}.{key}", f"must not overlap {', '.join(clash)}", str(network))
            )
    service = networks.get("serviceCidr")
    try:
        dns = ipaddress.ip_address(azure.dns_service_ip)
    except ValueError:
        dns = None
    if dns is None or (service is not None and dns not in service):
        problems.append(
            Problem(
                f"{where}.dnsServiceIp",
                "must be an IPv4 address inside serviceCidr",
                azure.dns_service_ip,
            )
        )
    if azure.vnet_subnet_id is not None and not _AZURE_SUBNET_ID.fullmatch(azure.vnet_subnet_id):
        problems.append(
            Problem(
                f"{where}.vnetSubnetId",
                "must be a subnet resource id (/subscriptions/<id>/resourceGroups/<rg>/providers/"
                "Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>)",
                azure.vnet_subnet_id,
            )
        )
    if azure.resource_group_name is not None and not _AZURE_RESOURCE_GROUP.fullmatch(
        azure.resource_group_name
    ):
        problems.append(
            Problem(
                f"{where}.resourceGroupName",
                "must be 1-90 of letters, digits, - _ . ( ), not ending with a dot",
                azure.resource_group_name,
            )
        )
    for key, value in (
        ("scaleDownUnneededTime", azure.scale_down_unneeded_time),
        ("scaleDownDelayAfterAdd", azure.scale_down_delay_after_add),
    ):
        if not re.fullmatch(r"[1-9][0-9]*m", value):
            problems.append(
                Problem(
                    f"{where}.{key}",
                    "must be whole minutes such as 10m (AKS takes minutes only)",
                    value,
                )
            )
    if creates_cluster and not azure.api_server_authorized_cidrs:
        problems.append(
            Problem(
                f"{where}.apiServerAuthorizedCidrs",
                "is required on azure: the ranges that may reach the API server (where pulumi "
                "and your users run), or [0.0.0.0/0] to open it to the internet on purpose",
                azure.api_server_authorized_cidrs,
                has_value=azure.api_server_authorized_cidrs is not None,
            )
        )
    for index, cidr in enumerate(azure.api_server_authorized_cidrs or []):
        try:
            ipaddress.ip_network(cidr)
        except ValueError:
            problems.append(
                Problem(
                    f"{where}.apiServerAuthorizedCidrs[{index}]",
                    "must be a CIDR such as 203.0.113.0/24",
                    cidr,
                )
            )
    if azure.deployer_object_id is not None and not _GUID.fullmatch(azure.deployer_object_id):
        problems.append(
            Problem(
                f"{where}.deployerObjectId",
                "must be an Entra ID object id (a GUID)",
                azure.deployer_object_id,
            )
        )
    if azure.subscription_id is not None and not _GUID.fullmatch(azure.subscription_id):
        problems.append(
            Problem(
                f"{where}.subscriptionId",
                "must be a subscription id (a GUID)",
                azure.subscription_id,
            )
        )
    for index, group in enumerate(azure.admin_group_object_ids):
        if not _GUID.fullmatch(group):
            problems.append(
                Problem(
                    f"{where}.adminGroupObjectIds[{index}]",
                    "must be an Entra ID group object id (a GUID)",
                    group,
                )
            )
    if azure.authentication == "local-accounts" and azure.admin_group_object_ids:
        problems.append(
            Problem(
                f"{where}.adminGroupObjectIds",
                "only applies with authentication: entra-id",
                azure.admin_group_object_ids,
            )
        )
    return problems
