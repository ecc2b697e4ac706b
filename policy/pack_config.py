"""Write the policy pack config for a stack: which stacks count as production, what a
production stack allows on purpose, and what the stack costs (with the budget, if one is given).

    python policy/pack_config.py stacks/Pulumi.<stack>.yaml [--max-per-hour USD] > policy-config.json

A stack is production when its file sets `gpufleet:cluster.protect: true` (the key gpufleet
documents for production stacks) or when its name says so (`prod`, `production`, `*-prod`,
`prod-*`). The marker is read from the stack file, not from the program, so the
`clusters-protected-in-production` policy catches a program that fails to protect the cluster,
and a stack named prod whose file forgot `protect`. A production stack's file may allow, on
purpose, an API endpoint open to the whole internet (`cluster.allowPublicApiEndpoint: true`)
and AKS local accounts (`cluster.azure.allowLocalAccounts: true`); the production rules of
policy/gpufleet_policy/exposure.py get them from here.

`gpu-cost-at-full-scale` gets the stack's `cost` (what `plan STACK --json` prints, computed from
the stack file with gpufleet's model, so run this with the program's virtualenv) and the stack's
budget: `gpufleet:cost` in the stack file (`maxPerHour`, optionally `maxIdlePerHour`), which is
where a team keeps it, so the shipped pull-request workflows enforce it with no change. The
options `--max-per-hour` / `--max-idle-per-hour` override the file's values for one run. Without
a budget the rule passes. A file gpufleet cannot read gets no `cost` (`plan` reports its
problems), and a budget it states is still passed on, so the rule says it was not checked.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

POLICY = "clusters-protected-in-production"
COST_POLICY = "gpu-cost-at-full-scale"
# The production rules with an opt-out the stack file writes (policy/gpufleet_policy/exposure.py):
# policy name -> (the pack config key, its path under gpufleet:cluster).
ALLOWANCES = {
    "api-endpoints-restricted-in-production": (
        "allowPublicApiEndpoint",
        ("allowPublicApiEndpoint",),
    ),
    "aks-local-accounts-off-in-production": ("allowLocalAccounts", ("azure", "allowLocalAccounts")),
}
PROJECT_DIR = Path(__file__).resolve().parents[1]
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


BUDGET_KEYS = ("maxPerHour", "maxIdlePerHour")


def stack_cost(path: Path) -> dict[str, Any] | None:
    """The stack's `cost` object, as `plan --json` prints it; None if gpufleet cannot read it."""
    if str(PROJECT_DIR) not in sys.path:
        sys.path.insert(0, str(PROJECT_DIR))
    from components.model import config as model_config
    from components.model.cost import stack_cost as cost_of
    from components.tooling.stack_yaml import StackFileError
    from components.tooling.stacks import load_stack

    try:
        stack = load_stack(str(path))
        today = model_config.clock_today()
        return cost_of(model_config.parse_config(stack.gpufleet, today), today).to_json()
    except (StackFileError, model_config.ConfigError, KeyError):
        return None


def stack_budget(config: Mapping[str, Any]) -> dict[str, float]:
    """`gpufleet:cost` of the stack file: the budget keys whose values are numbers (a wrong
    value is `plan`'s error to report, with its key path; it is not guessed here)."""
    section = config.get("gpufleet:cost")
    if not isinstance(section, Mapping):
        return {}
    return {
        key: float(section[key])
        for key in BUDGET_KEYS
        if isinstance(section.get(key), int | float) and not isinstance(section.get(key), bool)
    }


def pack_config(
    path: Path, max_per_hour: float | None = None, max_idle_per_hour: float | None = None
) -> dict[str, Any]:
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
    cost: dict[str, Any] = dict(stack_budget(config))
    for key, value in (("maxPerHour", max_per_hour), ("maxIdlePerHour", max_idle_per_hour)):
        if value is not None:
            cost[key] = value
    stack = stack_cost(path)
    if stack is not None:
        cost["cost"] = stack
    production = is_production(stack_name(path), config)
    written: dict[str, Any] = {POLICY: {"production": production}, COST_POLICY: cost}
    for policy, (key, path_in_cluster) in ALLOWANCES.items():
        written[policy] = {"production": production, key: allowed(config, path_in_cluster)}
    return written


def allowed(config: Mapping[str, Any], path_in_cluster: Sequence[str]) -> bool:
    """Whether the stack file sets `gpufleet:cluster.<path>: true` (YAML true only)."""
    value: Any = config.get("gpufleet:cluster")
    for part in path_in_cluster:
        value = value.get(part) if isinstance(value, Mapping) else None
    return value is True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python policy/pack_config.py",
        description="Write the policy pack config for a stack (JSON on stdout).",
    )
    parser.add_argument("stack_file", type=Path, metavar="stacks/Pulumi.<stack>.yaml")
    parser.add_argument(
        "--max-per-hour",
        type=float,
        help="budget for gpu-cost-at-full-scale: USD per hour with every pool full (overrides "
        "the stack file's gpufleet:cost.maxPerHour)",
    )
    parser.add_argument(
        "--max-idle-per-hour",
        type=float,
        help="budget: USD per hour idle (overrides gpufleet:cost.maxIdlePerHour)",
    )
    options = parser.parse_args(argv)
    try:
        config = pack_config(options.stack_file, options.max_per_hour, options.max_idle_per_hour)
    except UnreadableStack as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(config, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
