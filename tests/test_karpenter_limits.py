"""A Karpenter or Auto Mode NodePool's `limits` let it launch exactly `maxNodes` nodes of the
pool's largest instance type, and not one more (issue 30, "Tests that a broken line fails": only a
snapshot noticed a limit of one node). Karpenter launches no node whose capacity would take a
NodePool past any of its limits (Karpenter docs, concepts/nodepools "Limits"), and counts a node's
memory as the instance's less `vmMemoryOverheadPercent`; each limit is checked against the
catalog's figures for the pool's types, so a limit computed from the wrong type, the wrong count
or the wrong resource fails here."""

from __future__ import annotations

import re
from typing import Any

from components.aws.model import karpenter
from components.model.registry import CLOUDS
from components.tooling.engine import Plan
from components.tooling.stacks import load_stack
from tests.conftest import over_every_stack, plan_of

NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"


def _gib(quantity: str) -> float:
    number, unit = re.fullmatch(r"(\d+)(Gi|Mi)", quantity).groups()  # type: ignore[union-attr]
    return int(number) / (1024 if unit == "Mi" else 1)


def _node_pools(plan: Plan) -> list[dict[str, Any]]:
    return [dict(r.inputs) for r in plan.of_type(NODE_POOL)]


def _types(pool: dict[str, Any]) -> list[str]:
    requirements = {r["key"]: r["values"] for r in pool["spec"]["template"]["spec"]["requirements"]}
    return list(requirements[INSTANCE_TYPE])


def _largest(pool: dict[str, Any], accelerator: str, cloud: str) -> tuple[int, float]:
    """vCPUs and memory (GiB) of the pool's largest type, from the cloud's catalog (EKS's
    Karpenter and Auto Mode, AKS node auto-provisioning)."""
    catalog = CLOUDS[cloud].catalog
    assert catalog is not None
    machines = [catalog.machine(accelerator, name) for name in _types(pool)]
    assert all(machines), _types(pool)
    return max(m.vcpus for m in machines if m), max(m.memory_gib for m in machines if m)


def _check(plan: Plan) -> int:
    outputs = {p["name"]: p for p in plan.outputs["gpuPools"]}
    checked = 0
    for pool in _node_pools(plan):
        contract = outputs[pool["metadata"]["name"]]
        max_nodes = contract["maxNodes"]
        vcpus, memory = _largest(pool, contract["accelerator"], contract["cloud"])
        limits = pool["spec"]["limits"]
        cpu, mem = int(limits["cpu"]), _gib(limits["memory"])
        gpu_limit = int(limits[contract["gpuResource"]])
        per_node_gpus = contract["allocatablePerNode"][contract["gpuResource"]]
        # Exactly maxNodes of the largest type by each resource, on the nominal figures...
        assert cpu // vcpus == max_nodes, (pool["metadata"], cpu, vcpus, max_nodes)
        assert int(mem // memory) == max_nodes, (pool["metadata"], mem, memory, max_nodes)
        assert gpu_limit // per_node_gpus == max_nodes, (pool["metadata"], gpu_limit)
        # ...and Karpenter's own count of a node's memory never stops it before maxNodes.
        capacity = memory * (1 - karpenter.VM_MEMORY_OVERHEAD)
        assert mem >= max_nodes * capacity
        checked += 1
    return checked


def test_the_example_node_pools_allow_max_nodes_of_the_largest_type() -> None:
    """aws-karpenter's l4 pool lists two sizes: the limits follow the larger."""
    plan = plan_of("aws-karpenter")
    assert _check(plan) == 2
    l4 = next(p for p in _node_pools(plan) if p["metadata"]["name"] == "l4")
    assert len(_types(l4)) > 1


def test_more_nodes_raise_every_limit_with_them() -> None:
    raw = load_stack("aws-karpenter").gpufleet
    pools = [{**pool, "maxNodes": pool["maxNodes"] * 3} for pool in raw["gpuPools"]]
    plan = plan_of("aws-karpenter", {"gpufleet:gpuPools": pools})
    assert _check(plan) == 2
    assert {p["maxNodes"] for p in plan.outputs["gpuPools"]} >= {6}


@over_every_stack
def test_every_node_pool_allows_max_nodes_of_its_largest_type(stack: str) -> None:
    _check(plan_of(stack))
