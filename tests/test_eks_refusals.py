"""What EKS refuses on day two, refused before `pulumi up` (review eks-3.md N15, N17): a lower or
skipped Kubernetes minor on the cluster, planned on the whole graph and judged by `diff`."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from components.tooling.diff import diff_plans
from components.tooling.diff import main as diff_main
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

CLUSTER = "aws:eks/cluster:Cluster"


def _minor(stack: str, minor: str) -> dict[str, Any]:
    raw = copy.deepcopy(dict(load_stack(stack).gpufleet["cluster"]))
    raw["kubernetesVersion"] = minor
    return {"gpufleet:cluster": raw}


@pytest.mark.parametrize(
    ("old", "new", "refused"),
    [
        ("1.35", "1.34", "can't downgrade"),
        ("1.34", "1.36", "one Kubernetes minor at a time"),
    ],
    ids=["downgrade", "skipped-minor"],
)
def test_diff_refuses_a_lower_or_skipped_eks_minor_and_exits_1(
    old: str, new: str, refused: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = tmp_path / "old.json", tmp_path / "new.json"
    before.write_text(json.dumps(plan_of("aws-dev", _minor("aws-dev", old)).to_json()))
    after.write_text(json.dumps(plan_of("aws-dev", _minor("aws-dev", new)).to_json()))
    assert diff_main([str(before), str(after)]) == 1
    out = capsys.readouterr().out
    assert f"REJECTED {CLUSTER}" in out and refused in out
    assert "instead:" in out


def test_one_minor_up_is_an_update_not_a_refusal() -> None:
    diff = diff_plans(
        plan_of("aws-dev", _minor("aws-dev", "1.35")).to_json(),
        plan_of("aws-dev", _minor("aws-dev", "1.36")).to_json(),
    )
    (cluster,) = [c for c in diff.changed if c.type == CLUSTER]
    assert cluster.verdict == "update" and not cluster.refusals, cluster


# ------------------------------------------ N17: Karpenter or the autoscaler to Auto Mode


NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"


def _to_auto_mode(stack: str, rename_pools: bool = False) -> dict[str, Any]:
    raw = copy.deepcopy(dict(load_stack(stack).gpufleet))
    raw["cluster"]["aws"] = {**raw["cluster"].get("aws", {}), "provisioner": "auto-mode"}
    for pool in raw["gpuPools"]:
        pool.pop("aws", None)  # keys of the old provisioner only
        pool.pop("sharing", None)
        if rename_pools:
            pool["name"] = f"{pool['name']}-auto"
    return {"gpufleet:cluster": raw["cluster"], "gpufleet:gpuPools": raw["gpuPools"]}


@pytest.mark.parametrize("stack", ["aws-karpenter", "aws-dev"])
def test_diff_refuses_switching_to_auto_mode_in_one_up(
    stack: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = tmp_path / "old.json", tmp_path / "new.json"
    before.write_text(json.dumps(plan_of(stack).to_json()))
    after.write_text(json.dumps(plan_of(stack, _to_auto_mode(stack)).to_json()))
    assert diff_main([str(before), str(after)]) == 1
    out = capsys.readouterr().out
    assert f"REJECTED {CLUSTER}" in out
    assert "refuses to turn on EKS Auto Mode in the `up` that removes its" in out
    assert "create the new provisioner's cluster in a new stack" in out


def test_new_pool_names_do_not_hide_the_removal_of_karpenter() -> None:
    """With renamed pools no NodePool changes its node class (they are removed and added), and
    the cluster's refusal still says what goes with Karpenter."""
    stack = "aws-karpenter"
    diff = diff_plans(
        plan_of(stack).to_json(), plan_of(stack, _to_auto_mode(stack, rename_pools=True)).to_json()
    )
    assert {c.type for c in diff.rejected} == {CLUSTER}
    (refusal,) = [r for c in diff.rejected for r in c.refusals]
    assert "Karpenter (controller, CRDs, node classes)" in refusal
    assert {r.type for r in diff.removed} >= {NODE_POOL, "gpufleet:aws:Karpenter"}


def test_a_node_pool_keeps_its_node_class_kind() -> None:
    """The NodePool CRD refuses another nodeClassRef group or kind (CEL), whichever way."""
    stack = "aws-karpenter"
    diff = diff_plans(plan_of(stack, _to_auto_mode(stack)).to_json(), plan_of(stack).to_json())
    pools = [c for c in diff.rejected if c.type == NODE_POOL]
    assert pools
    for pool in pools:
        assert any("nodeClassRef.group is immutable" in r for r in pool.refusals), pool
        assert any("nodeClassRef.kind is immutable" in r for r in pool.refusals), pool
    # Turning Auto Mode off is not what the cluster rule is about.
    assert not [c for c in diff.rejected if c.type == CLUSTER]
