"""What `diff` says when an `up` takes nodes away on EKS (review eks-3.md R3-7, R3-8): a removed
pool's groups say what happens to their running nodes; moving pools from the cluster autoscaler's
groups to NodePools in one `up` is refused as a whole, as the move to Auto Mode is, while the two
steps it names are not; a change that rolls a managed group and changes its bounds says to split
it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from components.tooling.diff import diff_plans, render_markdown, render_text
from components.tooling.diff import main as diff_main
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

ASG = "aws:autoscaling/group:Group"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"


def _without(stack: str, pool: str) -> dict[str, Any]:
    pools = [p for p in load_stack(stack).gpufleet["gpuPools"] if p["name"] != pool]
    return {"gpufleet:gpuPools": copy.deepcopy(pools)}


@pytest.mark.parametrize(
    ("stack", "pool", "removed", "says"),
    [
        ("aws-training", "a100-spot", ASG, "terminated with the group, undrained"),
        ("aws-training", "h100", NODE_GROUP, "waits only a few minutes for its pods"),
        ("aws-karpenter", "l4", NODE_POOL, "drains each node before terminating it"),
    ],
    ids=["self-managed", "managed", "karpenter"],
)
def test_a_removed_pool_says_what_happens_to_its_running_nodes(
    stack: str, pool: str, removed: str, says: str
) -> None:
    diff = diff_plans(plan_of(stack).to_json(), plan_of(stack, _without(stack, pool)).to_json())
    gone = [ref for ref in diff.removed if ref.type == removed]
    assert gone and all(says in ref.node_note for ref in gone)
    assert not [
        ref
        for ref in diff.removed
        if ref.type not in (ASG, NODE_GROUP, NODE_POOL) and ref.node_note
    ]
    text = render_text(diff)
    assert f"running nodes ({len(gone)} {removed} removed): " in text
    assert not diff.refused  # said, not refused: removing a pool is a normal edit


def _to_karpenter(stack: str) -> dict[str, Any]:
    raw = copy.deepcopy(dict(load_stack(stack).gpufleet))
    raw["cluster"]["aws"] = {**raw["cluster"].get("aws", {}), "provisioner": "karpenter"}
    for pool in raw["gpuPools"]:
        pool.pop("aws", None)
    return {"gpufleet:cluster": raw["cluster"], "gpufleet:gpuPools": raw["gpuPools"]}


def test_moving_autoscaler_pools_to_karpenter_in_one_up_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = tmp_path / "old.json", tmp_path / "new.json"
    before.write_text(json.dumps(plan_of("aws-dev").to_json()))
    after.write_text(json.dumps(plan_of("aws-dev", _to_karpenter("aws-dev")).to_json()))
    assert diff_main([str(before), str(after)]) == 1
    out = capsys.readouterr().out
    assert (
        "!! REJECTED moving GPU pools from the cluster autoscaler's node groups to NodePools" in out
    )
    assert "instead: two `up`s" in out
    assert out.rstrip().endswith("1 refused by gpufleet")
    markdown = render_markdown(
        diff_plans(
            plan_of("aws-dev").to_json(), plan_of("aws-dev", _to_karpenter("aws-dev")).to_json()
        )
    )
    assert "**Refused by gpufleet**" in markdown


def test_the_two_steps_it_names_are_not_refused() -> None:
    emptied = {"gpufleet:gpuPools": []}
    first = diff_plans(plan_of("aws-dev").to_json(), plan_of("aws-dev", emptied).to_json())
    assert not first.refused and any(ref.type == ASG for ref in first.removed)
    second = diff_plans(
        plan_of("aws-dev", emptied).to_json(),
        plan_of("aws-dev", _to_karpenter("aws-dev")).to_json(),
    )
    assert not second.refused and any(ref.type == NODE_POOL for ref in second.added)


def test_the_way_back_from_karpenter_is_refused_in_one_up_and_passes_in_two() -> None:
    """The same `up` would uninstall Karpenter while its NodeClaims' finalizers still hold GPU
    instances (review eks-4 N-3): remove the pools first, with Karpenter running."""
    raw = copy.deepcopy(dict(load_stack("aws-karpenter").gpufleet))
    raw["cluster"]["aws"]["provisioner"] = "cluster-autoscaler"
    for pool in raw["gpuPools"]:
        pool.pop("aws", None)
    back = {"gpufleet:cluster": raw["cluster"], "gpufleet:gpuPools": raw["gpuPools"]}
    diff = diff_plans(plan_of("aws-karpenter").to_json(), plan_of("aws-karpenter", back).to_json())
    (refusal,) = diff.refusals
    assert refusal.startswith("moving GPU pools from NodePools back to the cluster autoscaler's")
    assert "instead: two `up`s: first remove those pools" in refusal
    emptied = {"gpufleet:gpuPools": []}
    first = diff_plans(
        plan_of("aws-karpenter").to_json(), plan_of("aws-karpenter", emptied).to_json()
    )
    assert not first.refusals
    second = diff_plans(
        plan_of("aws-karpenter", emptied).to_json(), plan_of("aws-karpenter", back).to_json()
    )
    assert not second.refusals


# --- R3-7: a roll and a bounds change of one managed group, in one `up` -----------------------


def _training(minor: str = "1.35", h100_max: int = 2) -> dict[str, Any]:
    raw = copy.deepcopy(dict(load_stack("aws-training").gpufleet))
    raw["cluster"]["kubernetesVersion"] = minor
    raw["gpuPools"][0]["maxNodes"] = h100_max
    return {"gpufleet:cluster": raw["cluster"], "gpufleet:gpuPools": raw["gpuPools"]}


def _h100_notes(new: dict[str, Any]) -> list[str]:
    diff = diff_plans(
        plan_of("aws-training", _training()).to_json(), plan_of("aws-training", new).to_json()
    )
    (group,) = [
        c for c in diff.changed if c.type == NODE_GROUP and c.name.endswith("-h100-us-west-2a")
    ]
    return [note for note in group.notes if "split it into two `up`s" in note]


def test_a_roll_with_a_bounds_change_says_to_split_them() -> None:
    (note,) = _h100_notes(_training("1.36", h100_max=4))
    assert note.startswith("this `up` rolls the group and changes its bounds")
    assert "the bounds first, then the change that rolls" in note
    assert _h100_notes(_training("1.36")) == []  # a roll alone
    assert _h100_notes(_training(h100_max=4)) == []  # bounds alone


# --- R3-10: the system group is replaced create-first -------------------------------------------


def test_a_system_group_replacement_says_its_pods_move_and_a_gpu_group_s_says_what_goes() -> None:
    raw = copy.deepcopy(dict(load_stack("aws-training").gpufleet))
    raw["cluster"]["systemPool"]["machineType"] = "m6i.2xlarge"
    raw["gpuPools"][0]["spot"] = True  # capacityType: fixed at creation
    edited = {"gpufleet:cluster": raw["cluster"], "gpufleet:gpuPools": raw["gpuPools"]}
    diff = diff_plans(plan_of("aws-training").to_json(), plan_of("aws-training", edited).to_json())
    replaced = {c.name: c for c in diff.replaced if c.type == NODE_GROUP}
    (system,) = [c for name, c in replaced.items() if name.endswith("-system")]
    assert system.downtime == ""  # created before the old one goes: nothing is down
    assert any("creates the new group before it deletes the old one" in n for n in system.notes)
    assert (
        "down while it is recreated" not in render_text(diff).split(system.name)[-1].split("\n")[0]
    )
    (h100,) = [c for name, c in replaced.items() if name.endswith("-h100-us-west-2a")]
    assert h100.downtime == "every node of this group and the pods on it"
