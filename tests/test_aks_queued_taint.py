"""An AKS queued pool's own taint (review aks-3 N15): on AKS a queued pool is an ordinary
autoscaled scale set, so only a taint keeps pods that tolerate the GPU taint (AKS's GPU guide
puts `sku=gpu` in every example) off the nodes added for an admitted Job. The pool's Kueue
ResourceFlavor tolerates it, so the Jobs Kueue admits land there; the GPU software tolerates it.
"""

from __future__ import annotations

from typing import Any

from components.azure.model.reservations import QUEUED_TAINT_KEY
from tests.conftest import plan_of
from tests.test_aks_capacity import _fit
from tests.test_kueue import kueue_objects

STACK = "azure-reserved"
OWN = {"key": QUEUED_TAINT_KEY, "value": "train", "effect": "NoSchedule"}


def pools() -> dict[str, Any]:
    return {
        r.inputs["agentPoolName"]: r
        for r in plan_of(STACK).of_type("azure-native:containerservice:AgentPool")
    }


def test_the_queued_pool_alone_carries_its_own_taint_and_its_flavor_tolerates_it() -> None:
    agent_pools = pools()
    assert f"{QUEUED_TAINT_KEY}=train:NoSchedule" in agent_pools["train"].inputs["nodeTaints"]
    assert not [t for t in agent_pools["a100"].inputs["nodeTaints"] if QUEUED_TAINT_KEY in t]
    plan = plan_of(STACK)
    (flavor,) = [r for k, r in kueue_objects(plan).items() if k[0] == "ResourceFlavor"]
    assert OWN in flavor.inputs["spec"]["nodeTaints"]
    assert {**OWN, "operator": "Equal"} in flavor.inputs["spec"]["tolerations"]
    # The device plugin must run on those nodes, or they advertise no GPU.
    (plugin,) = [
        r
        for r in plan.of_type("kubernetes:helm.sh/v3:Release")
        if r.inputs["chart"].endswith("nvidia-device-plugin")
    ]
    assert {**OWN, "operator": "Equal"} in plugin.inputs["values"]["tolerations"]


def test_a_pod_that_only_tolerates_the_gpu_taint_stays_off_the_queued_pool() -> None:
    # Through the queue (Kueue adds the flavor's tolerations) the Job fits...
    assert _fit("train", 4, 4, queued=True).fits
    # ...a pod with only AKS's GPU toleration and no queue label does not take its nodes.
    bypass = _fit("train", 1, 4)
    assert not bypass.fits
    assert any(QUEUED_TAINT_KEY in reason for reason in bypass.reasons), bypass.reasons
