"""Helm values as Helm sees them: chart defaults coalesced with ours, and unknown-key checks.

Helm accepts unknown keys silently (none of our pinned charts ships a values schema), so a typo
in our values would simply be ignored at install time. `unknown_keys` compares our values with
the pinned chart's `values.yaml`; `merge` reproduces Helm's coalescing so that tests can evaluate
what the chart will really render (e.g. the DaemonSet's affinity and tolerations).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml


def load(path: Path) -> dict[str, Any]:
    """A chart's values.yaml as a dict (an empty file is {})."""
    document = yaml.safe_load(path.read_text()) or {}
    if not isinstance(document, dict):
        raise ValueError(f"{path}: values.yaml is not a mapping")
    return document


def merge(defaults: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's coalescing of user values over chart defaults.

    Maps merge key by key, lists and scalars replace, and a null override deletes the key.
    """
    merged: dict[str, Any] = copy.deepcopy(dict(defaults))
    for key, value in overrides.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


# Values the chart renders verbatim as a Kubernetes object (`toYaml`), so any field of that
# object is valid below them although the chart's example shows only some.
PASSTHROUGH: Mapping[str, tuple[str, ...]] = {
    "dcgm-exporter": ("securityContext", "podSecurityContext", "resources", "affinity"),
    "nvidia-device-plugin": ("securityContext", "podSecurityContext", "resources", "affinity"),
}


# Subcharts' values a parent chart's values.yaml does not repeat, yet passes down (Helm hands a
# subchart the parent's values under its name). The GPU Operator v26.7.0 depends on
# node-feature-discovery 0.19.0 (its Chart.yaml), whose values.yaml has `worker.nodeSelector: {}`,
# `worker.affinity: {}`, `image.repository`, `image.tag` (null: the appVersion, v0.19.0) and
# `imagePullSecrets: []` (kubernetes-sigs/node-feature-discovery v0.19.0, commit
# 45d276ed9d3f0f67fb642aa78969721df3034451, deployment/helm/node-feature-discovery/values.yaml;
# vendored in NVIDIA/gpu-operator v26.7.0 deployments/gpu-operator/charts/).
SUBCHART_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "gpu-operator": {
        "node-feature-discovery": {
            "worker": {"nodeSelector": {}, "affinity": {}},
            "image": {
                "repository": "registry.k8s.io/nfd/node-feature-discovery",
                "pullPolicy": "IfNotPresent",
                "tag": None,
            },
            "imagePullSecrets": [],
        }
    },
}


# Keys a chart's templates read that its values.yaml does not declare: the GPU Operator v26.7.0
# renders `dcgm.imagePullSecrets` and `dcgmExporter.imagePullSecrets` into its ClusterPolicy
# (NVIDIA/gpu-operator v26.7.0 deployments/gpu-operator/templates/clusterpolicy.yaml, as for every
# other operand), with no default in values.yaml. The dcgm-exporter chart 4.8.2 reads
# `customMetrics` (templates/metrics-configmap.yaml: its metrics list when set, else the chart's
# default list; NVIDIA/dcgm-exporter 4.5.3-4.8.2 deployment/), which values.yaml only shows
# commented out.
TEMPLATE_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "dcgm-exporter": {"customMetrics": ""},  # empty: the template treats it as unset
    "gpu-operator": {
        "dcgm": {"imagePullSecrets": []},
        "dcgmExporter": {"imagePullSecrets": []},
    },
}


def unknown_keys(
    values: Mapping[str, Any],
    defaults: Mapping[str, Any],
    path: str = "",
    passthrough: tuple[str, ...] = (),
) -> list[str]:
    """Dotted paths of keys in `values` that the chart's defaults do not have.

    A default that is an empty map (`nodeSelector: {}`, `config.map: {}`) or null is a free-form
    slot: anything below it is accepted, as below `passthrough` paths (Kubernetes objects the
    chart renders verbatim). Lists are replaced whole, so they are not descended.
    """
    problems: list[str] = []
    for key, value in values.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in defaults:
            problems.append(where)
            continue
        default = defaults[key]
        if where in passthrough:
            continue
        if isinstance(value, Mapping) and isinstance(default, Mapping) and default:
            problems += unknown_keys(value, default, where, passthrough)
        elif isinstance(default, Mapping) and default and not isinstance(value, Mapping):
            problems.append(f"{where} (the chart expects a map here)")
    return problems


def find_strings(values: Any, needle: str, path: str = "") -> list[str]:
    """Paths of string values containing `needle` (e.g. a floating `latest` tag)."""
    found: list[str] = []
    if isinstance(values, Mapping):
        for key, value in values.items():
            found += find_strings(value, needle, f"{path}.{key}" if path else str(key))
    elif isinstance(values, list):
        for index, value in enumerate(values):
            found += find_strings(value, needle, f"{path}[{index}]")
    elif isinstance(values, str) and needle in values:
        found.append(path)
    return found
