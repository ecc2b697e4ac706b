"""A budget for what the stack costs when every pool is full, and (optionally) idle.

The rule reads three settings of its pack config: `maxPerHour` and `maxIdlePerHour`, the budgets
in the plan's currency (USD) per hour, and `cost`, the `cost` object of `python -m components
plan STACK --json`. `policy/pack_config.py` writes them for a stack from its file (`gpufleet:cost`
holds the budget); the offline runner takes `cost` from the plan document when the pack config
has none.

- No budget: the rule passes (the offline runner reports the figure).
- A figure above its budget: refused, naming the pools that cost the most; a figure equal to
  the budget passes.
- A budget and no figure (a pool with no price, a stack gpufleet does not price): refused as
  not checked, naming why: a budget the plan cannot be held to is not met.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    StackValidationArgs,
    StackValidationPolicy,
)

POLICY_NAME = "gpu-cost-at-full-scale"


def _pool_costs(cost: Mapping[str, Any]) -> list[tuple[str, int, float]]:
    """(pool, nodes at full scale, its cost per hour) of every priced pool, dearest first."""
    found = [
        (str(pool["name"]), int(pool["maxNodes"]), int(pool["maxNodes"]) * pool["perNodeHour"])
        for pool in cost.get("pools", [])
        if pool.get("perNodeHour") is not None and pool.get("maxNodes")
    ]
    return sorted(found, key=lambda item: (-item[2], item[0]))


def _usd(value: float) -> str:
    """Three significant digits at least, so a $0.096 node is not shown as $0.10."""
    return f"${value:,.2f}" if value >= 100 else f"${value:,.4g}"


def _unknown(cost: Mapping[str, Any], budget: float, figure: str, nodes: str) -> str:
    if cost.get("pricesAsOf") is None:
        why = "gpufleet does not price this stack"
    else:
        missing = [
            str(pool["name"])
            for pool in cost.get("pools", [])
            if pool.get("perNodeHour") is None and pool.get(nodes)
        ]
        why = f"no price for pool {', '.join(missing) or 'control plane'}"
    return f"not checked against the budget of ${budget:,.2f}/h: the {figure} is unknown ({why})"


def _advice(cost: Mapping[str, Any]) -> str:
    """What lowers the figure; Spot only where the price table has Spot prices (a Spot pool
    priced at on-demand would not get cheaper on paper)."""
    spot = "use Spot, " if cost.get("spotPrices") else ""
    return f"lower maxNodes, {spot}use smaller machine types, or raise the budget"


def check_budget(
    cost: Mapping[str, Any] | None, budget: float | None, idle_budget: float | None = None
) -> list[str]:
    """Why the plan's cost breaks its budgets (empty: it does not, or no budget)."""
    if budget is None and idle_budget is None:
        return []
    if not isinstance(cost, Mapping):
        limit = budget if budget is not None else idle_budget
        return [
            f"not checked against the budget of ${limit:,.2f}/h: the plan has no cost "
            "(plan it with this gpufleet, or write the pack config with policy/pack_config.py)"
        ]
    problems = []
    if budget is not None:
        full = cost.get("maxPerHour")
        if full is None:
            problems.append(_unknown(cost, budget, "full-scale cost", "maxNodes"))
        elif full > budget:
            pools = ", ".join(
                f"{name} ({nodes} x {_usd(per_hour / nodes)} = {_usd(per_hour)}/h)"
                for name, nodes, per_hour in _pool_costs(cost)
            )
            problems.append(
                f"full-scale cost ${full:,.2f}/h is above the budget of ${budget:,.2f}/h "
                f"(gpufleet:cost.maxPerHour) by ${full - budget:,.2f}/h; at full scale: {pools}; "
                f"{_advice(cost)}"
            )
    if idle_budget is not None:
        idle = cost.get("idlePerHour")
        if idle is None:
            problems.append(_unknown(cost, idle_budget, "idle cost", "minNodes"))
        elif idle > idle_budget:
            committed = cost.get("committedPerHour") or 0.0
            held = f", of which committed capacity ${committed:,.2f}/h" if committed else ""
            problems.append(
                f"idle cost ${idle:,.2f}/h is above the budget of ${idle_budget:,.2f}/h "
                f"(gpufleet:cost.maxIdlePerHour) by ${idle - idle_budget:,.2f}/h{held}; lower "
                "minNodes, the system pool or the reserved capacity, or raise the budget"
            )
    return problems


def budget_note(cost: Any, budget: float | None, idle_budget: float | None = None) -> str | None:
    """What the rule reports for the plan, refused or not (the offline runner prints it)."""
    if not isinstance(cost, Mapping):
        return None

    def part(label: str, value: Any, limit: float | None, key: str) -> str:
        figure = "unknown" if value is None else f"${value:,.2f}/h"
        bound = f"no budget set ({key})" if limit is None else f"budget ${limit:,.2f}/h"
        return f"{label} {figure}, {bound}"

    full = part("full-scale cost", cost.get("maxPerHour"), budget, "maxPerHour")
    idle = part("idle", cost.get("idlePerHour"), idle_budget, "maxIdlePerHour")
    return f"[{POLICY_NAME}] {full}; {idle}"


def _validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    settings = args.get_config()
    budget, idle = settings.get("maxPerHour"), settings.get("maxIdlePerHour")
    for message in check_budget(
        settings.get("cost"),
        None if budget is None else float(budget),
        None if idle is None else float(idle),
    ):
        report_violation(message, None)


cost_at_full_scale = StackValidationPolicy(
    name=POLICY_NAME,
    description="The stack's cost per hour with every pool at maxNodes stays within the budget "
    "set in the pack config (maxPerHour, USD).",
    validate=_validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "maxPerHour": {
                "type": "number",
                "minimum": 0,
                "description": "Budget: the most the stack may cost per hour at full scale (USD).",
            },
            "maxIdlePerHour": {
                "type": "number",
                "minimum": 0,
                "description": "Budget: the most the stack may cost per hour idle (USD).",
            },
            "cost": {
                "type": "object",
                "description": "The plan's `cost` object (policy/pack_config.py writes it).",
            },
        }
    ),
)

POLICIES = [cost_at_full_scale]
