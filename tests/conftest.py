"""Shared fixtures: plans of the shipped stacks, computed once per test session."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from components.tooling.engine import Plan, plan_stack
from components.tooling.stacks import load_stack

SHARED_REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"


@functools.cache
def _plan_cached(stack: str, overrides_json: str) -> Plan:
    overrides = json.loads(overrides_json)
    return plan_stack(load_stack(stack), overrides or None)


def plan_of(stack: str, overrides: Mapping[str, Any] | None = None) -> Plan:
    """The recorded graph of a shipped stack, optionally with whole config keys replaced."""
    return _plan_cached(stack, json.dumps(overrides or {}, sort_keys=True))


@pytest.fixture
def plan() -> Callable[..., Plan]:
    return plan_of


CHART_FACTS = Path(__file__).resolve().parent / "data" / "chart_facts.json"


@functools.cache
def _chart_facts() -> dict[str, Any]:
    facts: dict[str, Any] = json.loads(CHART_FACTS.read_text())["charts"]
    return facts


def chart_defaults(chart: str) -> dict[str, Any]:
    """The pinned chart's default values that the tests rely on: from the generated
    tests/data/chart_facts.json (scripts/chart_facts.py; test_chart_facts keeps it current
    against ../shared/reference/helm), so no test needs ../shared."""
    facts = _chart_facts()[chart]
    from components.model.catalog import charts

    assert facts["version"] == charts.CHARTS[chart].version, (
        f"{CHART_FACTS.name} describes {chart} {facts['version']}, gpufleet pins "
        f"{charts.CHARTS[chart].version}: run scripts/chart_facts.py"
    )
    return json.loads(json.dumps(facts["values"]))  # a copy the test may change


# The clouds' calendar day the version tables and the reviews were read on: every plan and
# config check in the tests judges Kubernetes support on it, so the suite never rots.
PINNED_TODAY = date(2026, 11, 22)


@pytest.fixture(autouse=True)
def _pinned_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("components.model.config.clock_today", lambda: PINNED_TODAY)
