"""GPU node health on EKS (issue 22, point 10): managed GPU groups repair their nodes, the node
monitoring agent that reports GPU failures runs on every cluster gpufleet creates outside Auto
Mode (which has it built in), and Karpenter's node repair is on."""

from __future__ import annotations

import pytest

from components.aws.model import health
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
