"""Nodes roll when they must, and `diff` says so (review eks-2.md N6, N7, N12, S3-1): a managed
group's new launch template version or image release is `~ ROLLS`, managed groups pin their AMI
release, Auto Mode NodePools state the 21-day node lifetime and warn about it, and a minor bump
says what happens to Karpenter's and Auto Mode's running nodes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from components.aws.model import amis, auto_mode
from components.model.config import parse_config
from components.tooling.diff import diff_plans, render_text
from components.tooling.diff_model import PlanDiff
from components.tooling.engine import plan_stack
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
FACTS = Path(__file__).resolve().parent / "data" / "karpenter_facts.json"


def _pools(stack: str, **first: Any) -> dict[str, Any]:
    pools = copy.deepcopy(load_stack(stack).gpufleet["gpuPools"])
    pools[0].update(first)
    return {"gpufleet:gpuPools": pools}


def _cluster(stack: str, **fields: Any) -> dict[str, Any]:
    return {"gpufleet:cluster": {**load_stack(stack).gpufleet["cluster"], **fields}}


def _changed(diff: PlanDiff, kind: str) -> dict[str, Any]:
    return {c.name: c for c in diff.changed if c.type == kind}


def test_a_launch_template_edit_rolls_the_managed_group() -> None:
    """h100's disk 500 -> 800 GiB: a new template version, UpdateNodegroupVersion, every node
    replaced; the system group's template is untouched."""
    before = plan_of("aws-training").to_json()
    after = plan_of("aws-training", _pools("aws-training", diskSizeGb=800)).to_json()
    diff = diff_plans(before, after)
    groups = _changed(diff, NODE_GROUP)
    assert set(groups) == {"gpufleet-training-h100-us-west-2a", "gpufleet-training-h100-us-west-2b"}
    for change in groups.values():
        assert change.verdict == "roll"
        assert "launchTemplate.version" in [c.path for c in change.changes]
    text = render_text(diff)
    assert "~ ROLLS aws:eks/nodeGroup:NodeGroup gpufleet-training-h100-us-west-2a" in text
    assert "EKS replaces every node of the group" in text


@pytest.mark.parametrize("stack", ["aws-training", "aws-dev", "aws-karpenter", "aws-auto-mode"])
def test_managed_groups_pin_the_reviewed_image_release(stack: str) -> None:
    plan = plan_of(stack)
    minor = load_stack(stack).gpufleet["cluster"]["kubernetesVersion"]
    date = amis.RELEASES["al2023"].removeprefix("v")
    groups = plan.of_type(NODE_GROUP)
    assert groups
    for group in groups:
        assert group.inputs["releaseVersion"] == f"{minor}.3-{date}", group.name


def test_a_bottlerocket_managed_group_pins_its_release_too() -> None:
    plan = plan_of(
        "aws-training",
        _pools("aws-training", aws={"nodeGroup": "managed", "amiFamily": "bottlerocket"}),
    )
    for group in plan.of_type(NODE_GROUP):
        if "-h100-us-" in group.name:
            assert group.inputs["releaseVersion"].startswith(amis.RELEASES["bottlerocket"] + "-")


def test_an_image_release_bump_rolls_every_managed_group(monkeypatch: pytest.MonkeyPatch) -> None:
    before = plan_of("aws-training").to_json()
    monkeypatch.setitem(amis.RELEASES, "al2023", "v20261120")
    after = plan_stack(load_stack("aws-training")).to_json()
    groups = _changed(diff_plans(before, after), NODE_GROUP)
    # The system group, both h100 groups, and the Capacity Block group, whose update EKS takes
    # only at 0 nodes (tests/test_eks_capacity.py).
    assert len(groups) == 4
    for name, change in groups.items():
        assert change.verdict == ("reject" if "-block-" in name else "roll"), name
        assert "releaseVersion" in [c.path for c in change.changes]


def test_auto_mode_states_its_21_day_node_lifetime() -> None:
    schema = json.loads(FACTS.read_text())["crds"]["NodePool"]
    pools = plan_of("aws-auto-mode").of_type(NODE_POOL)
    assert pools
    for pool in pools:
        spec = pool.inputs["spec"]["template"]["spec"]
        assert spec["expireAfter"] == auto_mode.NODE_LIFETIME["expireAfter"]
        hours = int(spec["expireAfter"][:-1]) + int(spec["terminationGracePeriod"][:-1])
        assert hours <= auto_mode.MAX_NODE_LIFETIME_HOURS
        jsonschema.validate(dict(pool.inputs), schema)
    # Karpenter's own nodes still never expire: they go when empty.
    for pool in plan_of("aws-karpenter").of_type(NODE_POOL):
        assert pool.inputs["spec"]["template"]["spec"]["expireAfter"] == "Never"
    warnings = parse_config(dict(load_stack("aws-auto-mode").gpufleet)).warnings
    assert sum("replaces every node within 21 days" in w for w in warnings) == 2


@pytest.mark.parametrize(
    ("stack", "verdict", "says"),
    [
        ("aws-karpenter", "update", "keep their old kubelet until they are empty"),
        ("aws-auto-mode", "roll", "replaces every node with one of the new minor"),
    ],
)
def test_a_minor_bump_says_what_happens_to_running_nodes(
    stack: str, verdict: str, says: str
) -> None:
    before = plan_of(stack, _cluster(stack, kubernetesVersion="1.35")).to_json()
    diff = diff_plans(before, plan_of(stack).to_json())
    (cluster,) = [c for c in diff.changed if c.type == "aws:eks/cluster:Cluster"]
    assert cluster.verdict == verdict
    assert any(says in note.says for note in cluster.node_notes), cluster.node_notes
