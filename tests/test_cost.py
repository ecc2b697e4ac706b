"""What a stack costs (issue 26): the price tables, idle and full-scale costs, `plan`, `diff` and
the budget rule. Costs come from the config and the tables alone, so most tests price a stack
without planning it; the figures are recomputed here by hand from the table."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model import config as model_config
from components.model.config import parse_config
from components.model.cost import HOURS_PER_MONTH, MAX_PRICE_AGE_DAYS, stack_cost, stale_prices
from components.model.prices import PriceTable
from components.model.registry import CLOUDS
from components.model.schema import StackConfig
from components.tooling.cli import main as cli_main
from components.tooling.diff import diff_plans, render_markdown, render_text
from components.tooling.stacks import STACKS_DIR, load_stack
from policy import pack_config
from policy.gpufleet_policy.cost import POLICY_NAME, budget_note, check_budget
from policy.gpufleet_policy.offline import run_pack
from scripts import prices as prices_script
from tests.conftest import PINNED_TODAY, plan_of

PRICED = {name: cloud for name, cloud in CLOUDS.items() if cloud.pricing is not None}


def table(cloud: str) -> PriceTable:
    pricing = CLOUDS[cloud].pricing
    assert pricing is not None
    return pricing.table()


def config_of(stack: str) -> StackConfig:
    return parse_config(raw_of(stack), PINNED_TODAY)


def raw_of(stack: str) -> dict[str, Any]:
    return copy.deepcopy(load_stack(stack).gpufleet)


def cost_of(stack: str, raw: Mapping[str, Any] | None = None) -> dict[str, Any]:
    config = parse_config(raw if raw is not None else raw_of(stack), PINNED_TODAY)
    return stack_cost(config, PINNED_TODAY).to_json()


def pool(cost: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    (found,) = [p for p in cost["pools"] if p["name"] == name]
    return found


def od(cloud: str, machine: str, region: str) -> float:
    price = table(cloud).machines[machine][region][0]
    return price


def spot(cloud: str, machine: str, region: str) -> float | None:
    return table(cloud).machines[machine][region][1]


# --- the tables ------------------------------------------------------------------------------


@pytest.mark.parametrize("cloud", sorted(PRICED))
def test_every_catalog_machine_type_has_a_price_row_or_a_named_unknown(cloud: str) -> None:
    prices = table(cloud)
    known = CLOUDS[cloud]
    machines = {row.name for row in known.catalog.rows} | set(
        getattr(known, "system_machine_shapes", {})
    )
    missing = sorted(m for m in machines if m not in prices.machines and m not in prices.unknown)
    assert missing == [], f"run scripts/prices.py: no row or unknown entry for {missing}"
    stale = sorted(set(prices.machines) - machines)
    assert stale == [], f"rows for machine types no catalog has: {stale}"
    attached = {row.gke_accelerator for row in known.catalog.rows if row.attach_counts}
    assert sorted(a for a in attached if a not in prices.accelerators | prices.unknown) == []
    assert all(reason.strip() for reason in prices.unknown.values())
    # Every row has an on-demand price, and a Spot price only below it.
    for machine, regions in prices.machines.items():
        for region, (on_demand, spot_price) in regions.items():
            assert on_demand > 0, (machine, region)
            assert spot_price is None or 0 < spot_price < on_demand, (machine, region)


@pytest.mark.parametrize("cloud", sorted(PRICED))
def test_each_table_is_dated_and_sourced_with_its_control_plane_tiers(cloud: str) -> None:
    prices = table(cloud)
    assert prices.cloud == cloud
    assert prices.source["url"].startswith("https://github.com/")
    assert prices.source["licence"] == "Apache-2.0"
    assert prices.as_of <= PINNED_TODAY
    tiers = {"gcp": {"standard"}, "aws": {"standard", "extended"}}
    assert set(prices.control_plane) == tiers.get(cloud, {"Free", "Standard", "Premium"})
    assert all(source for _, source in prices.control_plane.values())


def test_the_tables_cover_the_regions_gpufleet_knows() -> None:
    from components.gcp.model.gpu_zones import GPU_ZONES

    gke_regions = {region for zones in GPU_ZONES.values() for region in zones}
    e2 = table("gcp").machines["e2-standard-4"]
    assert gke_regions <= set(e2), sorted(gke_regions - set(e2))
    assert {"eastus2", "westeurope"} <= set(table("azure").machines["Standard_D4s_v5"])
    assert set(table("aws").machines["m6i.large"]) == {"us-east-1"}  # what the source covers


def test_the_generator_reads_each_source_format(tmp_path: Path) -> None:
    aws = (
        "// generated at 2026-07-20T13:44:30Z for us-east-1\n"
        "var InitialOnDemandPricesAWS = map[string]map[ec2types.InstanceType]float64{\n"
        '\t"us-east-1": {\n\t\t"g6.xlarge": 0.804800, "m6i.large": 0.096000, "x9.huge": 9.0,\n\t},\n'
        '\t"eu-west-1": {\n\t\t"g6.xlarge": 0.900000,\n\t},\n}\n'
    )
    as_of, found = prices_script.read_karpenter_go(aws, ["g6.xlarge", "m6i.large", "p5.4xlarge"])
    assert as_of.isoformat() == "2026-07-20"
    assert found == {
        "us-east-1": {"g6.xlarge": (0.8048, None), "m6i.large": (0.096, None)},
        "eu-west-1": {"g6.xlarge": (0.9, None)},
    }
    azure = (
        "// generated at 2026-06-18T03:43:41Z\n\nfunc init() {\n"
        '\t// eastus2\n\tinitialOnDemandPrices["eastus2"] = map[string]float64{\n'
        '\t\t"Standard_D4s_v5":   0.192000,\n\t}\n}\n'
    )
    assert prices_script.read_karpenter_go(azure, ["Standard_D4s_v5"])[1] == {
        "eastus2": {"Standard_D4s_v5": (0.192, None)}
    }
    gcp = yaml.safe_dump(
        {
            "about": {"generated": "Thu Jul 30 06:13:17 2026"},
            "compute": {
                "instance": {
                    "g2-standard-8": {
                        "l4": 1,
                        "cost": {"us-central1": {"hour": 0.853624271, "hour_spot": 0.479872}},
                    }
                }
            },
        }
    )
    as_of, found = prices_script.read_gcp(gcp, ["g2-standard-8", "n1-standard-8"])
    assert as_of.isoformat() == "2026-07-30"
    assert found == {"us-central1": {"g2-standard-8": (0.853624, 0.479872)}}
    document = prices_script.table(
        "gcp", as_of, found, ["g2-standard-8", "n1-standard-8"], None, "snapshot", ["t4-x"]
    )
    # The source's rows, plus the hand-entered estimates of scripts/price_facts.py, named.
    assert document["machines"]["g2-standard-8"] == {"us-central1": [0.853624, 0.479872]}
    assert set(document["machines"]) - {"g2-standard-8"} <= set(document["estimated"])
    assert set(document["unknown"]) == {"n1-standard-8", "t4-x"}
    assert json.loads(prices_script.render(document)) == document


# --- idle and full scale, by hand --------------------------------------------------------------


def test_a_shipped_stack_costs_what_its_pools_and_control_plane_add_up_to() -> None:
    # aws-karpenter, us-east-1: system m6i.large 2..3, l4 Spot with on-demand fallback on
    # g6.xlarge/g6.2xlarge 0..8, h100 p5.48xlarge 0..2, standard support.
    cost = plan_of("aws-karpenter").to_json()["cost"]
    system, h100 = od("aws", "m6i.large", "us-east-1"), od("aws", "p5.48xlarge", "us-east-1")
    l4 = od("aws", "g6.2xlarge", "us-east-1")  # it may launch on demand: the dearer type
    # One NAT gateway and its Elastic IP (natGateways: single), billed while the stack exists.
    network = table("aws").fees["natGateway"].per_hour + table("aws").fees["publicIpv4"].per_hour
    assert cost["controlPlanePerHour"] == 0.10
    assert cost["networkPerHour"] == pytest.approx(network) == pytest.approx(0.05)
    assert cost["idlePerHour"] == pytest.approx(0.10 + network + 2 * system)
    assert cost["maxPerHour"] == pytest.approx(0.10 + network + 3 * system + 8 * l4 + 2 * h100)
    assert cost["pricesAsOf"] == table("aws").as_of.isoformat()
    assert [p["name"] for p in cost["pools"]] == ["system", "l4", "h100"]
    # The l4 pool's cheapest figure uses Spot prices the table estimates (an older snapshot).
    assert [w.split(":")[0].split(" (")[0] for w in cost["warnings"]] == [
        "pool l4",
        "pool l4",
        "the estimates taken from the price snapshot",
        "network, billed while the stack exists",
    ]
    assert all("Spot" in w for w in cost["warnings"][:2])


def test_a_spot_pool_is_priced_at_its_spot_price() -> None:
    cost = cost_of("gcp-a100-mig")
    spot_pool = pool(cost, "a100-80-spot")
    machine = spot_pool["machineTypes"][0]["machineType"]
    spot_price = spot("gcp", machine, "us-central1")
    assert spot_price is not None
    assert spot_pool["perNodeHour"] == spot_price < od("gcp", machine, "us-central1")
    assert spot_pool["machineTypes"][0]["spotPerHour"] == spot_price
    # An on-demand pool shows no Spot price: it does not use one.
    assert pool(cost, "h100")["machineTypes"][0]["spotPerHour"] is None


def test_a_pool_with_several_machine_types_is_priced_at_the_dearest() -> None:
    raw = raw_of("aws-dev")
    l4 = next(p for p in raw["gpuPools"] if p["name"] == "l4")
    l4["machineTypes"] = ["g6.2xlarge", "g6.xlarge", "g6.4xlarge"]
    cost = cost_of("aws-dev", raw)
    dearest = od("aws", "g6.4xlarge", "us-east-1")
    assert dearest > od("aws", "g6.2xlarge", "us-east-1") > od("aws", "g6.xlarge", "us-east-1")
    assert pool(cost, "l4")["perNodeHour"] == dearest
    assert [m["machineType"] for m in pool(cost, "l4")["machineTypes"]] == l4["machineTypes"]


def test_a_spot_price_the_table_lacks_is_priced_at_on_demand_and_said() -> None:
    # aws-training's a100-spot: p4d.24xlarge has no Spot price (its snapshot rows are left out).
    cost = cost_of("aws-training")
    a100 = pool(cost, "a100-spot")
    assert a100["perNodeHour"] == od("aws", "p4d.24xlarge", "us-east-1")
    assert a100["machineTypes"][0]["spotPerHour"] is None
    assert any("a100-spot" in w and "no Spot price" in w for w in cost["warnings"])
    # azure-dev's t4spot has one: the snapshot's, an estimate that says so.
    azure = cost_of("azure-dev")
    t4spot = pool(azure, "t4spot")
    spot = table("azure").machine("Standard_NC8as_T4_v3", "eastus2").spot
    assert spot is not None and t4spot["perNodeHour"] == spot
    assert spot < od("azure", "Standard_NC8as_T4_v3", "eastus2")
    assert any("t4spot" in w and "Spot: the eastus2 price" in w for w in azure["warnings"])
    assert azure["controlPlanePerHour"] == 0.0  # the Free tier


@pytest.fixture
def t4_unpriced(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GKE table without the T4's price (as before it had one): a truly missing price."""
    pricing = CLOUDS["gcp"].pricing
    assert pricing is not None
    without = replace(
        pricing.table(), accelerators={}, estimated={}, unknown={"nvidia-tesla-t4": "test"}
    )
    monkeypatch.setattr(pricing, "table", lambda: without)


@pytest.mark.usefixtures("t4_unpriced")
def test_an_unknown_price_is_null_and_named_never_zero() -> None:
    cost = cost_of("gcp-dev")  # t4 is n1-standard-8 + an attached T4: no T4 price
    t4 = pool(cost, "t4")
    assert t4["perNodeHour"] is None and t4["machineTypes"][0]["onDemandPerHour"] is None
    assert cost["maxPerHour"] is None
    assert any(w.startswith("pool t4:") and "nvidia-tesla-t4" in w for w in cost["warnings"])
    # At zero nodes an unknown price costs nothing: idle stays known ...
    system = od("gcp", "e2-standard-4", "us-central1")
    assert cost["idlePerHour"] == pytest.approx(0.10 + system + cost["networkPerHour"])
    # ... and becomes unknown once the pool keeps a node.
    raw = raw_of("gcp-dev")
    next(p for p in raw["gpuPools"] if p["name"] == "t4")["minNodes"] = 1
    assert cost_of("gcp-dev", raw)["idlePerHour"] is None


def test_an_n1_node_is_its_machine_plus_its_attached_gpus() -> None:
    from components.gcp.model.prices import GkePricing
    from components.model.pools import resolve_pool

    prices = table("gcp")
    with_t4 = replace(
        prices, accelerators={"nvidia-tesla-t4": {"us-central1": (0.35, 0.14)}}, unknown={}
    )
    pricing = GkePricing(Path("unused"))
    pricing.table = lambda: with_t4  # type: ignore[method-assign]
    raw = raw_of("gcp-dev")
    next(p for p in raw["gpuPools"] if p["name"] == "t4")["gpusPerNode"] = 2
    config = parse_config(raw, PINNED_TODAY)
    (t4,) = [resolve_pool(config, p) for p in config.gpu_pools if p.name == "t4"]
    assert t4.gpus_per_node == 2
    node = pricing.node_price(config, t4, "n1-standard-8")
    machine = prices.machines["n1-standard-8"]["us-central1"]
    assert node.on_demand == pytest.approx(machine[0] + t4.gpus_per_node * 0.35)
    assert node.spot == pytest.approx((machine[1] or 0) + t4.gpus_per_node * 0.14)


def test_an_existing_cluster_is_not_priced_rather_than_free() -> None:
    cost = cost_of("existing-dev")
    assert (cost["pricesAsOf"], cost["controlPlanePerHour"]) == (None, None)
    assert (cost["idlePerHour"], cost["maxPerHour"]) == (None, None)
    assert all(p["perNodeHour"] is None for p in cost["pools"])
    assert cost["warnings"] and cost["warnings"][0].startswith("not priced")


def test_an_adopted_cluster_counts_only_the_pools_gpufleet_adds() -> None:
    cost = cost_of("aws-existing")
    assert cost["controlPlanePerHour"] is None and "system" not in [
        p["name"] for p in cost["pools"]
    ]
    # A Spot pool at its Spot price (an estimate from the table's older snapshot), the dearer type.
    t4_spot = table("aws").machine("g4dn.2xlarge", "us-east-1").spot
    assert t4_spot is not None and t4_spot < od("aws", "g4dn.2xlarge", "us-east-1")
    l4 = od("aws", "g6.xlarge", "us-east-1")
    gpu = {p["name"]: p["maxNodes"] for p in cost["pools"]}
    assert cost["idlePerHour"] == 0.0
    assert cost["maxPerHour"] == pytest.approx(gpu["t4-spot"] * t4_spot + gpu["l4"] * l4)
    assert any("owner's" in w for w in cost["warnings"])


def test_control_plane_fees_follow_the_tier() -> None:
    raw = raw_of("aws-dev")
    raw["cluster"] = {**raw["cluster"], "kubernetesVersion": "1.33"}
    raw["cluster"]["aws"] = {**raw["cluster"].get("aws", {}), "supportType": "EXTENDED"}
    assert cost_of("aws-dev", raw)["controlPlanePerHour"] == 0.60  # past standard support
    assert cost_of("aws-dev")["controlPlanePerHour"] == 0.10
    assert cost_of("azure-a100-mig")["controlPlanePerHour"] == 0.10  # Standard tier
    premium = raw_of("azure-dev")
    premium["cluster"]["azure"] = {**premium["cluster"].get("azure", {}), "skuTier": "Premium"}
    cost = cost_of("azure-dev", premium)
    assert cost["controlPlanePerHour"] == 0.60  # Standard plus Long Term Support
    assert cost["idlePerHour"] == pytest.approx(cost_of("azure-dev")["idlePerHour"] + 0.60)


def test_eks_auto_mode_nodes_carry_the_management_fee_as_an_estimate() -> None:
    cost = cost_of("aws-auto-mode")
    share = table("aws").fees["autoModeNodeShare"].per_hour
    system = pool(cost, "system")["machineTypes"][0]
    ec2 = table("aws").machine(system["machineType"], "us-west-2").on_demand
    assert ec2 is not None and system["onDemandPerHour"] == pytest.approx(ec2 * (1 + share))
    assert "EKS Auto Mode node fee" in system["estimate"]
    assert not any("Auto Mode" in w for w in cost_of("aws-dev")["warnings"])


def test_the_json_cost_object_has_exactly_the_keys_the_issue_names() -> None:
    for stack in ("gcp-dev", "existing-dev"):
        cost = plan_of(stack).to_json()["cost"]
        # Issue 26's keys, kept, and issue 31's additions.
        assert set(cost) == {
            "currency",
            "pricesAsOf",
            "controlPlanePerHour",
            "idlePerHour",
            "maxPerHour",
            "pools",
            "warnings",
            "committedPerHour",
            "networkPerHour",
            "networkMaxPerHour",
            "spotPrices",
            # issue 33: cheapest to dearest over the capacity each pool may fall back along
            "idlePerHourRange",
            "maxPerHourRange",
        }
        assert cost["currency"] == "USD"
        for entry in cost["pools"]:
            assert set(entry) == {
                "name",
                "minNodes",
                "maxNodes",
                "perNodeHour",
                "machineTypes",
                "committedNodes",
                "committedPerHour",
                "capacity",
                "perNodeHourRange",
            }
            for machine in entry["machineTypes"]:
                assert set(machine) == {
                    "machineType",
                    "onDemandPerHour",
                    "spotPerHour",
                    "estimate",
                }
    assert plan_of("gcp-dev").to_json()["cost"]["pools"][0]["name"] == "system"


# --- plan, stale prices ------------------------------------------------------------------------


def test_plan_prints_the_cost_after_the_pool_table_and_warns_of_old_prices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli_main(["plan", "aws-karpenter"]) == 0
    out, err = capsys.readouterr()
    table_at, cost_at = out.index("\npool "), out.index("\ncost ")
    assert table_at < cost_at
    cost = plan_of("aws-karpenter").to_json()["cost"]
    idle, full = cost["idlePerHour"], cost["maxPerHour"]
    assert f"idle: ${idle:,.4f}/h (${idle * HOURS_PER_MONTH:,.2f}/month)" in out
    assert f"full scale: ${full:,.4f}/h (${full * HOURS_PER_MONTH:,.2f}/month)" in out
    assert f"prices as of {cost['pricesAsOf']}" in out
    age = (PINNED_TODAY - table("aws").as_of).days
    assert age > MAX_PRICE_AGE_DAYS
    assert f"warning: the aws prices are from {table('aws').as_of} ({age} days old" in err
    # Once, in one line that says what to run.
    (stale,) = [line for line in err.splitlines() if "prices are from" in line]
    assert "run `.venv/bin/python scripts/prices.py --help`" in stale


def test_prices_warn_only_once_older_than_90_days(monkeypatch: pytest.MonkeyPatch) -> None:
    config = config_of("azure-dev")
    as_of = table("azure").as_of
    assert stale_prices(config, as_of + timedelta(days=MAX_PRICE_AGE_DAYS)) is None
    assert "91 days old" in str(stale_prices(config, as_of + timedelta(days=91)))
    assert stale_prices(config_of("existing-dev"), PINNED_TODAY) is None
    monkeypatch.setattr(model_config, "clock_today", lambda: as_of)
    assert stale_prices(config, model_config.clock_today()) is None


# --- diff --------------------------------------------------------------------------------------


def plan_document(stack: str, cost: Mapping[str, Any] | None) -> dict[str, Any]:
    document: dict[str, Any] = {"project": "gpufleet", "stack": stack, "resources": []}
    if cost is not None:
        document["cost"] = cost
    return document


def test_diff_shows_the_change_in_idle_and_full_scale_cost() -> None:
    before = cost_of("aws-karpenter")
    raw = raw_of("aws-karpenter")
    next(p for p in raw["gpuPools"] if p["name"] == "h100")["maxNodes"] = 3
    after = cost_of("aws-karpenter", raw)
    h100 = od("aws", "p5.48xlarge", "us-east-1")
    assert after["maxPerHour"] - before["maxPerHour"] == pytest.approx(h100)
    diff = diff_plans(plan_document("k", before), plan_document("k", after))
    text = render_text(diff)
    assert f"(+${h100:,.4f}/h, +${h100 * HOURS_PER_MONTH:,.2f}/month)" in text
    assert "    idle: " in text and "(+$0.0000/h, +$0.00/month)" in text
    assert text.endswith("0 to add, 0 to change (0 replaced), 0 to delete\n")
    markdown = render_markdown(diff)
    assert f"| full scale | ${before['maxPerHour']:,.4f}/h" in markdown
    # A base plan written before costs existed: the change is said to be unknown.
    assert "not in the plan" in render_text(diff_plans(plan_document("k", None), diff_as(after)))


def diff_as(cost: Mapping[str, Any]) -> dict[str, Any]:
    return plan_document("k", cost)


# --- the budget rule ---------------------------------------------------------------------------


def test_the_budget_rule_refuses_a_stack_over_budget_naming_its_pools() -> None:
    cost = cost_of("aws-karpenter")
    full = cost["maxPerHour"]
    (message,) = check_budget(cost, full - 1)
    assert message.startswith(f"full-scale cost ${full:,.2f}/h is above the budget")
    assert message.index("h100 (2 x $55.04") < message.index("l4 (8 x")  # dearest first
    assert check_budget(cost, full) == []
    assert check_budget(cost, None) == []
    # Over the whole pack, from the plan document (the offline runner) and from a pack config.
    config = {POLICY_NAME: {"maxPerHour": full - 1}}
    violations = run_pack(plan_document("aws-karpenter", cost), config)
    assert [v.policy for v in violations] == [POLICY_NAME]
    assert run_pack(plan_document("aws-karpenter", cost), {POLICY_NAME: {"maxPerHour": full}}) == []
    assert run_pack(plan_document("aws-karpenter", None), {POLICY_NAME: {"cost": cost}}) == []
    assert budget_note(cost, None) == (
        f"[{POLICY_NAME}] full-scale cost ${full:,.2f}/h, no budget set (maxPerHour); "
        f"idle ${cost['idlePerHour']:,.2f}/h, no budget set (maxIdlePerHour)"
    )


@pytest.mark.usefixtures("t4_unpriced")
def test_the_budget_rule_refuses_what_it_cannot_check() -> None:
    (unknown,) = check_budget(cost_of("gcp-dev"), 100.0)
    assert "not checked" in unknown and "no price for pool t4" in unknown
    (unpriced,) = check_budget(cost_of("existing-dev"), 100.0)
    assert "does not price this stack" in unpriced
    assert check_budget(cost_of("gcp-dev"), None) == []


def test_pack_config_writes_the_stack_cost_and_the_budget() -> None:
    path = STACKS_DIR / "Pulumi.aws-karpenter.yaml"
    written = pack_config.pack_config(path, 50.0)[POLICY_NAME]
    assert written == {"maxPerHour": 50.0, "cost": cost_of("aws-karpenter")}
    assert "maxPerHour" not in pack_config.pack_config(path)[POLICY_NAME]


@pytest.mark.parametrize("stack", ["gcp-dev", "aws-karpenter", "existing-dev"])
def test_a_stack_prices_the_same_from_its_file_and_its_plan(stack: str) -> None:
    assert plan_of(stack).to_json()["cost"] == cost_of(stack)


def test_the_cost_page_shows_each_shipped_stack_as_generated() -> None:
    from scripts import cost_doc

    text = cost_doc.DOC.read_text()
    assert cost_doc.document_with(text, cost_doc.table()) == text, (
        "docs/cost.md is out of date: run .venv/bin/python scripts/cost_doc.py --write"
    )
    assert cost_doc.PRICED_ON == PINNED_TODAY
    for stack in ("gcp-a100-mig", "existing-dev"):
        assert f"| `{stack}` |" in text
