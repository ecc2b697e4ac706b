"""The queues' namespaces on the whole graph: a LocalQueue needs its namespace to exist (the API
server's NamespaceLifecycle admission refuses it otherwise), so on a cluster gpufleet creates the
namespace is created first and kept when the stack or the queue goes; on a cluster it did not
create, plan says the owner must have made it (not checked) and nothing of the owner's is
touched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model import kueue
from components.tooling.engine import Plan, RecordedResource
from tests.conftest import plan_of

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
        assert resource.inputs["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "gpufleet"}


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
