"""Human-readable views of a plan: a resource tree grouped by component, and a GPU pool table."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from components.model import resource_index
from components.model.registry import CLOUDS
from components.model.resource_knowledge import input_at
from components.tooling.engine import Plan, RecordedResource

# The input properties worth seeing at a glance, per type: each cloud's and the shared Kubernetes
# ones (catalog/highlights.py), merged in the resource index.
HIGHLIGHTS: Mapping[str, tuple[str, ...]] = resource_index.HIGHLIGHTS
_MAX_VALUE = 90


def render_tree(plan: Plan) -> str:
    """Resources nested under their parents, components first, with key GPU properties."""
    by_parent: dict[str | None, list[RecordedResource]] = {}
    urns = {r.urn for r in plan.resources}
    for resource in plan.resources:
        parent = resource.parent if resource.parent in urns else None
        by_parent.setdefault(parent, []).append(resource)
    lines = [f"{plan.project}/{plan.stack}: {len(plan.resources)} resources"]

    def walk(parent: str | None, depth: int) -> None:
        children = sorted(by_parent.get(parent, []), key=lambda r: (r.custom, r.type, r.name))
        for resource in children:
            marks = []
            if resource.protect:
                marks.append("protected")
            if resource.ignore_changes:
                marks.append("ignores " + ",".join(resource.ignore_changes))
            suffix = f"  [{'; '.join(marks)}]" if marks else ""
            lines.append(f"{'  ' * depth}- {resource.type} {resource.name}{suffix}")
            for path in HIGHLIGHTS.get(resource.type, ()):
                value = input_at(resource.inputs, path)
                if value is not None:
                    lines.append(f"{'  ' * (depth + 2)}{path}: {_short(value)}")
            walk(resource.urn, depth + 1)

    walk(None, 1)
    return "\n".join(lines)


def render_pool_table(pools: Sequence[Mapping[str, Any]]) -> str:
    """One row per GPU pool from the `gpuPools` output."""
    header: tuple[str, ...] = (
        "pool",
        "accelerator",
        "machine types",
        "GPUs/node",
        "allocatable/node",
        "nodes",
        "spot",
        "zones",
    )
    # The fabric column only where a pool has one (plain stacks keep their table).
    fabric = any(pool.get("fabric") for pool in pools)
    if fabric:
        header = (*header, "fabric")
    rows: list[tuple[str, ...]] = [header]
    for pool in pools:
        row = (
            str(pool["name"]),
            str(pool["accelerator"]),
            ",".join(pool["machineTypes"]),
            str(pool["gpusPerNode"]),
            ",".join(f"{k}={v}" for k, v in pool["allocatablePerNode"].items()),
            f"{pool['minNodes']}..{pool['maxNodes']}",
            spot_cell(pool),
            ",".join(pool["zones"]) or "-",
        )
        rows.append((*row, fabric_cell(pool)) if fabric else row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    table = [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
    ]
    for cloud in sorted({str(pool["cloud"]) for pool in pools if pool.get("cloud") in CLOUDS}):
        agents = CLOUDS[cloud].uncounted_daemonsets
        if agents:
            table.append(
                f"allocatable/node on {cloud} is an upper bound: the requests of "
                f"{', '.join(agents)} are not counted (no source gives them)"
            )
    return "\n".join(table)


def spot_cell(pool: Mapping[str, Any]) -> str:
    """yes for a Spot pool; a pool that is not `spot` but whose nodes all carry its cloud's
    Spot taint launches Spot first and on-demand after (`Cloud.spot_taint_key`)."""
    if pool["spot"]:
        return "yes"
    cloud = CLOUDS.get(str(pool.get("cloud")))
    key = cloud.spot_taint_key if cloud is not None else None
    if key is not None and any(taint["key"] == key for taint in pool.get("nodeTaints", ())):
        return "spot, then on-demand"
    return "no"


def fabric_cell(pool: Mapping[str, Any]) -> str:
    """A pool's fabric as `PoolFabric.summary` says it, with its zone and placement (from the
    `gpuPools` output; "-" for a pool on the default network)."""
    fabric = pool.get("fabric")
    if not fabric:
        return "-"
    cap = fabric["placementMaxNodes"]
    placed = f"{fabric['placement']}, <= {cap} nodes" if cap is not None else fabric["placement"]
    return (
        f"{fabric['kind']} x{fabric['interfaces']}, {fabric['bandwidthGbps']} Gbps "
        f"({fabric['zone']}, {placed})"
    )


def _short(value: Any) -> str:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, sort_keys=True, separators=(",", ":"))
    )
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 3] + "..."
