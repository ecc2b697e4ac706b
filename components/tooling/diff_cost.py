"""The change in what a stack costs between two plans (their `cost` objects), for `diff`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from components.model.cost import HOURS_PER_MONTH
from components.tooling.cost_view import money, unpriced_pools

# (label, key of the cost object, pool count the total takes)
TOTALS = (("idle", "idlePerHour", "minNodes"), ("full scale", "maxPerHour", "maxNodes"))


@dataclass(frozen=True)
class CostChange:
    """The `cost` objects of the old and new plan (None: that plan has none)."""

    old: Mapping[str, Any] | None
    new: Mapping[str, Any] | None

    def total(self, side: Mapping[str, Any] | None, key: str) -> float | None:
        return None if side is None else side.get(key)

    @property
    def unchanged(self) -> bool:
        """Every total known on both sides and equal (unknown twice is not unchanged)."""
        return all(
            self.old is not None
            and self.new is not None
            and self.old.get(key) is not None
            and self.old.get(key) == self.new.get(key)
            for _, key, _ in TOTALS
        )

    @property
    def unknown_both(self) -> bool:
        """Both plans carry a cost and neither has any total: nothing can be compared."""
        return all(
            self.old is not None
            and self.new is not None
            and self.old.get(key) is None
            and self.new.get(key) is None
            for _, key, _ in TOTALS
        )


def released_commitment(change: CostChange) -> str | None:
    """Committed capacity (reservations, Capacity Blocks) that leaves the stack is not a saving:
    gpufleet neither buys nor releases it, and the cloud bills it until its owner reduces,
    deletes or lets it expire (review aks-4 R4-1)."""
    old = change.total(change.old, "committedPerHour")
    new = change.total(change.new, "committedPerHour") or 0.0
    if old is None or old <= new:
        return None
    return (
        f"committed capacity worth ${old - new:,.4f}/h leaves the stack, but that is not a "
        "saving: the reservations or Capacity Blocks stay billed until you reduce, delete or "
        "let them expire in the cloud (gpufleet neither buys nor releases them)"
    )


def cost_change(old: Any, new: Any) -> CostChange | None:
    """None when neither plan carries a cost (plans written before gpufleet priced stacks)."""
    old_cost = old if isinstance(old, Mapping) else None
    new_cost = new if isinstance(new, Mapping) else None
    if old_cost is None and new_cost is None:
        return None
    return CostChange(old_cost, new_cost)


def _side(cost: Mapping[str, Any] | None, key: str, nodes: str) -> str:
    if cost is None:
        return "not in the plan"
    value = cost.get(key)
    if value is None and cost.get("pricesAsOf") is None:
        return "not priced"
    missing = unpriced_pools(cost, nodes) if value is None else []
    return money(value) + (f" (no price for pool {', '.join(missing)})" if missing else "")


def _delta(old: float | None, new: float | None) -> str:
    if old is None or new is None:
        return "change unknown"
    change = new - old
    sign = "-" if change < 0 else "+"
    return f"{sign}${abs(change):,.4f}/h, {sign}${abs(change) * HOURS_PER_MONTH:,.2f}/month"


def _as_of(change: CostChange) -> str:
    dates = {
        str(cost["pricesAsOf"])
        for cost in (change.old, change.new)
        if cost is not None and cost.get("pricesAsOf")
    }
    currency = (change.new or change.old or {}).get("currency", "USD")
    return f"{currency}, prices as of {', '.join(sorted(dates))}" if dates else currency


def cost_lines(change: CostChange) -> list[str]:
    """Plain text: one line per total, old -> new and the change."""
    if change.unknown_both:
        totals = "; ".join(
            f"{label} {_side(change.new, key, nodes)}" for label, key, nodes in TOTALS
        )
        return [f"Cost unknown before and after ({_as_of(change)}): {totals}"]
    if change.unchanged:
        totals = "; ".join(
            f"{label} {_side(change.new, key, nodes)}" for label, key, nodes in TOTALS
        )
        return [f"Cost unchanged ({_as_of(change)}): {totals}", *_span_lines(change)]
    lines = [f"Cost ({_as_of(change)}):"]
    for label, key, nodes in TOTALS:
        old, new = change.total(change.old, key), change.total(change.new, key)
        lines.append(
            f"    {label}: {_side(change.old, key, nodes)} -> {_side(change.new, key, nodes)}"
            f" ({_delta(old, new)})"
        )
    lines += _span_lines(change)
    released = released_commitment(change)
    return lines + ([f"    note: {released}"] if released else [])


def _span_lines(change: CostChange) -> list[str]:
    """How the cheapest..dearest range over the pools' fallback capacity moves, where it does."""
    lines = []
    for label, key, _ in TOTALS:
        old, new = (_span(side, key) for side in (change.old, change.new))
        if (old or new) and old != new:
            lines.append(
                f"    {label} over the fallback capacity: {_span_side(change.old, key)} -> "
                f"{_span_side(change.new, key)}"
            )
    return lines


def _span(cost: Mapping[str, Any] | None, key: str) -> str:
    """`$a/h..$b/h`, the cheapest to dearest capacity, where a fallback spans prices."""
    span = None if cost is None else cost.get(f"{key}Range")
    if not span or span[0] == span[1]:
        return ""
    return "..".join("unknown" if v is None else f"${v:,.4f}/h" for v in span)


def _span_side(cost: Mapping[str, Any] | None, key: str) -> str:
    """One side of a range that moved: the range, or why there is none ("-": no cost at all)."""
    if cost is None:
        return "-"
    span = cost.get(f"{key}Range")
    if not span:
        return "no fallback (one capacity)"
    return _span(cost, key) or "one price (the fallback costs the same)"


def cost_markdown(change: CostChange) -> list[str]:
    """A table for the pull-request comment."""
    if change.unknown_both:
        return [
            f"**Cost** unknown before and after ({_as_of(change)}): "
            + cost_lines(change)[0].split(": ", 1)[1]
        ]
    if change.unchanged:
        return [
            f"**Cost** unchanged ({_as_of(change)}): " + cost_lines(change)[0].split(": ", 1)[1],
            *(f"- {line.strip()}" for line in _span_lines(change)),
        ]
    rows = [
        f"**Cost** ({_as_of(change)}; a month is {HOURS_PER_MONTH} hours):",
        "",
        "| | before | after | change |",
        "|---|---|---|---|",
    ]
    for label, key, nodes in TOTALS:
        old, new = change.total(change.old, key), change.total(change.new, key)
        rows.append(
            f"| {label} | {_side(change.old, key, nodes)} | {_side(change.new, key, nodes)} "
            f"| {_delta(old, new)} |"
        )
        spans = [_span(side, key) for side in (change.old, change.new)]
        if any(spans) and spans[0] != spans[1]:
            rows.append(
                f"| {label} over the fallback capacity | {_span_side(change.old, key)} "
                f"| {_span_side(change.new, key)} | |"
            )
    released = released_commitment(change)
    return rows + (["", f"Note: {released}."] if released else [])
