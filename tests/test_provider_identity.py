"""The Kubernetes provider's identity (review gke-2.md N1): a new API endpoint or CA updates the
provider of every stack instead of replacing it, and with it every Helm release, namespace and
sample it manages; `diff` shows a provider whose identity changes as the replacement of all of
them, and says what it cannot see."""

from __future__ import annotations

import copy
import dataclasses
import functools
from typing import Any

import pytest

from components.model.catalog.provider_changes import (
    ACTIVE_CLUSTER,
    CLUSTER_IDENTIFIER,
    KUBERNETES_PROVIDER,
)
from components.tooling.diff import diff_plans, render_text
from components.tooling.diff_model import PlanDiff
from components.tooling.engine import described_world, plan_stack
from components.tooling.stacks import load_stack, shipped_stacks
from tests.conftest import plan_of

Plan = dict[str, Any]


def _kubeconfig(server: str, ca: str) -> str:
    return (
        "apiVersion: v1\nkind: Config\ncurrent-context: lab-admin\n"
        f"clusters:\n- name: lab\n  cluster: {{server: '{server}', "
        f"certificate-authority-data: {ca}}}\n"
        "contexts:\n- name: lab-admin\n  context: {cluster: lab, user: admin}\n"
        "users:\n- name: admin\n  user: {token: t}\n"
    )


# `cloud: existing` takes its kubeconfig from config: the owner's file before and after the
# cluster's certificate rotation and move behind a new load balancer.
EXISTING_BEFORE = {"gpufleet:kubeconfig": _kubeconfig("https://10.0.0.1:6443", "Q0EtMQ==")}
EXISTING_AFTER = {"gpufleet:kubeconfig": _kubeconfig("https://lab.example.com:6443", "Q0EtMg==")}


@functools.cache
def _rotated(stack: str) -> Plan:
    """The stack's plan once every cluster presents another endpoint and CA."""
    if load_stack(stack).gpufleet["cloud"] == "existing":
        return plan_of(stack, EXISTING_AFTER).to_json()
    file = load_stack(stack)
    world = dataclasses.replace(described_world(file.config), endpoint_rotated=True)
    return plan_stack(file, world=world).to_json()


def _before(stack: str) -> Plan:
    if load_stack(stack).gpufleet["cloud"] == "existing":
        return plan_of(stack, EXISTING_BEFORE).to_json()
    return plan_of(stack).to_json()


def _kubernetes_resources(plan: Plan) -> list[dict[str, Any]]:
    providers = {r["urn"] for r in plan["resources"] if r["type"] == KUBERNETES_PROVIDER}
    return [
        r
        for r in plan["resources"]
        if isinstance(r.get("provider"), str) and r["provider"].rsplit("::", 1)[0] in providers
    ]


def _provider(plan: Plan) -> dict[str, Any]:
    """The stack's provider (not the sibling that adopts queue namespaces)."""
    (provider,) = [
        r
        for r in plan["resources"]
        if r["type"] == KUBERNETES_PROVIDER and "upsertExistingObjects" not in r["inputs"]
    ]
    return provider


@pytest.mark.parametrize("stack", shipped_stacks())
def test_a_new_endpoint_and_ca_replace_no_kubernetes_resource(stack: str) -> None:
    before, after = _before(stack), _rotated(stack)
    moved = _provider(before)[ACTIVE_CLUSTER] != _provider(after)[ACTIVE_CLUSTER]
    assert moved, "the rotation reaches the provider's kubeconfig"
    diff = diff_plans(before, after)
    providers = [c for c in diff.changed if c.type == KUBERNETES_PROVIDER]
    # The stack's provider and, with queue namespaces, its adopting sibling: both updated.
    assert len(providers) == len(
        [r for r in after["resources"] if r["type"] == KUBERNETES_PROVIDER]
    )
    for provider in providers:
        assert provider.verdict == "update", (provider.name, provider.replace_paths)
    assert not diff.replaced, [(c.name, c.replace_paths) for c in diff.replaced]


def test_every_cluster_kind_has_a_stable_identity() -> None:
    """Created and adopted clusters on every cloud, and `cloud: existing`, name the cluster
    (not its endpoint) as the provider's identity."""
    identities = {
        stack: _provider(_before(stack))["inputs"].get(CLUSTER_IDENTIFIER)
        for stack in (
            *("gcp-dev", "gcp-existing", "aws-dev", "aws-existing"),
            *("azure-dev", "azure-existing", "existing-dev"),
        )
    }
    assert identities == {
        "gcp-dev": "projects/mock-project/locations/us-central1/clusters/gpufleet-dev",
        "gcp-existing": (
            "projects/platform-prod-project/locations/us-central1/clusters/platform-prod"
        ),
        "aws-dev": "https://oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF0123456789ABCDEF",
        "aws-existing": (
            "https://oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF0123456789ABCDEF"
        ),
        "azure-dev": "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/"
        "gpufleet-dev-rg/providers/Microsoft.ContainerService/managedClusters/gpufleet-dev",
        "azure-existing": "resourceGroups/platform-prod-rg/providers/"
        "Microsoft.ContainerService/managedClusters/platform-prod",
        "existing-dev": "lab",
    }


def test_gke_ip_access_rotates_the_ca_without_replacing_anything() -> None:
    """In `controlPlaneAccess: ip` the kubeconfig carries the cluster's CA: a credential
    rotation gives a new IP and CA (review gke-2.md N1, trigger 3)."""
    ip = {"gpufleet:cluster": {**load_stack("gcp-dev").gpufleet["cluster"]}}
    ip["gpufleet:cluster"]["gcp"] = {**ip["gpufleet:cluster"]["gcp"], "controlPlaneAccess": "ip"}
    file = load_stack("gcp-dev")
    world = dataclasses.replace(described_world(file.config), endpoint_rotated=True)
    rotated = plan_stack(file, ip, world).to_json()
    diff = diff_plans(plan_of("gcp-dev", ip).to_json(), rotated)
    (provider,) = [c for c in diff.changed if c.type == KUBERNETES_PROVIDER]
    assert {c.path for c in provider.changes} == {
        f"{ACTIVE_CLUSTER}.server",
        f"{ACTIVE_CLUSTER}.sha256",
    }
    assert not diff.replaced


def _without_identity(plan: Plan) -> Plan:
    plan = copy.deepcopy(plan)
    _provider(plan)["inputs"].pop(CLUSTER_IDENTIFIER)
    return plan


def _replaced_kubernetes(diff: PlanDiff) -> set[str]:
    return {c.urn for c in diff.replaced if c.type != KUBERNETES_PROVIDER}


def test_without_an_identity_a_new_endpoint_replaces_everything_the_provider_manages() -> None:
    """pulumi-kubernetes' old rule, which every provider followed before: a changed active
    cluster replaces the provider, and every resource it manages is replaced with it."""
    before, after = _before("gcp-existing"), _rotated("gcp-existing")
    diff = diff_plans(_without_identity(before), _without_identity(after))
    (provider,) = [c for c in diff.changed if c.type == KUBERNETES_PROVIDER]
    assert provider.replace_paths == ("kubeconfig",)
    managed = {r["urn"] for r in _kubernetes_resources(after)}
    assert managed and _replaced_kubernetes(diff) == managed
    text = render_text(diff)
    assert "!! REPLACES kubernetes:core/v1:Namespace platform-prod-samples-ns: provider" in text
    assert "every Helm release, namespace and object it manages" in text


def test_a_changed_identity_replaces_everything_the_provider_manages() -> None:
    before = _before("gcp-existing")
    after = copy.deepcopy(before)
    _provider(after)["inputs"][CLUSTER_IDENTIFIER] = "projects/p/locations/l/clusters/other"
    diff = diff_plans(before, after)
    (provider,) = [c for c in diff.changed if c.type == KUBERNETES_PROVIDER]
    assert provider.replace_paths == (CLUSTER_IDENTIFIER,)
    assert _replaced_kubernetes(diff) == {r["urn"] for r in _kubernetes_resources(after)}


def test_a_plan_that_cannot_show_the_active_cluster_is_said_not_passed() -> None:
    """A plan from an older gpufleet has no identity and no visible active cluster: the first
    `up` adds the identity, and replaces everything if the endpoint moves in the same `up`."""
    old = _without_identity(_before("gcp-dev"))
    _provider(old).pop(ACTIVE_CLUSTER)
    diff = diff_plans(old, _before("gcp-dev"))
    (provider,) = [c for c in diff.changed if c.type == KUBERNETES_PROVIDER]
    assert provider.verdict == "update"
    (note,) = provider.notes
    assert "does not show its active cluster" in note
    assert "clusterIdentifier it gains only protects the provider from the next `up` on" in note
    assert "docs/upgrading-gpufleet.md" in note
    assert f"    note: {note}" in render_text(diff)
