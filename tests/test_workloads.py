"""Pod templates found in workload YAML, the objects skipped, the errors for files that hold
none, and the resource values the API server rejects."""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from components.tooling.scheduling.workloads import (
    NO_POD_KINDS,
    Skipped,
    WorkloadError,
    api_problems,
    extract_pod_templates,
    read_workloads,
)

SPEC = """
      containers:
        - name: trainer
          image: trainer:1
"""


def workload(kind: str, path: str, name: str = "x") -> str:
    """A manifest of `kind` whose pod spec sits under the dotted `path`."""
    lines = [f"kind: {kind}", f"metadata: {{name: {name}}}"]
    for depth, step in enumerate(path.split(".")):
        lines.append("  " * depth + f"{step}:")
    body = textwrap.indent(textwrap.dedent(SPEC).strip(), "  " * len(path.split(".")))
    return "\n".join([*lines, body]) + "\n"


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("Pod", "spec"),
        ("Deployment", "spec.template.spec"),
        ("StatefulSet", "spec.template.spec"),
        ("ReplicaSet", "spec.template.spec"),
        ("ReplicationController", "spec.template.spec"),
        ("DaemonSet", "spec.template.spec"),
        ("Job", "spec.template.spec"),
        ("CronJob", "spec.jobTemplate.spec.template.spec"),
        ("PodTemplate", "template.spec"),
    ],
)
def test_every_workload_kind(kind: str, path: str) -> None:
    (found,) = extract_pod_templates(workload(kind, path, name="trainer"))
    assert found.source == f"{kind}/trainer"
    assert found.spec["containers"][0]["name"] == "trainer"


def test_multi_document_in_order_skipping_empty_documents() -> None:
    text = (
        "---\n"
        + workload("Pod", "spec", "a")
        + "---\n---\n"
        + workload("Job", "spec.template.spec", "b")
    )
    assert [t.source for t in extract_pod_templates(text)] == ["Pod/a", "Job/b"]


def test_list_kinds() -> None:
    text = textwrap.dedent(
        """
        kind: List
        items:
          - kind: Pod
            metadata: {name: a}
            spec: {containers: [{name: c}]}
          - kind: DeploymentList
            items:
              - kind: Deployment
                metadata: {name: b}
                spec: {template: {spec: {containers: [{name: c}]}}}
        """
    )
    assert [t.source for t in extract_pod_templates(text)] == ["Pod/a", "Deployment/b"]


def test_bare_pod_spec_and_unnamed_workloads() -> None:
    text = (
        "containers: [{name: c}]\n---\n"
        "kind: Pod\nmetadata: {generateName: x-}\nspec: {containers: [{name: c}]}\n"
    )
    assert [t.source for t in extract_pod_templates(text)] == [
        "document 1 (pod spec)",
        "Pod in document 2",
    ]


def test_other_kinds_can_be_skipped() -> None:
    text = "kind: ConfigMap\nmetadata: {name: cfg}\n---\n" + workload("Pod", "spec", "a")
    assert [t.source for t in extract_pod_templates(text, ignore_other_kinds=True)] == ["Pod/a"]


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("v1", "Namespace"),
        ("v1", "Service"),
        ("v1", "ConfigMap"),
        ("v1", "Secret"),
        ("v1", "ServiceAccount"),
        ("rbac.authorization.k8s.io/v1", "Role"),
        ("rbac.authorization.k8s.io/v1", "RoleBinding"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole"),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
        ("scheduling.k8s.io/v1", "PriorityClass"),
        ("policy/v1", "PodDisruptionBudget"),
        (None, "PersistentVolumeClaim"),  # no apiVersion: the kind alone decides
    ],
)
def test_kinds_without_pods_are_skipped_by_default(api_version: str | None, kind: str) -> None:
    header = f"apiVersion: {api_version}\n" if api_version else ""
    text = f"{header}kind: {kind}\nmetadata: {{name: x}}\n---\n" + workload("Pod", "spec", "a")
    assert [t.source for t in extract_pod_templates(text)] == ["Pod/a"]
    manifest = read_workloads(text)
    assert manifest.problems == ()
    assert manifest.skipped == (Skipped(f"{kind}/x", "document 1", known=True),)
    assert str(manifest.skipped[0]) == f"{kind}/x (document 1)"
    assert kind in NO_POD_KINDS


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: r}\n",
            r"^document 1 \(RayCluster/r\): fit does not know kind RayCluster "
            r"\(apiVersion ray.io/v1\), so it cannot check the pods it may run; it reads "
            r"CronJob, DaemonSet, .*, StatefulSet, List or a bare pod spec, and skips kinds that "
            r"run no pods \(Namespace, Service, ConfigMap, ...\)$",
        ),
        (
            "kind: Deploymnet\nmetadata: {name: d}\n",
            r"^document 1 \(Deploymnet/d\): fit does not know kind Deploymnet, .*; "
            r"did you mean Deployment\?$",
        ),
        # A known name in another API group is another kind: Knative's Service runs pods.
        (
            "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: s}\n",
            r"fit does not know kind Service \(apiVersion serving.knative.dev/v1\)",
        ),
        # Volcano's Job keeps its pods under spec.tasks, not spec.template.
        (
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\n",
            r"fit does not know kind Job \(apiVersion batch.volcano.sh/v1alpha1\)",
        ),
    ],
    ids=["custom-resource", "typo", "knative-service", "volcano-job"],
)
def test_unknown_kinds_are_errors_unless_skipped(text: str, message: str) -> None:
    with pytest.raises(WorkloadError, match=message):
        extract_pod_templates(text + "---\n" + workload("Pod", "spec", "a"))
    manifest = read_workloads(
        text + "---\n" + workload("Pod", "spec", "a"), skip_unknown_kinds=True
    )
    assert manifest.problems == ()
    assert [t.source for t in manifest.templates] == ["Pod/a"]
    assert [item.known for item in manifest.skipped] == [False]


def test_workload_kinds_of_their_own_groups_are_read() -> None:
    text = (
        "apiVersion: extensions/v1beta1\n"
        + workload("Deployment", "spec.template.spec", "old")
        + "---\napiVersion: batch/v1\n"
        + workload("Job", "spec.template.spec", "j")
    )
    assert [t.source for t in extract_pod_templates(text)] == ["Deployment/old", "Job/j"]


def test_every_problem_in_the_manifest_is_reported_at_once() -> None:
    text = (
        "kind: Pod\nmetadata: {name: a}\nspec: {containers: []}\n---\n"
        "kind: RayCluster\nmetadata: {name: r}\n---\n"
        "kind: Pod\nmetadata: {name: b}\n"
        "spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 0.5}}}]}\n---\n"
        "kind: Job\nmetadata: {name: j}\nspec: {template: {spec: {containers: "
        "[{name: w, resources: {requests: {nvidia.com/gpu: 1}}}]}}}\n"
    )
    manifest = read_workloads(text)
    assert [problem.split(":")[0] for problem in manifest.problems] == [
        "Pod/a",
        "document 2 (RayCluster/r)",
        "document 3 (Pod/b), container c",
        "document 4 (Job/j), container w",
    ]
    assert manifest.unknown_kinds == ("RayCluster",)
    assert [t.label for t in manifest.templates] == ["document 3 (Pod/b)", "document 4 (Job/j)"]
    # extract_pod_templates reports the same shape problems together, but leaves resource
    # values to the scheduler simulation.
    with pytest.raises(WorkloadError) as error:
        extract_pod_templates(text)
    assert len(error.value.problems) == 2
    assert str(error.value).splitlines() == list(error.value.problems)


def test_labels_name_the_document() -> None:
    text = (
        "containers: [{name: c}]\n---\n"
        "kind: Pod\nmetadata: {generateName: x-}\nspec: {containers: [{name: c}]}\n---\n"
        "kind: List\nitems: [{kind: Pod, metadata: {name: p}, spec: {containers: [{name: c}]}}]\n"
    )
    assert [t.label for t in read_workloads(text).templates] == [
        "document 1 (pod spec)",
        "Pod in document 2",
        "document 3 item 1 (Pod/p)",
    ]


# --------------------------------------------------------------------------- API server rules


def container(resources: Any) -> dict[str, Any]:
    return {"containers": [{"name": "trainer", "resources": resources}]}


GPU_WHOLE = "nvidia.com/gpu is an extended resource, which takes a whole number such as 1 or 2"


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        (
            {"limits": {"nvidia.com/gpu": "abc"}},
            [f'resources.limits[nvidia.com/gpu]: "abc" is not a Kubernetes quantity; {GPU_WHOLE}'],
        ),
        (
            {"limits": {"nvidia.com/gpu": 0.5}},
            [
                f"resources.limits[nvidia.com/gpu]: 0.5 is not a whole number; {GPU_WHOLE} "
                "(Kubernetes hands out extended resources whole; to share a GPU, use a pool "
                "with GPU sharing)"
            ],
        ),
        (
            {"limits": {"nvidia.com/gpu": "500m"}},
            ['resources.limits[nvidia.com/gpu]: "500m" is not a whole number'],
        ),
        (
            {"requests": {"nvidia.com/gpu": 1}},
            [
                "resources.requests[nvidia.com/gpu]: 1 has no resources.limits[nvidia.com/gpu]; "
                "nvidia.com/gpu cannot be overcommitted, so Kubernetes requires a limit for it "
                "(set limits only: the request defaults to the limit)"
            ],
        ),
        (
            {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}},
            [
                "resources.requests[nvidia.com/gpu]: 1 differs from "
                "resources.limits[nvidia.com/gpu]: 2; nvidia.com/gpu cannot be overcommitted, so "
                "requests must equal limits (or set limits only)"
            ],
        ),
        (
            {"requests": {"cpu": "two"}},
            [
                'resources.requests[cpu]: "two" is not a Kubernetes quantity; cpu takes cores, '
                "e.g. 2, 1.5 or 500m"
            ],
        ),
        (
            {"limits": {"memory": "1 Gi"}},
            ['resources.limits[memory]: "1 Gi" is not a Kubernetes quantity; memory takes bytes'],
        ),
        ({"limits": {"memory": "-1Gi"}}, ['resources.limits[memory]: "-1Gi" is negative']),
        ({"limits": {"memory": None}}, ["resources.limits[memory]: no value (null)"]),
        ({"limits": {"cpu": True}}, ["resources.limits[cpu]: true is not a Kubernetes quantity"]),
        (
            {"limits": {"gpu": 1}},
            [
                "resources.limits[gpu]: gpu is not a container resource; use cpu, memory, "
                "ephemeral-storage, hugepages-<size> or an extended resource with a domain, "
                "e.g. nvidia.com/gpu"
            ],
        ),
        (
            {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
            [
                'resources.requests[cpu]: "2" is more than resources.limits[cpu]: "1"; a request '
                "must be at most its limit"
            ],
        ),
        (
            {"requests": {"hugepages-2Mi": "1Gi"}, "limits": {"hugepages-2Mi": "2Gi"}},
            [
                'resources.requests[hugepages-2Mi]: "1Gi" differs from',
                "resources: hugepages require a cpu or memory request or limit as well",
            ],
        ),
        ({"limits": {"memory": "1e40"}}, ['resources.limits[memory]: "1e40" is out of the range']),
        ("lots", ['resources: "lots" is not a mapping of requests and limits']),
        (
            {"limits": ["nvidia.com/gpu"]},
            ['resources.limits: ["nvidia.com/gpu"] is not a mapping of resource names'],
        ),
        # Requests with an invalid limit: only the limit's own problem.
        (
            {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 0.5}},
            ["resources.limits[nvidia.com/gpu]: 0.5 is not a whole number"],
        ),
    ],
)
def test_api_problems(resources: Any, expected: list[str]) -> None:
    got = api_problems(container(resources))
    assert len(got) == len(expected), got
    for problem, start in zip(got, expected, strict=True):
        assert problem.startswith(f"container trainer: {start}"), problem


@pytest.mark.parametrize(
    "resources",
    [
        None,
        {},
        {"limits": {"nvidia.com/gpu": 1}},  # the request defaults to the limit
        {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": 1}},  # same quantity
        {"limits": {"nvidia.com/gpu": "1k", "nvidia.com/mig-1g.5gb": 0}},
        {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": 2, "memory": "2Gi"}},
        {"requests": {"ephemeral-storage": "10Gi", "example.kubernetes.io/thing": 1}},
        {"limits": {"hugepages-2Mi": "1Gi", "memory": "1Gi"}},
        {"limits": {"cpu": 1.5, "memory": "1e9"}},
    ],
)
def test_api_accepts(resources: Any) -> None:
    assert api_problems(container(resources)) == []


def test_api_problems_cover_init_containers_pod_level_resources_and_overhead() -> None:
    spec = {
        "initContainers": [{"resources": {"limits": {"nvidia.com/gpu": "x"}}}],
        "containers": [{"name": "main"}],
        "resources": {"requests": {"cpu": "4"}, "limits": {"cpu": "2"}},
        "overhead": {"memory": "lots"},
    }
    assert [problem.split(": ")[0] for problem in api_problems(spec)] == [
        "init container #1",
        "pod spec resources.requests[cpu]",
        "pod spec overhead[memory]",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kind: Pod\n  spec: [\n", r"cannot read YAML at line \d+, column \d+"),
        ("a: b\n c: d\n", r"cannot read YAML at line 2"),
        ("- a\n- b\n", r"document 1 is a list, not a mapping"),
        ("just text\n", r"document 1 is a string, not a mapping"),
        (
            "kind: CronJobb\nmetadata: {name: cfg}\n",
            r"document 1 \(CronJobb/cfg\): fit does not know kind CronJobb, so it cannot check "
            r"the pods it may run; .*; did you mean CronJob\?",
        ),
        (
            "kind: Pod\nmetadata: {name: a}\nspec: {containers: []}\n",
            r"Pod/a: pod spec has no containers",
        ),
        (
            "kind: Pod\nmetadata: {name: a}\nspec: {volumes: []}\n",
            r"Pod/a: pod spec has no containers",
        ),
        (
            "kind: Pod\nmetadata: {name: a}\nspec: {containers: [c]}\n",
            r"containers must be a list of mappings",
        ),
        (
            "kind: Pod\nmetadata: {name: a}\nspec: [1]\n",
            r"Pod/a: pod spec is a list, not a mapping",
        ),
        (
            "kind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1}\n",
            r"Deployment/d has no spec.template.spec",
        ),
        ("metadata: {name: a}\n", r"document 1 has neither `kind` nor `containers`"),
        ("kind: List\nitems: {a: b}\n", r"items is not a list"),
        ("kind: List\nitems:\n  - 3\n", r"document 1 item 1 is a number, not a mapping"),
        ("", r"no workloads found"),
        ("---\n---\n", r"no workloads found"),
        ("kind: List\nitems: []\n", r"no workloads found"),
        (
            "kind: ConfigMap\nmetadata: {name: cfg}\n",
            r"no workloads found: expected .*; skipped ConfigMap/cfg \(document 1\)$",
        ),
    ],
)
def test_errors(text: str, message: str) -> None:
    with pytest.raises(WorkloadError, match=message):
        extract_pod_templates(text)


def test_workload_error_is_a_value_error() -> None:
    assert issubclass(WorkloadError, ValueError)
