"""A pool in a capacity reservation group waits until the control plane's new grant works.

AKS places a pool's VMs in the group as the control plane's identity, which needs Contributor on
the group's resource group, and "It can take up to _60 minutes_ for the role assignment to
propagate" (aks/use-capacity-reservation-groups): a pool created right after its new grant
fails (reviews capacity-cost-3 N-S1-1, aks-3 N-1). So a pool AKS creates, on a first `up` or
moved to a group in another resource group, gets its group only once that grant is 60 minutes
old (components/azure/rbac.py); a pool that exists waits for nothing; `plan` and `diff` say so.

The mock cloud reports each grant created now (`World.grants_created_on`), and the waits are
recorded instead of slept.
"""

from __future__ import annotations

import copy
import dataclasses
from datetime import UTC, datetime
from typing import Any

import pytest

from components.azure import rbac
from components.azure.model.rbac import PROPAGATION, RESERVATION_GRANT_PROPAGATION
from components.tooling.diff import diff_plans, render_text
from components.tooling.engine import Plan, RecordedResource, described_world, plan_stack
from components.tooling.stacks import load_stack
from tests.conftest import plan_of
from tests.test_aks_upgrades import created_pools

STACK = "azure-reserved"
AGENT_POOL = "azure-native:containerservice:AgentPool"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
GRANT = "gpufleet-reserved-reservations-gpu-reservations"
MOVED_GRANT = "gpufleet-reserved-reservations-gpu-reservations-2"


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits the program would sleep, in seconds."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(rbac, "sleep", sleep)
    return slept


def moved_raw() -> dict[str, Any]:
    """azure-reserved with its reserved pool's group in another resource group."""
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    pool = raw["gpuPools"][0]["azure"]
    pool["capacityReservationGroupId"] = pool["capacityReservationGroupId"].replace(
        "/resourceGroups/gpu-reservations/", "/resourceGroups/gpu-reservations-2/"
    )
    return raw


def planned(raw: dict[str, Any] | None = None, running: bool = False) -> Plan:
    """The stack's `up` with every grant created now: a first `up`, or (`running`) one on the
    cluster its first `up` created."""
    stack = load_stack(STACK)
    overrides = {f"gpufleet:{k}": v for k, v in raw.items()} if raw else None
    world = dataclasses.replace(
        described_world({**stack.config, **(overrides or {})}),
        grants_created_on=datetime.now(UTC).isoformat(),
    )
    if running:
        world = dataclasses.replace(
            world,
            exists=True,
            kubernetes_version="1.35.4",
            agent_pools=created_pools(plan_of(STACK)),
        )
    return plan_stack(stack, overrides, world)


def named(plan: Plan, name: str) -> RecordedResource:
    (found,) = [r for r in plan.resources if r.name == name]
    return found


def input_sources(resource: RecordedResource) -> set[str]:
    """The URNs the resource's inputs come from (its dependencies less the explicit ones)."""
    return set(resource.dependencies) - set(resource.depends_on)


def minutes(seconds: list[float]) -> list[int]:
    return sorted(round(s / 60) for s in seconds)


def test_a_first_up_creates_the_reserved_pool_only_once_its_new_grant_has_propagated(
    waits: list[float],
) -> None:
    plan = planned()
    grant, a100 = named(plan, GRANT), named(plan, "gpufleet-reserved-a100-pool")
    # The pool's group is an input that comes from the grant, not an order alone: Pulumi sends
    # the pool only once the value is there.
    assert grant.urn in input_sources(a100)
    assert grant.urn not in input_sources(named(plan, "gpufleet-reserved-train-pool"))
    # The reserved pool's 60 minutes, and the Kubernetes provider's 5 for the deployer's grant.
    hour, five = (
        RESERVATION_GRANT_PROPAGATION.total_seconds(),
        PROPAGATION.total_seconds(),
    )
    assert minutes(waits) == [5, 60]
    assert hour - 60 < max(waits) <= hour and five - 60 < min(waits) <= five


def test_moving_a_reserved_pool_to_another_resource_group_waits_for_its_new_grant(
    waits: list[float],
) -> None:
    plan = planned(moved_raw(), running=True)
    a100 = named(plan, "gpufleet-reserved-a100-pool")
    assert named(plan, MOVED_GRANT).urn in input_sources(a100)
    # The pool is created anew in the new group (it gets a count), 60 minutes after the grant.
    assert "count" in a100.inputs
    assert minutes(waits) == [5, 60]


def test_a_pool_that_exists_waits_for_no_grant(waits: list[float]) -> None:
    plan = planned(running=True)
    a100 = named(plan, "gpufleet-reserved-a100-pool")
    assert "count" not in a100.inputs  # kept: nothing of the pool is created
    assert not [urn for urn in input_sources(a100) if ROLE_ASSIGNMENT in urn]
    assert minutes(waits) == [5]  # the deployer's grant alone, before Kubernetes


def test_plan_and_diff_say_the_pool_waits_for_its_new_grant() -> None:
    (warning,) = [w for w in plan_of(STACK).warnings if "group a100-eastus2 share" in w]
    assert "creates the pool only once the grant is 60 minutes old" in warning
    # A move: the replaced pool says it waits for the new grant, and for how long.
    moved = plan_of(STACK, {f"gpufleet:{k}": v for k, v in moved_raw().items()})
    diff = diff_plans(plan_of(STACK).to_json(), moved.to_json())
    (pool,) = [c for c in diff.changed if c.type == AGENT_POOL]
    assert pool.verdict == "replace"
    (note,) = pool.notes
    assert note.startswith(f"waits for the new grant {MOVED_GRANT}:")
    assert "60 minutes" in note and "keeps running until then" in note
    # A reserved pool added to a running stack: the added pool says it.
    without = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    without["gpuPools"] = without["gpuPools"][1:]
    added = diff_plans(
        plan_of(STACK, {"gpufleet:gpuPools": without["gpuPools"]}).to_json(),
        plan_of(STACK).to_json(),
    )
    (ref,) = [r for r in added.added if r.type == AGENT_POOL]
    (note,) = ref.notes
    assert note.startswith(f"waits for the new grant {GRANT}:")
    assert f"        note: {note}" in render_text(added).splitlines()
    # Nothing waits where no grant is new.
    same = diff_plans(plan_of(STACK).to_json(), plan_of(STACK).to_json())
    assert not [c.notes for c in same.changed if c.notes]


def test_a_preview_never_waits_for_a_grant(
    waits: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pulumi preview` after an interrupted first `up` knows the grant's createdOn: it must not
    sleep the hour out (review aks-4 R4-3). The mocks run as an `up`, so the preview is said."""
    import pulumi

    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: True)
    planned()
    assert waits == []
