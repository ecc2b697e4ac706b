"""A change `pulumi up` sends nothing for is not an update (review aks-3 N-5, every cloud).

Pulumi's engine diffs a resource by asking its provider to compare the old and new *inputs*
(pulumi/pulumi pkg/resource/deploy/step_generator.go: `generateStepsFromDiff` -> `diff` ->
`diffResource`, which passes `OldInputs`/`NewInputs` only); dependencies, the parent and the
resource options are not inputs. When the inputs are equal the provider answers "no changes"
and the engine takes a "same" step (`continueStepsFromDiff`: "If we try to return zero steps
change it to one same step"), which only writes the new dependencies and options into the
state (step.go `SameStep.Apply` keeps the old ID and outputs). So `diff` says "nothing sent"
and leaves such a resource out of "to change", as Pulumi's own count does.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from components.tooling.diff import diff_plans, render_markdown, render_text
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

STACK, PROJECT = "s", "gpufleet"
# A pool (or what carries a pool's nodes) of every cloud, and the Helm release of any cluster.
TYPES = {
    "gcp": "gcp:container/nodePool:NodePool",
    "aws-managed": "aws:eks/nodeGroup:NodeGroup",
    "aws-self-managed": "aws:autoscaling/group:Group",
    "aws-karpenter": "kubernetes:karpenter.sh/v1:NodePool",
    "azure": "azure-native:containerservice:AgentPool",
    "existing": "kubernetes:helm.sh/v3:Release",
}


def _urn(type_: str, name: str) -> str:
    return f"urn:pulumi:{STACK}::{PROJECT}::{type_}::{name}"


def _resource(
    type_: str, inputs: Mapping[str, Any], *, parent: str | None = None, **options: Any
) -> dict[str, Any]:
    return {
        "urn": _urn(type_, "pool"),
        "type": type_,
        "name": "pool",
        "parent": parent,
        "custom": True,
        "provider": None,
        "dependencies": list(options.get("dependsOn", [])),
        "inputs": dict(inputs),
        "options": {
            "protect": False,
            "ignoreChanges": [],
            "deleteBeforeReplace": True,
            "dependsOn": [],
            **options,
        },
    }


def _plan(*resources: dict[str, Any]) -> dict[str, Any]:
    return {"project": PROJECT, "stack": STACK, "resources": list(resources), "outputs": {}}


PREVIOUS = _urn("gpufleet:any:Pool", "previous")
OTHER = _urn("gpufleet:any:Pool", "other")


@pytest.mark.parametrize("cloud", sorted(TYPES))
def test_a_dependency_only_change_sends_nothing_and_is_not_counted(cloud: str) -> None:
    type_ = TYPES[cloud]
    inputs = {"name": "pool", "minCount": 0}
    old = _plan(_resource(type_, inputs, dependsOn=[PREVIOUS]))
    new = _plan(_resource(type_, copy.deepcopy(inputs), dependsOn=[OTHER]))
    diff = diff_plans(old, new)
    (change,) = diff.changed
    assert change.verdict == "none" and change.sends_nothing
    assert not change.node_notes and not diff.rolled and not diff.replaced
    assert diff.summary() == (
        "0 to add, 0 to change (0 replaced), 0 to delete; 1 only in Pulumi's state, nothing sent"
    )
    text = render_text(diff)
    assert f"~ {type_} pool (order only, nothing sent)\n" in text
    assert '    options.dependsOn: ["' in text  # still shown: the reviewer sees the new order
    assert "(order only, nothing sent)" in render_markdown(diff)


@pytest.mark.parametrize("cloud", sorted(TYPES))
def test_a_parent_change_alone_sends_nothing(cloud: str) -> None:
    type_ = TYPES[cloud]
    old = _plan(_resource(type_, {"name": "pool"}, parent=PREVIOUS))
    new = _plan(_resource(type_, {"name": "pool"}, parent=OTHER))
    (change,) = diff_plans(old, new).changed
    assert change.verdict == "none"
    assert f"~ {type_} pool (order only, nothing sent)" in render_text(diff_plans(old, new))


@pytest.mark.parametrize("cloud", sorted(TYPES))
def test_an_input_change_with_a_dependency_change_is_an_update(cloud: str) -> None:
    type_ = TYPES[cloud]
    old = _plan(_resource(type_, {"name": "pool", "x": 1}, dependsOn=[PREVIOUS]))
    new = _plan(_resource(type_, {"name": "pool", "x": 2}, dependsOn=[OTHER]))
    diff = diff_plans(old, new)
    (change,) = diff.changed
    assert change.verdict != "none" and not change.sends_nothing
    assert diff.summary().startswith("0 to add, 1 to change (")
    assert "nothing sent" not in render_text(diff)


def test_an_option_change_alone_is_recorded_in_pulumis_state_only() -> None:
    """`protect` or `retainOnDelete` go to Pulumi's state, never to the cloud: shown, not
    counted, and worded apart from a reordering."""
    type_ = TYPES["gcp"]
    old = _plan(_resource(type_, {"name": "pool"}))
    new = _plan(_resource(type_, {"name": "pool"}, protect=True, retainOnDelete=True))
    diff = diff_plans(old, new)
    (change,) = diff.changed
    assert change.verdict == "none"
    text = render_text(diff)
    assert f"~ {type_} pool (Pulumi's state only, nothing sent)\n" in text
    assert "    options.protect: false -> true\n" in text
    assert diff.summary().endswith("; 1 only in Pulumi's state, nothing sent")


def test_a_provider_version_move_with_equal_inputs_sends_nothing() -> None:
    """A default provider of another version is no replacement (its DiffConfig is asked, see
    `provider_move_replaces`), and with equal inputs the new provider's Diff finds nothing."""
    type_ = TYPES["gcp"]
    old = _resource(type_, {"name": "pool"})
    old["provider"] = f"{_urn('pulumi:providers:gcp', 'default_8_10_0')}::id"
    new = copy.deepcopy(old)
    new["provider"] = f"{_urn('pulumi:providers:gcp', 'default_8_11_0')}::id"
    (change,) = diff_plans(_plan(old), _plan(new)).changed
    assert change.verdict == "none"
    assert "(Pulumi's state only, nothing sent)" in render_text(diff_plans(_plan(old), _plan(new)))


def test_the_next_aks_pool_after_a_removed_one_is_only_reordered() -> None:
    """azure-dev chains its GPU pools (each waits for the previous): removing the first leaves
    the second with another dependsOn and nothing else (the review's dev-rmpool)."""
    pools = copy.deepcopy(load_stack("azure-dev").gpufleet["gpuPools"])
    removed, kept = pools[0]["name"], pools[1]["name"]
    diff = diff_plans(
        plan_of("azure-dev").to_json(),
        plan_of("azure-dev", {"gpufleet:gpuPools": pools[1:]}).to_json(),
    )
    (pool,) = [c for c in diff.changed if c.type == TYPES["azure"]]
    assert pool.name.endswith(f"-{kept}-pool") and pool.verdict == "none"
    assert [item.path for item in pool.changes] == ["options.dependsOn"]
    assert {ref.name for ref in diff.removed if ref.type == TYPES["azure"]} == {
        f"gpufleet-dev-{removed}-pool"
    }
    # The device plugin's values change with the pools: that one is a real update.
    assert [c.verdict for c in diff.changed if c.type != TYPES["azure"]] == ["update"]
    assert diff.summary().endswith(
        "1 to change (0 replaced), 2 to delete; 1 only in Pulumi's state, nothing sent"
    )
    assert f"~ {TYPES['azure']} {pool.name} (order only, nothing sent)" in render_text(diff)


def test_a_depends_on_entry_that_became_an_input_dependency_is_not_shown() -> None:
    """The resource now reads the cluster's outputs, so the explicit dependsOn on it went; the
    order is the same and Pulumi shows nothing of it (review of SEC-18, R-3). Another entry
    dropped, or one added, is still shown."""
    type_ = TYPES["aws-karpenter"]
    old = _plan(_resource(type_, {"spec": {"a": 1}}, dependsOn=[PREVIOUS, OTHER]))
    moved = _resource(type_, {"spec": {"a": 2}}, dependsOn=[PREVIOUS])
    moved["dependencies"] = [PREVIOUS, OTHER]
    (change,) = diff_plans(old, _plan(moved)).changed
    assert [c.path for c in change.changes] == ["spec.a"]
    unchanged = _resource(type_, {"spec": {"a": 1}}, dependsOn=[PREVIOUS])
    unchanged["dependencies"] = [PREVIOUS, OTHER]
    assert diff_plans(old, _plan(unchanged)).changed == ()
    gone = _resource(type_, {"spec": {"a": 2}}, dependsOn=[PREVIOUS])  # OTHER no longer at all
    (change,) = diff_plans(old, _plan(gone)).changed
    assert "options.dependsOn" in [c.path for c in change.changes]
