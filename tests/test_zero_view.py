"""At zero nodes the autoscaler imagines each GPU pool's node; that node must be the real one.

For every GPU pool of every shipped stack: the template the cluster autoscaler builds at zero
(the pool's API object on GKE and AKS and for EKS managed groups, the auto scaling groups' tags
read from the planned graph for EKS self-managed pools) and the node that registers must agree on
the labels pods select by, the taints, and the GPUs the node offers. A disagreement means a pod
that fits a running node never triggers a scale-up, or one is scaled up for nothing.
"""

from __future__ import annotations

import pytest

from components.model.config import parse_config
from components.tooling.pool_views import PoolCheck, pool_checks
from components.tooling.stacks import load_stack
from tests.conftest import every_stack, plan_of

MANAGED = [s for s in every_stack() if load_stack(s).gpufleet["cloud"] != "existing"]


def checks(stack: str) -> list[PoolCheck]:
    config = parse_config(load_stack(stack).gpufleet)
    return [c for c in pool_checks(config, plan_of(stack).resources) if c.kind == "gpu"]


@pytest.mark.every_stack
@pytest.mark.parametrize("stack", MANAGED)
def test_the_autoscalers_node_at_zero_is_the_node_that_registers(stack: str) -> None:
    for check in checks(stack):
        selector = check.spec.pod_scheduling["nodeSelector"]
        for label, view in check.views:
            where = f"{stack}/{check.name} {label}".strip()
            template, node = view.scale_from_zero, view.node
            assert template is not None, f"{where}: the autoscaler cannot see the pool at zero"
            for key, value in selector.items():
                assert template.labels.get(key) == value == node.labels.get(key), (where, key)
            assert set(template.taints) == set(node.taints), where
            gpu = check.spec.gpu_resource
            assert template.allocatable.get(gpu) == node.allocatable.get(gpu), where
            for key in ("topology.kubernetes.io/zone", "node.kubernetes.io/instance-type"):
                assert template.labels.get(key) == node.labels.get(key) or set(
                    template.label_choices.get(key, ())
                ) <= set(node.label_choices.get(key, (node.labels.get(key),))), (where, key)


def test_the_check_fails_when_a_tag_is_wrong() -> None:
    """The comparison above is not vacuous: a shared EKS pool whose GPU tag said the physical
    count (the bug this guards) disagrees with its node."""
    raw = load_stack("aws-dev").gpufleet
    shared = {
        **raw["gpuPools"][1],
        "sharing": {"strategy": "time-sharing", "maxSharedClientsPerGpu": 4},
    }
    config = parse_config({**raw, "gpuPools": [shared]})
    plan = plan_of("aws-dev", {"gpufleet:gpuPools": [shared]})
    gpu_tag = "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"
    resources = []
    for resource in plan.resources:
        if resource.type == "aws:autoscaling/group:Group":
            tags = [
                {**t, "value": "1"} if t["key"] == gpu_tag else t for t in resource.inputs["tags"]
            ]
            resource = type(resource)(
                **{**resource.__dict__, "inputs": {**resource.inputs, "tags": tags}}
            )
        resources.append(resource)
    (check,) = [c for c in pool_checks(config, resources) if c.kind == "gpu"]
    view = check.views[0][1]
    assert view.scale_from_zero is not None
    assert view.scale_from_zero.allocatable["nvidia.com/gpu"] == 1
    assert view.node.allocatable["nvidia.com/gpu"] == 4
