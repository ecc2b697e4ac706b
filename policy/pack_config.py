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


class UnreadableStack(Exception):
    """A stack file this script cannot read: its message names the file and what is wrong."""


def pack_config(path: Path) -> dict[str, Any]:
    try:
        document = yaml.safe_load(path.read_text()) or {}
    except OSError as error:
        raise UnreadableStack(f"cannot read {path}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or error
        raise UnreadableStack(f"cannot read {path}: not valid YAML{where}: {problem}") from None
    config = (document.get("config") if isinstance(document, dict) else None) or {}
    if not isinstance(config, dict):
        raise UnreadableStack(f"cannot read {path}: `config:` must be a mapping")
    return {POLICY: {"production": is_production(stack_name(path), config)}}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python policy/pack_config.py stacks/Pulumi.<stack>.yaml", file=sys.stderr)
        return 2
    try:
        config = pack_config(Path(args[0]))
    except UnreadableStack as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(config, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
