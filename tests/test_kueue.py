"""Queued pools on the whole graph: Kueue at its pinned chart, and each pool's Kueue objects
valid for the chart's CRDs and true to the pool (what `consumers` and `fit` say about a queued
Job: test_queued_fit.py).

The stack is tests/fixtures/capacity/existing-queued.yaml: a cluster gpufleet did not create,
whose autoscaler the user declares serves best-effort-atomic-scale-up ProvisioningRequests (the
only cloud that builds queued pools today; GKE, EKS and AKS plug in through `Cloud`).
The CRD schemas and chart defaults come from tests/data/kueue_facts.json
(scripts/kueue_facts.py, from kubernetes-sigs/kueue charts/kueue at v0.19.2).
"""

from __future__ import annotations

import copy
import functools
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from components.kubernetes import chart_values
from components.model import kueue
from components.model.capacity import QUEUE_LABEL
from components.model.config import parse_config
from components.model.pools import resolve_pools
from components.model.resource_index import role
from components.tooling.engine import Plan, RecordedResource
from components.tooling.fit import fit_check
from components.tooling.pool_views import PoolCheck, pool_checks
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

STACK = str(Path(__file__).parent / "fixtures" / "capacity" / "existing-queued.yaml")
FACTS = Path(__file__).parent / "data" / "kueue_facts.json"
KINDS = ("ProvisioningRequestConfig", "AdmissionCheck", "ResourceFlavor", "ClusterQueue")
RELEASE = "kubernetes:helm.sh/v3:Release"


@functools.cache
def facts() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(FACTS.read_text())
    return loaded


def python_patterns(schema: Any) -> Any:
    """The schema with Go (RE2) patterns Python's `re` reads differently made equivalent: RE2
    takes a flag group after `^` (`^(?i)[a-z]...`), Python only at the start."""
    if isinstance(schema, dict):
        fixed = {key: python_patterns(value) for key, value in schema.items()}
        pattern = fixed.get("pattern")
        if isinstance(pattern, str) and pattern.startswith("^(?i)"):
            fixed["pattern"] = "(?i)^" + pattern[len("^(?i)") :]
        return fixed
    if isinstance(schema, list):
        return [python_patterns(item) for item in schema]
    return schema


def crd_schema(kind: str) -> dict[str, Any]:
    schema: dict[str, Any] = python_patterns(facts()["crds"][kind])
    return schema


def kueue_objects(plan: Plan) -> dict[tuple[str, str, str], RecordedResource]:
    """(kind, namespace, name) -> the custom resource, for every Kueue object in the plan."""
    found = {}
    for resource in plan.resources:
        if resource.type.startswith("kubernetes:kueue.x-k8s.io/"):
            metadata = resource.inputs["metadata"]
            key = (resource.inputs["kind"], metadata.get("namespace", ""), metadata["name"])
            found[key] = resource
    return found


def document(resource: RecordedResource) -> dict[str, Any]:
    return {k: resource.inputs[k] for k in ("apiVersion", "kind", "metadata", "spec")}


def kueue_release(plan: Plan) -> RecordedResource:
    (release,) = [r for r in plan.of_type(RELEASE) if r.inputs["chart"].endswith("/kueue")]
    return release


def test_a_queued_pool_brings_kueue_and_its_queues_and_nothing_for_the_others() -> None:
    plan = plan_of(STACK)
    (component,) = [r for r in plan.resources if r.type == "gpufleet:kubernetes:Kueue"]
    assert role(component.type)
    release = kueue_release(plan)
    assert release.inputs["chart"] == f"{kueue.PIN.repo}/{kueue.PIN.chart}"
    assert release.inputs["version"] == kueue.VERSION == facts()["version"]
    assert release.inputs["namespace"] == "kueue-system"
    assert release.inputs["atomic"] is True
    objects = kueue_objects(plan)
    assert sorted(objects) == sorted(
        [(kind, "", "gpufleet-h100") for kind in KINDS]
        + [("LocalQueue", ns, "h100") for ns in ("ml-training", "research")]
    )
    # A stack without a queued pool installs no Kueue.
    unqueued = plan_of("existing-dev")
    assert not [r for r in unqueued.resources if "kueue" in r.type.lower()]


def test_every_kueue_object_validates_against_the_pinned_crd() -> None:
    objects = kueue_objects(plan_of(STACK))
    for (kind, _, name), resource in objects.items():
        assert resource.inputs["apiVersion"] == kueue.API_VERSION, name
        # The structural schema (CEL rules in x-kubernetes-validations are the API server's).
        jsonschema.validate(document(resource), crd_schema(kind))
    queue = next(r for (k, _, _), r in objects.items() if k == "ClusterQueue")
    broken = copy.deepcopy(document(queue))
    broken["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "lots"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, crd_schema("ClusterQueue"))


def test_kueue_rules_the_schema_cannot_say_hold_too() -> None:
    """CEL rules of the CRDs, checked by hand: flavors list every covered resource, a toleration
    with operator Exists has no value."""
    objects = kueue_objects(plan_of(STACK))
    for (kind, _, _), resource in objects.items():
        spec = resource.inputs["spec"]
        if kind == "ClusterQueue":
            for group in spec["resourceGroups"]:
                for flavor in group["flavors"]:
                    names = [r["name"] for r in flavor["resources"]]
                    assert names == group["coveredResources"]
        if kind == "ResourceFlavor":
            for toleration in spec.get("tolerations", []):
                assert toleration["operator"] in ("Equal", "Exists")
                assert not (toleration["operator"] == "Exists" and "value" in toleration)


def test_chart_values_are_keys_of_the_pinned_values_yaml_and_pin_the_released_image() -> None:
    values = kueue_release(plan_of(STACK)).inputs["values"]
    defaults = facts()["values"]
    sent = dict(values)
    config = yaml.safe_load(sent.pop("managerConfig")["controllerManagerConfigYaml"])
    assert chart_values.unknown_keys(sent, defaults) == []
    image = values["controllerManager"]["manager"]["image"]
    assert (image["repository"], image["tag"]) == ("registry.k8s.io/kueue/kueue", "v0.19.2")
    assert image["tag"] == facts()["appVersion"]
    # The chart's configuration, whole, with only the workloads' namespaces added.
    selector = config.pop("managedJobsNamespaceSelector")
    assert config == defaults["managerConfig"]["controllerManagerConfigYaml"]
    assert selector == {
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "In",
                "values": ["ml-training", "research"],
            }
        ]
    }
    # No system pool on a cluster gpufleet did not create: Kueue goes where the cluster puts it.
    assert "nodeSelector" not in values["controllerManager"]
    placed = kueue.helm_values({"gpufleet.io/pool": "system"}, ["ml"])["controllerManager"]
    assert placed["nodeSelector"] == {"gpufleet.io/pool": "system"}


def test_the_cluster_queue_holds_the_whole_pool_and_only_the_teams_namespaces() -> None:
    objects = kueue_objects(plan_of(STACK))
    spec = objects[("ClusterQueue", "", "gpufleet-h100")].inputs["spec"]
    (group,) = spec["resourceGroups"]
    (flavor,) = group["flavors"]
    quota = {r["name"]: r["nominalQuota"] for r in flavor["resources"]}
    # 4 x p5.48xlarge: 8 H100, 192 vCPU and 2048 GiB each (the catalog; no allocatable known).
    assert quota == {
        "nvidia.com/gpu": 32,
        "cpu": 768,
        "memory": f"{4 * 2048 * 1024}Mi",
        "ephemeral-storage": "400Gi",
    }
    assert flavor["name"] == "gpufleet-h100"
    assert spec["namespaceSelector"]["matchExpressions"][0]["values"] == [
        "ml-training",
        "research",
    ]
    assert spec["admissionChecksStrategy"] == {"admissionChecks": [{"name": "gpufleet-h100"}]}
    check = objects[("AdmissionCheck", "", "gpufleet-h100")].inputs["spec"]
    assert check["controllerName"] == "kueue.x-k8s.io/provisioning-request"
    config = objects[("ProvisioningRequestConfig", "", "gpufleet-h100")].inputs["spec"]
    assert config == {
        "provisioningClassName": "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
        "managedResources": ["nvidia.com/gpu"],
    }
    for namespace in ("ml-training", "research"):
        local = objects[("LocalQueue", namespace, "h100")].inputs["spec"]
        assert local == {"clusterQueue": "gpufleet-h100"}


def test_every_kueue_object_waits_for_kueue_and_for_what_it_names() -> None:
    plan = plan_of(STACK)
    release = kueue_release(plan)
    (namespace,) = [r for r in plan.resources if r.name == "lab-kueue-ns"]
    assert namespace.urn in release.dependencies
    objects = kueue_objects(plan)
    urn = {key[0]: r.urn for key, r in objects.items()}
    names = {
        "ProvisioningRequestConfig": set(),
        "AdmissionCheck": {"ProvisioningRequestConfig"},
        "ResourceFlavor": set(),
        "ClusterQueue": {"ResourceFlavor", "AdmissionCheck"},
        "LocalQueue": {"ClusterQueue"},
    }
    for (kind, _, _), resource in objects.items():
        assert release.urn in resource.dependencies, kind
        assert {urn[n] for n in names[kind]} <= set(resource.dependencies), kind


def checks_of(stack_raw: dict[str, Any]) -> dict[str, PoolCheck]:
    return {c.name: c for c in pool_checks(parse_config(stack_raw))}


def test_the_flavor_puts_admitted_pods_on_the_pool_and_nowhere_else() -> None:
    """Kueue injects the flavor's nodeLabels and tolerations into the pods it admits: such a pod
    (asking for the pool's GPUs) fits the queued pool, and no other."""
    objects = kueue_objects(plan_of(STACK))
    flavor = objects[("ResourceFlavor", "", "gpufleet-h100")].inputs["spec"]
    pod = {
        "nodeSelector": flavor["nodeLabels"],
        "tolerations": flavor["tolerations"],
        "containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": 8}}}],
    }
    checks = checks_of(copy.deepcopy(load_stack(STACK).gpufleet))
    assert fit_check(pod, checks["h100"]).fits
    assert not fit_check(pod, checks["l4"]).fits
    # The flavor's taints are the pool's own: without the tolerations a pod is kept off, unless
    # the API server tolerates the GPU taint for it (this cluster is EKS: a GPU pod is).
    untolerated = {k: v for k, v in pod.items() if k != "tolerations"}
    assert fit_check(untolerated, checks["h100"]).fits
    no_gpu = {**untolerated, "containers": [{"name": "main"}]}
    assert not fit_check(no_gpu, checks["h100"]).fits


def test_resolved_pools_carry_the_queue_the_objects_are_built_from() -> None:
    (h100, l4) = resolve_pools(parse_config(copy.deepcopy(load_stack(STACK).gpufleet)))
    assert h100.queue is not None and l4.queue is None
    assert h100.queue.label == {QUEUE_LABEL: "h100"}
    assert [d["kind"] for d in kueue.pool_objects(h100)] == [*KINDS, "LocalQueue", "LocalQueue"]
    with pytest.raises(ValueError):
        kueue.pool_objects(l4)


def test_the_data_file_is_small_and_only_data() -> None:
    text = FACTS.read_text()
    assert len(text) < 32_000
    assert "{{" not in text and "description" not in text and "#" not in text
    assert "8eab68778fc1b52affe165fdf5af29d1e9b4f3cb" in facts()["source"]


@pytest.mark.skipif(
    not os.environ.get("GPUFLEET_KUEUE_CHART"), reason="GPUFLEET_KUEUE_CHART names no chart dir"
)
def test_the_data_file_is_current_with_the_chart_and_gpufleets_values() -> None:
    from scripts import kueue_facts
    from scripts.chart_facts import render

    chart = Path(os.environ["GPUFLEET_KUEUE_CHART"])
    fresh = kueue_facts.build(chart, kueue.SOURCE_COMMIT)
    assert render(fresh) == FACTS.read_text(), (
        "tests/data/kueue_facts.json is stale: run .venv/bin/python -m scripts.kueue_facts"
    )


def test_the_policy_pack_passes_a_stack_with_a_queued_pool() -> None:
    from policy import pack_config
    from policy.gpufleet_policy.offline import run_pack

    violations = run_pack(plan_of(STACK).to_json(), pack_config.pack_config(Path(STACK)))
    assert [str(v) for v in violations] == []
