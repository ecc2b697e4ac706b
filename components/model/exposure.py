"""API endpoints open to the whole internet: what `plan` says about them (review security-1
SEC-4), for each cloud's own range key.

A range list that admits every address (`0.0.0.0/0`, `::/0`, or ranges that add up to one of
them) is allowed, since a team may choose it on purpose, but never silently: `plan` warns, with
what it exposes, and the policy pack refuses it in a production stack unless the stack file also
sets `cluster.allowPublicApiEndpoint: true` (policy/gpufleet_policy/exposure.py).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from components.model.schema import ClusterConfig

ALLOW_PUBLIC_API_ENDPOINT = "cluster.allowPublicApiEndpoint"
ALL_IPV4 = ipaddress.IPv4Network("0.0.0.0/0")
ALL_IPV6 = ipaddress.IPv6Network("::/0")


def internet_wide(cidrs: Sequence[str]) -> list[str]:
    """The address families (`0.0.0.0/0`, `::/0`) that the ranges admit entirely; ranges that
    do not parse are the range checks' to name."""
    v4: list[ipaddress.IPv4Network] = []
    v6: list[ipaddress.IPv6Network] = []
    for cidr in cidrs:
        try:
            network = ipaddress.ip_network(cidr.strip(), strict=False)
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


def endpoint_warnings(
    cluster: ClusterConfig, key: str | None, cidrs: Sequence[str] | None, api: str
) -> list[str]:
    """`key` (None: gpufleet sets no API endpoint for this cluster) and the ranges it admits to
    the `api` API server's public endpoint; an allowance that has nothing to allow is said too,
    so that it does not outlive the open range it was written for."""
    opened = internet_wide(cidrs or []) if key is not None else []
    if opened:
        allowed = (
            f"{ALLOW_PUBLIC_API_ENDPOINT}: true accepts it"
            if cluster.allow_public_api_endpoint
            else f"the policy pack refuses it unless {ALLOW_PUBLIC_API_ENDPOINT}: true"
        )
        verb = "open" if len(opened) > 1 else "opens"
        return [
            f"{key}: {' and '.join(opened)} {verb} the {api} API server's public endpoint to "
            "the whole internet: anyone can reach it to try stolen or leaked credentials (a "
            "kubeconfig, a token) and any flaw of the API server reachable before "
            "authentication, from anywhere; list the ranges pulumi, CI and your users come "
            "from instead. In a production stack (cluster.protect: true, or a name with prod) "
            f"{allowed}"
        ]
    if cluster.allow_public_api_endpoint:
        where = "no range of" if key is not None else "gpufleet sets no API endpoint for"
        return [
            f"{ALLOW_PUBLIC_API_ENDPOINT}: true, but {where} this stack opens one to the "
            "internet: remove it, so that a later 0.0.0.0/0 is refused again in production"
        ]
    return []
