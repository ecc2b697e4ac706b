"""Values in a stack's config that are placeholders, not the user's own: what to fill in.

gpufleet's example stacks plan offline as they are, so they hold values that stand for the
user's: documentation IP ranges where the user's egress ranges go, the examples' project and
subscription ids, the account ids of AWS's documentation. A stack copied from an example (or
written by `python -m components new` without those choices) keeps them until the user fills
them in. `plan` names each in a warning; a real `pulumi preview` or `pulumi up` refuses the stack
(components/pulumi_config.py), because a cluster built with them locks everyone out or goes
into an account that is not the user's.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# Address ranges reserved for documentation: nobody's egress, so an API server allowing only
# them reaches no one.
DOCUMENTATION_NETWORKS: Mapping[str, str] = {
    "192.0.2.0/24": "RFC 5737 TEST-NET-1",
    "198.51.100.0/24": "RFC 5737 TEST-NET-2",
    "203.0.113.0/24": "RFC 5737 TEST-NET-3",
    "2001:db8::/32": "RFC 3849, IPv6 documentation prefix",
}

# Ids that stand for the user's own in gpufleet's example stacks (stacks/). GCP project ids and
# Azure GUIDs are globally unique, so none of these is a user's own.
EXAMPLE_PROJECTS: Mapping[str, str] = {
    "gpufleet-dev-project": "the gcp-dev example's project id",
    "ml-platform-prod": "the gcp-a100-mig example's project id",
    "platform-prod-project": "the gcp-existing example's project id",
    "ml-training-prod": "the gcp-flex-start example's project id",
}
EXAMPLE_GUIDS: Mapping[str, str] = {
    "5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b": "the azure-a100-mig example's subscription id",
    "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d": "the azure-a100-mig example's Entra ID group",
    "8c2d4e6f-1a3b-4c5d-9e7f-2a4b6c8d0e1f": "the azure-reserved example's subscription id",
    "00000000-0000-0000-0000-000000000000": "the all-zero GUID",
}

# Account ids AWS's documentation writes in example ARNs (IAM User Guide, "IAM identifiers":
# arn:aws:iam::123456789012:user/JohnDoe; its policy examples use 111122223333).
EXAMPLE_AWS_ACCOUNTS: Mapping[str, str] = {
    "123456789012": "AWS's documentation account id",
    "111122223333": "AWS's documentation account id",
    "444455556666": "AWS's documentation account id",
}
_ARN_ACCOUNT = re.compile(r"^arn:aws[a-z-]*:[a-z0-9-]*:[a-z0-9-]*:(\d{12}):")
_GUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")

# What to put in each kind of key instead, by the key's last name.
_WHAT_TO_DO: Mapping[str, str] = {
    "publicEndpointCidrs": "list the ranges pulumi, CI and your users reach the API server "
    "from (your office and CI egress), or [] for a private endpoint",
    "apiServerAuthorizedCidrs": "list the ranges pulumi, CI and your users reach the API "
    "server from (your office and CI egress)",
    "masterAuthorizedCidrs": "list the ranges allowed to reach the control plane's IP "
    "endpoint (your office and CI egress), or [] with controlPlaneAccess: dns",
    "project": "set your GCP project id (`gcloud config get-value project`)",
    "subscriptionId": "set your subscription id (`az account show --query id -o tsv`)",
    "vnetSubnetId": "set the resource id of your node subnet "
    "(`az network vnet subnet show ... --query id -o tsv`)",
    "adminGroupObjectIds": "list the object ids of your Entra ID admin groups "
    "(`az ad group show --group NAME --query id -o tsv`)",
    "deployerObjectId": "set the object id of the identity that runs pulumi",
    "adminPrincipalArns": "list the ARNs of your own roles or users "
    "(`aws sts get-caller-identity` names your account)",
}


@dataclass(frozen=True)
class Placeholder:
    """A config value that stands for the user's own."""

    path: str
    value: str
    what: str  # what the value is ("a documentation range (RFC 5737 TEST-NET-3)")
    todo: str  # what to put there instead

    def __str__(self) -> str:
        return f"{self.path}: {self.value!r} is a placeholder ({self.what}); {self.todo}"


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, child in value.items():
            yield from _leaves(child, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _leaves(child, f"{path}[{index}]")
    else:
        yield path, value


def _documentation_range(text: str) -> str | None:
    try:
        network = ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        return None
    for cidr, name in DOCUMENTATION_NETWORKS.items():
        reserved = ipaddress.ip_network(cidr)
        # Inside the range only: 0.0.0.0/0 contains them all and is a deliberate choice.
        if network.version == reserved.version and network.subnet_of(reserved):  # type: ignore[arg-type]
            return f"a documentation range, {name}: it is nobody's address"
    return None


def _example_id(path: str, text: str) -> str | None:
    if path.endswith(".project") and text in EXAMPLE_PROJECTS:
        return EXAMPLE_PROJECTS[text]
    for guid in _GUID.findall(text):
        if guid.lower() in EXAMPLE_GUIDS:
            return EXAMPLE_GUIDS[guid.lower()]
    account = _ARN_ACCOUNT.match(text)
    if account and account.group(1) in EXAMPLE_AWS_ACCOUNTS:
        return f"{EXAMPLE_AWS_ACCOUNTS[account.group(1)]} {account.group(1)}"
    return None


def _todo(path: str) -> str:
    key = re.sub(r"\[\d+\]$", "", path).rsplit(".", 1)[-1]
    return _WHAT_TO_DO.get(key, "replace it with your own value")


def find_placeholders(raw: Mapping[str, Any]) -> list[Placeholder]:
    """Every placeholder in the `gpufleet:` keys (prefix stripped), with its key path."""
    found = []
    for path, value in _leaves(raw, ""):
        if not isinstance(value, str):
            continue
        what = _documentation_range(value) or _example_id(path, value)
        if what is not None:
            found.append(Placeholder(path, value, what, _todo(path)))
    return found


def refusal(placeholders: list[Placeholder]) -> str:
    """What a real `pulumi preview` or `pulumi up` stops with."""
    lines = [
        f"this stack still holds {len(placeholders)} placeholder value(s) from gpufleet's "
        "examples or documentation; fill them in before a real preview or up "
        "(`python -m components plan STACK` names them offline):"
    ]
    lines += [f"  - {placeholder}" for placeholder in placeholders]
    return "\n".join(lines)
