"""The control plane's grants that exist already (review aks-3 N1): ARM refuses a second
assignment of a role to a principal at a scope (409 RoleAssignmentExists), so a grant made by
AKS's prerequisite steps, an administrator or another stack is named in
`cluster.azure.grantsMadeElsewhere` and gpufleet creates only the others, deployer's included,
saying in plan what it leaves out."""

from __future__ import annotations

from typing import Any

import pytest

from components.model.config import ConfigError, parse_config
from components.tooling.diff import diff_plans, render_text
from components.tooling.engine import Plan
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
IDENTITY = load_stack("azure-reserved").config["gpufleet:cluster"]["azure"][
    "controlPlaneIdentityId"
]


def cluster_with(stack: str, **azure: Any) -> dict[str, Any]:
    cluster = dict(load_stack(stack).config["gpufleet:cluster"])
    cluster["azure"] = {**cluster["azure"], **azure}
    return cluster


def grants(plan: Plan) -> set[str]:
    """The role assignments' names."""
    return {r.name for r in plan.of_type(ROLE_ASSIGNMENT)}


def test_a_reservation_grant_made_elsewhere_is_not_made_again_and_plan_says_so() -> None:
    made = plan_of("azure-reserved")
    assert grants(made) == {
        "gpufleet-reserved-subnet-network-contributor",
        "gpufleet-reserved-reservations-gpu-reservations",
        "gpufleet-reserved-deployer-cluster-admin",
    }
    plan = plan_of(
        "azure-reserved",
        {
            "gpufleet:cluster": cluster_with(
                "azure-reserved", grantsMadeElsewhere=["reservation-groups"]
            )
        },
    )
    assert grants(plan) == {
        "gpufleet-reserved-subnet-network-contributor",
        "gpufleet-reserved-deployer-cluster-admin",
    }
    (skipped,) = [w for w in plan.warnings if w.startswith("cluster.azure.grantsMadeElsewhere")]
    assert "Contributor on the resource group of each capacity reservation group" in skipped
    assert "not checked" in skipped
    (pool,) = [w for w in plan.warnings if "group a100-eastus2 share" in w]
    assert "gpu-reservations is made elsewhere" in pool
    assert "must be at least 60 minutes old" in pool and "creates the pool only once" not in pool
    # The reserved pool no longer waits for a grant of gpufleet's.
    (a100,) = [r for r in plan.resources if r.name == "gpufleet-reserved-a100-pool"]
    assert not [d for d in a100.dependencies if "reservations-gpu-reservations" in d]


def test_a_subnet_grant_made_elsewhere_is_not_made_again_and_the_deployer_grant_stays() -> None:
    cluster = cluster_with(
        "azure-a100-mig",
        controlPlaneIdentityId=IDENTITY,
        grantsMadeElsewhere=["subnet", "reservation-groups"],
    )
    plan = plan_of("azure-a100-mig", {"gpufleet:cluster": cluster})
    assert grants(plan) == {"ml-prod-deployer-cluster-admin"}
    skipped = [w for w in plan.warnings if w.startswith("cluster.azure.grantsMadeElsewhere")]
    assert len(skipped) == 2
    assert any("Network Contributor on the node subnet" in w for w in skipped)


@pytest.mark.parametrize(
    ("stack", "azure", "says"),
    [
        # A system-assigned identity is new with the cluster: no grant of it exists yet.
        ("azure-a100-mig", {"grantsMadeElsewhere": ["subnet"]}, "user-assigned"),
        (
            "azure-reserved",
            {"grantsMadeElsewhere": ["reservation-groups"], "roleAssignments": False},
            "roleAssignments false already",
        ),
        # gpufleet creates this stack's subnet: nobody can have granted anything on it.
        ("azure-reserved", {"grantsMadeElsewhere": ["subnet"]}, "remove subnet"),
        ("azure-reserved", {"grantsMadeElsewhere": ["vnet"]}, ""),
    ],
)
def test_a_grant_that_cannot_exist_yet_is_refused(
    stack: str, azure: dict[str, Any], says: str
) -> None:
    raw = dict(load_stack(stack).gpufleet)
    raw["cluster"] = cluster_with(stack, **azure)
    with pytest.raises(ConfigError) as error:
        parse_config(raw)
    problems = [p for p in error.value.problems if "grantsMadeElsewhere" in p.path]
    assert problems, error.value.problems
    assert any(says in p.message for p in problems)


def test_the_control_plane_grants_stay_in_azure_when_they_leave_the_stack() -> None:
    """Handing a grant over (grantsMadeElsewhere on a running stack) or removing the reserved
    pool only makes Pulumi forget it: ARM holds one assignment per principal, role and scope,
    so deleting gpufleet's would revoke the only grant the cluster uses (review aks-4 A4-3)."""
    made = plan_of("azure-reserved")
    kept = {
        r.name: r.to_json()["options"].get("retainOnDelete", False)
        for r in made.of_type(ROLE_ASSIGNMENT)
    }
    assert kept == {
        "gpufleet-reserved-subnet-network-contributor": True,
        "gpufleet-reserved-reservations-gpu-reservations": True,
        # Scoped to the cluster: it goes with the cluster.
        "gpufleet-reserved-deployer-cluster-admin": False,
    }
    handed_over = plan_of(
        "azure-reserved",
        {
            "gpufleet:cluster": cluster_with(
                "azure-reserved", grantsMadeElsewhere=["reservation-groups"]
            )
        },
    )
    assert "gpufleet-reserved-reservations-gpu-reservations" not in grants(handed_over)


def test_diff_shows_a_handed_over_grant_as_forgotten_not_deleted() -> None:
    """review aks-4 A4-6: a kept grant leaving the stack is not a deletion."""
    before = plan_of("azure-reserved").to_json()
    after = plan_of(
        "azure-reserved",
        {
            "gpufleet:cluster": cluster_with(
                "azure-reserved", grantsMadeElsewhere=["reservation-groups"]
            )
        },
    ).to_json()
    diff = diff_plans(before, after)
    (removed,) = diff.removed
    assert removed.name == "gpufleet-reserved-reservations-gpu-reservations" and removed.kept
    text = render_text(diff)
    assert (
        "- azure-native:authorization:RoleAssignment gpufleet-reserved-reservations-gpu-"
        "reservations (leaves the stack, kept in the cloud" in text
    )
    assert "0 to delete; 1 to forget, kept in the cloud" in text


def test_the_reservation_grant_warning_says_its_whole_scope_and_that_it_stays() -> None:
    """The Contributor grant AKS asks for covers the whole resource group and is kept in Azure
    after the stack goes (review security-1 SEC-8): plan says both, and what to do."""
    (pool,) = [w for w in plan_of("azure-reserved").warnings if "group a100-eastus2 share" in w]
    assert "covers everything in that group" in pool and "stays after the stack goes" in pool
    assert "keep that group for capacity reservation groups only" in pool
