"""The Kubernetes provider's kubeconfig, from the cluster's user credentials.

AKS returns the user kubeconfig base64-encoded. On Entra ID clusters (local accounts disabled)
it is a kubelogin exec kubeconfig defaulting to an interactive device-code login, which a
`pulumi up` in CI cannot answer; gpufleet rewrites the user to kubelogin's non-interactive
login mode from config, keeping AKS's server, CA and Entra ID server application id. With
local accounts the kubeconfig holds AKS's static client certificate and is used as is.
"""

from __future__ import annotations

import base64
import itertools
from typing import Any

import yaml

from components.kubernetes.kubeconfig import exec_kubeconfig

KUBELOGIN = "kubelogin"


class CredentialsError(ValueError):
    """A kubeconfig from AKS that lacks what the provider needs."""


def decode(value: str) -> str:
    """The kubeconfig document AKS returns base64-encoded."""
    return base64.b64decode(value).decode()


def server_and_ca(document: str) -> tuple[str, str]:
    """The API server URL and its CA (base64 PEM) from an AKS kubeconfig."""
    config: dict[str, Any] = yaml.safe_load(document)
    try:
        entry = config["clusters"][0]["cluster"]
        return str(entry["server"]), str(entry.get("certificate-authority-data", ""))
    except (KeyError, IndexError, TypeError) as error:
        raise CredentialsError(f"AKS user kubeconfig lacks {error}") from None


def kubelogin_kubeconfig(document: str, cluster: str, login_mode: str) -> str:
    """A kubeconfig for AKS's API server whose user runs `kubelogin get-token --login <mode>`."""
    config: dict[str, Any] = yaml.safe_load(document)
    try:
        server_entry = config["clusters"][0]["cluster"]
        server = server_entry["server"]
        ca_data = server_entry.get("certificate-authority-data", "")
        aks_exec = config["users"][0]["user"]["exec"]
    except (KeyError, IndexError, TypeError) as error:
        raise CredentialsError(f"AKS user kubeconfig lacks {error}") from None
    flags = _flags(aks_exec.get("args", []))
    if "--server-id" not in flags:
        raise CredentialsError("AKS user kubeconfig names no --server-id")
    args = ["get-token", "--login", login_mode, "--server-id", flags["--server-id"]]
    # Tenant and cloud come from AKS; the client id and login mode do not carry over, since
    # AKS writes the Azure CLI's public client for device-code login.
    for flag in ("--tenant-id", "--environment"):
        if flag in flags:
            args += [flag, flags[flag]]
    return exec_kubeconfig(
        cluster=cluster, server=server, ca_data=ca_data, command=KUBELOGIN, args=args
    )


def _flags(args: list[str]) -> dict[str, str]:
    """`--flag value` pairs of an exec argument list."""
    return {
        flag: value
        for flag, value in itertools.pairwise(args)
        if flag.startswith("--") and not value.startswith("--")
    }
