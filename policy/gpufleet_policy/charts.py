"""Helm charts install at an exact, pinned version: never `latest`, empty, or a range."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ResourceValidationPolicy,
)

from .resources import HELM_TYPES, get
from .rules import resource_rule

# One exact SemVer 2 version, with the optional leading `v` some charts use (gpu-operator).
EXACT_VERSION = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$"
)


def check_chart_pinned(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """A Helm release or chart names one exact version (what was reviewed is what installs)."""
    if resource_type not in HELM_TYPES:
        return []
    chart = get(props, "chart") or "chart"
    version = get(props, "version")
    if version is None or str(version).strip() == "":
        return [f"chart {chart!r} has no version: Helm would install whatever is newest"]
    if not EXACT_VERSION.match(str(version)):
        return [
            f"chart {chart!r} version {version!r} is not one exact version (no latest, ranges or wildcards)"
        ]
    return []


charts_pinned = ResourceValidationPolicy(
    name="helm-charts-pinned",
    description="Every Helm release pins one exact chart version (no empty version, 'latest', ranges or wildcards).",
    validate=resource_rule(check_chart_pinned),
    enforcement_level=EnforcementLevel.MANDATORY,
)

POLICIES = [charts_pinned]
