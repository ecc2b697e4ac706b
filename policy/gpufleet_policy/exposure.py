"""Production stacks keep their API endpoint and cluster-admin access closed (review security-1
SEC-4): no API endpoint open to the whole internet, no AKS local accounts, unless the stack file
says so on purpose. `plan` warns about both in every stack (components/model/exposure.py,
components/azure/model/cluster_checks.py); here a production stack is refused.

Which stack is production, and what it allows, comes from the pack config that
`policy/pack_config.py` writes from the stack file (`gpufleet:cluster.protect: true` or a prod
name; `cluster.allowPublicApiEndpoint`, `cluster.azure.allowLocalAccounts`); the policies then
check what the program really sets on the cluster resource.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from .resources import AKS_CLUSTER, EKS_CLUSTER, GKE_CLUSTER, get, seq

API_POLICY = "api-endpoints-restricted-in-production"
LOCAL_ACCOUNTS_POLICY = "aks-local-accounts-off-in-production"
ALLOW_PUBLIC_API_ENDPOINT = "allowPublicApiEndpoint"
ALLOW_LOCAL_ACCOUNTS = "allowLocalAccounts"
ALL_IPV4 = ipaddress.IPv4Network("0.0.0.0/0")
ALL_IPV6 = ipaddress.IPv6Network("::/0")


def internet_wide(cidrs: Sequence[str]) -> list[str]:
    """The address families the ranges admit entirely (as components/model/exposure.py; the
    pack cannot import gpufleet, the tests check that the two agree)."""
    v4: list[ipaddress.IPv4Network] = []
    v6: list[ipaddress.IPv6Network] = []
    for cidr in cidrs:
        try:
            network = ipaddress.ip_network(str(cidr).strip(), strict=False)
        except ValueError:
            continue
        if isinstance(network, ipaddress.IPv4Network):
            v4.append(network)
        else:
            v6.append(network)
    covered = []
    if ALL_IPV4 in ipaddress.collapse_addresses(v4):
        covered.append(str(ALL_IPV4))
    if ALL_IPV6 in ipaddress.collapse_addresses(v6):
        covered.append(str(ALL_IPV6))
    return covered


def open_endpoint(resource_type: str, props: Mapping[str, Any]) -> str | None:
    """What opens the cluster's public API endpoint to every address, or None."""
    if resource_type == EKS_CLUSTER:
        if get(props, "vpcConfig", "endpointPublicAccess") is False:
            return None
        cidrs = seq(get(props, "vpcConfig", "publicAccessCidrs"))
        if not cidrs:
            return "vpcConfig.publicAccessCidrs is unset, and EKS then admits 0.0.0.0/0"
        opened = internet_wide(cidrs)
        return f"vpcConfig.publicAccessCidrs admits {' and '.join(opened)}" if opened else None
    if resource_type == AKS_CLUSTER:
        profile = get(props, "apiServerAccessProfile") or {}
        if get(profile, "enablePrivateCluster") is True:
            return None
        ranges = seq(get(profile, "authorizedIPRanges"))
        if not ranges:
            return "apiServerAccessProfile.authorizedIPRanges is empty, and AKS then admits all"
        opened = internet_wide(ranges)
        return (
            f"apiServerAccessProfile.authorizedIPRanges admits {' and '.join(opened)}"
            if opened
            else None
        )
    if resource_type == GKE_CLUSTER:
        if get(props, "privateClusterConfig", "enablePrivateEndpoint") is True:
            return None
        networks = get(props, "masterAuthorizedNetworksConfig")
        if networks is None:
            return "masterAuthorizedNetworksConfig is unset, and GKE's IP endpoint then admits all"
        if get(networks, "gcpPublicCidrsAccessEnabled") is True:
            return "masterAuthorizedNetworksConfig admits every Google Cloud public address"
        opened = internet_wide([str(get(b, "cidrBlock")) for b in seq(get(networks, "cidrBlocks"))])
        return (
            f"masterAuthorizedNetworksConfig.cidrBlocks admits {' and '.join(opened)}"
            if opened
            else None
        )
    return None


def check_endpoint(
    resource_type: str, props: Mapping[str, Any], settings: Mapping[str, Any]
) -> list[str]:
    if not settings.get("production") or settings.get(ALLOW_PUBLIC_API_ENDPOINT):
        return []
    opening = open_endpoint(resource_type, props)
    if opening is None:
        return []
    return [
        f"{opening}: a production cluster's API server would take connection attempts from the "
        "whole internet; list the ranges pulumi, CI and your users come from, or set "
        "gpufleet:cluster.allowPublicApiEndpoint: true if it is open on purpose"
    ]


def check_local_accounts(
    resource_type: str, props: Mapping[str, Any], settings: Mapping[str, Any]
) -> list[str]:
    if resource_type != AKS_CLUSTER or not settings.get("production"):
        return []
    if settings.get(ALLOW_LOCAL_ACCOUNTS) or get(props, "disableLocalAccounts") is True:
        return []
    return [
        "disableLocalAccounts is not true: AKS's static cluster-admin certificate would sit in "
        "the state and the `kubeconfig` output of a production cluster, unauditable and "
        "irrevocable short of rotating the cluster's certificates; use "
        "cluster.azure.authentication: entra-id, or set cluster.azure.allowLocalAccounts: true "
        "if it is meant"
    ]


def _validate_with(check: Any) -> Any:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        for message in check(args.resource_type, args.props, args.get_config()):
            report_violation(message, None)

    validate.__doc__ = check.__doc__
    return validate


def _schema(allow: str, what: str) -> PolicyConfigSchema:
    return PolicyConfigSchema(
        properties={
            "production": {
                "type": "boolean",
                "default": False,
                "description": "This stack is production (policy/pack_config.py).",
            },
            allow: {"type": "boolean", "default": False, "description": what},
        }
    )


api_endpoints = ResourceValidationPolicy(
    name=API_POLICY,
    description="In production stacks no cluster's API endpoint admits the whole internet, unless cluster.allowPublicApiEndpoint says so.",
    validate=_validate_with(check_endpoint),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=_schema(
        ALLOW_PUBLIC_API_ENDPOINT, "The stack file opens the API endpoint to everyone on purpose."
    ),
)
local_accounts = ResourceValidationPolicy(
    name=LOCAL_ACCOUNTS_POLICY,
    description="In production stacks AKS clusters disable local accounts, unless cluster.azure.allowLocalAccounts says so.",
    validate=_validate_with(check_local_accounts),
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=_schema(
        ALLOW_LOCAL_ACCOUNTS, "The stack file uses AKS local accounts on purpose."
    ),
)

POLICIES = [api_endpoints, local_accounts]
