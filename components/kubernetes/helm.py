"""One way to install a pinned chart: a real Helm release that rolls back when it fails."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.model.catalog.charts import ChartPin


def pinned_release(
    resource_name: str,
    pin: ChartPin,
    release_name: str,
    namespace: pulumi.Input[str],
    values: pulumi.Input[dict[str, Any]],
    opts: pulumi.ResourceOptions,
    timeout: int = 600,
) -> k8s.helm.v3.Release:
    """`helm.v3.Release` (hooks run, values visible to previews) at the catalog's pinned version.

    Atomic: a failed install or upgrade rolls back instead of leaving a half-configured
    DaemonSet on the GPU nodes.
    """
    return k8s.helm.v3.Release(
        resource_name,
        k8s.helm.v3.ReleaseArgs(
            name=release_name,
            chart=pin.chart,
            version=pin.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=pin.repo),
            namespace=namespace,
            create_namespace=False,
            values=values,
            atomic=True,
            cleanup_on_fail=True,
            timeout=timeout,
            max_history=5,
        ),
        opts=opts,
    )
