"""A budget for what the stack costs when every pool is full.

The rule reads two settings of its pack config: `maxPerHour`, the budget in the plan's currency
(USD) per hour, and `cost`, the `cost` object of `python -m components plan STACK --json`.
`policy/pack_config.py` writes `cost` for a stack (and `maxPerHour` with `--max-per-hour`); the
offline runner takes `cost` from the plan document when the pack config has none.

- No budget: the rule passes (the offline runner reports the figure).
- A budget and a full-scale cost above it: refused, naming the pools that cost the most at full
  scale.
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


def _unpriced(cost: Mapping[str, Any]) -> list[str]:
    return [
        str(pool["name"])
        for pool in cost.get("pools", [])
        if pool.get("perNodeHour") is None and pool.get("maxNodes")
    ]


def check_budget(cost: Mapping[str, Any] | None, budget: float | None) -> list[str]:
    """Why the plan's full-scale cost breaks `budget` (empty: it does not, or no budget)."""
    if budget is None:
        return []
    if not isinstance(cost, Mapping):
        return [
            f"not checked against the budget of ${budget:,.2f}/h: the plan has no cost "
            "(plan it with this gpufleet, or write the pack config with policy/pack_config.py)"
        ]
    full = cost.get("maxPerHour")
    if full is None:
        if cost.get("pricesAsOf") is None:
            why = "gpufleet does not price this stack"
        else:
            why = f"no price for pool {', '.join(_unpriced(cost)) or 'control plane'}"
        return [
            f"not checked against the budget of ${budget:,.2f}/h: the full-scale cost is "
            f"unknown ({why})"
        ]
    if full <= budget:
        return []
    pools = ", ".join(
        f"{name} ({nodes} x ${per_hour / nodes:,.2f} = ${per_hour:,.2f}/h)"
        for name, nodes, per_hour in _pool_costs(cost)
    )
    return [
        f"full-scale cost ${full:,.2f}/h is above the budget of ${budget:,.2f}/h by "
        f"${full - budget:,.2f}/h; at full scale: {pools}; lower maxNodes, use Spot or "
        "smaller machine types, or raise maxPerHour"
    ]


def budget_note(cost: Any, budget: float | None) -> str | None:
    """What the rule reports for the plan, refused or not (the offline runner prints it)."""
    if not isinstance(cost, Mapping):
        return None
    full = cost.get("maxPerHour")
    figure = "unknown" if full is None else f"${full:,.2f}/h"
    limit = "no budget set (maxPerHour)" if budget is None else f"budget ${budget:,.2f}/h"
    return f"[{POLICY_NAME}] full-scale cost {figure}, {limit}"


def _validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    settings = args.get_config()
    budget = settings.get("maxPerHour")
    for message in check_budget(settings.get("cost"), None if budget is None else float(budget)):
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
            "cost": {
                "type": "object",
                "description": "The plan's `cost` object (policy/pack_config.py writes it).",
            },
        }
    ),
)

POLICIES = [cost_at_full_scale]
