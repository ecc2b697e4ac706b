"""How an EKS pool's nodes are spread over its per-zone groups (review eks-2.md N2, N8): no
group of maxSize 0, a per-zone maximum for multi-node jobs, and `fit` saying when a job needs
more nodes than one zone of the pool holds."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.model.config import ConfigError, parse_config
from components.tooling.fit import fit_templates
from components.tooling.pool_views import pool_checks
from components.tooling.scheduling.workloads import read_workloads
from components.tooling.stacks import load_stack, shipped_stacks
from tests.conftest import plan_of

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ASG = "aws:autoscaling/group:Group"
AWS_STACKS = [s for s in shipped_stacks() if load_stack(s).gpufleet["cloud"] == "aws"]


def _training(**h100: Any) -> dict[str, Any]:
    raw = copy.deepcopy(dict(load_stack("aws-training").gpufleet))
    raw["gpuPools"][0].update(h100)
    return raw


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_no_group_of_a_shipped_stack_is_empty_by_design(stack: str) -> None:
    for resource in plan_of(stack).resources:
        if resource.type == NODE_GROUP:
            assert resource.inputs["scalingConfig"]["maxSize"] >= 1, resource.name
        if resource.type == ASG:
            assert resource.inputs["maxSize"] >= 1, resource.name


def test_a_managed_pool_with_fewer_nodes_than_zones_is_refused() -> None:
    zones = ["us-west-2a", "us-west-2b", "us-west-2c"]
    (problem,) = _problems(_training(zones=zones, maxNodes=2))
    assert problem.startswith("gpuPools[0].maxNodes: must be at least the number of zones (3)")
    assert "maxSize 0" in problem and "maxNodesPerZone" in problem


def test_every_zone_can_hold_max_nodes_per_zone() -> None:
    """h100 over two zones, up to 2 nodes in either: a 2-node job fits in one zone."""
    per_zone = _training(maxNodes=4)
    per_zone["gpuPools"][0]["aws"]["maxNodesPerZone"] = 2
    a100 = per_zone["gpuPools"][1]
    a100["maxNodes"], a100["aws"] = 8, {**a100["aws"], "maxNodesPerZone": 2}
    plan = plan_of("aws-training", {"gpufleet:gpuPools": per_zone["gpuPools"]})
    groups = [r for r in plan.resources if r.type == NODE_GROUP and "-h100-us-" in r.name]
    assert [g.inputs["scalingConfig"]["maxSize"] for g in groups] == [2, 2]
    asgs = [r for r in plan.resources if r.type == ASG and "a100" in r.name]
    assert len(asgs) == 4 and {a.inputs["maxSize"] for a in asgs} == {2}


def test_max_nodes_must_say_what_the_zones_add_up_to() -> None:
    raw = _training(maxNodes=2)
    raw["gpuPools"][0]["aws"]["maxNodesPerZone"] = 2
    (problem,) = _problems(raw)
    assert "the pool can reach 4 nodes" in problem and "set maxNodes: 4" in problem


def test_max_nodes_per_zone_is_the_cluster_autoscalers() -> None:
    raw = copy.deepcopy(dict(load_stack("aws-karpenter").gpufleet))
    raw["gpuPools"][1]["aws"] = {"maxNodesPerZone": 1}
    (problem,) = _problems(raw)
    assert problem.startswith("gpuPools[1].aws.maxNodesPerZone: applies only with")


TWO_NODE_JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: nccl}
spec:
  parallelism: 2
  template:
    spec:
      nodeSelector: {gpufleet.io/pool: h100}
      tolerations: [{operator: Exists}]
      containers:
        - name: trainer
          resources: {limits: {nvidia.com/gpu: 8}}
"""


def _h100_notes(raw: dict[str, Any], job: str = TWO_NODE_JOB) -> tuple[str, ...]:
    config = parse_config(raw)
    plan = plan_of("aws-training", {"gpufleet:gpuPools": raw["gpuPools"]})
    templates = read_workloads(job).templates
    (verdict,) = fit_templates(templates, pool_checks(config, plan.resources))
    (h100,) = [pool for pool in verdict.pools if pool.pool == "h100"]
    assert h100.fits
    return h100.notes


def _zone_notes(raw: dict[str, Any], job: str = TWO_NODE_JOB) -> list[str]:
    """The h100 pool's notes about zones (fit's gang note is another matter)."""
    return [note for note in _h100_notes(raw, job) if note.startswith("its ")]


def test_fit_says_when_a_job_needs_more_nodes_than_one_zone_holds() -> None:
    def zone_notes(raw: dict[str, Any]) -> list[str]:
        return [note for note in _h100_notes(raw) if "one zone holds" in note]

    (note,) = zone_notes(_training())
    assert "its 2 pods need 2 nodes of this pool, but one zone holds at most 1" in note
    per_zone = _training(maxNodes=4)
    per_zone["gpuPools"][0]["aws"]["maxNodesPerZone"] = 2
    (note,) = _zone_notes(per_zone)
    assert note.startswith("its 2 pods need 2 nodes, and nothing keeps them in one zone")


PINNED = {
    "nodeSelector": TWO_NODE_JOB.replace(
        "nodeSelector: {gpufleet.io/pool: h100}",
        "nodeSelector: {gpufleet.io/pool: h100, topology.kubernetes.io/zone: us-west-2a}",
    ),
    "podAffinity": TWO_NODE_JOB.replace(
        "tolerations: [{operator: Exists}]",
        "tolerations: [{operator: Exists}]\n"
        "      affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "[{topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {job: nccl}}}]}}",
    ),
}


def test_fit_says_how_to_pin_a_multi_node_job_to_one_zone() -> None:
    """The autoscaler balances a pool's zone groups, and scales each on its own: a job's pods
    stay in one zone only if they say so (review eks-3.md R3-4)."""
    per_zone = _training(maxNodes=4)
    per_zone["gpuPools"][0]["aws"]["maxNodesPerZone"] = 2
    (note,) = _zone_notes(per_zone)
    assert "splits one scale-up over the zones of a pool without aws.maxNodesPerZone" in note
    assert "nodeSelector topology.kubernetes.io/zone: <one of us-west-2a, us-west-2b>" in note
    assert "required podAffinity to each other with topologyKey topology.kubernetes.io/zone" in note
    for how, job in PINNED.items():
        assert _zone_notes(per_zone, job) == [], how


def _similar(plan: Any, balancing: str) -> set[frozenset[str]]:
    """Pairs of groups the autoscaler balances one scale-up over: both carry the balancing
    label with the same value (cluster-autoscaler label_nodegroups.go areLabelsSame), read from
    what it sees at zero (a self-managed group's node-template tags, a managed group's labels)."""
    prefix = "k8s.io/cluster-autoscaler/node-template/label/"
    labels: dict[str, dict[str, str]] = {}
    for group in plan.of_type(ASG):
        tags = {t["key"]: t["value"] for t in group.inputs["tags"]}
        labels[group.name] = {
            k.removeprefix(prefix): v for k, v in tags.items() if k.startswith(prefix)
        }
    for group in plan.of_type(NODE_GROUP):
        labels[group.name] = dict(group.inputs.get("labels") or {})
    return {
        frozenset((a, b))
        for a in labels
        for b in labels
        if a < b and balancing in labels[a] and labels[a].get(balancing) == labels[b].get(balancing)
    }


def test_the_autoscaler_balances_a_pool_s_zone_groups_unless_it_sets_max_nodes_per_zone() -> None:
    raw = _training(maxNodes=4)
    raw["gpuPools"][0]["aws"]["maxNodesPerZone"] = 2  # h100: a job's nodes in one zone
    plan = plan_of("aws-training", {"gpufleet:gpuPools": raw["gpuPools"]})
    (release,) = [
        r
        for r in plan.of_type("kubernetes:helm.sh/v3:Release")
        if r.inputs["name"] == "cluster-autoscaler"
    ]
    balancing = release.inputs["values"]["extraArgs"]["balancing-label"]
    similar = _similar(plan, balancing)
    assert not [pair for pair in similar if any("-h100-us-" in name for name in pair)]
    a100 = sorted(g.name for g in plan.of_type(ASG) if "-a100-spot-" in g.name)
    assert len(a100) == 4
    assert {frozenset(p) for p in similar} == {
        frozenset((a, b)) for a in a100 for b in a100 if a < b
    }
