"""Generate tests/data/kueue_facts.json: what the tests need to know of Kueue's pinned chart.

The Kueue tests validate gpufleet's ResourceFlavor, ClusterQueue, LocalQueue, AdmissionCheck and
ProvisioningRequestConfig objects against the chart's CRDs, and its Helm values against the
chart's `values.yaml`. The chart is not in this repository, so the facts are kept here as data:
each CRD's v1beta2 structural schema without descriptions, CEL rules and status (types,
properties, required keys, enums, patterns and bounds), and the chart's defaults on the paths
gpufleet sets plus the placement keys (as in scripts/chart_facts.py). The chart keeps its CRDs
in templates/crd/ (Helm upgrades them with the release); their few template expressions sit in
metadata and the conversion webhook, and are blanked before parsing.

Get the chart at the pinned tag and regenerate after a Kueue pin or a Kueue Helm value changes:

    git -C <kueue clone> archive v0.19.2 charts/kueue | tar -x -C /tmp/kueue
    .venv/bin/python -m scripts.kueue_facts --chart-dir /tmp/kueue/charts/kueue \\
        --commit "$(git -C <kueue clone> rev-parse v0.19.2^{commit})"

tests/test_kueue.py compares this file with a fresh generation when GPUFLEET_KUEUE_CHART names
such a chart directory.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from scripts.chart_facts import PROJECT_DIR, image_paths, prune, render, value_paths
from scripts.karpenter_facts import _structural

DATA_FILE = PROJECT_DIR / "tests" / "data" / "kueue_facts.json"
CRD_FILES = {
    "ResourceFlavor": "kueue.x-k8s.io_resourceflavors.yaml",
    "ClusterQueue": "kueue.x-k8s.io_clusterqueues.yaml",
    "LocalQueue": "kueue.x-k8s.io_localqueues.yaml",
    "AdmissionCheck": "kueue.x-k8s.io_admissionchecks.yaml",
    "ProvisioningRequestConfig": "kueue.x-k8s.io_provisioningrequestconfigs.yaml",
}
CRD_VERSION = "v1beta2"
CONFIG_KEY = "controllerManagerConfigYaml"
_TEMPLATE = re.compile(r"\{\{.*?\}\}", re.S)


def crd_schema(path: Path) -> dict[str, Any]:
    """The v1beta2 schema of a chart's CRD template, structural part only, without `status`."""
    crd = yaml.safe_load(_TEMPLATE.sub("", path.read_text()))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == CRD_VERSION]
    schema = dict(version["schema"]["openAPIV3Schema"])
    schema["properties"] = {k: v for k, v in schema["properties"].items() if k != "status"}
    return dict(_structural(schema))


def used_paths() -> list[tuple[str, ...]]:
    """Every values path gpufleet's Kueue release can set (with a node selector)."""
    sys.path.insert(0, str(PROJECT_DIR))
    from components.model import kueue

    values = kueue.helm_values({"gpufleet.io/pool": "system"}, ["default"])
    return sorted(set(value_paths(values)) | image_paths("kueue"))


def _parsed_manager_config(values: dict[str, Any]) -> dict[str, Any]:
    """The controller configuration is a YAML string in the chart's values; keep it as the
    data it parses to (its commented-out examples are prose, not defaults)."""
    manager = values.get("managerConfig")
    if isinstance(manager, dict) and isinstance(manager.get(CONFIG_KEY), str):
        values["managerConfig"] = {**manager, CONFIG_KEY: yaml.safe_load(manager[CONFIG_KEY])}
    return values


def build(chart_dir: Path, commit: str) -> dict[str, Any]:
    chart = yaml.safe_load((chart_dir / "Chart.yaml").read_text())
    defaults = yaml.safe_load((chart_dir / "values.yaml").read_text()) or {}
    version = str(chart["version"])
    return {
        "source": f"kubernetes-sigs/kueue charts/kueue {version}, commit {commit} "
        "(scripts/kueue_facts.py)",
        "version": version,
        "appVersion": str(chart["appVersion"]),
        "crds": {
            kind: crd_schema(chart_dir / "templates" / "crd" / name)
            for kind, name in CRD_FILES.items()
        },
        "values": _parsed_manager_config(prune(defaults, used_paths())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chart-dir", type=Path, required=True, help="charts/kueue at the tag")
    parser.add_argument("--commit", required=True, help="the commit the tag names")
    options = parser.parse_args(argv)
    if not (options.chart_dir / "Chart.yaml").is_file():
        print(f"error: no Kueue chart at {options.chart_dir}", file=sys.stderr)
        return 2
    DATA_FILE.write_text(render(build(options.chart_dir, options.commit)))
    print(f"wrote {DATA_FILE.relative_to(PROJECT_DIR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
