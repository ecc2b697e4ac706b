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
    values: pulumi.Input[dict[str, Any]] | None,
    opts: pulumi.ResourceOptions,
    timeout: int | None = 600,
    skip_crds: bool | None = None,
) -> k8s.helm.v3.Release:
    """`helm.v3.Release` (hooks run, values visible to previews) at the catalog's pinned version.

    Atomic: a failed install or upgrade rolls back instead of leaving a half-configured
    DaemonSet on the GPU nodes. An OCI repository (`oci://...`) is part of the chart reference;
    an HTTP one is the release's repository. `timeout=None` keeps Helm's own (5 minutes).
    """
    oci = pin.repo.startswith("oci://")
    return k8s.helm.v3.Release(
        resource_name,
        k8s.helm.v3.ReleaseArgs(
            name=release_name,
            chart=f"{pin.repo}/{pin.chart}" if oci else pin.chart,
            version=pin.version,
            repository_opts=None if oci else k8s.helm.v3.RepositoryOptsArgs(repo=pin.repo),
            namespace=namespace,
            create_namespace=False,
            skip_crds=skip_crds,
            values=values,
            atomic=True,
            cleanup_on_fail=True,
            timeout=timeout,
            max_history=5,
        ),
        opts=opts,
    )
