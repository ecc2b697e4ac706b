"""Print, or write into docs/cost.md, what each shipped stack costs idle and at full scale.

The table is computed, never typed: from each stack file and the price tables, exactly as
`python -m components plan STACK --json` computes its `cost` object. tests/test_cost.py fails
when docs/cost.md differs from it; then run

    .venv/bin/python scripts/cost_doc.py --write
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

PROJECT_DIR = Path(__file__).resolve().parents[1]
if str(PROJECT_DIR) not in sys.path:
    sys.path.insert(0, str(PROJECT_DIR))

DOC = PROJECT_DIR / "docs" / "cost.md"
BEGIN = "<!-- BEGIN scripts/cost_doc.py: generated, do not edit -->"
END = "<!-- END scripts/cost_doc.py -->"
# The day the table is priced on (the EKS control-plane fee depends on it): the tests' day.
PRICED_ON = date(2026, 11, 22)


def _money(value: float | None, hours: int = 1) -> str:
    return "unknown" if value is None else f"${value * hours:,.2f}"


def _unpriced(cost: Mapping[str, Any]) -> str:
    if cost["pricesAsOf"] is None:
        return "not priced: gpufleet creates no nodes on this cluster"
    names = [p["name"] for p in cost["pools"] if p["perNodeHour"] is None]
    notes = []
    if names:
        notes.append(f"no price: {', '.join(names)}")
    if any("no Spot price" in w for w in cost["warnings"]):
        notes.append("Spot at on-demand (no Spot price)")
    if cost["controlPlanePerHour"] is None:
        notes.append("control plane not counted (adopted)")
    estimated = sorted(
        {
            m["machineType"]
            for p in cost["pools"]
            for m in p["machineTypes"]
            if m.get("estimate") and m["onDemandPerHour"] is not None
        }
    )
    if estimated:
        notes.append(f"estimates: {', '.join(estimated)} (see `plan`'s warnings)")
    if any("not counted" in w and "reserv" in w for w in cost["warnings"]):
        notes.append("a reservation not counted (see `plan`'s warnings)")
    return "; ".join(notes) or "-"


def table() -> str:
    from components.model.config import parse_config
    from components.model.cost import HOURS_PER_MONTH, stack_cost
    from components.tooling.stacks import load_stack, shipped_stacks

    rows = [
        f"Priced on {PRICED_ON} (USD; a month is {HOURS_PER_MONTH} hours; idle: control plane, "
        "system pool at its minimum, the stack's NAT gateways, load balancer and addresses, GPU "
        "pools at `minNodes` and committed capacity at its count; full scale: every pool at "
        "`maxNodes`).",
        "",
        "| stack | region | prices as of | control plane/h | committed/h | idle/h | idle/month "
        "| full scale/h | full scale/month | not in the figures |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in shipped_stacks():
        config = parse_config(load_stack(name).gpufleet, PRICED_ON)
        cost = stack_cost(config, PRICED_ON).to_json()
        idle, full = cost["idlePerHour"], cost["maxPerHour"]
        control = cost["controlPlanePerHour"]
        rows.append(
            f"| `{name}` | {config.cluster.region or '-'} | {cost['pricesAsOf'] or '-'} "
            f"| {_money(control) if control is not None or cost['pricesAsOf'] is None else '-'} "
            f"| {_money(cost['committedPerHour'])} "
            f"| {_money(idle)} | {_money(idle, HOURS_PER_MONTH)} "
            f"| {_money(full)} | {_money(full, HOURS_PER_MONTH)} | {_unpriced(cost)} |"
        )
    return "\n".join(rows)


def document_with(text: str, generated: str) -> str:
    """`text` with the part between the markers replaced by `generated`."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{generated}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--write", action="store_true", help=f"update {DOC.relative_to(PROJECT_DIR)}"
    )
    options = parser.parse_args(argv)
    generated = table()
    if options.write:
        DOC.write_text(document_with(DOC.read_text(), generated))
    else:
        print(generated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
