"""Find the pod templates in a YAML file of Kubernetes workloads.

Accepts what people feed `kubectl apply`: multi-document YAML with Pods, Deployments,
StatefulSets, ReplicaSets, ReplicationControllers, DaemonSets, Jobs, CronJobs, PodTemplates,
`List`s of those, or a bare pod spec (a mapping with `containers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

# Where each kind keeps its pod spec.
_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "PodTemplate": ("template", "spec"),
}
ACCEPTED_KINDS = (*sorted(_SPEC_PATHS), "List")


class WorkloadError(ValueError):
    """The file cannot be read as workloads; the message says where and why."""


@dataclass(frozen=True)
class PodTemplate:
    """One pod spec and where it came from, e.g. ``Deployment/trainer``."""

    source: str
    spec: Mapping[str, Any]


def extract_pod_templates(text: str, *, ignore_other_kinds: bool = False) -> list[PodTemplate]:
    """Every pod template in `text`, in file order.

    Kinds that hold no pod template (ConfigMap, Service, ...) are an error by default, so a
    typo'd kind is not silently skipped; `ignore_other_kinds=True` skips them instead, for
    whole application manifests.
    """
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as error:
        raise WorkloadError(_yaml_message(error)) from error
    templates: list[PodTemplate] = []
    for number, document in enumerate(documents, start=1):
        if document is None:  # `---` separators with nothing between them
            continue
        templates.extend(_from_object(document, f"document {number}", ignore_other_kinds))
    if not templates:
        raise WorkloadError(
            "no workloads found: expected a pod spec or one of " + ", ".join(ACCEPTED_KINDS)
        )
    return templates


def _yaml_message(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    if mark is not None:
        # PyYAML counts from 0; editors count from 1.
        return f"cannot read YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return f"cannot read YAML: {problem}"


def _from_object(obj: object, where: str, ignore_other_kinds: bool) -> list[PodTemplate]:
    if not isinstance(obj, Mapping):
        raise WorkloadError(f"{where} is a {_type_name(obj)}, not a mapping (a Kubernetes object)")
    kind = obj.get("kind")
    if kind is None:
        if "containers" in obj:
            return [PodTemplate(f"{where} (pod spec)", _checked_spec(obj, f"{where} (pod spec)"))]
        raise WorkloadError(
            f"{where} has neither `kind` nor `containers`: expected a pod spec or one of "
            + ", ".join(ACCEPTED_KINDS)
        )
    if kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in obj):
        items = obj.get("items") or []
        if not isinstance(items, list):
            raise WorkloadError(f"{where} ({kind}): items is not a list")
        found: list[PodTemplate] = []
        for index, item in enumerate(items, start=1):
            found.extend(_from_object(item, f"{where} item {index}", ignore_other_kinds))
        return found
    source = _source(obj, kind, where)
    path = _SPEC_PATHS.get(kind) if isinstance(kind, str) else None
    if path is None:
        if ignore_other_kinds:
            return []
        raise WorkloadError(
            f"{where} ({source}) holds no pod template; accepted kinds: "
            + ", ".join(ACCEPTED_KINDS)
            + ", or a bare pod spec"
        )
    spec: object = obj
    for step in path:
        spec = spec.get(step) if isinstance(spec, Mapping) else None
        if spec is None:
            raise WorkloadError(f"{source} has no {'.'.join(path)}")
    return [PodTemplate(source, _checked_spec(spec, source))]


def _source(obj: Mapping[str, Any], kind: object, where: str) -> str:
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    # Without a name (e.g. generateName), the document number is what finds it again.
    return f"{kind}/{name}" if name else f"{kind} in {where}"


def _checked_spec(spec: object, source: str) -> Mapping[str, Any]:
    if not isinstance(spec, Mapping):
        raise WorkloadError(f"{source}: pod spec is a {_type_name(spec)}, not a mapping")
    containers = spec.get("containers")
    if not containers:
        raise WorkloadError(f"{source}: pod spec has no containers")
    if not isinstance(containers, list) or not all(isinstance(c, Mapping) for c in containers):
        raise WorkloadError(f"{source}: pod spec containers must be a list of mappings")
    return spec


def _type_name(value: object) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__
