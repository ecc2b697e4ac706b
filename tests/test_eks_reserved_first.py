"""EKS pools that take a reservation first and fall back to on-demand (issue 33 item 3).

- Self-managed groups: `[reserved, on-demand]` through the group's own Capacity Reservation
  preference `capacity-reservations-first` (EC2 Auto Scaling API CapacityReservationSpecification;
  pulumi_aws 7.51.1 autoscaling.GroupCapacityReservationSpecificationArgs); managed node groups
  refuse it with what to do.
- Karpenter: `plan` says whether work moves back into the reservation (Karpenter v1.14
  tasks/odcrs.md, Prioritization Behavior: needs consolidation of nodes that run pods).

Plans: aws-dev with its l4 pool on an ODCR first (self-managed, cached once); aws-reserved.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.model.config import ConfigError, parse_config
from components.tooling.diff import diff_plans
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

GROUP = "aws:autoscaling/group:Group"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
ODCR = "cr-00112233445566778"
FIRST: dict[str, Any] = {}


def raw_of(stack: str) -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(stack).gpufleet))


def reserved_first_dev() -> dict[str, Any]:
    """aws-dev with l4 on an ODCR in one zone first, then on-demand (self-managed groups)."""
    if not FIRST:
        pools = raw_of("aws-dev")["gpuPools"]
        pools[1].update(
            zones=["us-east-1a"],
            capacity=["reserved", "on-demand"],
            aws={"capacityReservations": [{"id": ODCR, "instanceCount": 1}]},
        )
        FIRST["gpufleet:gpuPools"] = pools
    return FIRST


def l4(plan: Any, kind: str) -> Any:
    (found,) = [r for r in plan.of_type(kind) if "-l4-" in r.name]
    return found


def test_a_self_managed_group_prefers_its_reservation_then_runs_on_demand() -> None:
    plan = plan_of("aws-dev", reserved_first_dev())
    group = l4(plan, GROUP).inputs
    assert group["capacityReservationSpecification"] == {
        "capacityReservationPreference": "capacity-reservations-first",
        "capacityReservationTarget": {"capacityReservationIds": [ODCR]},
    }
    # The template launches the reservation's one type and targets nothing itself: a template
    # target launches into the reservation or fails, never on-demand.
    template = l4(plan, TEMPLATE).inputs
    assert "capacityReservationSpecification" not in template
    assert template["instanceType"] == "g6.xlarge"
    assert "mixedInstancesPolicy" not in group and group["launchTemplate"]["id"]
    # The other pools' groups set no preference.
    others = [r for r in plan.of_type(GROUP) if "-l4-" not in r.name]
    assert others and all("capacityReservationSpecification" not in r.inputs for r in others)


def test_changing_the_groups_preference_leaves_running_instances_alone() -> None:
    after = plan_of("aws-dev", reserved_first_dev()).to_json()
    before = copy.deepcopy(after)
    for resource in before["resources"]:
        if resource["type"] == GROUP and "-l4-" in resource["name"]:
            resource["inputs"].pop("capacityReservationSpecification")
    (change,) = diff_plans(before, after).changed
    assert change.verdict == "update"
    (note,) = change.node_notes
    assert note.effect == "new-nodes"
    assert note.says.startswith("running instances stay where they run")


def test_managed_node_groups_refuse_reserved_first_with_what_to_do() -> None:
    raw = raw_of("aws-dev")
    raw["gpuPools"][1].update(
        zones=["us-east-1a"],
        capacity=["reserved", "on-demand"],
        aws={"nodeGroup": "managed", "capacityReservations": [{"id": ODCR}]},
    )
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    (problem,) = [str(p) for p in caught.value.problems if "capacity" in p.path]
    assert "EKS owns a managed node group's Auto Scaling group" in problem
    assert "set aws.nodeGroup: self-managed" in problem
    # Two zones: an ODCR is zonal, and the group that targets it launches only there.
    raw["gpuPools"][1]["zones"] = ["us-east-1a", "us-east-1b"]
    raw["gpuPools"][1]["aws"].pop("nodeGroup")
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    assert any(p.path == "gpuPools[1].zones" for p in caught.value.problems)


def test_karpenter_says_whether_work_moves_back_into_the_reservation() -> None:
    raw = raw_of("aws-reserved")
    (held,) = [w for w in parse_config(raw).warnings if "keeps running" in w]
    assert held.startswith(
        "gpuPools[0].capacity: a node Karpenter starts on on-demand while the reservation is "
        "full keeps running for as long as it has pods (consolidationPolicy WhenEmpty)"
    )
    assert "set aws.consolidateUnderutilized: true" in held
    # The Capacity Block pool, reserved alone, has nothing to move back.
    assert not [w for w in parse_config(raw).warnings if w.startswith("gpuPools[1].capacity")]
    raw["gpuPools"][0]["aws"]["consolidateUnderutilized"] = True
    warnings = parse_config(raw).warnings
    assert not [w for w in warnings if "keeps running" in w]
    (moves,) = [w for w in warnings if "moves work back" in w]
    assert "draining it" in moves
