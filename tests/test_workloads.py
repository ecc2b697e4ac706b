"""Pod templates found in workload YAML, and the errors for files that hold none."""

from __future__ import annotations

import textwrap

import pytest

from components.tooling.scheduling.workloads import WorkloadError, extract_pod_templates

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
    ("text", "message"),
    [
        ("kind: Pod\n  spec: [\n", r"cannot read YAML at line \d+, column \d+"),
        ("a: b\n c: d\n", r"cannot read YAML at line 2"),
        ("- a\n- b\n", r"document 1 is a list, not a mapping"),
        ("just text\n", r"document 1 is a string, not a mapping"),
        (
            "kind: ConfigMap\nmetadata: {name: cfg}\n",
            r"document 1 \(ConfigMap/cfg\) holds no pod template; accepted kinds: CronJob, "
            r"DaemonSet, Deployment, Job, Pod, .*, List, or a bare pod spec",
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
    ],
)
def test_errors(text: str, message: str) -> None:
    with pytest.raises(WorkloadError, match=message):
        extract_pod_templates(text)


def test_workload_error_is_a_value_error() -> None:
    assert issubclass(WorkloadError, ValueError)
