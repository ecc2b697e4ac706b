"""The queues' namespaces on the whole graph: a LocalQueue needs its namespace to exist (the API
server's NamespaceLifecycle admission refuses it otherwise), so on a cluster gpufleet creates the
namespace is created first and kept when the stack or the queue goes; on a cluster it did not
create, plan says the owner must have made it (not checked) and nothing of the owner's is
touched. Since its first `up` is the only one where gpufleet knows a namespace does not exist,
it is ensured through a sibling provider that adopts an existing one (review aks-4.md A4-1)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model import kueue
from components.model.catalog.provider_changes import KUBERNETES_PROVIDER
from components.tooling.diff import diff_plans
from components.tooling.engine import Plan, RecordedResource
from components.tooling.stacks import load_stack
from tests.conftest import plan_of
from tests.test_aks_upgrades import deployed

NAMESPACE = "kubernetes:core/v1:Namespace"
ADOPTED = str(Path(__file__).parent / "fixtures" / "capacity" / "existing-queued.yaml")
RESERVED = Path(__file__).parents[1] / "stacks" / "Pulumi.azure-reserved.yaml"


def namespaces_of(plan: Plan) -> dict[str, list[RecordedResource]]:
    """Namespace name -> the Namespace resources that create it."""
    found: dict[str, list[RecordedResource]] = {}
    for resource in plan.of_type(NAMESPACE):
        found.setdefault(resource.inputs["metadata"]["name"], []).append(resource)
    return found


def local_queues(plan: Plan) -> list[RecordedResource]:
    return [
        r
        for r in plan.resources
        if r.type.startswith("kubernetes:kueue.x-k8s.io/") and r.inputs["kind"] == "LocalQueue"
    ]


def reserved_config(key: str) -> Any:
    return yaml.safe_load(RESERVED.read_text())["config"][f"gpufleet:{key}"]


@pytest.mark.parametrize("stack", ["azure-reserved", "gcp-flex-start"])
def test_each_shipped_queue_waits_for_a_namespace_that_outlives_the_stack(stack: str) -> None:
    plan = plan_of(stack)
    created = namespaces_of(plan)
    queues = local_queues(plan)
    assert queues
    for queue in queues:
        namespace = queue.inputs["metadata"]["namespace"]
        assert namespace == "ml-training"
        (resource,) = created[namespace]
        assert resource.urn in queue.dependencies
        assert resource.to_json()["options"]["retainOnDelete"] is True
        # Only the name: taking over a team's namespace must not claim a field another
        # manager owns (a server-side apply conflict fails `up`; review aks-5 A5-1).
        assert resource.inputs["metadata"] == {"name": namespace}
        # Never updated: an update would hand the team's kubectl-made labels to gpufleet and
        # drop them (review round-6 R6-1).
        assert {"metadata.labels", "metadata.annotations"} <= set(resource.ignore_changes)


def test_a_namespace_is_created_once_and_never_one_the_cluster_already_has() -> None:
    pools = reserved_config("gpuPools")
    second = {**pools[1], "name": "train2"}
    plan = plan_of(
        "azure-reserved",
        {
            "gpufleet:gpuPools": [*pools, second],
            # default exists on every cluster (gpufleet's own namespaces are refused:
            # test_capacity.py::test_queues_namespaces_are_the_teams_not_kueues).
            "gpufleet:queues": {"namespaces": ["ml-training", "default", "research"]},
        },
    )
    created = namespaces_of(plan)
    assert {name: len(found) for name, found in created.items()} == {
        "ml-training": 1,
        "research": 1,
        "nvidia-device-plugin": 1,  # the GPU software's own
        kueue.PIN.namespace: 1,
    }
    queues = local_queues(plan)
    assert len(queues) == 6  # two pools x three namespaces
    for queue in queues:
        namespace = queue.inputs["metadata"]["namespace"]
        waits_for = {r.urn for found in created.values() for r in found} & set(queue.dependencies)
        expected = set() if namespace == "default" else {created[namespace][0].urn}
        assert waits_for == expected, namespace


def test_on_a_cluster_gpufleet_did_not_create_it_creates_no_namespace_and_says_so() -> None:
    plan = plan_of(ADOPTED)
    assert set(namespaces_of(plan)) == {kueue.PIN.namespace, "nvidia-device-plugin"}
    (warning,) = [w for w in plan.warnings if w.startswith("queues.namespaces:")]
    assert "ml-training, research must exist" in warning
    assert "not checked" in warning
    # A queue only in namespaces every cluster has needs no warning.
    plan = plan_of(ADOPTED, {"gpufleet:queues": {"namespaces": ["default"]}})
    assert not [w for w in plan.warnings if w.startswith("queues.namespaces:")]


def test_a_created_cluster_has_no_namespace_warning() -> None:
    assert not [w for w in plan_of("azure-reserved").warnings if "must exist" in w]


def provider_of(plan: Plan, resource: RecordedResource) -> RecordedResource:
    assert resource.provider is not None, resource.urn
    (provider,) = [r for r in plan.resources if r.urn == resource.provider.rsplit("::", 1)[0]]
    return provider


def upserts(provider: RecordedResource) -> bool:
    return provider.inputs.get("upsertExistingObjects") in (True, "true")


def assert_namespaces_adopt_and_nothing_else_does(plan: Plan, queue_namespaces: set[str]) -> None:
    """The queue namespaces use the provider that adopts an existing object, of the same cluster
    as the stack's; every other Kubernetes resource uses the stack's provider, which does not."""
    (main,) = [r for r in plan.of_type(KUBERNETES_PROVIDER) if not upserts(r)]
    seen = set()
    for resource in plan.resources:
        if not resource.custom or not resource.type.startswith("kubernetes:"):
            continue
        provider = provider_of(plan, resource)
        name = resource.inputs.get("metadata", {}).get("name")
        if resource.type == NAMESPACE and name in queue_namespaces:
            seen.add(name)
            assert upserts(provider), resource.urn
            assert provider.inputs["clusterIdentifier"] == main.inputs["clusterIdentifier"]
            assert provider.inputs["enableServerSideApply"] in (True, "true")
            assert resource.to_json()["options"]["retainOnDelete"] is True
        else:
            assert provider.urn == main.urn, resource.urn
    assert seen == queue_namespaces


@pytest.mark.parametrize("stack", ["azure-reserved", "gcp-flex-start"])
def test_a_queue_namespace_that_exists_already_is_adopted_not_refused(stack: str) -> None:
    """pulumi-kubernetes (>= 4.29) fails the `up` creating an object that exists unless its
    provider has upsertExistingObjects: only the kept queue namespaces get such a provider."""
    assert_namespaces_adopt_and_nothing_else_does(plan_of(stack), {"ml-training"})


def test_stacks_without_queue_namespaces_have_one_kubernetes_provider() -> None:
    for stack in ("azure-dev", "existing-dev"):
        assert len(plan_of(stack).of_type(KUBERNETES_PROVIDER)) == 1, stack
    assert len(plan_of(ADOPTED).of_type(KUBERNETES_PROVIDER)) == 1


def test_a_queued_pool_added_to_a_running_cluster_plans_and_adopts_the_teams_namespace() -> None:
    pools = copy.deepcopy(list(load_stack("azure-dev").gpufleet["gpuPools"]))
    queued = {**pools[0], "name": "train", "capacity": "queued", "minNodes": 0, "maxNodes": 2}
    queued.pop("spot", None)
    plan = deployed(
        "azure-dev",
        {"gpufleet:gpuPools": [*pools, queued], "gpufleet:queues": {"namespaces": ["ml-training"]}},
    )
    assert_namespaces_adopt_and_nothing_else_does(plan, {"ml-training"})
    (queue,) = local_queues(plan)
    assert namespaces_of(plan)["ml-training"][0].urn in queue.dependencies


def _on_the_stacks_provider(plan: dict[str, Any]) -> dict[str, Any]:
    """The plan as gpufleet made it before A4-1: the queue namespace on the stack's provider."""
    old = copy.deepcopy(plan)
    providers = [r for r in old["resources"] if r["type"] == KUBERNETES_PROVIDER]
    (main,) = [r for r in providers if "upsertExistingObjects" not in r["inputs"]]
    (sibling,) = [r for r in providers if r is not main]
    old["resources"].remove(sibling)
    for resource in old["resources"]:
        if resource["provider"] and resource["provider"].startswith(sibling["urn"] + "::"):
            resource["provider"] = f"{main['urn']}::{main['name']}-id"
    return old


def test_an_existing_stacks_namespace_moves_to_the_adopting_provider_without_replacement() -> None:
    """The engine asks the new provider's DiffConfig; with the same clusterIdentifier that is
    an update, so the namespace (and every Job in it) is neither replaced nor deleted."""
    new = plan_of("azure-reserved").to_json()
    diff = diff_plans(_on_the_stacks_provider(new), new)
    assert [a.name for a in diff.added] == ["gpufleet-reserved-k8s-upsert"]
    (moved,) = diff.changed
    assert moved.name == "gpufleet-reserved-kueue-queue-ns-ml-training"
    assert not moved.replaces
    assert not diff.removed
    # Another cluster's provider would replace it: the verdict is the provider's, not a given.
    other = copy.deepcopy(new)
    for resource in other["resources"]:
        if resource["name"] == "gpufleet-reserved-k8s-upsert":
            resource["inputs"]["clusterIdentifier"] = "another-cluster"
    (moved,) = diff_plans(_on_the_stacks_provider(new), other).changed
    assert moved.replaces


def test_a_namespace_an_earlier_gpufleet_labelled_is_left_as_it_is() -> None:
    """review round-6 R6-1: updating it would drop the team's kubectl-made labels; its old
    label is ignored, so `up` sends nothing for it."""
    new = plan_of("azure-reserved").to_json()
    old = copy.deepcopy(new)
    for resource in old["resources"]:
        if resource["name"].endswith("queue-ns-ml-training"):
            resource["inputs"]["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "gpufleet"}
    assert not diff_plans(old, new).changed


def test_diff_shows_a_renamed_queue_namespace_kept_and_its_queue_deleted() -> None:
    """review aks-4 A4-6: the old namespace (and the team's Jobs in it) stays in the cluster."""
    before = plan_of("azure-reserved").to_json()
    after = plan_of("azure-reserved", {"gpufleet:queues": {"namespaces": ["ml-train"]}}).to_json()
    diff = diff_plans(before, after)
    kept = {ref.name: ref.kept for ref in diff.removed}
    assert kept == {
        "gpufleet-reserved-kueue-queue-ns-ml-training": True,
        "gpufleet-reserved-kueue-localqueue-train-ml-training": False,
    }
    assert diff.summary().endswith("1 to delete; 1 to forget, kept in the cloud")
