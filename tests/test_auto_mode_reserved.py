"""EKS Auto Mode on reserved capacity (issue 33, item 3): a pool with `capacity: reserved` or
`[reserved, on-demand]` gets a NodeClass that selects its ODCRs (capacityReservationSelectorTerms)
and a NodePool that requires the `reserved` capacity type, as AWS's auto-odcr page shows; `plan`
says that selecting reservations turns off open-ODCR use for every NodeClass of the cluster; the
reservation is billed whether used or not; what Auto Mode is not shown to do stays refused."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.aws.model import auto_mode, capacity
from components.model import karpenter_pool
from components.model.config import ConfigError, parse_config
from components.model.cost import stack_cost
from components.tooling.diff import diff_plans
from components.tooling.stacks import load_stack
from tests.conftest import PINNED_TODAY, plan_of

STACK = "aws-auto-mode"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:eks.amazonaws.com/v1:NodeClass"
ODCR = "cr-0a1b2c3d4e5f60718"
SECOND_ODCR = "cr-0f1e2d3c4b5a69788"
TAGS = {"team": "ml", "purpose": "a10g"}


def _raw() -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(STACK).gpufleet))


def _pools(a10g_capacity: Any, reservations: dict[str, Any]) -> list[dict[str, Any]]:
    """The example's pools, its a10g pool on `a10g_capacity` with `reservations` as aws keys."""
    pools: list[dict[str, Any]] = _raw()["gpuPools"]
    (a10g,) = [p for p in pools if p["name"] == "a10g"]
    a10g["capacity"] = a10g_capacity
    a10g["aws"] = {**a10g.get("aws", {}), **reservations}
    return pools


RESERVED_FIRST = _pools(
    ["reserved", "on-demand"],
    {
        "capacityReservations": [
            {"id": ODCR, "zone": "us-west-2a", "instanceType": "g5.xlarge", "instanceCount": 2}
        ],
        "capacityReservationTags": TAGS,
    },
)
RESERVED_ONLY = _pools("reserved", {"capacityReservations": [{"id": ODCR}]})


def _spec(overrides: list[dict[str, Any]], kind: str, pool: str) -> dict[str, Any]:
    (found,) = [
        r
        for r in plan_of(STACK, {"gpufleet:gpuPools": overrides}).of_type(kind)
        if r.name == f"gpufleet-auto-{pool}-{'node-class' if kind == NODE_CLASS else 'node-pool'}"
    ]
    spec: dict[str, Any] = found.inputs["spec"]
    return spec


def _capacity_types(spec: dict[str, Any]) -> list[str]:
    (types,) = [
        r["values"]
        for r in spec["template"]["spec"]["requirements"]
        if r["key"] == karpenter_pool.CAPACITY_TYPE_LABEL
    ]
    return list(types)


def _warnings(pools: list[dict[str, Any]]) -> list[str]:
    raw = _raw()
    raw["gpuPools"] = pools
    return list(parse_config(raw).warnings)


def _problems(pools: list[dict[str, Any]]) -> list[str]:
    raw = _raw()
    raw["gpuPools"] = pools
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def test_the_node_class_selects_the_reservations_and_the_node_pool_requires_reserved() -> None:
    node_class = _spec(RESERVED_FIRST, NODE_CLASS, "a10g")
    assert node_class["capacityReservationSelectorTerms"] == [
        {"id": ODCR},
        {"tags": dict(sorted(TAGS.items()))},
    ]
    # Only the keys AWS documents for Auto Mode's terms (not Karpenter's `ownerID`).
    for term in node_class["capacityReservationSelectorTerms"]:
        assert set(term) <= set(auto_mode.RESERVATION_TERM_KEYS)
    assert _capacity_types(_spec(RESERVED_FIRST, NODE_POOL, "a10g")) == ["reserved", "on-demand"]
    assert _capacity_types(_spec(RESERVED_ONLY, NODE_POOL, "a10g")) == ["reserved"]
    # The Spot pool beside it selects nothing: no field, and no reserved capacity type.
    assert "capacityReservationSelectorTerms" not in _spec(RESERVED_FIRST, NODE_CLASS, "l4")
    assert _capacity_types(_spec(RESERVED_FIRST, NODE_POOL, "l4")) == ["spot", "on-demand"]
    # The example itself selects no reservation, so its cluster keeps using open ODCRs.
    for node_class_resource in plan_of(STACK).of_type(NODE_CLASS):
        assert "capacityReservationSelectorTerms" not in node_class_resource.inputs["spec"]
    # A drifted node waits for its pods: gpufleet's Drifted budget is 0 here too.
    budgets = _spec(RESERVED_FIRST, NODE_POOL, "a10g")["disruption"]["budgets"]
    assert {"nodes": "0", "reasons": ["Drifted"]} in budgets


def test_plan_says_open_odcrs_stop_for_every_node_class_and_what_it_cannot_check() -> None:
    said = [w for w in _warnings(RESERVED_FIRST) if w.startswith("gpuPools[1].capacity")]
    assert len(said) == 2
    assert "EKS Auto Mode stops launching into open ODCRs for every NodeClass" in said[0]
    assert "not checked: gpufleet cannot see the cluster's other NodeClasses" in said[0]
    assert said[1].startswith("gpuPools[1].capacity: not checked: whether EKS Auto Mode moves")
    # A pool on its reservation alone has no on-demand node to move back.
    (alone,) = [w for w in _warnings(RESERVED_ONLY) if w.startswith("gpuPools[1].capacity")]
    assert "stops launching into open ODCRs" in alone
    assert not any("open ODCRs" in w for w in parse_config(_raw()).warnings)


def test_the_reservation_is_billed_whether_or_not_nodes_run() -> None:
    raw = _raw()
    raw["gpuPools"] = RESERVED_FIRST
    cost = stack_cost(parse_config(raw), PINNED_TODAY)
    (a10g,) = [p for p in cost.pools if p.name == "a10g"]
    assert a10g.committed_per_hour is not None and a10g.committed_per_hour > 0
    assert cost.committed == pytest.approx(a10g.committed_per_hour)
    assert any(w.startswith("pool a10g: ") and "2 reserved instance(s)" in w for w in cost.warnings)
    plain = stack_cost(parse_config(_raw()), PINNED_TODAY)
    assert plain.idle is not None and cost.idle is not None
    assert cost.idle == pytest.approx(plain.idle + a10g.committed_per_hour)


def test_what_auto_mode_pools_are_not_shown_to_do_stays_refused_with_what_to_do() -> None:
    for order in (["reserved", "spot"], ["reserved", "spot", "on-demand"], "capacity-block"):
        pools = _pools(order, {"capacityReservations": [{"id": ODCR}]})
        (refused,) = [p for p in _problems(pools) if p.startswith("gpuPools[1].capacity")]
        assert "supported here: on-demand, spot, reserved, [reserved, on-demand]" in refused
        assert "for those use cluster.aws.provisioner karpenter" in refused
    (missing,) = _problems(_pools("reserved", {}))
    assert missing.startswith("gpuPools[1].aws.capacityReservations: is required with capacity")
    assert "capacityReservationTags" in missing
    wrong_zone = _pools("reserved", {"capacityReservations": [{"id": ODCR, "zone": "us-west-2c"}]})
    (zone,) = _problems(wrong_zone)
    assert zone.startswith("gpuPools[1].aws.capacityReservations[0].zone: not among the pool's")


def test_selector_terms_stop_at_the_limit() -> None:
    def ids(count: int) -> list[dict[str, str]]:
        return [{"id": f"cr-{index:017x}"} for index in range(count)]

    at_limit = _pools("reserved", {"capacityReservations": ids(capacity.MAX_SELECTOR_TERMS)})
    _warnings(at_limit)  # parses: the limit itself is allowed
    over = _pools("reserved", {"capacityReservations": ids(capacity.MAX_SELECTOR_TERMS + 1)})
    (refused,) = _problems(over)
    assert refused.startswith(
        f"gpuPools[1].aws.capacityReservations: at most {capacity.MAX_SELECTOR_TERMS}"
    )


def test_a_changed_selection_leaves_running_nodes_alone() -> None:
    after = plan_of(STACK, {"gpufleet:gpuPools": RESERVED_FIRST}).to_json()
    before = copy.deepcopy(after)
    for resource in before["resources"]:
        if resource["type"] == NODE_CLASS and resource["name"] == "gpufleet-auto-a10g-node-class":
            resource["inputs"]["spec"]["capacityReservationSelectorTerms"][0]["id"] = SECOND_ODCR
    (change,) = diff_plans(before, after).changed
    assert change.verdict == "update"
    (note,) = change.node_notes
    assert note.effect == "new-nodes"
    assert "gpufleet's Drifted budget is 0" in note.says
