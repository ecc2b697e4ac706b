"""`pulumi up` never resets the size the autoscaler chose for an EKS managed node group (review
eks-2-recheck S2, eks S1-1).

terraform-provider-aws sends a node group's whole scaling config, desired size included, on any
change of it, and an ignored desiredSize is Pulumi's stale state. These plans are of a running
aws-training stack: the mock cloud answers the program's reads of its node groups with the groups
as the autoscaler left them.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import Any

from components.tooling.diff import diff_plans
from components.tooling.engine import Plan, described_world, plan_stack
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

STACK = "aws-training"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
GROWN = "h100-us-west-2a"  # the group the autoscaler grew
DESIRED = "scalingConfig.desiredSize"


def _config(
    h100: Mapping[str, Any] | None = None, system: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """aws-training's config with the h100 pool (gpuPools[0]) and the system pool edited."""
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    assert raw["gpuPools"][0]["name"] == "h100"
    raw["gpuPools"][0].update(h100 or {})
    raw["cluster"].setdefault("systemPool", {}).update(system or {})
    return {"gpufleet:gpuPools": raw["gpuPools"], "gpufleet:cluster": raw["cluster"]}


# What ran before the edits: h100 may grow to 2 nodes per zone, the system group to 4.
BEFORE = _config({"maxNodes": 4}, {"maxNodes": 4})


def _running_groups(grown: Mapping[str, int], system_groups: int = 1) -> dict[str, dict[str, Any]]:
    """The node groups the BEFORE config created, as EKS describes them once the autoscaler
    grew some (`grown`: group name -> desired size; the system group is `system`)."""
    groups: dict[str, dict[str, Any]] = {}
    for group in plan_of(STACK, BEFORE).of_type(NODE_GROUP):
        scaling = dict(group.inputs["scalingConfig"])
        name = group.inputs.get("nodeGroupName")
        labels = dict(group.inputs.get("labels", {}))
        tags = dict(group.inputs.get("tags", {}))
        if name is None:  # the system group: Pulumi adds a suffix to its prefix
            for index in range(system_groups):
                key = f"{group.inputs['nodeGroupNamePrefix']}2026110100000000000000000{index}"
                desired = grown.get("system", scaling["desiredSize"])
                groups[key] = {**scaling, "desiredSize": desired, "labels": labels, "tags": tags}
            continue
        groups[name] = {
            **scaling,
            "desiredSize": grown.get(name, 0),
            "labels": labels,
            "tags": tags,
        }
    return groups


def _running_plan(overrides: Mapping[str, Any], groups: Mapping[str, Mapping[str, Any]]) -> Plan:
    stack = load_stack(STACK)
    world = described_world({**stack.config, **overrides})
    world = dataclasses.replace(world, exists=True, eks_node_groups=groups)
    return plan_stack(stack, overrides, world)


def _group(plan: Plan, name: str) -> Any:
    (found,) = [
        g
        for g in plan.of_type(NODE_GROUP)
        if (g.inputs.get("nodeGroupName") or g.inputs.get("nodeGroupNamePrefix")) == name
    ]
    return found


def test_a_max_nodes_edit_sends_the_size_the_autoscaler_chose() -> None:
    plan = _running_plan(_config({"maxNodes": 6}, {"maxNodes": 4}), _running_groups({GROWN: 2}))
    grown = _group(plan, GROWN)
    assert grown.inputs["scalingConfig"] == {"minSize": 0, "maxSize": 3, "desiredSize": 2}
    assert DESIRED not in grown.ignore_changes
    # The other zone's group, still empty, gets its live size (0) too.
    other = _group(plan, "h100-us-west-2b")
    assert other.inputs["scalingConfig"]["desiredSize"] == 0
    assert DESIRED not in other.ignore_changes


def test_a_first_plan_starts_at_the_minimum_and_leaves_the_size_to_the_autoscaler() -> None:
    plan = plan_of(STACK, _config({"maxNodes": 6, "minNodes": 2}))
    grown = _group(plan, GROWN)
    assert grown.inputs["scalingConfig"] == {"minSize": 1, "maxSize": 3, "desiredSize": 1}
    assert DESIRED in grown.ignore_changes


def test_a_minimum_raised_above_the_live_size_sends_the_new_minimum() -> None:
    groups = _running_groups({GROWN: 2})
    plan = _running_plan(_config({"maxNodes": 8, "minNodes": 6}, {"maxNodes": 4}), groups)
    grown = _group(plan, GROWN)
    assert grown.inputs["scalingConfig"] == {"minSize": 3, "maxSize": 4, "desiredSize": 3}
    assert DESIRED not in grown.ignore_changes


def test_a_maximum_lowered_below_the_live_size_sends_the_new_maximum() -> None:
    plan = _running_plan(_config({"maxNodes": 2}, {"maxNodes": 4}), _running_groups({GROWN: 2}))
    assert _group(plan, GROWN).inputs["scalingConfig"]["desiredSize"] == 1


def test_unchanged_bounds_send_no_scaling_config() -> None:
    """Nothing of the scaling config changes, so nothing is sent that could race the
    autoscaler."""
    plan = _running_plan(BEFORE, _running_groups({GROWN: 2, "system": 3}))
    for group in plan.of_type(NODE_GROUP):
        assert DESIRED in group.ignore_changes, group.name


def test_bounds_changed_outside_gpufleet_still_send_the_live_size() -> None:
    """Someone raised the group's maximum in the console to what the config now says: the live
    bounds look unchanged, but Pulumi's state still holds the old ones and sends the scaling
    config with its stale desired size; the group's tag of the bounds gpufleet last sent shows
    the change (review eks-5 N1)."""
    edited = _config({"maxNodes": 6}, {"maxNodes": 4})
    groups = _running_groups({GROWN: 2})
    new_max = _group(plan_of(STACK, edited), GROWN).inputs["scalingConfig"]["maxSize"]
    groups[GROWN] = {**groups[GROWN], "maxSize": new_max}  # the console edit; tag unchanged
    grown = _group(_running_plan(edited, groups), GROWN)
    assert DESIRED not in grown.ignore_changes
    assert grown.inputs["scalingConfig"]["desiredSize"] == 2
    assert grown.inputs["tags"]["gpufleet.io/scaling-bounds"] == f"0-{new_max}"


def test_groups_of_an_earlier_gpufleet_without_the_tag_send_the_live_size_once() -> None:
    groups = {name: {**group, "tags": {}} for name, group in _running_groups({GROWN: 2}).items()}
    grown = _group(_running_plan(BEFORE, groups), GROWN)
    assert DESIRED not in grown.ignore_changes
    assert grown.inputs["scalingConfig"]["desiredSize"] == 2


def test_the_system_group_found_by_prefix_keeps_its_live_size() -> None:
    plan = _running_plan(_config({"maxNodes": 4}, {"maxNodes": 5}), _running_groups({"system": 4}))
    system = _group(plan, "system-")
    assert system.inputs["scalingConfig"]["desiredSize"] == 4
    assert system.inputs["scalingConfig"]["maxSize"] == 5
    assert DESIRED not in system.ignore_changes


def test_two_system_groups_are_not_guessed_between() -> None:
    """An interrupted replacement leaves two: which one Pulumi's state holds is not known."""
    plan = _running_plan(
        _config({"maxNodes": 4}, {"maxNodes": 5}),
        _running_groups({"system": 4}, system_groups=2),
    )
    assert DESIRED in _group(plan, "system-").ignore_changes


def test_diff_says_the_live_size_is_sent_and_refuses_no_raised_minimum() -> None:
    state = plan_of(STACK, BEFORE)  # what Pulumi's state holds: the sizes at creation
    after = _running_plan(
        _config({"maxNodes": 8, "minNodes": 2}, {"maxNodes": 4}), _running_groups({GROWN: 2})
    )
    diff = diff_plans(state.to_json(), after.to_json())
    (grown,) = [c for c in diff.changed if c.type == NODE_GROUP and c.name.endswith(GROWN)]
    assert grown.verdict == "update" and not grown.refusals
    sizes = {c.path: (c.old, c.new) for c in grown.changes}
    assert sizes[DESIRED] == (0, 2)
    (note,) = [n for n in grown.node_notes if n.paths == ("scalingConfig",)]
    assert "live desired size" in note.says and "not the one in Pulumi's state" in note.says
