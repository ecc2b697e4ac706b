"""Shared fixtures: plans of the stacks, computed once per test session, and which stacks the
tests that loop over stacks/ run on."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from components.tooling.engine import Plan, plan_stack
from components.tooling.stacks import all_stacks, load_stack

SHARED_REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"


@functools.cache
def _plan_cached(stack: str, overrides_json: str) -> Plan:
    overrides = json.loads(overrides_json)
    return plan_stack(load_stack(stack), overrides or None)


def plan_of(stack: str, overrides: Mapping[str, Any] | None = None) -> Plan:
    """The recorded graph of a stack, optionally with whole config keys replaced."""
    return _plan_cached(stack, json.dumps(overrides or {}, sort_keys=True))


# Tests marked `every_stack` check what every valid stack in stacks/ has (the examples and the
# user's own). GPUFLEET_TEST_STACKS=a,b narrows them to those stacks: with `-m every_stack` it
# checks just a team's stacks (tests/test_user_stacks.py runs them so on three user stacks).
ONLY_STACKS_ENV = "GPUFLEET_TEST_STACKS"


def every_stack() -> list[str]:
    """The stacks the every-stack tests run on: all of stacks/, or those GPUFLEET_TEST_STACKS
    names."""
    only = [name for name in os.environ.get(ONLY_STACKS_ENV, "").split(",") if name]
    return only or all_stacks()


def over_every_stack(test: Callable[..., None]) -> Callable[..., None]:
    """Parametrize `test` by `stack` over every stack in stacks/, marked `every_stack`."""
    marked: Callable[..., None] = pytest.mark.every_stack(
        pytest.mark.parametrize("stack", every_stack())(test)
    )
    return marked


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
    values = json.loads(json.dumps(facts["values"]))  # a copy the test may change
    from components.kubernetes.chart_values import SUBCHART_DEFAULTS, merge

    # The parent's values win; a subchart's own defaults fill what the parent does not repeat.
    return merge(SUBCHART_DEFAULTS.get(chart, {}), values)


# The clouds' calendar day the version tables and the reviews were read on: every plan and
# config check in the tests judges Kubernetes support on it, so the suite never rots.
PINNED_TODAY = date(2026, 11, 22)


@pytest.fixture(autouse=True)
def _pinned_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("components.model.config.clock_today", lambda: PINNED_TODAY)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The few long tests (marked `slow`) first: started last, one would run alone at the end
    while the other worker idles."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
