"""EKS's quotas on managed node groups are checked before `pulumi up` (review eks-3.md R3-2): one
managed group per managed pool and zone, plus the system group, against "Managed node groups
per cluster" (30 by default); each group's maximum against "Nodes per managed node group" (450).
Past either, EKS refuses CreateNodegroup halfway through an `up`; the plan refuses the stack
(exit 2), every problem at once, with the count, the quota and how to raise it. Each limit is
tested at its edge: the quota passes, one more is refused."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.aws.model import quotas
from components.model.config import ConfigError, parse_config
from components.tooling.cli import main as cli_main
from components.tooling.commands import BadInput
from components.tooling.engine import described_world, plan_stack
from components.tooling.stacks import load_stack
from tests.conftest import PINNED_TODAY

BASE = load_stack("aws-dev").gpufleet
ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]


def _managed(name: str, zones: list[str], **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "accelerator": "t4",
        "machineTypes": ["g4dn.xlarge"],
        "maxNodes": len(zones),
        "zones": zones,
        "aws": {"nodeGroup": "managed", **fields.pop("aws", {})},
        **fields,
    }


def _groups(count: int) -> list[dict[str, Any]]:
    """Managed pools making `count` node groups: three zones each, the rest in the last."""
    pools = [_managed(f"p{index}", ZONES) for index in range(count // 3)]
    if count % 3:
        pools.append(_managed("rest", ZONES[: count % 3]))
    return pools


def _raw(pools: list[dict[str, Any]], **aws: Any) -> dict[str, Any]:
    raw = copy.deepcopy(dict(BASE))
    raw["gpuPools"] = pools
    raw["cluster"]["aws"] = {**raw["cluster"]["aws"], **aws}
    return raw


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, today=PINNED_TODAY)
    return [str(p) for p in caught.value.problems]


def test_the_quota_of_managed_node_groups_passes_and_one_more_is_refused() -> None:
    # 29 GPU groups and the system group: 30, EKS's default.
    parse_config(_raw(_groups(29)), today=PINNED_TODAY)
    (problem,) = _problems(_raw(_groups(30)))
    assert problem.startswith(
        "gpuPools: needs 31 EKS managed node groups (one per managed pool and zone and the "
        "system group) where the cluster may have 30 ('Managed node groups per cluster' quota "
        "L-6D54EA21)"
    )
    assert "aws.nodeGroup: self-managed" in problem
    assert (
        "--service-code eks --quota-code L-6D54EA21 --desired-value 31 --region us-east-1"
        in problem
    )
    assert "set cluster.aws.managedNodeGroupQuota: 31" in problem


def test_a_raised_quota_is_the_limit_at_its_edge() -> None:
    parse_config(_raw(_groups(39), managedNodeGroupQuota=40), today=PINNED_TODAY)
    (problem,) = _problems(_raw(_groups(40), managedNodeGroupQuota=40))
    assert "needs 41 EKS managed node groups" in problem and "may have 40" in problem


def test_self_managed_pools_and_node_pools_take_no_managed_group() -> None:
    self_managed = [{**pool, "aws": {}} for pool in _groups(60)]
    parse_config(_raw(self_managed), today=PINNED_TODAY)
    karpenter = [{**pool, "aws": {}} for pool in _groups(60)]
    parse_config(_raw(karpenter, provisioner="karpenter"), today=PINNED_TODAY)
    assert (
        quotas.gpu_groups(
            parse_config(_raw(karpenter, provisioner="karpenter"), today=PINNED_TODAY).cluster,
            list(enumerate(_groups(60))),
        )
        == []
    )


@pytest.mark.parametrize(
    ("pool", "path"),
    [
        (
            lambda nodes: _managed("big", ZONES[:2], maxNodes=2 * nodes),
            "gpuPools[0].maxNodes",
        ),
        (
            lambda nodes: _managed(
                "big", ZONES[:2], maxNodes=2 * nodes, aws={"maxNodesPerZone": nodes}
            ),
            "gpuPools[0].aws.maxNodesPerZone",
        ),
    ],
    ids=["split-max", "max-per-zone"],
)
def test_nodes_per_managed_group_pass_at_the_quota_and_not_one_more(pool: Any, path: str) -> None:
    parse_config(_raw([pool(450)]), today=PINNED_TODAY)
    (problem,) = _problems(_raw([pool(451)]))
    assert problem.startswith(f"{path}: lets one EKS managed node group grow to 451 nodes where")
    assert "'Nodes per managed node group' quota L-BD136A63" in problem
    assert "set cluster.aws.nodesPerManagedNodeGroupQuota: 451" in problem
    parse_config(_raw([pool(451)], nodesPerManagedNodeGroupQuota=451), today=PINNED_TODAY)


def test_the_system_group_counts_too() -> None:
    raw = _raw([])
    raw["cluster"]["systemPool"] = {**raw["cluster"]["systemPool"], "maxNodes": 450}
    parse_config(raw, today=PINNED_TODAY)
    raw["cluster"]["systemPool"]["maxNodes"] = 451
    (problem,) = _problems(raw)
    assert problem.startswith("cluster.systemPool.maxNodes: lets one EKS managed node group grow")


def test_every_problem_at_once() -> None:
    problems = _problems(_raw(_groups(30), vpcCidr="10.0.0.0/8"))
    assert {p.split(":")[0] for p in problems} == {"gpuPools", "cluster.aws.vpcCidr"}


def test_plan_refuses_the_stack_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = tmp_path / "Pulumi.many-managed.yaml"
    raw = _raw(_groups(30))
    stack.write_text(yaml.safe_dump({"config": {f"gpufleet:{k}": v for k, v in raw.items()}}))
    assert cli_main(["plan", str(stack)]) == 2
    err = capsys.readouterr().err
    assert "gpuPools: needs 31 EKS managed node groups" in err
    assert "Traceback" not in err


# --- a cluster gpufleet adopts: the owner's groups count too, read while planning ----------

ADOPTED = "aws-existing"
L4 = _managed("l4", ["us-east-1a", "us-east-1b"], accelerator="l4", machineTypes=["g6.xlarge"])


def _adopted(owners: int) -> Any:
    stack = load_stack(ADOPTED)
    overrides = {"gpufleet:gpuPools": [L4]}
    world = described_world({**stack.config, **overrides})
    groups = {
        f"owner-{index}": {"minSize": 1, "maxSize": 3, "desiredSize": 1} for index in range(owners)
    }
    return plan_stack(stack, overrides, dataclasses.replace(world, eks_node_groups=groups))


def test_an_adopted_cluster_s_own_groups_are_counted_live() -> None:
    plan = _adopted(28)  # and gpufleet's 2: 30
    assert plan.of_type("aws:eks/nodeGroup:NodeGroup")
    with pytest.raises(BadInput) as caught:
        _adopted(29)
    message = str(caught.value)
    assert (
        "cluster platform-prod has 29 managed node groups of its owner's and gpufleet adds 2"
        in message
    )
    assert "31 where the cluster may have 30" in message
    assert "Traceback" not in message


def test_offline_the_owner_s_groups_are_said_not_checked() -> None:
    raw = copy.deepcopy(dict(load_stack(ADOPTED).gpufleet))
    raw["gpuPools"] = [L4]
    config = parse_config(raw, today=PINNED_TODAY)
    (warning,) = [w for w in config.warnings if w.startswith("gpuPools: not checked offline")]
    assert (
        "count toward EKS's 'Managed node groups per cluster' quota (30) with gpufleet's 2"
        in warning
    )
    raw["gpuPools"] = [{**L4, "aws": {}}]  # self-managed: nothing to count
    assert not [w for w in parse_config(raw, today=PINNED_TODAY).warnings if "quota" in w]


def _diff_at(quota: int, old: dict[str, Any], new: dict[str, Any]) -> Any:
    """`diff` of two aws-dev variants, the new one stating `quota` managed groups."""
    from components.tooling.diff import diff_plans
    from tests.conftest import plan_of

    def plan(raw: dict[str, Any], stated: int) -> dict[str, Any]:
        raw = copy.deepcopy(raw)
        raw["cluster"]["aws"]["managedNodeGroupQuota"] = stated
        overrides = {f"gpufleet:{key}": raw[key] for key in ("cluster", "gpuPools")}
        return plan_of("aws-dev", overrides).to_json()

    return diff_plans(plan(old, 30), plan(new, quota))


def test_an_up_that_creates_before_it_deletes_must_fit_the_quota_at_its_peak() -> None:
    """Pulumi creates a renamed pool's groups, and a system group replaced by name prefix,
    before it deletes the old ones: at the quota, CreateNodegroup fails halfway through `up`
    (review eks-4 N-1). One three-zone pool and the system group run: 4 groups."""
    old = _raw([_managed("p0", ZONES)])
    renamed = _raw([_managed("p1", ZONES)])
    # The rename holds 4 + 3 groups at once: 7 passes, 6 is refused.
    assert not _diff_at(7, old, renamed).refusals
    (refusal,) = _diff_at(6, old, renamed).refusals
    assert refusal.startswith("this `up` holds 7 EKS managed node groups")
    assert "(4 running, 3 added and 0 replaced by creating the new one first" in refusal
    assert "where the cluster may have 6" in refusal and "instead: split it" in refusal
    assert "--desired-value 7" in refusal
    # The system group's replacement holds one more for a moment: 5 passes, 4 is refused.
    bigger = copy.deepcopy(old)
    bigger["cluster"]["systemPool"] = {
        **bigger["cluster"]["systemPool"],
        "machineType": "m6i.xlarge",
    }
    assert not _diff_at(5, old, bigger).refusals
    (refusal,) = _diff_at(4, old, bigger).refusals
    assert "(4 running, 0 added and 1 replaced by creating the new one first" in refusal


def test_a_gpu_group_replaced_after_its_deletion_adds_nothing_to_the_peak() -> None:
    """GPU managed groups are replaced delete-first (deleteBeforeReplace): a new instance type
    at the quota holds no extra group, so it is not refused (re-review of eks-4 N-1)."""
    old = _raw([_managed("p0", ZONES)])
    bigger = _raw([_managed("p0", ZONES, machineTypes=["g4dn.2xlarge"])])
    diff = _diff_at(4, old, bigger)
    replaced = [c for c in diff.changed if c.type == quotas.NODE_GROUP_TYPE and c.replaces]
    assert len(replaced) == 3
    assert not diff.refusals
