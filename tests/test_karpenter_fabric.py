"""EFA under gpufleet's Karpenter (`interconnect: fabric` with `cluster.aws.provisioner:
karpenter`, issue 32 item 2): the pool's EC2NodeClass gets one EFA-only interface per network card
beside the primary, the EFA security group and the pool's cluster placement group in its one zone;
its NodePool pins that zone and labels the nodes for the EFA device plugin; fit counts the EFA
devices. An installed Karpenter (version unknown) and Auto Mode still refuse it."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

from components.aws.model import allocatable, fabric, karpenter
from components.aws.model.kinds.karpenter import KARPENTER
from components.model.config import parse_config
from components.model.pools import resolve_pool
from components.model.problems import ConfigError
from components.tooling.diff import diff_plans
from components.tooling.engine import Plan
from components.tooling.stacks import load_stack
from tests.conftest import plan_of
from tests.test_karpenter import NODE_CLASS, NODE_POOL, _crd_schema

STACK = "aws-karpenter"
ZONE = "us-east-1b"
POOL = {
    "name": "h100",
    "accelerator": "h100-80gb",
    "machineTypes": ["p5.48xlarge"],
    "minNodes": 0,
    "maxNodes": 4,
    "zones": [ZONE],
    "interconnect": "fabric",
}
PLACEMENT = "aws:ec2/placementGroup:PlacementGroup"


def _plan() -> Plan:
    return plan_of(STACK, {"gpufleet:gpuPools": [POOL]})


def _one(type_: str) -> Any:
    (found,) = _plan().of_type(type_)
    return found


def _node_class_spec() -> dict[str, Any]:
    spec: dict[str, Any] = _one(NODE_CLASS).inputs["spec"]
    return spec


def _cel_problems(interfaces: list[dict[str, Any]]) -> list[str]:
    """The two CEL rules of the v1.14.1 CRD on spec.networkInterfaces
    (karpenter.k8s.aws_ec2nodeclasses.yaml, x-kubernetes-validations), which the structural
    schema in tests/data cannot carry: a primary `interface` on card 0 device 0; no duplicate
    card and device pair, and at most one `efa-only` interface per card."""
    problems = []
    if interfaces and not any(
        (i["networkCardIndex"], i["deviceIndex"], i["interfaceType"]) == (0, 0, "interface")
        for i in interfaces
    ):
        problems.append("no primary interface")
    pairs = [(i["networkCardIndex"], i["deviceIndex"]) for i in interfaces]
    efa_cards = [i["networkCardIndex"] for i in interfaces if i["interfaceType"] == "efa-only"]
    if len(set(pairs)) != len(pairs) or len(set(efa_cards)) != len(efa_cards):
        problems.append("duplicate pair or two efa-only on a card")
    return problems


def test_the_node_class_has_one_efa_per_network_card_beside_the_primary() -> None:
    interfaces = _node_class_spec()["networkInterfaces"]
    efa_count = fabric.EFA_TYPES["p5.48xlarge"].efa_interfaces
    efa_only = [i for i in interfaces if i["interfaceType"] == "efa-only"]
    assert len(efa_only) == efa_count == 32
    assert sorted(i["networkCardIndex"] for i in efa_only) == list(range(32))
    assert interfaces[0] == {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
    assert len(interfaces) == efa_count + 1
    assert _cel_problems(interfaces) == []


def test_the_cel_rules_the_test_applies_catch_what_the_api_server_would_refuse() -> None:
    good = karpenter.efa_network_interfaces(2)
    assert _cel_problems(good) == []
    assert _cel_problems(good[1:]) == ["no primary interface"]
    assert _cel_problems([*good, {**good[1], "deviceIndex": 2}]) != []


def test_the_fabric_node_class_validates_against_the_crd_schema() -> None:
    document = dict(_one(NODE_CLASS).inputs)
    jsonschema.validate(document, _crd_schema("EC2NodeClass"))
    broken = copy.deepcopy(document)
    broken["spec"]["networkInterfaces"][1]["interfaceType"] = "efa"  # not in the CRD's enum
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, _crd_schema("EC2NodeClass"))


def test_the_pool_gets_a_placement_group_in_its_zone_its_efa_group_and_zone() -> None:
    (group,) = _plan().of_type(PLACEMENT)
    assert group.inputs["strategy"] == "cluster"
    assert group.name == f"gpufleet-karpenter-h100-{ZONE}-placement"
    spec = _node_class_spec()
    assert spec["placementGroupSelector"]["name"].startswith(group.name)
    (efa_group,) = [
        g for g in _plan().of_type("aws:ec2/securityGroup:SecurityGroup") if g.name.endswith("-efa")
    ]
    assert {"id": f"sg-{efa_group.name}"} in spec["securityGroupSelectorTerms"]
    assert len(spec["securityGroupSelectorTerms"]) == 2  # the cluster's group and the EFA group
    node_pool = _one(NODE_POOL).inputs["spec"]["template"]
    zone = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [ZONE]}
    assert zone in node_pool["spec"]["requirements"]
    # What the EFA device plugin's DaemonSet selects.
    assert node_pool["metadata"]["labels"][fabric.FABRIC_LABEL] == fabric.FABRIC_LABEL_VALUE
    (plugin,) = [
        r
        for r in _plan().of_type("kubernetes:helm.sh/v3:Release")
        if r.inputs["chart"] == fabric.DEVICE_PLUGIN.chart
    ]
    assert plugin.inputs["values"]["nodeSelector"] == {fabric.FABRIC_LABEL: "efa"}


def _config(**cluster_aws: Any) -> Any:
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    raw["gpuPools"] = [POOL]
    raw["cluster"]["aws"].update(cluster_aws)
    return raw


def test_fit_sees_the_efa_devices_and_plan_says_what_turning_it_on_does() -> None:
    config = parse_config(_config())
    pool = resolve_pool(config, config.gpu_pools[0])
    assert pool.allocatable_per_node[fabric.EFA_RESOURCE] == 32
    assert pool.fabric is not None and "Drifted" in pool.fabric.notes[0]


def test_a_pool_without_fabric_gets_no_interfaces_or_placement() -> None:
    plan = plan_of(STACK)
    assert plan.of_type(PLACEMENT) == []
    for node_class in plan.of_type(NODE_CLASS):
        assert "networkInterfaces" not in node_class.inputs["spec"]
        assert "placementGroupSelector" not in node_class.inputs["spec"]


def test_an_installed_karpenter_and_a_karpenter_before_1_11_are_refused() -> None:
    raw = _config()
    raw["cluster"]["existing"] = {"autoscalerInstalled": True}
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    assert any("cannot check the version" in str(p) for p in caught.value.problems)
    # The floor at its edge: 1.11 builds it, 1.10 does not.
    assert karpenter.builds_fabric("1.11.0") and not karpenter.builds_fabric("1.10.3")
    assert karpenter.builds_fabric()  # the pinned release
    config = parse_config(_config())
    assert KARPENTER.fabric_problems(config.cluster, config.gpu_pools[0], "gpuPools[0]") == []


def test_turning_the_fabric_on_reaches_new_nodes_and_off_is_refused_unless_empty() -> None:
    plain = plan_of(STACK, {"gpufleet:gpuPools": [{**POOL, "interconnect": "none"}]})
    on = diff_plans(plain.to_json(), _plan().to_json())
    (node_class,) = [c for c in on.changed if c.type == NODE_CLASS]
    assert node_class.verdict != "reject"
    effects = {path: note.effect for note in node_class.node_notes for path in note.paths}
    assert effects["spec.networkInterfaces"] == "new-nodes"
    assert effects["spec.placementGroupSelector"] == "new-nodes"
    off = diff_plans(_plan().to_json(), plain.to_json())
    (node_class,) = [c for c in off.changed if c.type == NODE_CLASS]
    assert node_class.verdict == "reject"
    (refusal,) = node_class.refusals
    assert "refused unless the pool is at 0 nodes" in refusal
    assert PLACEMENT in {r.type for r in off.removed}


def test_moving_a_fabric_pool_to_another_zone_is_refused_unless_empty() -> None:
    """The old placement group is deleted in the same `up` while the drifted nodes are still in
    it (EC2 refuses: review fix8-eks F8E-1); turning the fabric on is not refused."""
    moved = plan_of(STACK, {"gpufleet:gpuPools": [{**POOL, "zones": ["us-east-1a"]}]})
    diff = diff_plans(_plan().to_json(), moved.to_json())
    (node_class,) = [c for c in diff.changed if c.type == NODE_CLASS]
    assert node_class.verdict == "reject"
    assert any("moving a fabric pool to another zone" in r for r in node_class.refusals)
    assert PLACEMENT in {r.type for r in diff.removed}


def test_a_fabric_pool_on_reservations_selected_by_tags_gets_no_placement_group() -> None:
    """Tag-selected reservations place the instances as ids do: a placement group of
    gpufleet's would keep them out of a reservation made in its own (review fix8-eks F8E-2)."""
    tagged = {
        **POOL,
        "capacity": ["reserved", "on-demand"],
        "aws": {"capacityReservationTags": {"team": "ml"}},
    }
    plan = plan_of(STACK, {"gpufleet:gpuPools": [tagged]})
    assert not [r for r in plan.resources if r.type == PLACEMENT]
    (node_class,) = [r for r in plan.resources if r.type == NODE_CLASS]
    assert "placementGroupSelector" not in node_class.inputs["spec"]
    assert node_class.inputs["spec"]["networkInterfaces"]


def _allocatable(pool: dict[str, Any]) -> dict[str, Any]:
    raw = _config()
    raw["gpuPools"] = [pool]
    config = parse_config(raw)
    return dict(resolve_pool(config, config.gpu_pools[0]).allocatable_per_node)


@pytest.mark.parametrize(
    ("accelerator", "machine", "pods"),
    [("h100-80gb", "p5.48xlarge", 51), ("h200-141gb", "p5en.48xlarge", 149)],
)
def test_a_fabric_pool_gets_karpenters_max_pods_with_card_0s_efa_only_interface(
    accelerator: str, machine: str, pods: int
) -> None:
    """Karpenter counts the EFA-only interface on card 0 as one of the card's ENIs
    (ENILimitedPods @v1.14.1): (2 - 1) x (50 - 1) + 2 = 51 on a p5.48xlarge, (4 - 1) x 49 + 2
    on a p5en; without fabric the ENI figure (100, 198) stands (review fix8-eks F8E-3)."""
    fabric_pool = {**POOL, "accelerator": accelerator, "machineTypes": [machine]}
    plain_pool = {k: v for k, v in fabric_pool.items() if k != "interconnect"}
    with_efa, without = _allocatable(fabric_pool), _allocatable(plain_pool)
    daemonsets = allocatable.MAX_PODS[machine] - int(without["pods"])
    assert int(with_efa["pods"]) == pods - daemonsets
    # nodeadm still reserves memory from its own ENI figure (allocatable.py's docstring).
    assert with_efa["memory"] == without["memory"]


def test_karpenter_max_pods_at_the_edge_of_card_0s_interfaces() -> None:
    assert allocatable.karpenter_max_pods("p5.48xlarge", 1) == 51
    assert allocatable.karpenter_max_pods("p5.48xlarge", 2) == 0  # no interface left for pods
    assert allocatable.karpenter_max_pods("p5.48xlarge", 3) == 0
    assert allocatable.karpenter_max_pods("m6i.large", 1) is None
    # With no EFA-only interface the card-0 figures give the VPC CNI's published ENI figure.
    for machine in fabric.EFA_TYPES:
        assert allocatable.karpenter_max_pods(machine, 0) == allocatable.MAX_PODS[machine]
