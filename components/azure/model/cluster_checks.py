"""AKS cluster options the API would reject: network ranges, resource ids and durations."""

from __future__ import annotations

import ipaddress
import re

from components.azure.model import grants, limits, reservations
from components.azure.model.config import AzureClusterOptions, cluster_options
from components.model.exposure import endpoint_warnings
from components.model.problems import Problem
from components.model.schema import ClusterConfig

# AKS names the node resource group MC_<resource group>_<cluster>_<region> and refuses the
# cluster when that exceeds 80 characters ("The length of the node resource group name is too
# long. The maximum length is 80": Azure-Terraform/terraform-azurerm-kubernetes issue 33,
# Azure/aad-pod-identity PR 810; aka.ms/aks-naming-rules).
NODE_RESOURCE_GROUP_MAX = 80
# The autoscaler takes durations in whole minutes; 0m is valid (AKS's bursty profile sets
# scale-down-delay-after-add=0m: learn.microsoft.com/azure/aks/cluster-autoscaler).
_MINUTES = re.compile(r"(0|[1-9][0-9]*)m")
# Addresses a public endpoint never sees as a source: RFC 1918, carrier-grade NAT (RFC 6598),
# loopback and link-local (not the documentation ranges the examples use as placeholders).
_NOT_PUBLIC = tuple(
    ipaddress.IPv4Network(n)
    for n in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
    )
)

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
        if not _MINUTES.fullmatch(value):
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


def node_resource_group_problems(
    cluster: ClusterConfig, azure: AzureClusterOptions
) -> list[Problem]:
    """The node resource group AKS derives from the cluster's names must fit 80 characters."""
    group = azure.resource_group_name or f"{cluster.name}-rg"
    name = f"MC_{group}_{cluster.name}_{cluster.region or ''}"
    if len(name) <= NODE_RESOURCE_GROUP_MAX:
        return []
    return [
        Problem(
            "cluster.name",
            f"makes AKS's node resource group {name} {len(name)} characters long, and AKS "
            f"refuses more than {NODE_RESOURCE_GROUP_MAX}; shorten the cluster name (or "
            "cluster.azure.resourceGroupName)",
            cluster.name,
        )
    ]


def authorized_range_warnings(azure: AzureClusterOptions) -> list[str]:
    """Authorized ranges filter the public API endpoint's source addresses: a private range
    admits nobody (learn.microsoft.com/azure/aks/api-server-authorized-ip-ranges; review aks.md
    N5), so it only looks like access that does not exist."""
    private = []
    for cidr in azure.api_server_authorized_cidrs or []:
        try:
            network = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            continue  # check_cluster_options names it
        if isinstance(network, ipaddress.IPv4Network) and any(
            network.subnet_of(block) for block in _NOT_PUBLIC
        ):
            private.append(cidr)
    if not private:
        return []
    return [
        f"cluster.azure.apiServerAuthorizedCidrs: {', '.join(private)} is private: the API "
        "server's public endpoint sees public source addresses only (your NAT gateway's, your "
        "CI runners' egress), so a private range admits nobody"
    ]


def exposure_warnings(
    cluster: ClusterConfig, azure: AzureClusterOptions, adopted: bool
) -> list[str]:
    """What the stack opens to whom (review security-1 SEC-4): API ranges that admit the whole
    internet, and AKS local accounts, whose static cluster-admin certificate gpufleet's
    Kubernetes provider and the `kubeconfig` output carry (components/azure/cluster.py:
    user_access), so it sits in every checkpoint of the state. An adopted cluster's access is
    its owner's: gpufleet sets neither there."""
    ranges_key = None if adopted else "cluster.azure.apiServerAuthorizedCidrs"
    warnings = endpoint_warnings(cluster, ranges_key, azure.api_server_authorized_cidrs, "AKS")
    local = not adopted and azure.authentication == "local-accounts"
    if local:
        allowed = (
            "cluster.azure.allowLocalAccounts: true accepts it"
            if azure.allow_local_accounts
            else "the policy pack refuses it unless cluster.azure.allowLocalAccounts: true"
        )
        warnings.append(
            "cluster.azure.authentication: local-accounts: AKS issues a static cluster-admin "
            "client certificate, which gpufleet's Kubernetes provider and the `kubeconfig` stack "
            "output carry, so it is stored (encrypted) in every checkpoint of the stack's state: "
            "whoever can decrypt the state or read that output is cluster-admin, from wherever "
            "the API ranges admit, with no per-person audit and no revocation short of rotating "
            "the cluster's certificates (`az aks rotate-certs`); authentication: entra-id uses "
            "short-lived Entra ID tokens instead. In a production stack (cluster.protect: true, "
            f"or a name with prod) {allowed}"
        )
    elif azure.allow_local_accounts:
        warnings.append(
            "cluster.azure.allowLocalAccounts: true, but this stack does not use local accounts: "
            "remove it, so that a later local-accounts is refused again in production"
        )
    return warnings


def vnet_overlap_problems(azure: AzureClusterOptions, vnet_prefixes: list[str]) -> list[Problem]:
    """serviceCidr and podCidr against the address space of the node subnet's VNet, which only
    a look-up knows when the subnet is given (review aks.md N4): AKS refuses a service range
    inside the VNet (ServiceCidrOverlapExistingSubnetsCidr), and overlay pod ranges must stay
    out of it too (learn.microsoft.com/azure/aks/azure-cni-overlay, IP address planning)."""
    networks = []
    for prefix in vnet_prefixes:
        try:
            networks.append(ipaddress.ip_network(prefix, strict=False))
        except ValueError:
            continue
    problems = []
    for key, cidr in (("serviceCidr", azure.service_cidr), ("podCidr", azure.pod_cidr)):
        try:
            ours = ipaddress.ip_network(cidr)
        except ValueError:
            continue  # check_cluster_options names it
        clash = [str(n) for n in networks if n.version == ours.version and n.overlaps(ours)]
        if clash:
            problems.append(
                Problem(
                    f"cluster.azure.{key}",
                    f"overlaps the address space of the node subnet's VNet ({', '.join(clash)}); "
                    "choose a range outside it (and outside the networks it is peered with)",
                    cidr,
                )
            )
    return problems


def cluster_problems(cluster: ClusterConfig, adopted: bool) -> list[Problem]:
    """What `plan` refuses in an AKS stack's cluster settings, all at once."""
    options = cluster_options(cluster)
    problems = check_cluster_options(options, creates_cluster=not adopted)
    problems += reservations.identity_problems(cluster)
    problems += grants.grant_problems(options)
    if not adopted:
        problems += node_resource_group_problems(cluster, options)
        problems += limits.system_pool_problems(cluster)
    if adopted and options.resource_group_name is None:
        problems.append(
            Problem(
                "cluster.azure.resourceGroupName",
                "is required with cluster.existing: the resource group the AKS cluster is in",
                has_value=False,
            )
        )
    return problems


def cluster_warnings(cluster: ClusterConfig, adopted: bool) -> list[str]:
    """What an AKS cluster's settings risk that gpufleet cannot check."""
    options = cluster_options(cluster)
    exposed = exposure_warnings(cluster, options, adopted)
    if adopted:
        return exposed
    return exposed + authorized_range_warnings(options) + grants.skipped_grant_warnings(options)
