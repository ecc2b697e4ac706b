"""AKS node auto-provisioning, review aks-6's findings on it: pool names AKS's own NodePools
take (A6-3), the warm-node advice a NodePool can follow (A6-4), an AKSNodeClass moved to another
subnet (A6-8), AKS's `default` NodePool in the cost (A6-9), and the plan table's spot column for
a Spot-then-on-demand pool (A6-10)."""

from __future__ import annotations

from datetime import date

import pytest

from components.model.cold_start_estimate import pool_cold_starts
from components.model.config import parse_config
from components.model.cost import stack_cost
from components.tooling.diff import diff_plans
from components.tooling.engine import Plan
from components.tooling.render import render_pool_table
from tests.conftest import plan_of
from tests.test_aks_node_auto_provisioning import STACK, _existing, _overrides, _problems, _raw

NODE_CLASS = "kubernetes:karpenter.azure.com/v1beta1:AKSNodeClass"
TODAY = date(2026, 11, 28)
pytestmark = pytest.mark.xdist_group("azure-nap")


@pytest.mark.parametrize(
    ("name", "ok"), [("default", False), ("default2", True), ("system-surge", False)]
)
def test_a_pool_may_not_take_the_names_of_aks_own_node_pools(name: str, ok: bool) -> None:
    # AKS's default NodePools (`default`, `system-surge`) and their AKSNodeClasses are AKS's;
    # gpufleet names the pool's NodePool and AKSNodeClass after the pool.
    raw = _raw()
    raw["gpuPools"][0]["name"] = name
    if ok:
        parse_config(raw)
        return
    problems = _problems(raw)
    owned = [p for p in problems if p.startswith("gpuPools[0].name: AKS's own default NodePools")]
    assert len(owned) == 1 and "rename the pool" in owned[0], problems


@pytest.mark.parametrize("stack", [STACK, "azure-dev"])
def test_the_warm_node_advice_applied_still_plans(stack: str) -> None:
    # NAP refuses minNodes above 0, so its advice is the placeholder its refusal names; agent
    # pools keep a minimum, and theirs is minNodes: 1.
    raw = _raw(stack)
    starts = pool_cold_starts(parse_config(raw, TODAY), 15, TODAY)
    advice = [start.shorten[0] for start in starts if start.shorten]
    assert advice
    for index, _ in enumerate(raw["gpuPools"]):
        raw["gpuPools"][index]["minNodes"] = 1
    if stack == STACK:
        assert all(a.startswith("a placeholder Deployment") for a in advice), advice
        assert any("minNodes" in p and "placeholder Deployment" in p for p in _problems(raw))
    else:
        assert all(a.startswith("minNodes: 1 keeps one node warm") for a in advice), advice
        parse_config(raw, TODAY)


@pytest.mark.parametrize(("stack", "said"), [(STACK, True), ("azure-dev", False)])
def test_the_cost_says_aks_default_node_pool_is_not_counted(stack: str, said: bool) -> None:
    cost = stack_cost(parse_config(_raw(stack), TODAY), TODAY)
    uncounted = [w for w in cost.warnings if "NodePool `default`" in w]
    assert len(uncounted) == int(said), cost.warnings
    assert all("not counted" in w and "spec.limits.cpu" in w for w in uncounted)


SUBNET = (
    "/subscriptions/s/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/v/subnets/"
)


def _adopted_nap_on(subnet: str | None) -> Plan:
    raw = _existing("node-auto-provisioning")
    if subnet is not None:
        raw["cluster"]["azure"]["vnetSubnetId"] = SUBNET + subnet
    return plan_of("azure-existing", _overrides(raw))


def test_moving_a_node_class_to_another_subnet_is_refused_and_keeping_it_is_not() -> None:
    # NAP stops provisioning a class whose vnetSubnetID moved between valid subnets.
    before = _adopted_nap_on("gpu-a").to_json()
    moved = diff_plans(before, _adopted_nap_on("gpu-b").to_json())
    classes = [c for c in moved.changed if c.type == NODE_CLASS]
    assert len(classes) == 2 and moved.refused
    assert all("Subnet drift" in c.refusals[0] and "two `up`s" in c.refusals[0] for c in classes)
    same = diff_plans(before, _adopted_nap_on("gpu-a").to_json())
    assert not same.refused


@pytest.mark.parametrize(
    ("stack", "spot"),
    [(STACK, {"t4": "no", "a100": "spot, then on-demand"}), ("azure-existing", {"t4spot": "yes"})],
)
def test_the_plan_table_says_a_spot_fallback_pool_launches_spot_first(
    stack: str, spot: dict[str, str]
) -> None:
    # All a [spot, on-demand] NodePool's nodes carry the Spot taint: `spot: no` would mislead.
    rows = render_pool_table(plan_of(stack).outputs["gpuPools"]).splitlines()
    column = rows[0].index("spot")
    cells = {row.split()[0]: row[column:].rsplit("  ", 1)[0].strip() for row in rows[1:]}
    for pool, said in spot.items():
        assert cells[pool] == said, rows


def test_on_an_adopted_cluster_the_default_name_is_refused_saying_it_may_be_free() -> None:
    # gpufleet does not read an adopted cluster's defaultNodePools (review fix7-aks F7A-1).
    from components.azure.model import nap

    pool = parse_config(_raw()).gpu_pools[0].model_copy(update={"name": "default"})
    (created,) = nap.pool_problems(pool, "gpuPools[0]")
    (adopted,) = nap.pool_problems(pool, "gpuPools[0]", adopted=True)
    assert "already use" in created.message and "cannot tell" not in created.message
    assert "cannot tell" in adopted.message and adopted.path == "gpuPools[0].name"
