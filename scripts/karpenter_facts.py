"""Generate tests/data/karpenter_facts.json: what the tests need to know of Karpenter 1.14.1.

The Karpenter tests validate gpufleet's NodePool and EC2NodeClass objects against the CRDs'
OpenAPI schemas and its Helm values against the chart's `values.yaml`. Those files live in
../shared/reference/karpenter, which outside users do not have, so the facts are kept here as
data: each CRD's v1 structural schema without its descriptions, CEL rules and status (types,
properties, required keys, enums, patterns and bounds), and the chart's defaults on the paths
gpufleet sets plus the placement keys (as in scripts/chart_facts.py).

CRDs the reference directory lacks (NodeOverlay, which the karpenter-crd chart 1.14.1 ships at
karpenter.sh/v1alpha1) are read from a clone of aws/karpenter-provider-aws at the pinned tag
(`--provider-repo`, `git show v<version>:pkg/apis/crds/<file>`); without one, they are carried
over from the current data file, so the currency test can rebuild it from the reference alone.

Regenerate after a Karpenter pin or a Karpenter Helm value changes (tests/test_karpenter.py
says when):

    .venv/bin/python scripts/karpenter_facts.py [--karpenter-dir ../shared/reference/karpenter]
        [--provider-repo PATH-TO-karpenter-provider-aws-CLONE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
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
    "NodeOverlay": "karpenter.sh_nodeoverlays.yaml",
}
# The API version gpufleet writes of each kind (NodeOverlay is alpha in Karpenter 1.14).
CRD_VERSIONS = {"NodePool": "v1", "EC2NodeClass": "v1", "NodeOverlay": "v1alpha1"}
KARPENTER_VERSION = "1.14.1"
# Prose and rules the API server evaluates (CEL), which a JSON Schema validator cannot.
DROPPED_KEYS = frozenset({"description", "x-kubernetes-validations"})
STACK = "aws-karpenter"


def _structural(schema: Any) -> Any:
    if isinstance(schema, Mapping):
        return {k: _structural(v) for k, v in schema.items() if k not in DROPPED_KEYS}
    if isinstance(schema, list):
        return [_structural(v) for v in schema]
    return schema


def crd_schema(text: str, served: str = "v1") -> dict[str, Any]:
    """The `served` version's schema of a CRD, structural part only, without `status`."""
    crd = yaml.safe_load(text)
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == served]
    schema = dict(version["schema"]["openAPIV3Schema"])
    schema["properties"] = {k: v for k, v in schema["properties"].items() if k != "status"}
    return dict(_structural(schema))


def _crd_text(kind: str, karpenter_dir: Path, provider_repo: Path | None) -> str | None:
    path = karpenter_dir / "crds" / CRD_FILES[kind]
    if path.is_file():
        return path.read_text()
    if provider_repo is None:
        return None
    ref = f"v{KARPENTER_VERSION}:pkg/apis/crds/{CRD_FILES[kind]}"
    shown = subprocess.run(
        ["git", "--git-dir", str(provider_repo), "show", ref],
        capture_output=True,
        text=True,
        check=True,
    )
    return shown.stdout


def build(
    karpenter_dir: Path, used: Iterable[Path_], provider_repo: Path | None = None
) -> dict[str, Any]:
    defaults = yaml.safe_load((karpenter_dir / "values.yaml").read_text()) or {}
    previous = json.loads(DATA_FILE.read_text())["crds"] if DATA_FILE.is_file() else {}
    crds: dict[str, Any] = {}
    for kind in CRD_FILES:
        text = _crd_text(kind, karpenter_dir, provider_repo)
        if text is not None:
            crds[kind] = crd_schema(text, CRD_VERSIONS[kind])
        elif kind in previous:
            crds[kind] = previous[kind]
        else:
            raise SystemExit(f"no {CRD_FILES[kind]}: pass --provider-repo")
    return {
        "source": (
            "../shared/reference/karpenter; NodeOverlay from aws/karpenter-provider-aws "
            f"v{KARPENTER_VERSION} pkg/apis/crds (scripts/karpenter_facts.py)"
        ),
        "crds": crds,
        "values": prune(defaults, sorted(set(used))),
    }


def used_paths(plans: Iterable[Any]) -> list[Path_]:
    return sorted(used_paths_of_plans(plans).get("karpenter", set()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--karpenter-dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--provider-repo", type=Path, default=None)
    options = parser.parse_args(argv)
    if not options.karpenter_dir.is_dir():
        print(f"error: no Karpenter reference at {options.karpenter_dir}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(PROJECT_DIR))
    from components.tooling.engine import plan_stack
    from components.tooling.stacks import load_stack

    used = used_paths([plan_stack(load_stack(STACK))])
    facts = build(options.karpenter_dir, used, options.provider_repo)
    DATA_FILE.write_text(render(facts))
    print(f"wrote {DATA_FILE.relative_to(PROJECT_DIR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
