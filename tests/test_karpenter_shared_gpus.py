"""Karpenter and shared GPUs (review eks-2.md N3): a time-shared or MIG pool gets a NodeOverlay
(Karpenter 1.14's alpha CRD, its feature gate on) so Karpenter plans its nodes with the count
they advertise; every overlay validates against the pinned CRD, and what Karpenter plans (EC2's
GPU count, overlaid by the plan's NodeOverlay) is what `fit` judges pods by."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from components.model import karpenter_pool
from components.model.config import ConfigError, parse_config
from components.model.labels import GPU_RESOURCE
from components.model.pools import resolve_pools
from components.model.registry import CLOUDS
from components.tooling.engine import Plan
from components.tooling.fit import fit_templates
from components.tooling.pool_views import pool_checks
from components.tooling.scheduling.workloads import read_workloads
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

STACK = "aws-karpenter"
OVERLAY = "kubernetes:karpenter.sh/v1alpha1:NodeOverlay"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
FACTS = Path(__file__).resolve().parent / "data" / "karpenter_facts.json"


def _shared_pools() -> list[dict[str, Any]]:
    """aws-karpenter's L4 pool time-shared 4 ways, and an A100 pool cut into 1g.5gb slices."""
    pools = copy.deepcopy(load_stack(STACK).gpufleet["gpuPools"])
    pools[0]["sharing"] = {"strategy": "time-sharing", "maxSharedClientsPerGpu": 4}
    pools[1] = {
        "name": "a100mig",
        "accelerator": "a100-40gb",
        "machineTypes": ["p4d.24xlarge"],
        "maxNodes": 2,
        "zones": ["us-east-1a", "us-east-1b"],
        "migPartitionSize": "1g.5gb",
    }
    return pools


OVERRIDES = {
    "gpufleet:gpuPools": _shared_pools(),
    "gpufleet:gpuSoftware": {"mode": "gpu-operator"},
}


def _shared_raw() -> dict[str, Any]:
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    raw["gpuPools"], raw["gpuSoftware"] = OVERRIDES["gpufleet:gpuPools"], {"mode": "gpu-operator"}
    return raw


def _overlays(plan: Plan) -> dict[str, dict[str, Any]]:
    return {r.inputs["metadata"]["name"]: dict(r.inputs) for r in plan.of_type(OVERLAY)}


def test_shared_and_mig_pools_get_an_overlay_with_the_advertised_count() -> None:
    overlays = _overlays(plan_of(STACK, OVERRIDES))
    assert {name: o["spec"]["capacity"] for name, o in overlays.items()} == {
        "l4": {GPU_RESOURCE: "4"},
        "a100mig": {GPU_RESOURCE: "56"},
    }
    for name, overlay in overlays.items():
        # Only this pool's NodePool and instance types: other pools keep EC2's count.
        (pool_requirement, types) = overlay["spec"]["requirements"]
        assert pool_requirement == {
            "key": "karpenter.sh/nodepool",
            "operator": "In",
            "values": [name],
        }
        assert types["key"] == "node.kubernetes.io/instance-type"
    assert _overlays(plan_of(STACK)) == {}  # the shipped pools share nothing


def test_the_overlay_gate_is_on_exactly_when_an_overlay_exists() -> None:
    for overrides, expected in ((OVERRIDES, True), (None, False)):
        plan = plan_of(STACK, overrides)
        (release,) = [r for r in plan.resources if r.name.endswith("-karpenter-release")]
        assert release.inputs["values"]["settings"]["featureGates"]["nodeOverlay"] is expected


def test_overlays_validate_against_the_pinned_crd_and_wait_for_it() -> None:
    schema = json.loads(FACTS.read_text())["crds"]["NodeOverlay"]
    plan = plan_of(STACK, OVERRIDES)
    (crds,) = [r for r in plan.resources if r.name.endswith("-karpenter-crds")]
    for resource in plan.of_type(OVERLAY):
        jsonschema.validate(dict(resource.inputs), schema)
        assert crds.urn in resource.dependencies
    broken = copy.deepcopy(dict(plan.of_type(OVERLAY)[0].inputs))
    broken["spec"]["weight"] = 0  # the CRD's minimum is 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


@pytest.mark.parametrize("overrides", [None, OVERRIDES], ids=["shipped", "shared"])
def test_fit_judges_by_what_karpenter_plans(overrides: dict[str, Any] | None) -> None:
    """Per NodePool: EC2's GPU count of its instance type, replaced by the plan's overlay, is
    the count fit's picture of a new node carries."""
    plan = plan_of(STACK, overrides)
    raw = _shared_raw() if overrides else dict(load_stack(STACK).gpufleet)
    config = parse_config(raw)
    overlays = _overlays(plan)
    aws = CLOUDS["aws"]
    for spec in resolve_pools(config):
        physical = aws.catalog.machine(spec.accelerator, spec.machine_types[0])
        assert physical is not None
        planned = karpenter_pool.planned_gpus(
            physical.gpus, overlays.get(spec.name), spec.gpu_resource
        )
        assert spec.autoscaler_resources[spec.gpu_resource] == planned, spec.name


TWO_SHARES = """
apiVersion: v1
kind: Pod
metadata: {name: two-shares}
spec:
  nodeSelector: {gpufleet.io/pool: l4}
  tolerations: [{operator: Exists}]
  containers:
    - name: main
      resources: {limits: {nvidia.com/gpu: 1}}
    - name: side
      resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_a_pod_asking_for_two_shares_gets_a_node() -> None:
    """Karpenter plans the node with the overlay's count (4 shares), so a pod of two
    containers with one share each fits."""
    config = parse_config(_shared_raw())
    (verdict,) = fit_templates(read_workloads(TWO_SHARES).templates, pool_checks(config))
    (l4,) = [pool for pool in verdict.pools if pool.pool == "l4"]
    assert l4.fits, l4.reasons


GREEDY_CONTAINER = """
apiVersion: v1
kind: Pod
metadata: {name: greedy}
spec:
  nodeSelector: {gpufleet.io/pool: l4}
  tolerations: [{operator: Exists}]
  containers:
    - name: main
      resources: {limits: {nvidia.com/gpu: 2}}
"""


def test_a_container_asking_for_two_shares_never_runs() -> None:
    """Review eks-3.md N21: gpufleet's device plugin config sets failRequestsGreaterThanOne, so
    the node rejects a container asking for more than one shared GPU after it is scheduled."""
    config = parse_config(_shared_raw())
    (verdict,) = fit_templates(read_workloads(GREEDY_CONTAINER).templates, pool_checks(config))
    (l4,) = [pool for pool in verdict.pools if pool.pool == "l4"]
    assert not l4.fits
    (reason,) = l4.reasons
    assert "failRequestsGreaterThanOne" in reason and "at most 1 shared GPU" in reason
    assert "never runs" in reason
    # The plan's device plugin config says what fit assumes.
    planned = json.dumps([r.inputs for r in plan_of(STACK, OVERRIDES).resources])
    assert "failRequestsGreaterThanOne: true" in planned
    assert "failRequestsGreaterThanOne: false" not in planned


def test_a_karpenter_gpufleet_does_not_run_cannot_plan_shared_gpus() -> None:
    raw = copy.deepcopy(dict(load_stack("aws-existing").gpufleet))
    raw["cluster"]["aws"] = {"provisioner": "karpenter"}
    raw["cluster"]["existing"] = {"autoscalerInstalled": True, "karpenterNodeRole": "KarpenterNode"}
    raw["gpuPools"][0]["sharing"] = {"strategy": "time-sharing", "maxSharedClientsPerGpu": 4}
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.startswith("gpuPools[0].sharing: a Karpenter gpufleet does not run")
