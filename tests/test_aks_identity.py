"""Who may use an Entra ID AKS cluster's API, and when (review aks.md F3, D3, F5).

The deployer's AKS RBAC Cluster Admin grant sends no guessed principal type, stays with one
identity instead of following whoever ran `up` last, and the Kubernetes provider waits until
Azure RBAC can have propagated it, so a first `up` does not meet 403 on its first Namespace.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pulumi
import pytest

from components.azure import rbac
from components.azure.model.rbac import PROPAGATION, remaining_wait
from components.tooling.engine import RecordedResource
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
PINNED = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


def deployer_grant(stack: str, **azure: Any) -> RecordedResource:
    cluster = dict(load_stack(stack).gpufleet["cluster"])
    cluster["azure"] = {**cluster["azure"], **azure}
    plan = plan_of(stack, {"gpufleet:cluster": cluster} if azure else None)
    (grant,) = [
        r for r in plan.of_type(ROLE_ASSIGNMENT) if r.name.endswith("-deployer-cluster-admin")
    ]
    return grant


@pytest.mark.parametrize("stack", ["azure-dev", "azure-a100-mig"])
def test_no_principal_type_is_guessed_and_the_grant_does_not_follow_the_last_runner(
    stack: str,
) -> None:
    grant = deployer_grant(stack)
    # azure-dev signs in with the az CLI, azure-a100-mig as a workload identity: neither says
    # whether a person or a service principal runs `up`, so ARM is left to tell (F3).
    assert "principalType" not in grant.inputs
    # Whoever ran the first `up` keeps the grant; a teammate's or CI's run changes nothing (D3).
    assert set(grant.ignore_changes) == {"principalId", "principalType"}


def test_a_pinned_deployer_is_granted_exactly_as_configured() -> None:
    grant = deployer_grant("azure-dev", deployerObjectId=PINNED, deployerPrincipalType="Group")
    assert (grant.inputs["principalId"], grant.inputs["principalType"]) == (PINNED, "Group")
    assert grant.ignore_changes == ()


@pytest.mark.parametrize(
    ("age", "wait"),
    [(timedelta(0), PROPAGATION), (timedelta(minutes=4), timedelta(minutes=1)), (PROPAGATION, timedelta(0)), (timedelta(days=30), timedelta(0))],
)  # fmt: skip
def test_the_wait_lasts_until_the_grant_is_five_minutes_old(
    age: timedelta, wait: timedelta
) -> None:
    now = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
    created = (now - age).strftime("%Y-%m-%dT%H:%M:%S.1234567Z")  # ARM's seven digits
    assert remaining_wait(created, now) == pytest.approx(wait.total_seconds(), abs=0.2)
    assert remaining_wait(None, now) == remaining_wait("not a date", now) == 0


def test_the_kubeconfig_is_held_back_until_a_new_grant_has_propagated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the Kubernetes provider gets: the kubeconfig, once the grant is five minutes old
    (never in a preview, and at once for an old grant)."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(rbac, "sleep", sleep)
    monkeypatch.setattr(rbac.pulumi.runtime, "is_dry_run", lambda: False)

    class Grant:
        def __init__(self, age: timedelta) -> None:
            created = (datetime.now(UTC) - age).isoformat()
            self.created_on = pulumi.Output.from_input(created)

    got = []

    @pulumi.runtime.test
    def resolve() -> pulumi.Output[str]:
        fresh = rbac.wait_for_propagation(pulumi.Output.from_input("kubeconfig"), [Grant(timedelta(minutes=1))])  # type: ignore[list-item]  # fmt: skip
        old = rbac.wait_for_propagation(pulumi.Output.from_input("kubeconfig"), [Grant(timedelta(hours=1))])  # type: ignore[list-item]  # fmt: skip
        return pulumi.Output.all(fresh, old).apply(got.extend)

    resolve()
    assert got == ["kubeconfig", "kubeconfig"]
    (wait,) = slept
    assert 235 < wait <= 240
