"""Kubeconfig documents for the explicit Kubernetes providers (exec credential plugins)."""

from __future__ import annotations

from typing import Any

import yaml


def exec_kubeconfig(
    cluster: str,
    server: str,
    ca_data: str,
    command: str,
    args: list[str],
    env: dict[str, str] | None = None,
) -> str:
    """A kubeconfig whose user gets short-lived tokens from a cloud CLI plugin (never static)."""
    user_exec: dict[str, Any] = {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": command,
        "args": args,
        "interactiveMode": "Never",
        "provideClusterInfo": True,
    }
    if env:
        user_exec["env"] = [{"name": k, "value": v} for k, v in sorted(env.items())]
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": cluster, "cluster": {"server": server, "certificate-authority-data": ca_data}}
        ],
        "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": cluster}}],
        "current-context": cluster,
        "users": [{"name": cluster, "user": {"exec": user_exec}}],
    }
    return yaml.safe_dump(document, sort_keys=False)
