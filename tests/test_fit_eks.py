"""EKS pools at zero: the cluster autoscaler's view comes from the ASGs' node-template tags in
the planned graph, so a missing or malformed tag is a pod that never triggers a scale-up."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from components.model.config import parse_config
from components.tooling.engine import RecordedResource
from components.tooling.fit import fit_check
from components.tooling.pool_views import (
    RESOURCE_TAG,
    TAINT_TAG,
    PoolCheck,
    needs_plan,
    pool_checks,
    read_asg,
)
from components.tooling.stacks import load_stack
from tests.conftest import every_stack, plan_of
from tests.test_fit_table import asg_for, config_of, eks_graph

GPU_TAINT_TOLERATION = {
    "key": "nvidia.com/gpu",
    "operator": "Equal",
    "value": "true",
    "effect": "NoSchedule",
}


def gpu_pod(selector: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "nodeSelector": selector or {"gpufleet.io/pool": "t4"},
        "tolerations": [GPU_TAINT_TOLERATION],
        "containers": [{"name": "cuda", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
        **spec,
    }


def check(resources: list[RecordedResource], pool: str = "t4") -> PoolCheck:
    return next(c for c in pool_checks(config_of("eks"), resources) if c.name == pool)


def test_fully_tagged_asgs_let_the_autoscaler_scale_from_zero() -> None:
    t4 = check(eks_graph())
    verdict = fit_check(gpu_pod(), t4)
    assert (verdict.fits, verdict.via, verdict.reasons) == (True, "autoscaler template at zero", ())
    assert t4.notes == ()
    # The template has the generic labels CA derives from the instance type and zones too.
    template = t4.views[0][1].scale_from_zero
    assert template is not None
    assert template.labels["node.kubernetes.io/instance-type"] == "g4dn.xlarge"
    assert template.label_choices["topology.kubernetes.io/zone"] == ("us-east-1a", "us-east-1b")
    assert template.allocatable["nvidia.com/gpu"] == 1


def test_asgs_without_the_gpu_resource_tag_do_not_fit_at_zero() -> None:
    t4 = check(eks_graph(t4=(RESOURCE_TAG + "nvidia.com/gpu",)))
    verdict = fit_check(gpu_pod(), t4)
    assert not verdict.fits
    assert verdict.reasons[0].startswith("a running node of this pool would fit, but the pool is")
    assert (
        "autoscaler template: requests nvidia.com/gpu: 1 but the node offers none"
        in (verdict.reasons[1])
    )
    assert any(f"no {RESOURCE_TAG}nvidia.com/gpu tag" in note for note in t4.notes)
    # The pool that keeps a node is judged by that node, tags or not.
    a100 = check(eks_graph(a100=(RESOURCE_TAG + "nvidia.com/gpu",)), "a100")
    assert fit_check(gpu_pod({"gpufleet.io/pool": "a100"}), a100).fits


def test_a_label_missing_from_the_tags_blocks_only_pods_that_select_it() -> None:
    t4 = check(eks_graph(t4=("label/team",)))
    by_team = fit_check(gpu_pod({"team": "ml-research"}), t4)
    assert not by_team.fits
    assert "autoscaler template: nodeSelector team=ml-research: no such label" in "\n".join(
        by_team.reasons
    )
    assert fit_check(gpu_pod({"gpufleet.io/pool": "t4"}), t4).fits


def test_a_bare_effect_taint_tag_is_ignored_so_scale_up_happens_but_the_node_refuses() -> None:
    config = config_of("eks")
    resources = []
    for asg in eks_graph():
        tags = [
            {**tag, "value": "NoSchedule"} if tag["key"] == TAINT_TAG + "nvidia.com/gpu" else tag
            for tag in asg.inputs["tags"]
        ]
        resources.append(dataclasses.replace(asg, inputs={**asg.inputs, "tags": tags}))
    t4 = next(c for c in pool_checks(config, resources) if c.name == "t4")
    assert any("is ignored by the autoscaler (expected <value>:<Effect>)" in n for n in t4.notes)
    # A GPU pod needs no toleration on EKS (the API server adds it: ExtendedResourceToleration);
    # a pod that requests no GPU, a monitoring agent pinned to the pool, gets none.
    assert fit_check(gpu_pod(tolerations=[]), t4).fits
    untolerating = gpu_pod(tolerations=[], containers=[{"name": "agent"}])
    verdict = fit_check(untolerating, t4)
    assert not verdict.fits
    assert verdict.reasons[0].startswith("the cluster autoscaler would add a node for this pod")
    assert (
        "running node: taint nvidia.com/gpu=true:NoSchedule is not tolerated" in verdict.reasons[1]
    )


def test_asgs_the_autoscaler_cannot_discover_leave_the_pool_invisible_at_zero() -> None:
    t4 = check(eks_graph(t4=("cluster-autoscaler/enabled",)))
    verdict = fit_check(gpu_pod(), t4)
    assert not verdict.fits
    assert verdict.reasons[0].startswith("pool has 0 nodes and the cluster autoscaler cannot see")
    assert any("lacks the autoscaler's discovery tags" in note for note in t4.notes)


def test_a_pool_without_any_asg_in_the_plan_is_invisible_at_zero() -> None:
    t4 = check([asg for asg in eks_graph() if "-t4-" not in asg.name])
    assert not fit_check(gpu_pod(), t4).fits
    assert any("no auto scaling group in the plan is tagged" in note for note in t4.notes)


def test_asgs_of_one_pool_with_different_tags_fit_if_any_group_would() -> None:
    config = config_of("eks")
    tagged = asg_for(config, "t4", "us-east-1a")
    untagged = asg_for(config, "t4", "us-east-1b", drop=(RESOURCE_TAG + "nvidia.com/gpu",))
    t4 = check([tagged, untagged])
    assert len(t4.views) == 2
    assert fit_check(gpu_pod(), t4).fits
    # Neither group fits a pod asking for two GPUs: reasons name the groups.
    two = gpu_pod(containers=[{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 2}}}])
    verdict = fit_check(two, t4)
    assert not verdict.fits
    assert any(reason.startswith(f"ASG {tagged.name}: ") for reason in verdict.reasons)
    assert any(reason.startswith(f"ASG {untagged.name}: ") for reason in verdict.reasons)


def test_managed_node_groups_are_seen_from_the_pool_itself() -> None:
    l4m = check([], "l4m")
    assert l4m.views[0][1].scale_from_zero is not None
    assert fit_check(gpu_pod({"gpufleet.io/pool": "l4m"}), l4m).fits


def test_planning_is_needed_only_for_self_managed_eks_pools_at_zero() -> None:
    assert needs_plan(config_of("eks"))
    assert not needs_plan(config_of("gke"))
    assert not needs_plan(config_of("aks"))
    with pytest.raises(ValueError, match="need the planned graph"):
        pool_checks(config_of("eks"), None)


@pytest.mark.parametrize(
    ("value", "taint", "ignored"),
    [
        ("true:NoSchedule", ("true", "NoSchedule"), False),
        (":NoExecute", ("", "NoExecute"), False),
        ("gpu:PreferNoSchedule", ("gpu", "PreferNoSchedule"), False),
        ("NoSchedule", None, True),
        ("a:b:NoSchedule", None, True),
        ("true:NoScheduled", None, True),
    ],
)
def test_taint_tags_parse_like_the_aws_provider(
    value: str, taint: tuple[str, str] | None, ignored: bool
) -> None:
    asg = asg_for(config_of("eks"), "t4", "us-east-1a")
    tags = [{"key": TAINT_TAG + "example.com/k", "value": value, "propagateAtLaunch": False}]
    parsed = read_asg(dataclasses.replace(asg, inputs={"tags": tags}))
    assert [(t.value, t.effect) for t in parsed.taints] == ([taint] if taint else [])
    assert bool(parsed.ignored) == ignored
    assert not parsed.discoverable


def test_unparseable_resource_tags_are_ignored_with_a_note() -> None:
    asg = asg_for(config_of("eks"), "t4", "us-east-1a")
    tags = [{"key": RESOURCE_TAG + "nvidia.com/gpu", "value": "one", "propagateAtLaunch": False}]
    parsed = read_asg(dataclasses.replace(asg, inputs={"tags": tags}))
    assert parsed.resources == {}
    assert parsed.ignored and "nvidia.com/gpu" in parsed.ignored[0]


# --------------------------------------------------------------------------- shipped EKS stacks

# Stacks whose GPU pools are auto scaling groups the cluster autoscaler scales (not Karpenter's).
AWS_STACKS = [
    s
    for s in every_stack()
    if load_stack(s).gpufleet.get("cloud") == "aws"
    and load_stack(s).gpufleet["cluster"].get("aws", {}).get("provisioner", "cluster-autoscaler")
    == "cluster-autoscaler"
]


@pytest.mark.every_stack
@pytest.mark.parametrize("stack", AWS_STACKS)
def test_eks_stacks_tag_every_pool_at_zero_for_the_autoscaler(stack: str) -> None:
    config = parse_config(load_stack(stack).gpufleet)
    resources = plan_of(stack).resources
    zero = [
        c
        for c in pool_checks(config, resources)
        if c.kind == "gpu"
        and c.spec.min_nodes == 0
        and next(p for p in config.gpu_pools if p.name == c.name).aws.node_group == "self-managed"
    ]
    assert zero, f"{stack} has no self-managed pool at zero to check"
    for pool in zero:
        scheduling = pool.spec.pod_scheduling
        pod = {
            "nodeSelector": scheduling["nodeSelector"],
            "tolerations": scheduling["tolerations"],
            "containers": [{"name": "c", "resources": scheduling["resources"]}],
        }
        verdict = fit_check(pod, pool)
        assert verdict.fits, (pool.name, verdict.reasons, pool.notes)
        assert verdict.via == "autoscaler template at zero"
        # The same graph without the GPU resource tag: the pool no longer scales from zero.
        stripped = [
            dataclasses.replace(
                r,
                inputs={
                    **r.inputs,
                    "tags": [
                        t
                        for t in r.inputs.get("tags", [])
                        if t["key"] != RESOURCE_TAG + "nvidia.com/gpu"
                    ],
                },
            )
            if r.type == "aws:autoscaling/group:Group"
            else r
            for r in resources
        ]
        without = next(c for c in pool_checks(config, stripped) if c.name == pool.name)
        assert not fit_check(pod, without).fits
