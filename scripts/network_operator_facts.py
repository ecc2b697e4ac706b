"""Generate tests/data/network_operator_facts.json: what the AKS InfiniBand tests need to know of
NVIDIA's Network Operator at gpufleet's pin, so they run without a checkout of it.

Kept, as parsed data (no comments, no descriptions, no templates): the chart's version and its
default values on the paths gpufleet sets (`NETWORK_OPERATOR_VALUES`), and the `NicClusterPolicy`
CRD's OpenAPI schema for the spec fields gpufleet sends (descriptions dropped). Source: a git
checkout of github.com/Mellanox/network-operator (Apache-2.0), read at the pinned tag.

    .venv/bin/python scripts/network_operator_facts.py /path/to/network-operator.git
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

PROJECT_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_DIR))

from components.azure.model import rdma  # noqa: E402

DATA_FILE = PROJECT_DIR / "tests" / "data" / "network_operator_facts.json"
CHART_DIR = "deployment/network-operator"
CRD_FILE = f"{CHART_DIR}/crds/mellanox.com_nicclusterpolicies.yaml"


def _show(repo: Path, tag: str, path: str) -> Any:
    text = subprocess.run(
        ["git", "--git-dir", str(repo), "show", f"{tag}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return yaml.safe_load(text)


def _without_descriptions(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [_without_descriptions(v) for v in value]
    return value


def _defaults_on(values: Mapping[str, Any], sent: Mapping[str, Any]) -> dict[str, Any]:
    """The chart's defaults on the paths `sent` sets (None where the chart has no such key)."""
    kept: dict[str, Any] = {}
    for key, given in sent.items():
        default = values.get(key) if isinstance(values, Mapping) else None
        if isinstance(given, Mapping) and isinstance(default, Mapping):
            kept[key] = _defaults_on(default, given)
        else:
            kept[key] = default
    return kept


def build(repo: Path, tag: str) -> dict[str, Any]:
    chart = _show(repo, tag, f"{CHART_DIR}/Chart.yaml")
    values = _show(repo, tag, f"{CHART_DIR}/values.yaml")
    (version,) = _show(repo, tag, CRD_FILE)["spec"]["versions"]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    sent = rdma.nic_cluster_policy(["pool"], "label", ("key", "value"))["spec"]
    return {
        "source": f"github.com/Mellanox/network-operator {tag} ({CHART_DIR}, {CRD_FILE})",
        "chart": {
            "version": chart["version"],
            "values": _defaults_on(values, rdma.NETWORK_OPERATOR_VALUES),
        },
        "nicClusterPolicy": {
            "apiVersion": f"mellanox.com/{version['name']}",
            "spec": {
                "type": "object",
                "properties": {
                    key: _without_descriptions(spec["properties"][key]) for key in sorted(sent)
                },
            },
            "specFields": sorted(spec["properties"]),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="a git directory of Mellanox/network-operator")
    parser.add_argument("--tag", default=f"v{rdma.NETWORK_OPERATOR.version}")
    args = parser.parse_args(argv)
    DATA_FILE.write_text(json.dumps(build(args.repo, args.tag), indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
