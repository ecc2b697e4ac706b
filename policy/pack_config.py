"""Write the policy pack config for a stack: which stacks count as production.

    python policy/pack_config.py stacks/Pulumi.<stack>.yaml > policy-config.json

A stack is production when its file sets `gpufleet:cluster.protect: true` (the key gpufleet
documents for production stacks) or when its name says so (`prod`, `production`, `*-prod`,
`prod-*`). The marker is read from the stack file, not from the program, so the
`clusters-protected-in-production` policy catches a program that fails to protect the cluster,
and a stack named prod whose file forgot `protect`.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

POLICY = "clusters-protected-in-production"
PRODUCTION_NAME = re.compile(r"(^|[-_.])(prod|production)($|[-_.])", re.IGNORECASE)


def stack_name(path: Path) -> str:
    name = path.name
    if name.startswith("Pulumi.") and name.endswith((".yaml", ".yml")):
        return name[len("Pulumi.") :].rsplit(".", 1)[0]
    return path.stem


def is_production(name: str, config: Mapping[str, Any]) -> bool:
    cluster = config.get("gpufleet:cluster")
    protected = isinstance(cluster, Mapping) and cluster.get("protect") is True
    return protected or bool(PRODUCTION_NAME.search(name))


def pack_config(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text()) or {}
    config = document.get("config") or {}
    return {POLICY: {"production": is_production(stack_name(path), config)}}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python policy/pack_config.py stacks/Pulumi.<stack>.yaml", file=sys.stderr)
        return 2
    print(json.dumps(pack_config(Path(args[0])), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
