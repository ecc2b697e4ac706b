"""What an EKS node really leaves pods (review eks-2.md N10), on the whole graph: kube-proxy's
request is counted, a managed node group's maxPods cap applies, and memory is what a node
reports, not the instance type's nominal figure."""

from __future__ import annotations

import copy

from components.aws.model import allocatable as eks
from components.model.allocatable import GIB, MIB
from components.model.registry import CLOUDS
from components.tooling.scheduling import quantity
from components.tooling.stacks import load_stack
from tests.conftest import plan_of


def _outputs(stack: str, pools: list[dict[str, object]] | None = None) -> dict[str, dict]:
    overrides = {"gpufleet:gpuPools": pools} if pools is not None else None
    return {p["name"]: p for p in plan_of(stack, overrides).outputs["gpuPools"]}


def test_a_managed_group_of_large_nodes_runs_at_most_250_pods() -> None:
    pools = copy.deepcopy(load_stack("aws-training").gpufleet["gpuPools"])
    pools[1]["aws"] = {**pools[1]["aws"], "nodeGroup": "managed"}  # p4d.24xlarge: ENIs for 737
    outputs = _outputs("aws-training", pools)
    managed = outputs["a100-spot"]["allocatablePerNode"]
    self_managed = _outputs("aws-training")["a100-spot"]["allocatablePerNode"]
    # Both run aws-node, kube-proxy and the node's other DaemonSets; only the cap differs.
    assert int(self_managed["pods"]) - int(managed["pods"]) == 737 - 250
    assert managed["memory"] == self_managed["memory"]  # nodeadm reserves for its ENI figure


def test_every_eks_pool_counts_kube_proxy_and_the_real_memory() -> None:
    catalog = CLOUDS["aws"].catalog
    for stack in ("aws-dev", "aws-training", "aws-karpenter"):
        for pool in _outputs(stack).values():
            # Karpenter's pools are sized by their largest type, the others by the first.
            name = pool["machineTypes"][-1 if stack == "aws-karpenter" else 0]
            machine = catalog.machine(pool["accelerator"], name)
            assert machine is not None
            allocatable = pool["allocatablePerNode"]
            assert int(allocatable["pods"]) < eks.MAX_PODS[name]  # DaemonSets, kube-proxy's too
            # What a node reports, 92.5% of the nominal memory, less nodeadm's reservation.
            reported = machine.memory_gib * GIB * (1 - eks.NOMINAL_MEMORY_GAP)
            memory = quantity.memory_bytes(allocatable["memory"])
            assert reported - 10 * GIB < memory <= reported, (stack, pool["name"])
    t4 = _outputs("aws-dev")["t4-spot"]["allocatablePerNode"]
    # 3920m after nodeadm's reservation, less aws-node's 25m and kube-proxy's 100m.
    assert t4["cpu"] == "3795m"
    assert quantity.memory_bytes(t4["memory"]) // MIB == 14481
