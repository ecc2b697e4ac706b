"""Generate tests/data/chart_facts.json: what the tests need to know of each pinned chart.

The tests check gpufleet's Helm values against the charts' real `values.yaml` (that every key
gpufleet sets exists, and where the chart's own defaults put its pods). Those files live in
../shared/reference/helm, which outside users do not have, so the facts the tests rely on are
kept here as data: per chart, its version and the part of its default values on the paths
gpufleet sets plus the keys that decide placement and what runs (`KEPT_KEYS`, at any depth).
No comments or templates are copied; values are the charts' defaults as parsed YAML.

Regenerate after a chart pin or a Helm value changes (tests/test_chart_facts.py says when):

    .venv/bin/python scripts/chart_facts.py [--helm-dir ../shared/reference/helm]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

PROJECT_DIR = Path(__file__).resolve().parent.parent
DATA_FILE = PROJECT_DIR / "tests" / "data" / "chart_facts.json"
DEFAULT_HELM_DIR = PROJECT_DIR.parent / "shared" / "reference" / "helm"

# Keys kept wherever they occur, with their whole default: where the chart schedules its pods,
# which components run (and their arguments: the metrics list dcgm-exporter reads), their
# images and requests, and the extra volumes it mounts.
KEPT_KEYS = frozenset(
    {
        "affinity",
        "arguments",
        "enabled",
        "extraConfigMapVolumes",
        "extraHostVolumes",
        "extraVolumeMounts",
        "image",
        "nodeSelector",
        "resources",
        "tolerations",
    }
)
Path_ = tuple[str, ...]


def value_paths(values: Mapping[str, Any], prefix: Path_ = ()) -> Iterator[Path_]:
    """Every leaf path of a values tree (a list or scalar is a leaf; an empty map too)."""
    for key, value in values.items():
        path = (*prefix, str(key))
        if isinstance(value, Mapping) and value:
            yield from value_paths(value, path)
        else:
            yield path


def prune(defaults: Mapping[str, Any], used: Iterable[Path_]) -> dict[str, Any]:
    """The part of `defaults` on the `used` paths (as far as the chart has them), plus
    `KEPT_KEYS` anywhere, each with its default value."""
    kept: dict[str, Any] = {}
    for path in used:
        source: Any = defaults
        target = kept
        for depth, key in enumerate(path):
            if not isinstance(source, Mapping) or key not in source:
                break
            value = source[key]
            if depth == len(path) - 1 or not isinstance(value, Mapping):
                target[key] = _without_templates(value)
                break
            target = target.setdefault(key, {})
            source = value
    return _merge(kept, _kept_keys(defaults))


def _without_templates(value: Any) -> Any:
    """A default as data only: a Helm template string (`{{ ... }}`) is not copied."""
    if isinstance(value, str) and "{{" in value:
        return "<helm template>"
    if isinstance(value, list):
        return [_without_templates(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _without_templates(item) for key, item in value.items()}
    return value


def _kept_keys(defaults: Mapping[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in defaults.items():
        if key in KEPT_KEYS:
            found[key] = value
        elif isinstance(value, Mapping):
            inner = _kept_keys(value)
            if inner:
                found[key] = inner
    return found


def _merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(a)
    for key, value in b.items():
        if isinstance(merged.get(key), Mapping) and isinstance(value, Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged.setdefault(key, value)
    return merged


def build(helm_dir: Path, used_by_chart: Mapping[str, Iterable[Path_]]) -> dict[str, Any]:
    """The data file's content, from the charts under `helm_dir` and the paths gpufleet sets."""
    charts: dict[str, Any] = {}
    for chart_dir in sorted(p for p in helm_dir.iterdir() if (p / "values.yaml").is_file()):
        chart = yaml.safe_load((chart_dir / "Chart.yaml").read_text())
        defaults = yaml.safe_load((chart_dir / "values.yaml").read_text()) or {}
        used = sorted(set(used_by_chart.get(chart["name"], ())))
        charts[chart["name"]] = {"version": str(chart["version"]), "values": prune(defaults, used)}
    return {"source": "../shared/reference/helm (scripts/chart_facts.py)", "charts": charts}


def render(facts: Mapping[str, Any]) -> str:
    return json.dumps(facts, indent=1, sort_keys=True) + "\n"


def image_paths(chart: str) -> set[Path_]:
    """Every values path gpufleet may set for a chart's images (tags, and under a mirror
    repositories and pull secrets: components/model/catalog/images.py), whatever the stack."""
    sys.path.insert(0, str(PROJECT_DIR))
    from components.model.catalog.images import CHART_IMAGES

    images = CHART_IMAGES.get(chart)
    if images is None:
        return set()
    paths = {path for slot in images.slots for path in (slot.repository, slot.tag, slot.image)}
    return {path for path in paths if path is not None} | set(images.secret_keys)


def used_paths_of_plans(plans: Iterable[Any]) -> dict[str, set[Path_]]:
    """Chart -> every values path gpufleet's Helm releases set in these plans, and every path
    of the chart's images (`image_paths`)."""
    used: dict[str, set[Path_]] = {}
    for plan in plans:
        for release in plan.of_type("kubernetes:helm.sh/v3:Release"):
            chart = str(release.inputs.get("chart", "")).rsplit("/", 1)[-1]
            values = release.inputs.get("values") or {}
            used.setdefault(chart, set()).update(value_paths(values))
    for chart, paths in used.items():
        paths.update(image_paths(chart))
    return used


def every_software_plan() -> Iterator[Any]:
    """Each shipped stack planned in every GPU software mode its cloud accepts, with the DCGM
    exporter and samples on: every Helm value gpufleet can send for the shipped stacks."""
    sys.path.insert(0, str(PROJECT_DIR))
    from components.model.config import ConfigError, parse_config
    from components.tooling.engine import plan_stack
    from components.tooling.stacks import load_stack, shipped_stacks

    for name in shipped_stacks():
        stack = load_stack(name)
        for mode in ("device-plugin", "gpu-operator", "cloud-managed"):
            overrides = software_overrides(stack.config, mode)
            raw = {**stack.gpufleet, **{k.split(":", 1)[1]: v for k, v in overrides.items()}}
            try:
                parse_config(raw)
            except ConfigError:
                continue
            yield plan_stack(stack, overrides)


def software_overrides(config: Mapping[str, Any], mode: str) -> dict[str, Any]:
    """The stack's gpuSoftware in `mode`, with monitoring and samples on (tests use the same)."""
    software = dict(config.get("gpufleet:gpuSoftware") or {})
    software["mode"] = mode
    if mode != "gpu-operator":
        software.pop("operatorDriver", None)
    software["monitoring"] = {"dcgmExporter": True}
    return {"gpufleet:gpuSoftware": software, "gpufleet:samples": {"enabled": True}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--helm-dir", type=Path, default=DEFAULT_HELM_DIR)
    options = parser.parse_args(argv)
    if not options.helm_dir.is_dir():
        print(f"error: no chart reference at {options.helm_dir}", file=sys.stderr)
        return 2
    facts = build(options.helm_dir, used_paths_of_plans(every_software_plan()))
    DATA_FILE.parent.mkdir(parents=True, exist_ok=True)
    DATA_FILE.write_text(render(facts))
    print(f"wrote {DATA_FILE.relative_to(PROJECT_DIR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
