"""The `cost` object of a plan, for people: a table per pool and the idle and full-scale totals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.model.cost import HOURS_PER_MONTH


def money(per_hour: float | None) -> str:
    """`$0.2340/h ($170.82/month)`, or `unknown`."""
    if per_hour is None:
        return "unknown"
    return f"${per_hour:,.4f}/h (${per_hour * HOURS_PER_MONTH:,.2f}/month)"


def _rate(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.4f}"


def _priced_at(pool: Mapping[str, Any]) -> str:
    """The machine type the pool is priced at (the most expensive it may launch)."""
    machines = pool["machineTypes"]
    per_node = pool["perNodeHour"]
    for machine in machines:
        spot, on_demand = machine["spotPerHour"], machine["onDemandPerHour"]
        if per_node is not None and spot == per_node:
            return f"{machine['machineType']} (Spot)"
        if per_node is not None and on_demand == per_node:
            return str(machine["machineType"])
    return ",".join(str(m["machineType"]) for m in machines) or "-"


def pool_at(pool: Mapping[str, Any], nodes: int, cheapest: bool = False) -> float | None:
    """The pool with `nodes` running: its committed capacity (billed whether or not nodes run)
    plus the nodes beyond it (a plan written before committed capacity was counted has none),
    each at its dearest capacity, or its cheapest."""
    committed_nodes = int(pool.get("committedNodes") or 0)
    committed = pool.get("committedPerHour", 0.0)
    beyond = max(0, nodes - committed_nodes)
    if committed is None:
        return None
    if beyond == 0:
        return float(committed)
    per_node = cheapest_rate(pool) if cheapest else pool["perNodeHour"]
    return None if per_node is None else committed + beyond * per_node


def cheapest_rate(pool: Mapping[str, Any]) -> float | None:
    """Per node on the pool's cheapest capacity (a plan without ranges: its only rate)."""
    return (pool.get("perNodeHourRange") or [pool["perNodeHour"]])[0]


def falls_back(pool: Mapping[str, Any]) -> bool:
    """Whether the pool's capacity order spans more than one price."""
    return cheapest_rate(pool) != pool["perNodeHour"]


def _times(pool: Mapping[str, Any], nodes: int, cheapest: bool = False) -> str:
    return _rate(pool_at(pool, nodes, cheapest))


def cost_range(cost: Mapping[str, Any], key: str) -> str:
    """`; $a/h to $b/h over the fallback capacity` where a fallback spans prices, else ``."""
    span = cost.get(f"{key}Range")
    if not span or span[0] == span[1]:
        return ""
    low, high = (money(value).split(" (")[0] for value in span)
    return f"; {low} (every pool on its cheapest capacity) to {high} (its dearest)"


def unpriced_pools(cost: Mapping[str, Any], key: str) -> list[str]:
    """Pools whose nodes at `key` (minNodes, maxNodes) have no price."""
    return [p["name"] for p in cost["pools"] if p[key] and p["perNodeHour"] is None]


def render_cost(cost: Mapping[str, Any]) -> str:
    """What `plan` prints after the pool table."""
    if cost["pricesAsOf"] is None:
        lines = ["cost: not priced"]
        return "\n".join([*lines, *(f"  ! {w}" for w in cost["warnings"])])
    header = ("cost", "nodes", "priced at", "$/node/h", "idle $/h", "full scale $/h")
    control = cost["controlPlanePerHour"]
    # No fee but an idle total: the control plane is not this stack's (an adopted cluster).
    shown = "not counted" if control is None and cost["idlePerHour"] is not None else _rate(control)
    rows = [header, ("control plane", "-", "-", "-", shown, shown)]
    for pool in cost["pools"]:
        per_node = pool["perNodeHour"]
        rows.append(
            (
                str(pool["name"]),
                f"{pool['minNodes']}..{pool['maxNodes']}",
                _priced_at(pool),
                _rate(per_node),
                _times(pool, pool["minNodes"]),
                _times(pool, pool["maxNodes"]),
            )
        )
        if falls_back(pool):
            order = ", ".join(str(word) for word in pool.get("capacity") or [])
            rows.append(
                (
                    f"  cheapest of [{order}]",
                    "",
                    "",
                    _rate(cheapest_rate(pool)),
                    _times(pool, pool["minNodes"], cheapest=True),
                    _times(pool, pool["maxNodes"], cheapest=True),
                )
            )
        if pool.get("committedNodes"):
            rows.append(
                (
                    f"  of which committed: {pool['committedNodes']} reserved",
                    "",
                    "",
                    "",
                    _rate(pool.get("committedPerHour")),
                    _rate(pool.get("committedPerHour")),
                )
            )
    if cost.get("networkPerHour"):
        full = cost.get("networkMaxPerHour", cost["networkPerHour"])
        rows.append(("network", "-", "-", "-", _rate(cost["networkPerHour"]), _rate(full)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in rows]
    for label, key, total, name in (
        ("idle", "minNodes", cost["idlePerHour"], "idlePerHour"),
        ("full scale", "maxNodes", cost["maxPerHour"], "maxPerHour"),
    ):
        missing = unpriced_pools(cost, key)
        why = f" (no price for pool {', '.join(missing)})" if total is None and missing else ""
        lines.append(f"{label}: {money(total)}{why}{cost_range(cost, name)}")
    lines.append(
        f"{cost['currency']}, prices as of {cost['pricesAsOf']} (Spot prices, where known, "
        f"are a snapshot of that day); a month is {HOURS_PER_MONTH} hours; storage, egress and "
        "discounts are not included; estimates are named in the warnings"
    )
    lines += [f"  ! {warning}" for warning in cost["warnings"]]
    return "\n".join(lines)
