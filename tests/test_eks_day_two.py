"""EKS day-two details (review eks-2.md N9, N13, N14): enabling Auto Mode updates the cluster in
place, the end of standard support says to bump the stack's minor, and a raised managed minimum is
not refused (the live desired size is sent, raised to it)."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

from components.model.config import parse_config
from components.tooling.diff import diff_plans
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

CLUSTER = "aws:eks/cluster:Cluster"


def _cluster(stack: str, **fields: Any) -> dict[str, Any]:
    raw = copy.deepcopy(dict(load_stack(stack).gpufleet["cluster"]))
    for key, value in fields.items():
        raw[key] = value
    return raw


def test_enabling_auto_mode_updates_the_cluster_in_place() -> None:
    """The provider updates the cluster in place; `diff` still refuses the one-step switch from
    Karpenter (tests/test_eks_refusals.py), which this does not look at."""
    auto = _cluster(
        "aws-karpenter", aws={**_cluster("aws-karpenter")["aws"], "provisioner": "auto-mode"}
    )
    pools = copy.deepcopy(load_stack("aws-karpenter").gpufleet["gpuPools"])
    for pool in pools:
        pool.pop("aws", None)
    overrides = {"gpufleet:cluster": auto, "gpufleet:gpuPools": pools}
    diff = diff_plans(
        plan_of("aws-karpenter").to_json(), plan_of("aws-karpenter", overrides).to_json()
    )
    (cluster,) = [c for c in diff.changed if c.type == CLUSTER]
    assert not cluster.replace_paths, cluster
    assert "computeConfig" in [c.path.split(".")[0] for c in cluster.changes]
    (created,) = plan_of("aws-auto-mode").of_type(CLUSTER)
    assert created.inputs["bootstrapSelfManagedAddons"] is False  # still false at creation
    assert "bootstrapSelfManagedAddons" in created.ignore_changes


def test_the_end_of_standard_support_says_to_bump_the_minor(monkeypatch: Any) -> None:
    # EKS 1.34: standard support ends 2026-12-02, ten days after the pinned today.
    monkeypatch.setattr("components.model.config.clock_today", lambda: date(2026, 11, 22))
    raw = {
        **load_stack("aws-dev").gpufleet,
        "cluster": _cluster("aws-dev", kubernetesVersion="1.34"),
    }
    (warning,) = [
        w for w in parse_config(raw).warnings if w.startswith("cluster.kubernetesVersion")
    ]
    assert "EKS upgrades this cluster's control plane to 1.35 itself from 2026-12-02" in warning
    assert "bump cluster.kubernetesVersion to 1.35" in warning


def test_a_raised_managed_minimum_is_not_refused() -> None:
    """The program sends the live desired size raised to the new minimum, so EKS never sees a
    minimum above the desired size (tests/test_eks_live_sizes.py)."""
    pools = copy.deepcopy(load_stack("aws-training").gpufleet["gpuPools"])
    pools[0]["minNodes"] = 2
    diff = diff_plans(
        plan_of("aws-training").to_json(),
        plan_of("aws-training", {"gpufleet:gpuPools": pools}).to_json(),
    )
    groups = [c for c in diff.changed if c.type == "aws:eks/nodeGroup:NodeGroup"]
    assert groups and all(c.verdict == "update" and not c.refusals for c in groups), groups
