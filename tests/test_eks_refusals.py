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
