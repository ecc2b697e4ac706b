"""Shared fixtures: plans of the stacks, computed once per test session, and which stacks the
tests that loop over stacks/ run on."""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import os
import pickle
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime import settings as pulumi_settings

from components.tooling.engine import Plan, plan_stack
from components.tooling.stacks import all_stacks, load_stack

# The test command installs with pip --no-compile, and machines that set PYTHONDONTWRITEBYTECODE
# (as the machines here do) then compiled the provider SDKs anew in every process: both workers and each
# CLI subprocess, about 3 s each. Writing the bytecode cache on first import lets every later
# process read it; the cache lands only in .venv and in __pycache__/ (ignored by git).
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

SHARED_REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"

# Python's cyclic garbage collector took about half of a worker's CPU: a plan allocates hundreds
# of thousands of short-lived objects (Pulumi's asyncio tasks and outputs), so with the default
# thresholds (700, 10, 10) the oldest generation was collected every plan or two, and each such
# pass walked the whole heap: the provider SDKs' classes, every test module and every cached plan
# (up to 3 s a pass late in a run). Collecting less often, and freezing what lives all session
# (the modules after collection, each cached plan: `_kept`) out of the collector's walk, halves
# the suite's CPU (measured: 334 s -> 215 s user+sys for the whole run; the workers' peak memory
# stays at 1.6 GB). Reference counting frees everything as before; only cycles wait longer.
gc.set_threshold(10_000, 20, 20)


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()


# Plans shared between the xdist workers of one run: each worker planned the base stacks and
# every software variant again (55 of ~300 plans, about 0.5 s each). The controller makes a
# directory for the run and removes it at the end; a worker pickles each plan there and reads
# the other's. The variable is taken out of the workers' environment, so a pytest a test starts
# (test_user_stacks) never shares it.
PLAN_DIR_ENV = "GPUFLEET_TEST_PLAN_DIR"
_SHARED_PLANS: list[Path] = []


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        shared = os.environ.pop(PLAN_DIR_ENV, "")
        if shared:
            _SHARED_PLANS.append(Path(shared))
    elif config.getoption("numprocesses", None):
        os.environ[PLAN_DIR_ENV] = tempfile.mkdtemp(prefix="gpufleet-plans-")


def pytest_unconfigure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and os.environ.get(PLAN_DIR_ENV):
        shutil.rmtree(os.environ.pop(PLAN_DIR_ENV), ignore_errors=True)


@functools.cache
def _plan_cached(stack: str, overrides_json: str) -> Plan:
    stack_file = load_stack(stack)
    overrides = json.loads(overrides_json)
    if not _SHARED_PLANS:
        return _kept(plan_stack(stack_file, overrides or None))
    key = hashlib.sha256(
        "\0".join([stack, overrides_json, stack_file.path.read_text()]).encode()
    ).hexdigest()
    cached = _SHARED_PLANS[0] / f"{key}.pickle"
    if cached.is_file():
        return _kept(pickle.loads(cached.read_bytes()))
    plan = plan_stack(stack_file, overrides or None)
    partial = cached.with_suffix(f".{os.getpid()}")
    partial.write_bytes(pickle.dumps(plan, protocol=pickle.HIGHEST_PROTOCOL))
    partial.replace(cached)  # atomic: the other worker never reads half a file
    return _kept(plan)


def _kept(plan: Plan) -> Plan:
    """A plan the cache keeps for the session leaves the collector's walk, with the SDK modules
    its run imported. The Pulumi runtime the run leaves set (root resource, mock monitor) is
    reset first, so its graph is garbage now, collected, and never frozen."""
    pulumi_settings.reset_options()
    gc.collect()
    gc.freeze()
    return plan


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
    from components.kubernetes.chart_values import SUBCHART_DEFAULTS, TEMPLATE_DEFAULTS, merge

    # The parent's values win; a subchart's own defaults fill what the parent does not repeat,
    # and keys the templates read without a default in values.yaml are known too.
    known = merge(SUBCHART_DEFAULTS.get(chart, {}), TEMPLATE_DEFAULTS.get(chart, {}))
    return merge(known, values)


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
