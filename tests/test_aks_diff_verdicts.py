"""`diff`'s verdicts on AKS changes the third review found wrong or unsaid (review aks-3).

* N-4: a RoleAssignment's `principalId` or `scope` cannot be updated (ARM:
  RoleAssignmentUpdateNotPermitted): pulumi-azure-native replaces it, making the new grant first.
* N-6: AKS's autoscaler brings a pool up to a raised `minCount` at once.
* N-3: a node a PDB keeps busy fails the upgrade, and AKS shows the whole cluster as Failed.
* Same-minor `orchestratorVersion` (issue 30, tests that a broken line fails): naming the minor a
  pool runs upgrades nothing, so it is never `~ ROLLS`.

Most cases are plans built by hand (tests/test_diff.py's helpers) so each shows the one input
that changes; the hand-over of the deployer's grant is diffed on azure-dev's whole graph.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.tooling.diff import PlanDiff, ResourceChange, diff_plans, render_text
from components.tooling.stacks import load_stack
from tests.conftest import plan_of
from tests.test_diff import AKS_POOL, aks_pool, one_change

ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
DEPLOYMENT = "azure-native:resources:Deployment"
SYSTEM = "properties.template.resources.systemPool.properties"
PINNED = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


def grant(**inputs: Any) -> dict[str, Any]:
    return {
        "principalId": "22222222-2222-2222-2222-222222222222",
        "roleDefinitionId": "/subscriptions/s/providers/Microsoft.Authorization/roleDefinitions/r",
        "scope": "/subscriptions/s/resourceGroups/gpu-reservations",
        **inputs,
    }


@pytest.mark.parametrize(
    "change",
    [
        {"principalId": PINNED},
        {"scope": "/subscriptions/s/resourceGroups/other"},
    ],
)
def test_a_grants_principal_or_scope_change_replaces_it_and_loses_no_access(
    change: dict[str, Any],
) -> None:
    result = one_change(ROLE_ASSIGNMENT, grant(), grant(**change), deleteBeforeReplace=False)
    assert result.verdict == "replace"
    assert result.replace_paths == tuple(change)
    assert result.downtime.startswith("nothing: the new grant is made first")
    # Its role is updated in place (ARM lets roleDefinitionId change).
    other_role = grant(roleDefinitionId=grant()["roleDefinitionId"] + "2")
    assert one_change(ROLE_ASSIGNMENT, grant(), other_role).verdict == "update"


def test_handing_the_deployer_grant_to_a_fixed_identity_replaces_it() -> None:
    """docs/aks.md: set deployerObjectId and "the grant is replaced once"; diff said update."""
    stack = "azure-dev"
    cluster = copy.deepcopy(dict(load_stack(stack).gpufleet["cluster"]))
    # The same variant test_aks_identity plans (plans are cached per variant).
    cluster["azure"] = {
        **cluster["azure"],
        "deployerObjectId": PINNED,
        "deployerPrincipalType": "Group",
    }
    diff = diff_plans(
        plan_of(stack).to_json(), plan_of(stack, {"gpufleet:cluster": cluster}).to_json()
    )
    (change,) = [c for c in diff.changed if c.type == ROLE_ASSIGNMENT]
    assert change.name.endswith("-deployer-cluster-admin")
    assert change.verdict == "replace" and "principalId" in change.replace_paths
    # The Kubernetes provider waits for the new grant (components/azure/rbac.py): said on it.
    (note,) = change.notes
    assert note.startswith("pulumi:providers:kubernetes ")
    assert "waits for it" in note and "five minutes" in note
    assert not diff.rejected


@pytest.mark.parametrize(
    ("before", "after", "starts"),
    [(0, 1, True), (1, 3, True), (2, 1, False), (1, 0, False)],
)
def test_a_raised_min_nodes_says_aks_starts_nodes_now(
    before: int, after: int, starts: bool
) -> None:
    change = one_change(AKS_POOL, aks_pool(minCount=before), aks_pool(minCount=after))
    assert change.verdict == "update"
    (note,) = [n for n in change.node_notes if n.paths == ("minCount",)]
    assert (note.effect == "starts") is starts
    assert ("enforces a raised minimum at once" in note.says) is starts
    assert ("works within the new bounds" in note.says) is not starts
    # The system pool's deployment says the same of its minimum.
    path = SYSTEM.split(".")

    def system(min_count: int) -> dict[str, Any]:
        inputs: dict[str, Any] = {"minCount": min_count, "maxCount": 3}
        for key in reversed(path):
            inputs = {key: inputs}
        return inputs

    change = one_change(DEPLOYMENT, system(before), system(after))
    (note,) = change.node_notes
    assert (note.effect == "starts") is starts
    assert ("enforces a raised minimum at once" in note.says) is starts


@pytest.mark.parametrize(
    ("before", "after", "rolls"),
    [
        (None, "1.35", False),  # a pool created without one runs the control plane's minor
        ("1.35.2", "1.35", False),  # a recorded patch, then the minor
        ("1.35", "1.36", True),
        ("1.34.9", "1.35", True),
    ],
)
def test_only_another_minor_rolls_a_pool(before: str | None, after: str, rolls: bool) -> None:
    old = aks_pool(**({"orchestratorVersion": before} if before else {}))
    change = one_change(AKS_POOL, old, aks_pool(orchestratorVersion=after))
    assert change.verdict == ("roll" if rolls else "update")
    (note,) = [n for n in change.node_notes if n.paths == ("orchestratorVersion",)]
    assert note.effect == ("rolls" if rolls else "none")
    if rolls:
        # N-3: what a PDB-protected node does to the upgrade, and to the cluster's state.
        assert "whole cluster as Failed" in note.says and "docs/aks.md" in note.says
        assert any(line.startswith("~ ROLLS ") for line in render_text_of(change))
    else:
        assert "upgrades nothing" in note.says


def render_text_of(change: ResourceChange) -> list[str]:
    return render_text(PlanDiff(changed=(change,))).splitlines()
