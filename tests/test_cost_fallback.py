"""Issue 33 item 5 and issue 31's EKS prices: a pool that falls back along a `capacity` list is
priced at the dearest capacity it may fall back to, and `plan` shows the range from its
cheapest; EKS regions the source does not price, and Spot, come from an older catalog snapshot
(SkyPilot's), always labelled as estimates."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from components.aws.model.prices import TAGS_NOT_KNOWN
from components.model.config import parse_config
from components.model.cost import stack_cost
from components.model.registry import CLOUDS
from components.tooling.cost_view import render_cost
from components.tooling.diff_cost import CostChange, cost_lines, cost_markdown
from components.tooling.stacks import load_stack
from scripts.price_snapshot import disagreeing, read_rows, snapshot_section
from tests.conftest import PINNED_TODAY, plan_of


def _table(cloud: str) -> Any:
    pricing = CLOUDS[cloud].pricing
    assert pricing is not None
    return pricing.table()


def _cost(raw: dict[str, Any]) -> dict[str, Any]:
    return stack_cost(parse_config(raw, PINNED_TODAY), PINNED_TODAY).to_json()


def _pool(cost: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [p for p in cost["pools"] if p["name"] == name]
    return found


# --- the range over a fallback ------------------------------------------------------------------


def test_a_spot_pool_that_falls_back_to_on_demand_shows_its_cheapest_and_dearest() -> None:
    # aws-karpenter: l4 is Spot with onDemandFallback on g6.xlarge/g6.2xlarge, 0..8 nodes.
    cost = plan_of("aws-karpenter").to_json()["cost"]
    table = _table("aws")
    spot = max(table.machine(m, "us-east-1").spot for m in ("g6.xlarge", "g6.2xlarge"))
    on_demand = table.machine("g6.2xlarge", "us-east-1").on_demand
    l4 = _pool(cost, "l4")
    assert l4["capacity"] == ["spot", "on-demand"]
    assert l4["perNodeHourRange"] == [pytest.approx(spot), pytest.approx(on_demand)]
    assert spot < on_demand and l4["perNodeHour"] == pytest.approx(on_demand)  # the dearest
    low, high = cost["maxPerHourRange"]
    assert high == cost["maxPerHour"]
    assert low == pytest.approx(high - l4["maxNodes"] * (on_demand - spot))
    assert cost["idlePerHourRange"] == [cost["idlePerHour"], cost["idlePerHour"]]  # l4 idles at 0
    h100 = _pool(cost, "h100")  # on-demand only: no range
    assert h100["perNodeHourRange"] == [h100["perNodeHour"], h100["perNodeHour"]]
    text = render_cost(cost)
    assert "cheapest of [spot, on-demand]" in text
    assert f"${low:,.4f}/h (every pool on its cheapest capacity)" in text


def test_a_written_fallback_list_is_priced_at_its_dearest_capacity_with_the_range() -> None:
    # aws-reserved with an A10G pool as [reserved, spot, on-demand]: one reserved g5.xlarge, up
    # to 4 nodes, the 3 beyond the reservation on Spot or on demand.
    raw = copy.deepcopy(load_stack("aws-reserved").gpufleet)
    reservation = {
        "id": "cr-0a1b2c3d4e5f60718",
        "instanceType": "g5.xlarge",
        "zone": "us-east-1a",
        "instanceCount": 1,
    }
    pool = {
        "name": "a10g",
        "accelerator": "a10g",
        "machineTypes": ["g5.xlarge"],
        "minNodes": 0,
        "maxNodes": 4,
        "zones": ["us-east-1a"],
        "capacity": ["reserved", "spot", "on-demand"],
        "aws": {"capacityReservations": [reservation]},
    }
    raw["gpuPools"] = [pool]
    cost = _cost(raw)
    priced = _pool(cost, "a10g")
    price = _table("aws").machine("g5.xlarge", "us-east-1")
    assert priced["perNodeHourRange"] == [price.spot, price.on_demand]
    assert price.spot is not None and price.on_demand is not None
    assert priced["perNodeHour"] == price.on_demand  # the dearest it may fall back to
    assert priced["committedNodes"] == 1
    # Idle: the reservation alone, billed either way; full scale: 3 nodes beyond it.
    assert cost["idlePerHourRange"] == [cost["idlePerHour"], cost["idlePerHour"]]
    assert cost["maxPerHourRange"] == [
        pytest.approx(cost["maxPerHour"] - 3 * (price.on_demand - price.spot)),
        cost["maxPerHour"],
    ]
    # No Spot in the order: the two ends meet.
    pool["capacity"] = ["reserved", "on-demand"]
    alone = _pool(_cost(raw), "a10g")
    assert alone["perNodeHourRange"] == [price.on_demand, price.on_demand]


def test_diff_says_how_the_range_over_the_fallback_moves() -> None:
    old = plan_of("aws-karpenter").to_json()["cost"]
    new = copy.deepcopy(old)
    new["maxPerHourRange"] = [old["maxPerHourRange"][0] + 1.0, old["maxPerHourRange"][1]]
    lines = cost_lines(CostChange(old, new))
    (moved,) = [line for line in lines if "over the fallback capacity" in line]
    assert moved.strip().startswith("full scale over the fallback capacity:")
    assert "->" in moved
    assert any("over the fallback capacity" in row for row in cost_markdown(CostChange(old, new)))
    assert not any("fallback" in line for line in cost_lines(CostChange(old, old)))


def test_a_range_that_collapses_reads_as_no_fallback_not_as_unknown() -> None:
    old = plan_of("aws-karpenter").to_json()["cost"]
    new = copy.deepcopy(old)
    del new["maxPerHourRange"]
    (moved,) = [line for line in cost_lines(CostChange(old, new)) if "fallback capacity" in line]
    assert moved.endswith("-> no fallback (one capacity)"), moved
    (back,) = [line for line in cost_lines(CostChange(new, old)) if "fallback capacity" in line]
    assert "no fallback (one capacity) -> $" in back
    rows = [r for r in cost_markdown(CostChange(old, new)) if "fallback capacity" in r]
    assert rows and "-> no fallback (one capacity)" in rows[0]


# --- EKS prices from the older snapshot ---------------------------------------------------------


def test_an_eks_region_the_source_does_not_price_takes_the_snapshot_price_as_an_estimate() -> None:
    table = _table("aws")
    exact = table.machine("g5.xlarge", "us-east-1")
    assert exact.on_demand == 1.006 and exact.estimate == ""  # Karpenter's us-east-1 table
    oregon = table.machine("g5.xlarge", "us-west-2")
    frankfurt = table.machine("g5.xlarge", "eu-central-1")
    assert oregon.on_demand == 1.006 and "us-west-2 list price in SkyPilot" in oregon.estimate
    # A region dearer than us-east-1 is no longer priced at the us-east-1 list price.
    assert frankfurt.on_demand == 1.258 and "eu-central-1" in frankfurt.estimate
    # Types the snapshot leaves out keep the stand-in region (their price changed since).
    stand_in = table.machine("p5.48xlarge", "us-west-2")
    assert stand_in.on_demand == 55.04 and stand_in.estimate.startswith("us-east-1 list price")
    assert stand_in.spot is None


def test_eks_spot_prices_come_from_the_snapshot_labelled() -> None:
    table = _table("aws")
    for region in ("us-east-1", "us-west-2"):
        price = table.machine("g4dn.xlarge", region)
        assert price.spot is not None and 0 < price.spot < price.on_demand
        assert "Spot" in price.spot_estimate and region in price.spot_estimate
    # An on-demand pool does not carry the Spot estimate in its warnings (aws-dev's l4).
    warnings = _cost(copy.deepcopy(load_stack("aws-dev").gpufleet))["warnings"]
    assert any("pool t4-spot" in w and "Spot" in w for w in warnings)
    assert not any("pool l4" in w and "Spot" in w for w in warnings)


def test_the_snapshot_agrees_with_the_tables_own_prices_where_both_price() -> None:
    rows = read_rows(__import__("pathlib").Path("scripts/price_data/skypilot_aws_v7.csv"))
    exact = {m: {r: list(p) for r, p in by.items()} for m, by in _table("aws").machines.items()}
    assert disagreeing(rows, exact) == {}
    # Every snapshot type the table prices in us-east-1 agrees there (34 types checked).
    both = [m for m in rows if "us-east-1" in rows[m] and "us-east-1" in exact.get(m, {})]
    assert len(both) == len(rows) == 34
    # A type whose list price moved since the snapshot is left out whole, at the edge.
    moved = {"g5.xlarge": {"us-east-1": [1.006 * 1.006, None]}}
    assert "g5.xlarge" in disagreeing(rows, moved)
    same = {"g5.xlarge": {"us-east-1": [1.006 * 1.005, None]}}
    assert disagreeing(rows, same) == {}
    section = snapshot_section("aws", moved)
    assert section is not None and "g5.xlarge" not in section["machines"]
    assert section["source"]["licence"].startswith("none stated in skypilot-org/skypilot-catalog")
    assert snapshot_section("gcp", {}) is None


def test_the_azure_snapshot_agrees_on_demand_and_gives_spot_as_an_estimate() -> None:
    rows = read_rows(Path(__file__).parents[1] / "scripts/price_data/skypilot_azure_v6.csv")
    table = _table("azure")
    exact = {m: {r: list(p) for r, p in by.items()} for m, by in table.machines.items()}
    assert disagreeing(rows, exact) == {}
    compared = [(m, r) for m in rows for r in rows[m] if r in exact.get(m, {})]
    assert len(compared) == 74  # every snapshot row is a region the table prices exactly
    price = table.machine("Standard_NC24ads_A100_v4", "westus3")
    assert price.estimate == "" and price.spot is not None and price.spot < price.on_demand
    assert "westus3" in price.spot_estimate
    # H100 sizes: the file gives no Spot price (it repeats on demand), so none is taken.
    assert table.machine("Standard_NC40ads_H100_v5", "eastus").spot is None
    # A region the snapshot lacks keeps no Spot price.
    assert table.machine("Standard_NC8as_T4_v3", "westeurope").spot is None


# --- the age of the snapshot's estimates ------------------------------------------------------


def test_the_age_rule_applies_to_the_snapshots_date_where_its_estimates_are_used() -> None:
    """aws-dev's Spot pool takes SkyPilot's Spot prices (taken by 2025-05-31): 546 days old on
    the pinned day, though the table itself is from 2026-07-20. The rule's edge is the
    table's: 90 days passes, 91 is said."""
    from datetime import timedelta

    from components.model.cost import MAX_PRICE_AGE_DAYS, stale_snapshot

    table = _table("aws")
    assert table.snapshot_taken_by is not None
    warnings = _cost(copy.deepcopy(load_stack("aws-dev").gpufleet))["warnings"]
    (said,) = [w for w in warnings if "price snapshot" in w]
    assert "from 2025-05-31 or before" in said and "not the table's" in said
    edge = table.snapshot_taken_by + timedelta(days=MAX_PRICE_AGE_DAYS)
    assert stale_snapshot(table, edge) == []
    assert "91 days old" in stale_snapshot(table, edge + timedelta(days=1))[0]
    # Azure's snapshot is undated: said as such where its Spot estimate is used.
    assert "undated" in stale_snapshot(_table("azure"), PINNED_TODAY)[0]
    # No snapshot price used (an on-demand pool in us-east-1): nothing said.
    raw = copy.deepcopy(load_stack("aws-dev").gpufleet)
    raw["gpuPools"] = [p for p in raw["gpuPools"] if not p.get("spot")]
    assert raw["gpuPools"]
    assert not [w for w in _cost(raw)["warnings"] if "price snapshot" in w]


# --- committed capacity gpufleet cannot count ---------------------------------------------------


@pytest.mark.parametrize("stack", ["aws-karpenter", "aws-auto-mode"])
def test_reservations_selected_by_tags_say_their_committed_cost_is_not_known(stack: str) -> None:
    """Tag-selected reservations are billed whether used or not, but their count is EC2's: the
    pool's warning says the committed cost is not known rather than showing $0 silently (review
    fix8-eks F8E-4); a pool that names its reservations with instanceCount is counted."""
    raw = copy.deepcopy(load_stack(stack).gpufleet)
    pool = raw["gpuPools"][1]
    pool["capacity"] = ["reserved", "on-demand"]
    pool["aws"] = {"capacityReservationTags": {"team": "ml"}}
    cost = _cost(raw)
    said = [w for w in cost["warnings"] if w.startswith(f"pool {pool['name']}: ")]
    assert any(TAGS_NOT_KNOWN in w for w in said), said
    pool["aws"] = {"capacityReservations": [{"id": "cr-0123456789abcdef0", "instanceCount": 1}]}
    counted = _cost(raw)
    assert not any(TAGS_NOT_KNOWN in w for w in counted["warnings"])
    assert _pool(counted, pool["name"])["committedNodes"] == 1
