"""tests/data/chart_facts.json is what the pinned charts really say, and what the tests need.

The data file lets every chart test run without ../shared. When ../shared/reference/helm is
there, the file must equal a fresh generation from it and from every Helm value gpufleet sends
for the shipped stacks: a chart bump or a new Helm value then fails here until
`scripts/chart_facts.py` is run.
"""

from __future__ import annotations

import json

import pytest

from components.model.catalog import charts
from components.model.config import ConfigError, parse_config
from components.tooling.stacks import load_stack, shipped_stacks
from scripts import chart_facts
from tests.conftest import CHART_FACTS, SHARED_REFERENCE, chart_defaults, plan_of

HELM_DIR = SHARED_REFERENCE / "helm"


def software_plans() -> list[object]:
    """The plans test_software makes (same overrides, so the session cache serves them)."""
    plans = []
    for name in shipped_stacks():
        stack = load_stack(name)
        for mode in ("device-plugin", "gpu-operator", "cloud-managed"):
            overrides = chart_facts.software_overrides(stack.config, mode)
            raw = {**stack.gpufleet, **{k.split(":", 1)[1]: v for k, v in overrides.items()}}
            try:
                parse_config(raw)
            except ConfigError:
                continue
            plans.append(plan_of(name, overrides))
    return plans


def test_the_data_file_describes_every_pinned_chart_at_its_version() -> None:
    described = json.loads(CHART_FACTS.read_text())["charts"]
    assert set(described) == set(charts.CHARTS)
    for name, pin in charts.CHARTS.items():
        assert described[name]["version"] == pin.version
        assert chart_defaults(name)  # the helper the chart tests use reads it


def test_the_data_file_is_small_and_only_data() -> None:
    text = CHART_FACTS.read_text()
    assert len(text) < 32_000
    assert "{{" not in text and "#" not in text  # no template or comment was copied


# On test_software's worker (pyproject.toml: --dist loadgroup) and not run first as slow, so it
# finds test_software's plans made instead of making all 40 while test_software makes them too.
@pytest.mark.xdist_group("software-plans")
@pytest.mark.skipif(not HELM_DIR.is_dir(), reason="../shared/reference/helm is absent")
def test_the_data_file_is_current_with_the_charts_and_gpufleets_values() -> None:
    fresh = chart_facts.build(HELM_DIR, chart_facts.used_paths_of_plans(software_plans()))
    assert chart_facts.render(fresh) == CHART_FACTS.read_text(), (
        "tests/data/chart_facts.json is stale: run .venv/bin/python scripts/chart_facts.py"
    )


def test_pruning_keeps_used_paths_and_placement_keys_only() -> None:
    defaults = {
        "a": {"b": 1, "c": 2},
        "d": {"nodeSelector": {"x": "y"}, "other": 3},
        "e": [1, 2],
        "f": 4,
    }
    assert chart_facts.prune(defaults, [("a", "b"), ("e",), ("missing", "key")]) == {
        "a": {"b": 1},
        "d": {"nodeSelector": {"x": "y"}},
        "e": [1, 2],
    }
