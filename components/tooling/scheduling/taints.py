"""The TaintToleration filter, after the API server's ExtendedResourceToleration admission where
it runs (components/model/admission.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.tooling.scheduling.model import NodeTemplate, Taint
from components.tooling.scheduling.resources import all_containers, is_extended


def _requested_extended(pod_spec: Mapping[str, Any]) -> set[str]:
    """Extended resources any container or init container requests or limits (API defaulting
    copies limits into absent requests before admission plugins run)."""
    names: set[str] = set()
    for _, container in all_containers(pod_spec):
        resources = container.get("resources")
        if not isinstance(resources, Mapping):
            continue
        for field in ("requests", "limits"):
            listed = resources.get(field)
            if isinstance(listed, Mapping):
                names.update(str(name) for name in listed if is_extended(str(name)))
    return names


def _tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    """core/v1 Toleration.ToleratesTaint, line for line."""
    effect = toleration.get("effect") or ""
    key = toleration.get("key") or ""
    if effect and effect != taint.effect:
        return False
    if key and key != taint.key:
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Equal":
        return (toleration.get("value") or "") == taint.value
    return operator == "Exists"


def _tolerations(pod_spec: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], list[str]]:
    raw = pod_spec.get("tolerations") or []
    if not isinstance(raw, list):
        return [], ["tolerations is not a list"]
    tolerations: list[Mapping[str, Any]] = []
    errors: list[str] = []
    for index, toleration in enumerate(raw, start=1):
        if not isinstance(toleration, Mapping):
            errors.append(f"toleration {index} is not a mapping")
            continue
        bad = [
            f"{field} {toleration[field]!r}"
            for field in ("key", "operator", "value", "effect")
            if toleration.get(field) is not None and not isinstance(toleration[field], str)
        ]
        if bad:
            errors.append(
                f"toleration {index}: {', '.join(bad)} is not a string "
                "(Kubernetes rejects the pod; quote it in YAML)"
            )
            continue
        tolerations.append(toleration)
    return tolerations, errors


def taint_reasons(
    pod_spec: Mapping[str, Any], node: NodeTemplate, extended_resource_toleration: bool | None
) -> list[str]:
    """Every NoSchedule or NoExecute taint of `node` the pod does not tolerate, after the API
    server's ExtendedResourceToleration plugin, where it runs (`True`; `None`: not known, so
    judged without it), added `<resource> Exists NoSchedule` for each requested resource."""
    tolerations, reasons = _tolerations(pod_spec)
    extended = _requested_extended(pod_spec)
    if extended_resource_toleration:
        tolerations += [
            {"key": name, "operator": "Exists", "effect": "NoSchedule"} for name in sorted(extended)
        ]
    for taint in node.taints:
        if taint.effect == "PreferNoSchedule":  # soft: lowers the score, never filters
            continue
        if any(_tolerates(toleration, taint) for toleration in tolerations):
            continue
        reasons.append(
            f"taint {taint} is not tolerated{_hint(taint, extended, extended_resource_toleration)}"
        )
    return reasons


def _hint(taint: Taint, requested: set[str], admission: bool | None) -> str:
    """Why the API server did not tolerate it for the pod, where that is what a user expects."""
    if taint.key in requested and admission is None:
        return (
            f" (whether this cluster's API server adds a toleration for requested {taint.key} "
            "is not known: its ExtendedResourceToleration admission plugin is off unless "
            "enabled (EKS, GKE and AKS run it); list one in the pod)"
        )
    if taint.key in requested and not admission:
        return (
            f" (this cluster's API server does not add a toleration for requested {taint.key}: "
            "it does not run the ExtendedResourceToleration admission plugin; the pod must list one)"
        )
    if admission and taint.key in requested:
        return (
            f" (the API server's toleration for requested {taint.key} is for NoSchedule only; "
            "the pod must list one for this effect)"
        )
    if admission and requested:
        added = ", ".join(sorted(requested))
        return (
            f" (the API server adds tolerations only for the resources the pod requests "
            f"({added}, NoSchedule), not for {taint.key}; the pod must list one)"
        )
    return ""
