"""Helm release state stays where it is (issue 36, SEC-7): moving a release to another namespace
is a replacement in pulumi-kubernetes, which `diff` flags, and a running stack's releases keep
their namespaces (tests/data/before_issue36: main at a7c846e). Why they stay and what the
preview identity needs instead: docs/pull-requests.md, "Helm release state and the preview
identity"."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from components.tooling.diff import diff_plans
from tests.conftest import plan_of

RELEASE = "kubernetes:helm.sh/v3:Release"
BEFORE_ISSUE_36 = Path(__file__).parent / "data" / "before_issue36"


@pytest.mark.parametrize("stack", ["aws-dev", "aws-karpenter", "aws-existing", "existing-dev"])
def test_every_release_keeps_its_namespace(stack: str) -> None:
    old = json.loads((BEFORE_ISSUE_36 / f"{stack}.json").read_text())
    before = {r["urn"]: r["inputs"]["namespace"] for r in old["resources"] if r["type"] == RELEASE}
    now = {r.urn: r.inputs["namespace"] for r in plan_of(stack).of_type(RELEASE)}
    assert before and now == before


def test_moving_a_release_out_of_kube_system_is_a_replacement_diff_flags() -> None:
    plan = plan_of("aws-karpenter").to_json()
    moved = copy.deepcopy(plan)
    (crds,) = [
        r
        for r in moved["resources"]
        if r["type"] == RELEASE and r["inputs"]["name"] == "karpenter-crd"
    ]
    assert crds["inputs"]["namespace"] == "kube-system"
    crds["inputs"]["namespace"] = "gpufleet-system"
    diff = diff_plans(plan, moved)
    (change,) = diff.replaced
    assert change.urn == crds["urn"] and "namespace" in change.replace_paths
