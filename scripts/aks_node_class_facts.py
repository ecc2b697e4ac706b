"""Generate tests/data/aks_node_class_schema.json: the AKSNodeClass CRD's structural schema at
the release AKS node auto-provisioning runs, so the tests validate gpufleet's AKSNodeClass on a
clone without the provider's source.

AKS runs the newest Azure/karpenter-provider-azure release for node auto-provisioning
(MicrosoftDocs/azure-aks-docs articles/aks/use-node-auto-provisioning.md); the pin is
components/azure/model/nap.py PROVIDER_RELEASE. The schema is the served `v1beta1` version
(the storage version) of pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml at that tag,
without descriptions, CEL rules and status (scripts/karpenter_facts.py crd_schema).

    git clone --bare https://github.com/Azure/karpenter-provider-azure PROVIDER
    .venv/bin/python -m scripts.aks_node_class_facts --provider-repo PROVIDER
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from scripts.chart_facts import PROJECT_DIR, render
from scripts.karpenter_facts import crd_schema

DATA_FILE = PROJECT_DIR / "tests" / "data" / "aks_node_class_schema.json"
TAG = "v1.14.2"
COMMIT = "d1552b7e96e3d3bf44acc55be5786b25cdbfaaf4"
CRD_PATH = "pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml"
SERVED = "v1beta1"


def build(provider_repo: Path) -> dict[str, object]:
    shown = subprocess.run(
        ["git", "--git-dir", str(provider_repo), "show", f"{COMMIT}:{CRD_PATH}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {
        "source": f"Azure/karpenter-provider-azure {TAG} ({COMMIT}) {CRD_PATH}, {SERVED}",
        "schema": crd_schema(shown.stdout, SERVED),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--provider-repo", type=Path, required=True)
    options = parser.parse_args(argv)
    DATA_FILE.write_text(render(build(options.provider_repo)))
    print(f"wrote {DATA_FILE.relative_to(PROJECT_DIR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
