"""A Mermaid flowchart of a plan: cluster -> node pools -> GPU software -> sample workloads.

Everything is read from the recorded graph and the `gpuPools` stack output, never from the
stack config, so the picture shows what `pulumi up` would build (including a program bug).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from components.model import resource_index
from components.model.resource_knowledge import DeclaredPool, input_at
from components.tooling.engine import Plan, RecordedResource

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
SAMPLE_TYPES = ("kubernetes:batch/v1:Job", "kubernetes:apps/v1:Deployment")


def render_mermaid(plan: Plan) -> str:
    """The stack as a Mermaid `flowchart` (paste into Markdown inside a ```mermaid block)."""
    ids = _Ids()
    lines = ["flowchart LR"]
    edges: list[str] = []

    cluster_id = ids.new("cluster")
    lines.append(f"  {cluster_id}{_box(_cluster_label(plan))}")

    gpu_pools: Sequence[Mapping[str, Any]] = plan.outputs.get("gpuPools") or []
    gpu_names = {str(p["name"]) for p in gpu_pools}
    pool_ids: dict[str, str] = {}

    system = [p for p in _graph_pools(plan) if (p.label or p.name) not in gpu_names]
    for other in _merge(system):
        node = ids.new(f"pool_{other.name}")
        lines.append(f"  {node}{_box(f'{other.name}: {other.machine}, {_range(other)}')}")
        edges.append(f"  {cluster_id} --> {node}")

    for pool in gpu_pools:
        name = str(pool["name"])
        node = ids.new(f"gpu_{name}")
        pool_ids[name] = node
        lines.append(f"  {node}{_box(_gpu_pool_label(pool))}")
        edges.append(f"  {cluster_id} --> {node}")

    releases = sorted(plan.of_type(HELM_RELEASE), key=lambda r: r.urn)
    # Node lifecycle (the cluster autoscaler, the Spot node termination handler) runs in
    # kube-system; GPU software has namespaces of its own.
    node_managers = [r for r in releases if r.inputs.get("namespace") == "kube-system"]
    gpu_software = [r for r in releases if r not in node_managers]
    for release in node_managers:
        node = ids.new(f"helm_{_chart_name(release)}")
        lines.append(f"  {node}{_round(_release_label(release))}")
        edges.append(f"  {node} -. manages nodes .-> {cluster_id}")

    software_id = ""
    managed = plan.outputs.get("gpuSoftware")
    if gpu_software or (gpu_pools and isinstance(managed, str) and managed):
        software_id = ids.new("gpu_software")
        lines.append(f"  subgraph {software_id} {_box('GPU software')}")
        if gpu_software:
            for release in gpu_software:
                node = ids.new(f"helm_{_chart_name(release)}")
                lines.append(f"    {node}{_round(_release_label(release))}")
        else:
            # No release: the cloud runs the driver and device plugin (e.g. GKE).
            node = ids.new("cloud_managed")
            by = _cluster_label(plan).split(" ", 1)[0]
            lines.append(f"    {node}{_round(f'{managed}: driver and device plugin run by {by}')}")
        lines.append("  end")
        edges.extend(f"  {pool_ids[str(p['name'])]} --> {software_id}" for p in gpu_pools)

    for sample in sorted(
        (r for t in SAMPLE_TYPES for r in plan.of_type(t)), key=lambda r: (r.type, r.name)
    ):
        kind = sample.type.rsplit(":", 1)[-1]
        name = input_at(sample.inputs, "metadata.name") or sample.name
        node = ids.new(f"sample_{name}")
        lines.append(f"  {node}{_stadium(f'{kind} {name}')}")
        if software_id:
            edges.append(f"  {software_id} --> {node}")
        for pool_name in _pools_selected(sample, gpu_pools):
            # Drawn forward (pool to sample) so the chart reads left to right without cycles.
            edges.append(f"  {pool_ids[pool_name]} -. runs .-> {node}")

    return "\n".join(lines + edges)


def _cluster_label(plan: Plan) -> str:
    for type_, shape in resource_index.CLUSTERS.items():
        for cluster in plan.of_type(type_):
            name = (
                input_at(cluster.inputs, shape.name)
                or plan.outputs.get("clusterName")
                or cluster.name
            )
            details = [
                f"Kubernetes {v}"
                for v in [input_at(cluster.inputs, shape.version)]
                if v is not None
            ]
            location = input_at(cluster.inputs, shape.location) if shape.location else None
            if location is None and cluster.provider:
                # No location input (EKS): the region is the explicit provider's.
                provider = plan.by_urn().get(cluster.provider.rsplit("::", 1)[0])
                location = provider.inputs.get("region") if provider else None
            if location:
                details.append(str(location))
            suffix = f"<br/>{', '.join(details)}" if details else ""
            return f"{shape.kind} cluster {name}{suffix}"
    name = plan.outputs.get("clusterName") or plan.stack
    for type_, kind in resource_index.ADOPTED_CLUSTERS.items():
        if plan.of_type(type_):
            return f"existing {kind} cluster {name}<br/>looked up, not managed by gpufleet"
    return f"existing cluster {name}"


def _gpu_pool_label(pool: Mapping[str, Any]) -> str:
    parts = [
        f"{pool['accelerator']} x{pool['gpusPerNode']}",
        f"{pool['minNodes']}..{pool['maxNodes']}",
    ]
    if pool.get("spot"):
        parts.append("spot")
    machines = ", ".join(pool.get("machineTypes") or [])
    # Counted resources only (GPUs, MIG slices): cpu, memory and pods are on every node.
    shared = {k: v for k, v in (pool.get("allocatablePerNode") or {}).items() if isinstance(v, int)}
    extra = f"<br/>{machines}" if machines else ""
    if shared and shared != {pool.get("gpuResource"): pool.get("gpusPerNode")}:
        # Sharing or MIG: what a node offers differs from its whole GPUs.
        extra += "<br/>per node: " + ", ".join(f"{k}={v}" for k, v in sorted(shared.items()))
    return f"{pool['name']}: {', '.join(parts)}{extra}"


def _chart_name(release: RecordedResource) -> str:
    """The chart's name, also for an OCI reference (`oci://registry/path/<name>`)."""
    return str(release.inputs.get("chart") or release.name).rsplit("/", 1)[-1]


def _release_label(release: RecordedResource) -> str:
    chart = _chart_name(release)
    version = release.inputs.get("version") or "unpinned"
    namespace = release.inputs.get("namespace")
    where = f"<br/>namespace {namespace}" if namespace else ""
    return f"{chart}@{version}{where}"


def _range(pool: DeclaredPool) -> str:
    return f"{_count(pool.min_nodes)}..{_count(pool.max_nodes)}"


def _count(value: Any) -> str:
    return "?" if value is None else str(value)


def _graph_pools(plan: Plan) -> list[DeclaredPool]:
    """Every node pool the graph declares, with the pool label it puts on its nodes."""
    return [
        pool
        for r in plan.resources
        if (read := resource_index.POOL_READERS.get(r.type)) is not None
        for pool in read(r.inputs, r.name)
    ]


def _merge(pools: Iterable[DeclaredPool]) -> list[DeclaredPool]:
    """One node per pool label: EKS splits a pool into one group per zone."""
    merged: dict[str, DeclaredPool] = {}
    for pool in pools:
        key = pool.label or pool.name
        if key not in merged:
            merged[key] = DeclaredPool(
                key, pool.machine, pool.min_nodes, pool.max_nodes, pool.label
            )
            continue
        old = merged[key]
        merged[key] = DeclaredPool(
            key,
            old.machine,
            _add(old.min_nodes, pool.min_nodes),
            _add(old.max_nodes, pool.max_nodes),
            key,
        )
    return [merged[k] for k in sorted(merged)]


def _add(a: Any, b: Any) -> Any:
    return a + b if isinstance(a, int) and isinstance(b, int) else None


def _pools_selected(sample: RecordedResource, gpu_pools: Sequence[Mapping[str, Any]]) -> list[str]:
    """The GPU pools whose pod scheduling the sample's nodeSelector asks for."""
    selector = input_at(sample.inputs, "spec.template.spec.nodeSelector") or {}
    if not isinstance(selector, Mapping) or not selector:
        return []
    chosen = []
    for pool in gpu_pools:
        labels = pool.get("nodeLabels") or {}
        if all(labels.get(k) == v for k, v in selector.items()):
            chosen.append(str(pool["name"]))
    return chosen


class _Ids:
    """Unique Mermaid node ids: letters, digits and underscores only."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def new(self, hint: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "_", hint) or "node"
        # Mermaid keywords are not valid node ids.
        if base.lower() in ("end", "subgraph", "graph", "flowchart"):
            base = f"n_{base}"
        candidate, n = base, 2
        while candidate in self._used:
            candidate, n = f"{base}_{n}", n + 1
        self._used.add(candidate)
        return candidate


def _escape(text: str) -> str:
    # Inside a quoted label only `"` needs an entity; keep <br/> line breaks.
    return text.replace('"', "#quot;")


def _box(text: str) -> str:
    return f'["{_escape(text)}"]'


def _round(text: str) -> str:
    return f'("{_escape(text)}")'


def _stadium(text: str) -> str:
    return f'(["{_escape(text)}"])'
