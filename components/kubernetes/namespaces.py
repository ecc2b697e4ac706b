"""Namespaces for the GPU software, and GKE's quota for node-critical pods in them.

Every namespace gpufleet creates carries the Pod Security level its pods need
(`components.model.pod_security`): on a cluster that enforces Pod Security by default the GPU
software's DaemonSets are admitted, and nothing else there runs with more than it needs.

GKE admits pods with the `system-node-critical` / `system-cluster-critical` PriorityClasses
outside kube-system only up to a ResourceQuota scoped to those classes in their namespace
(FACTS.md, GPU Operator on GKE). The operator's operands, the DCGM exporter and NFD all use
`system-node-critical`, so every namespace we fill on GKE gets such a quota.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.model import pod_security
from components.model.pools import PoolSpec

CRITICAL_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
# Operand pods one node can run (driver, toolkit, plugin, GFD, DCGM, exporter, MIG manager,
# validator, NFD worker, spare); the quota must never cap the fleet's growth.
CRITICAL_PODS_PER_NODE = 10
MIN_CRITICAL_PODS = 100
MANAGED_BY = {"app.kubernetes.io/managed-by": "gpufleet"}


def namespace_manifest(name: str, level: pod_security.Level | None = None) -> dict[str, Any]:
    """One of gpufleet's own namespaces, at `level` (default: what its software needs)."""
    enforce = level or pod_security.level_for(name)
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {**MANAGED_BY, **pod_security.labels(enforce)}},
    }


def critical_pods_quota_manifest(namespace: str, pods: int) -> dict[str, Any]:
    """A ResourceQuota that admits up to `pods` node/cluster-critical pods in `namespace`."""
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {
            "name": "gpufleet-critical-pods",
            "namespace": namespace,
            "labels": MANAGED_BY,
        },
        "spec": {
            "hard": {"pods": str(pods)},
            "scopeSelector": {
                "matchExpressions": [
                    {
                        "operator": "In",
                        "scopeName": "PriorityClass",
                        "values": list(CRITICAL_PRIORITY_CLASSES),
                    }
                ]
            },
        },
    }


def critical_pods_needed(pools: Sequence[PoolSpec], system_pool: PoolSpec | None) -> int:
    """Enough critical pods for every node the cluster may grow to."""
    nodes = sum(p.max_nodes for p in pools) + (system_pool.max_nodes if system_pool else 0)
    return max(MIN_CRITICAL_PODS, CRITICAL_PODS_PER_NODE * nodes)


def namespace(
    name: str, namespace_name: str, opts: pulumi.ResourceOptions
) -> k8s.core.v1.Namespace:
    manifest = namespace_manifest(namespace_name)
    return k8s.core.v1.Namespace(name, metadata=_metadata(manifest["metadata"]), opts=opts)


def team_namespace(
    name: str, namespace_name: str, opts: pulumi.ResourceOptions
) -> k8s.core.v1.Namespace:
    """A namespace of the team's that gpufleet makes sure exists (a queue's): only its name is
    applied, no label, not even a Pod Security level (the team's to choose; plan says so). Taking over a namespace that exists is a server-side apply without
    force, so a field another manager owns (Helm's `app.kubernetes.io/managed-by`, say) would
    be a conflict that fails `up`; the name alone is never one. Its labels and annotations are
    the team's and never updated: before a server-side update pulumi-kubernetes takes over the
    fields `kubectl`-named managers own (await.go fixCSAFieldManagers), so applying the name
    alone would delete a team's Pod Security or mesh labels."""
    kept = pulumi.ResourceOptions.merge(
        opts, pulumi.ResourceOptions(ignore_changes=["metadata.labels", "metadata.annotations"])
    )
    return k8s.core.v1.Namespace(
        name, metadata=k8s.meta.v1.ObjectMetaArgs(name=namespace_name), opts=kept
    )


def critical_pods_quota(
    name: str, namespace_name: pulumi.Input[str], pods: int, opts: pulumi.ResourceOptions
) -> k8s.core.v1.ResourceQuota:
    manifest = critical_pods_quota_manifest("", pods)
    spec = manifest["spec"]
    expression = spec["scopeSelector"]["matchExpressions"][0]
    return k8s.core.v1.ResourceQuota(
        name,
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=manifest["metadata"]["name"], namespace=namespace_name, labels=MANAGED_BY
        ),
        spec=k8s.core.v1.ResourceQuotaSpecArgs(
            hard=spec["hard"],
            scope_selector=k8s.core.v1.ScopeSelectorArgs(
                match_expressions=[
                    k8s.core.v1.ScopedResourceSelectorRequirementArgs(
                        operator=expression["operator"],
                        scope_name=expression["scopeName"],
                        values=expression["values"],
                    )
                ]
            ),
        ),
        opts=opts,
    )


def _metadata(metadata: Mapping[str, Any]) -> k8s.meta.v1.ObjectMetaArgs:
    return k8s.meta.v1.ObjectMetaArgs(name=metadata["name"], labels=dict(metadata["labels"]))
