"""What a raised `minNodes` does on each cloud, as `diff` says it (review aks-3 N-6, "check every
cloud"): the data is each cloud's node-effect table (`components/<cloud>/model/node_effects.py`,
entries `when="raised"`), the mechanism `components/tooling/diff_nodes.py`.

* AKS enforces a raised `minCount` at once (Azure/AKS release 2021-07-22): GPU VMs start now.
* EKS: a managed group gets its live desired size raised to the new minimum (gpufleet's
  `scaling_to_send`), and an auto scaling group sent a new `MinSize` without a desired
  capacity raises the desired capacity itself (UpdateAutoScalingGroup): nodes start now.
* GKE's autoscaler uses the minimum only when it scales down: no node starts for it.
* Karpenter and EKS Auto Mode keep no minimum: gpufleet refuses `minNodes` there
  (tests/test_day_two_edits.py REFUSED_AT_PLAN_TIME).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.tooling import diff_nodes
from components.tooling.diff import diff_plans, render_markdown, render_text
from components.tooling.diff_model import PlanDiff, ResourceChange
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

GKE_POOL = "gcp:container/nodePool:NodePool"
EKS_GROUP = "aws:eks/nodeGroup:NodeGroup"
ASG = "aws:autoscaling/group:Group"
AKS_POOL = "azure-native:containerservice:AgentPool"
AKS_SYSTEM_POOL = "azure-native:resources:Deployment"

# stack, the pool whose minimum is raised, the type that carries its nodes, the path, and
# whether the cloud starts nodes for it.
RAISED = [
    ("gcp-dev", "l4-spot", GKE_POOL, "autoscaling.totalMinNodeCount", False),
    ("aws-dev", "t4-spot", ASG, "minSize", True),
    ("aws-training", "h100", EKS_GROUP, "scalingConfig.minSize", True),
    ("azure-dev", "t4", AKS_POOL, "minCount", True),
]


def _with_min(stack: str, pool: str, min_nodes: int) -> dict[str, Any]:
    pools = copy.deepcopy(load_stack(stack).gpufleet["gpuPools"])
    (entry,) = [p for p in pools if p["name"] == pool]
    entry["minNodes"] = min_nodes
    return plan_of(stack, {"gpufleet:gpuPools": pools}).to_json()


def _pool_changes(diff: PlanDiff, type_: str, pool: str) -> list[ResourceChange]:
    return [c for c in diff.changed if c.type == type_ and f"-{pool}" in c.name]


@pytest.mark.parametrize(("stack", "pool", "type_", "path", "starts"), RAISED)
def test_a_raised_minimum_says_whether_nodes_start_now(
    stack: str, pool: str, type_: str, path: str, starts: bool
) -> None:
    base = load_stack(stack).gpufleet["gpuPools"]
    assert [p.get("minNodes", 0) for p in base if p["name"] == pool] == [0]
    diff = diff_plans(plan_of(stack).to_json(), _with_min(stack, pool, 1))
    (change,) = _pool_changes(diff, type_, pool)
    (note,) = [n for n in change.node_notes if path in n.paths]
    assert change.verdict == "update"
    text, markdown = render_text(diff), render_markdown(diff)
    if starts:
        assert note.effect == "starts" and "now" in note.says and "billed" in note.says
        assert diff.started == (change,)
        assert "(0 replaced; 1 start nodes now)" in diff.summary()
        assert f"~ STARTS NODES {type_} {change.name}: {path} ({note.says})" in text
        assert "> [!IMPORTANT]" in markdown and note.says in markdown
    else:
        assert note.effect == "none" and note.says.startswith("no node starts for it")
        assert diff.started == () and "start nodes now" not in diff.summary()
        assert "STARTS NODES" not in text and "[!IMPORTANT]" not in markdown


@pytest.mark.parametrize(("stack", "pool", "type_", "path", "starts"), RAISED)
def test_a_lowered_minimum_starts_nothing(
    stack: str, pool: str, type_: str, path: str, starts: bool
) -> None:
    diff = diff_plans(_with_min(stack, pool, 1), plan_of(stack).to_json())
    (change,) = _pool_changes(diff, type_, pool)
    assert diff.started == ()
    assert all(note.effect == "none" for note in change.node_notes if path in note.paths)
    assert not any("no node starts" in note.says for note in change.node_notes)


def test_the_aks_system_pool_starts_its_nodes_too() -> None:
    cluster = copy.deepcopy(load_stack("azure-dev").gpufleet["cluster"])
    system = cluster.setdefault("systemPool", {})
    system["minNodes"] = system.get("minNodes", 1) + 1
    system["maxNodes"] = max(system.get("maxNodes", 3), system["minNodes"])
    diff = diff_plans(
        plan_of("azure-dev").to_json(),
        plan_of("azure-dev", {"gpufleet:cluster": cluster}).to_json(),
    )
    (deployment,) = [c for c in diff.changed if c.type == AKS_SYSTEM_POOL]
    assert diff.started == (deployment,)
    assert [n.effect for n in deployment.node_notes] == ["starts"]


# The edge of `raised`, on a self-managed group's minimum (an entry that holds only when the
# number rises, and the general one at the same path).
@pytest.mark.parametrize(
    ("old", "new", "effects"),
    [
        (0, 1, ["starts"]),
        (1, 2, ["starts"]),
        (2, 1, ["none"]),
        (1, 0, ["none"]),
        (1, "1", ["none"]),  # not a number: nothing known to rise
    ],
)
def test_raised_holds_only_when_the_number_rises(old: Any, new: Any, effects: list[str]) -> None:
    notes = diff_nodes.node_notes(ASG, {"minSize": old}, {"minSize": new}, [("minSize",)])
    assert [note.effect for note in notes] == effects


@pytest.mark.parametrize("reverse", [False, True])
def test_an_entry_with_a_condition_wins_over_the_general_one_at_its_path(
    reverse: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever their order in the table."""
    table = diff_nodes.NODE_EFFECTS[ASG]
    assert {e.when for e in table if e.path == "minSize"} == {"always", "raised"}
    monkeypatch.setitem(diff_nodes.NODE_EFFECTS, ASG, table[::-1] if reverse else table)
    diff_nodes._parsed.cache_clear()
    try:
        notes = diff_nodes.node_notes(ASG, {"minSize": 0}, {"minSize": 1}, [("minSize",)])
    finally:
        diff_nodes._parsed.cache_clear()
    assert [note.effect for note in notes] == ["starts"]


def test_a_block_changed_whole_takes_each_entry_inside_it_once() -> None:
    notes = diff_nodes.node_notes(
        EKS_GROUP,
        {"scalingConfig": {"minSize": 0, "maxSize": 2, "desiredSize": 0}},
        {"scalingConfig": {"minSize": 1, "maxSize": 2, "desiredSize": 1}},
        [("scalingConfig",)],
    )
    assert sorted((n.effect, n.paths) for n in notes) == [
        ("none", ("scalingConfig",)),
        ("starts", ("scalingConfig.minSize",)),
    ]
    # Both minimum entries of a group sit inside the whole inputs: one note, the raised one.
    whole = diff_nodes.node_notes(ASG, {"minSize": 0}, {"minSize": 1}, [()])
    assert [(n.effect, n.paths) for n in whole] == [("starts", ("minSize",))]
