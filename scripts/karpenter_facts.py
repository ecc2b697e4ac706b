"""Generate tests/data/karpenter_facts.json: what the tests need to know of Karpenter 1.14.1.

The Karpenter tests validate gpufleet's NodePool and EC2NodeClass objects against the CRDs'
OpenAPI schemas and its Helm values against the chart's `values.yaml`. Those files live in
../shared/reference/karpenter, which outside users do not have, so the facts are kept here as
data: each CRD's v1 structural schema without its descriptions, CEL rules and status (types,
properties, required keys, enums, patterns and bounds), and the chart's defaults on the paths
gpufleet sets plus the placement keys (as in scripts/chart_facts.py).

Regenerate after a Karpenter pin or a Karpenter Helm value changes (tests/test_karpenter.py
says when):

    .venv/bin/python scripts/karpenter_facts.py [--karpenter-dir ../shared/reference/karpenter]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from scripts.chart_facts import PROJECT_DIR, Path_, prune, render, used_paths_of_plans

DATA_FILE = PROJECT_DIR / "tests" / "data" / "karpenter_facts.json"
DEFAULT_DIR = PROJECT_DIR.parent / "shared" / "reference" / "karpenter"
CRD_FILES = {
    "NodePool": "karpenter.sh_nodepools.yaml",
    "EC2NodeClass": "karpenter.k8s.aws_ec2nodeclasses.yaml",
}
# Prose and rules the API server evaluates (CEL), which a JSON Schema validator cannot.
DROPPED_KEYS = frozenset({"description", "x-kubernetes-validations"})
STACK = "aws-karpenter"


def _structural(schema: Any) -> Any:
    if isinstance(schema, Mapping):
        return {k: _structural(v) for k, v in schema.items() if k not in DROPPED_KEYS}
    if isinstance(schema, list):
        return [_structural(v) for v in schema]
    return schema


def crd_schema(path: Path) -> dict[str, Any]:
    """The v1 schema of a CRD file, structural part only, without `status`."""
    crd = yaml.safe_load(path.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    schema = dict(version["schema"]["openAPIV3Schema"])
    schema["properties"] = {k: v for k, v in schema["properties"].items() if k != "status"}
    return dict(_structural(schema))


def build(karpenter_dir: Path, used: Iterable[Path_]) -> dict[str, Any]:
    defaults = yaml.safe_load((karpenter_dir / "values.yaml").read_text()) or {}
    return {
        "source": "../shared/reference/karpenter (scripts/karpenter_facts.py)",
        "crds": {kind: crd_schema(karpenter_dir / "crds" / f) for kind, f in CRD_FILES.items()},
        "values": prune(defaults, sorted(set(used))),
    }


def used_paths(plans: Iterable[Any]) -> list[Path_]:
    return sorted(used_paths_of_plans(plans).get("karpenter", set()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--karpenter-dir", type=Path, default=DEFAULT_DIR)
    options = parser.parse_args(argv)
    if not options.karpenter_dir.is_dir():
        print(f"error: no Karpenter reference at {options.karpenter_dir}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(PROJECT_DIR))
    from components.tooling.engine import plan_stack
    from components.tooling.stacks import load_stack

    facts = build(options.karpenter_dir, used_paths([plan_stack(load_stack(STACK))]))
    DATA_FILE.write_text(render(facts))
    print(f"wrote {DATA_FILE.relative_to(PROJECT_DIR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
