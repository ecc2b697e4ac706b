"""Generate tests/data/network_operator_facts.json: what the AKS InfiniBand tests need to know of
NVIDIA's Network Operator at gpufleet's pin, so they run without a checkout of it.

Kept, as parsed data (no comments, no descriptions, no templates): the chart's version and its
default values on the paths gpufleet sets (`network_operator_values`, with the
`node-feature-discovery` subchart's defaults merged in as Helm does), the NodeFeatureRule the
chart applies with `nfd.deployNodeFeatureRules``, and the `NicClusterPolicy`
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
NFD_SUBCHART = "node-feature-discovery"
RULES_TEMPLATE = f"{CHART_DIR}/templates/nodefeaturerules.yaml"


def _show(repo: Path, tag: str, path: str) -> Any:
    text = subprocess.run(
        ["git", "--git-dir", str(repo), "show", f"{tag}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return yaml.safe_load(text)


def _text(repo: Path, tag: str, path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), "show", f"{tag}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        old = merged.get(key)
        both = isinstance(old, Mapping) and isinstance(value, Mapping)
        merged[key] = _merged(old, value) if both else value  # type: ignore[arg-type]
    return merged


def _without_descriptions(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [_without_descriptions(v) for v in value]
    return value


def _defaults_on(values: Mapping[str, Any], sent: Mapping[str, Any]) -> dict[str, Any]:
    """The chart's defaults on the paths `sent` sets (None where the chart has no such key; an
    empty map where the chart's default is a free-form empty map, such as `affinity: {}`)."""
    kept: dict[str, Any] = {}
    for key, given in sent.items():
        default = values.get(key) if isinstance(values, Mapping) else None
        if isinstance(given, Mapping) and isinstance(default, Mapping) and default:
            kept[key] = _defaults_on(default, given)
        else:
            kept[key] = default
    return kept


def build(repo: Path, tag: str) -> dict[str, Any]:
    chart = _show(repo, tag, f"{CHART_DIR}/Chart.yaml")
    values = _show(repo, tag, f"{CHART_DIR}/values.yaml")
    # Helm gives a subchart its own defaults under its name, the parent's values over them.
    nfd = _show(repo, tag, f"{CHART_DIR}/charts/{NFD_SUBCHART}/values.yaml")
    values[NFD_SUBCHART] = _merged(nfd, values.get(NFD_SUBCHART, {}))
    # The chart's NodeFeatureRule, between its `{{- if .Values.nfd.deployNodeFeatureRules }}`
    # and `{{- end }}` lines.
    rule_lines = _text(repo, tag, RULES_TEMPLATE).splitlines()
    gate, *body, end = [line for line in rule_lines if line.strip()]
    assert "nfd.deployNodeFeatureRules" in gate and "end" in end
    rule = yaml.safe_load("\n".join(body))
    (version,) = _show(repo, tag, CRD_FILE)["spec"]["versions"]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    tolerations = [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
    sent = rdma.nic_cluster_policy(["pool"], "label", tolerations)["spec"]
    sent_values = rdma.network_operator_values(["pool"], "label", tolerations, False)
    return {
        "source": f"github.com/Mellanox/network-operator {tag} ({CHART_DIR}, {CRD_FILE})",
        "chart": {
            "version": chart["version"],
            "values": _defaults_on(values, sent_values),
            "nodeFeatureRule": {"gate": "nfd.deployNodeFeatureRules", "spec": rule["spec"]},
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
