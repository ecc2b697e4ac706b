"""Issue 31: idle is what is billed at zero GPU nodes, committed capacity counted at its count;
a stack's budget (`gpufleet:cost`) reaches the policy pack through policy/pack_config.py, which
the shipped pull-request workflows call per stack; `diff` never calls two unknowns unchanged."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model.config import parse_config
from components.model.cost import stack_cost
from components.model.problems import ConfigError
from components.model.registry import CLOUDS
from components.tooling.diff_cost import cost_change, cost_lines, cost_markdown
from components.tooling.stacks import STACKS_DIR, load_stack
from policy import pack_config
from policy.gpufleet_policy.cost import POLICY_NAME, check_budget
from policy.gpufleet_policy.offline import run_pack
from tests.conftest import PINNED_TODAY

WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"


def raw_of(stack: str) -> dict[str, Any]:
    return copy.deepcopy(load_stack(stack).gpufleet)


def cost_of(raw: dict[str, Any]) -> dict[str, Any]:
    return stack_cost(parse_config(raw, PINNED_TODAY), PINNED_TODAY).to_json()


def od(cloud: str, machine: str, region: str) -> float:
    pricing = CLOUDS[cloud].pricing
    assert pricing is not None
    price = pricing.table().machine(machine, region).on_demand
    assert price is not None
    return price


def pool(cost: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [p for p in cost["pools"] if p["name"] == name]
    return found


# --- idle: what is billed with no GPU node running ---------------------------------------------


def test_idle_counts_an_odcr_and_a_capacity_block_at_their_count() -> None:
    # aws-reserved: h100 on an ODCR of 2 p5.48xlarge (maxNodes 4), h200 on a block of 2.
    raw = raw_of("aws-reserved")
    cost = cost_of(copy.deepcopy(raw))
    h100, h200 = pool(cost, "h100"), pool(cost, "h200")
    p5 = od("aws", "p5.48xlarge", "us-east-1")
    assert (h100["committedNodes"], h100["committedPerHour"]) == (2, pytest.approx(2 * p5))
    assert h200["committedNodes"] == 2 and h200["committedPerHour"] > 0
    committed = h100["committedPerHour"] + h200["committedPerHour"]
    assert cost["committedPerHour"] == pytest.approx(committed)
    system = pool(cost, "system")
    base = cost["controlPlanePerHour"] + cost["networkPerHour"]
    assert cost["idlePerHour"] == pytest.approx(
        base + system["minNodes"] * system["perNodeHour"] + committed
    )
    # At full scale a node in the reservation is billed once: 2 reserved + 2 more on demand.
    assert cost["maxPerHour"] == pytest.approx(
        base
        + system["maxNodes"] * system["perNodeHour"]
        + 4 * p5
        + max(h200["maxNodes"], 2) * h200["perNodeHour"]
    )
    # Without instanceCount a reservation is not counted, and the warning says so.
    for entry in raw["gpuPools"]:
        for reservation in entry.get("aws", {}).get("capacityReservations", []):
            reservation.pop("instanceCount", None)
    uncounted = cost_of(raw)
    assert uncounted["committedPerHour"] == 0.0
    assert any("set instanceCount" in w for w in uncounted["warnings"])


def test_idle_counts_an_aks_capacity_reservation_group_by_reserved_nodes() -> None:
    raw = raw_of("azure-reserved")
    cost = cost_of(copy.deepcopy(raw))
    a100 = pool(cost, "a100")
    size = a100["machineTypes"][0]["machineType"]
    assert a100["committedNodes"] == 2
    assert cost["committedPerHour"] == pytest.approx(2 * od("azure", size, "eastus2"))
    assert cost["idlePerHour"] > cost["committedPerHour"] > 0
    # One more reserved VM adds exactly its rate to idle.
    entry = next(p for p in raw["gpuPools"] if p["name"] == "a100")
    entry["azure"]["reservedNodes"] = 3
    assert cost_of(raw)["idlePerHour"] == pytest.approx(
        cost["idlePerHour"] + od("azure", size, "eastus2")
    )


def test_idle_counts_the_network_gpufleet_creates_and_not_an_adopted_one() -> None:
    per_zone = raw_of("aws-dev")
    per_zone["cluster"]["aws"] = {**per_zone["cluster"].get("aws", {}), "natGateways": "per-zone"}
    zones = len(per_zone["cluster"]["zones"])
    single, multi = cost_of(raw_of("aws-dev")), cost_of(per_zone)
    assert multi["networkPerHour"] == pytest.approx(zones * single["networkPerHour"])
    assert multi["idlePerHour"] - single["idlePerHour"] == pytest.approx(
        (zones - 1) * single["networkPerHour"]
    )
    assert cost_of(raw_of("aws-existing"))["networkPerHour"] == 0
    assert cost_of(raw_of("azure-dev"))["networkPerHour"] == pytest.approx(0.025 + 0.005)


def test_a_shared_gke_reservation_is_its_projects_and_an_own_one_is_counted() -> None:
    raw = raw_of("gcp-flex-start")
    assert cost_of(copy.deepcopy(raw))["committedPerHour"] == 0.0  # shared from another project
    entry = next(p for p in raw["gpuPools"] if p["name"] == "l4-reserved")
    reservation = entry["gcp"]["reservation"]
    reservation["name"] = "l4-inference"  # this project's own
    reservation["count"] = 3
    cost = cost_of(raw)
    l4 = pool(cost, "l4-reserved")
    assert l4["committedNodes"] == 3
    assert l4["committedPerHour"] == pytest.approx(3 * l4["perNodeHour"])


# --- the budget, from the stack file to the policy -------------------------------------------


def _with_budget(tmp_path: Path, stack: str, budget: dict[str, Any]) -> Path:
    document = yaml.safe_load((STACKS_DIR / f"Pulumi.{stack}.yaml").read_text())
    document["config"]["gpufleet:cost"] = budget
    path = tmp_path / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.mark.parametrize("stack", ["aws-training", "gcp-dev", "azure-reserved"])
def test_a_budget_in_the_stack_file_fails_over_passes_under_and_at_exactly(
    stack: str, tmp_path: Path
) -> None:
    full = cost_of(raw_of(stack))["maxPerHour"]
    idle = cost_of(raw_of(stack))["idlePerHour"]

    def verdict(budget: dict[str, Any]) -> list[str]:
        config = pack_config.pack_config(_with_budget(tmp_path, stack, budget))
        assert config[POLICY_NAME]["cost"]["maxPerHour"] == full
        return [v.message for v in run_pack({"resources": []}, config)]

    (over,) = verdict({"maxPerHour": full - 0.01})
    assert "above the budget" in over and "gpufleet:cost.maxPerHour" in over
    assert verdict({"maxPerHour": full + 0.01}) == []
    assert verdict({"maxPerHour": full}) == []  # exactly at the budget passes
    (idle_over,) = verdict({"maxPerHour": full, "maxIdlePerHour": idle - 0.01})
    assert "idle cost" in idle_over and "maxIdlePerHour" in idle_over
    assert verdict({"maxPerHour": full, "maxIdlePerHour": idle}) == []


def test_the_command_line_budget_overrides_the_files(tmp_path: Path) -> None:
    path = _with_budget(tmp_path, "aws-dev", {"maxPerHour": 1, "maxIdlePerHour": 2})
    assert {k: v for k, v in pack_config.pack_config(path)[POLICY_NAME].items() if k != "cost"} == {
        "maxPerHour": 1.0,
        "maxIdlePerHour": 2.0,
    }
    overridden = pack_config.pack_config(path, 50.0)[POLICY_NAME]
    assert (overridden["maxPerHour"], overridden["maxIdlePerHour"]) == (50.0, 2.0)


def test_a_bad_budget_is_refused_with_its_key_path() -> None:
    raw = raw_of("aws-dev")
    raw["cost"] = {"maxPerHour": -1, "maxIdle": 3}
    with pytest.raises(ConfigError) as error:
        parse_config(raw, PINNED_TODAY)
    paths = {problem.path for problem in error.value.problems}
    assert paths == {"cost.maxPerHour", "cost.maxIdle"}
    raw["cost"] = {"maxPerHour": 12.5}
    assert parse_config(raw, PINNED_TODAY).cost.max_per_hour == 12.5


def test_the_shipped_workflows_pass_each_stack_file_to_pack_config() -> None:
    # The budget lives in the stack file, so the workflows need no budget of their own: each
    # must hand pack_config.py the stack file it plans.
    offline = (WORKFLOWS / "plan-diff.yml").read_text()
    assert 'policy/pack_config.py "head/stacks/Pulumi.$stack.yaml"' in offline
    preview = (WORKFLOWS / "preview.yml").read_text()
    assert 'policy/pack_config.py "stacks/Pulumi.$STACK.yaml"' in preview


def test_spot_is_advised_only_where_the_table_has_spot_prices() -> None:
    aws = cost_of(raw_of("aws-dev"))
    (message,) = check_budget(aws, 0.0)
    assert "use Spot" not in message and not aws["spotPrices"]
    gcp = cost_of(raw_of("gcp-dev"))
    (message,) = check_budget(gcp, 0.0)
    assert "use Spot" in message and gcp["spotPrices"]


# --- diff --------------------------------------------------------------------------------------


def test_diff_says_unknown_before_and_after_never_unchanged() -> None:
    unknown = {"currency": "USD", "pricesAsOf": None, "idlePerHour": None, "maxPerHour": None}
    change = cost_change(unknown, dict(unknown))
    assert change is not None
    (line,) = cost_lines(change)
    assert line.startswith("Cost unknown before and after") and "unchanged" not in line
    assert cost_markdown(change)[0].startswith("**Cost** unknown before and after")
    known = cost_of(raw_of("aws-dev"))
    same = cost_change(known, dict(known))
    assert same is not None and cost_lines(same)[0].startswith("Cost unchanged")


def test_committed_capacity_that_leaves_the_stack_is_not_called_a_saving() -> None:
    """Removing azure-reserved's reserved pool takes its reservations out of gpufleet's idle
    figure, but Azure bills them until their owner reduces them (review aks-4 R4-1)."""
    import copy

    from components.tooling.diff import diff_plans, render_text
    from components.tooling.stacks import load_stack
    from tests.conftest import plan_of

    raw = copy.deepcopy(dict(load_stack("azure-reserved").gpufleet))
    kept = [pool for pool in raw["gpuPools"] if pool["name"] != "a100"]
    assert len(kept) == len(raw["gpuPools"]) - 1
    old = plan_of("azure-reserved").to_json()
    new = plan_of("azure-reserved", {"gpufleet:gpuPools": kept}).to_json()
    assert old["cost"]["committedPerHour"] > new["cost"]["committedPerHour"]
    text = render_text(diff_plans(old, new))
    assert "leaves the stack, but that is not a saving" in text
    unchanged = render_text(diff_plans(old, old))
    assert "not a saving" not in unchanged
