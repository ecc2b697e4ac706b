"""GPU node health on EKS (issue 22, point 10): managed GPU groups repair their nodes, the node
monitoring agent that reports GPU failures runs on every cluster gpufleet creates outside Auto
Mode (which has it built in), and Karpenter's node repair is on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.aws.managed_gpu_pool import EKS_TAINT_EFFECTS
from components.aws.model import health
from components.tooling.pool_views import TAINT_TAG
from components.tooling.pool_views import asg_tags as read_asg_tags
from components.tooling.scheduling.model import NodeTemplate, Taint
from components.tooling.scheduling.taints import taint_reasons
from tests.conftest import plan_of

ADDON = "aws:eks/addon:Addon"


def test_managed_gpu_groups_repair_their_nodes() -> None:
    groups = [
        g
        for g in plan_of("aws-training").of_type("aws:eks/nodeGroup:NodeGroup")
        if "h100" in g.name
    ]
    assert len(groups) == 3  # h100's two zones and the Capacity Block group
    assert all(g.inputs["nodeRepairConfig"] == {"enabled": True} for g in groups)


@pytest.mark.parametrize(
    ("stack", "agent"),
    [
        ("aws-dev", True),
        ("aws-training", True),
        ("aws-karpenter", True),
        ("aws-auto-mode", False),  # built into Auto Mode
        ("aws-existing", False),  # the cluster's add-ons are its owner's
    ],
)
def test_the_node_monitoring_agent_runs_where_gpufleet_owns_the_add_ons(
    stack: str, agent: bool
) -> None:
    addons = {a.inputs["addonName"] for a in plan_of(stack).of_type(ADDON)}
    assert (health.MONITORING_AGENT_ADDON in addons) is agent


def test_karpenter_repairs_broken_nodes() -> None:
    (release,) = [
        r for r in plan_of("aws-karpenter").resources if r.name.endswith("-karpenter-release")
    ]
    gates = release.inputs["values"]["settings"]["featureGates"]
    # The others keep the chart's; reservedCapacity is stated at its default (reserved pools).
    assert gates == {"nodeRepair": True, "nodeOverlay": False, "reservedCapacity": True}


# --------------------------------------------- review eks-3.md N16: DCGM on tainted GPU nodes


def _gpu_taints(plan: Any) -> list[Taint]:
    """Every taint gpufleet puts on a GPU node in the plan: managed groups' (EKS API effects),
    self-managed groups' (their node-template tags, as the kubelet registers them) and
    Karpenter NodePools'."""
    effects = {v: k for k, v in EKS_TAINT_EFFECTS.items()}
    found = []
    for group in plan.of_type("aws:eks/nodeGroup:NodeGroup"):
        for taint in group.inputs.get("taints") or []:
            found.append(Taint(taint["key"], taint.get("value") or "", effects[taint["effect"]]))
    for group in plan.of_type("aws:autoscaling/group:Group"):
        for key, value in read_asg_tags(group).items():
            if key.startswith(TAINT_TAG):
                taint_value, effect = value.split(":", 1)
                found.append(Taint(key[len(TAINT_TAG) :], taint_value, effect))
    for pool in plan.of_type("kubernetes:karpenter.sh/v1:NodePool"):
        for taint in pool.inputs["spec"]["template"]["spec"].get("taints") or []:
            found.append(Taint(taint["key"], taint.get("value") or "", taint["effect"]))
    return found


@pytest.mark.parametrize("stack", ["aws-dev", "aws-training", "aws-karpenter", "aws-reserved"])
def test_the_dcgm_server_tolerates_every_gpu_taint(stack: str) -> None:
    plan = plan_of(stack)
    (addon,) = [
        a for a in plan.of_type(ADDON) if a.inputs["addonName"] == health.MONITORING_AGENT_ADDON
    ]
    values = json.loads(addon.inputs["configurationValues"])
    # Only what the add-on's configuration schema has (EKS rejects anything else).
    assert set(values) == {"dcgmAgent"}
    assert set(values["dcgmAgent"]) <= set(health.DCGM_AGENT_SCHEMA_KEYS)
    # The agent's own DaemonSet keeps the chart's default (it tolerates everything already).
    assert "nodeAgent" not in values
    taints = _gpu_taints(plan)
    assert any(t.key == "nvidia.com/gpu" for t in taints), stack
    node = NodeTemplate("gpu", taints=tuple(taints))
    pod = {"tolerations": values["dcgmAgent"]["tolerations"]}
    assert taint_reasons(pod, node, extended_resource_toleration=False) == []


def test_no_other_add_on_gets_configuration_values() -> None:
    plan = plan_of("aws-dev")
    configured = {
        a.inputs["addonName"] for a in plan.of_type(ADDON) if a.inputs.get("configurationValues")
    }
    assert configured == {health.MONITORING_AGENT_ADDON}
