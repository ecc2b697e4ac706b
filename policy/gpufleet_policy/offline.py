"""Run the pack over a plan document, without the Pulumi CLI or cloud credentials.

    PYTHONPATH=policy python -m gpufleet_policy.offline PLAN.json [--config PACK_CONFIG.json]

PLAN.json is what `python -m components plan STACK --json` prints: every resource with its
inputs and options. Each resource policy sees each resource as the engine would show it during
a preview (inputs as props, wrapped in pulumi_policy's unknown-checking proxies, its options and
provider); each stack policy sees the whole graph with parents and dependencies linked.
PACK_CONFIG.json has the format of `pulumi preview --policy-pack-config`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from . import POLICIES, cost

UNKNOWN = "[unknown]"  # how the offline engine marks values known only after deployment


@dataclass(frozen=True)
class Violation:
    policy: str
    urn: str | None
    message: str

    def __str__(self) -> str:
        return f"[{self.policy}] {self.urn or 'stack'}: {self.message}"


def run_pack(
    document: Mapping[str, Any],
    config: Mapping[str, Any] | None = None,
    policies: Sequence[Policy] = POLICIES,
) -> list[Violation]:
    """Every violation the pack reports for the plan document's resources."""
    resources = list(document.get("resources", []))
    by_urn = {r["urn"]: r for r in resources}
    violations: list[Violation] = []
    for policy in policies:
        settings = policy_config(policy, config or {})
        if settings is None:
            continue  # disabled in the pack config
        if isinstance(policy, ResourceValidationPolicy):
            for resource in resources:
                args = ResourceValidationArgs(
                    resource["type"],
                    _props(resource["inputs"]),
                    resource["urn"],
                    resource["name"],
                    _options(resource),
                    _provider(resource, by_urn),
                    settings,
                )
                violations += _run(policy, args, default_urn=resource["urn"])
        elif isinstance(policy, StackValidationPolicy):
            settings = _with_plan_cost(policy, settings, document)
            args_stack = StackValidationArgs(_stack_resources(resources, by_urn), settings)
            violations += _run(policy, args_stack, default_urn=None)
    return violations


def policy_config(policy: Policy, pack_config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The policy's config: schema defaults overlaid with the pack config; None if disabled."""
    settings: dict[str, Any] = {}
    if policy.config_schema is not None:
        for key, schema in policy.config_schema.properties.items():
            if "default" in schema:
                settings[key] = schema["default"]
    levels = [pack_config.get("all"), pack_config.get(policy.name)]
    for level in levels:
        if isinstance(level, str) and level == EnforcementLevel.DISABLED.value:
            return None
    entry = pack_config.get(policy.name)
    if isinstance(entry, Mapping):
        if entry.get("enforcementLevel") == EnforcementLevel.DISABLED.value:
            return None
        settings.update({k: v for k, v in entry.items() if k != "enforcementLevel"})
    return settings


def _with_plan_cost(
    policy: Policy, settings: dict[str, Any], document: Mapping[str, Any]
) -> dict[str, Any]:
    """A policy that takes the plan's `cost` as config judges the document's when it has one
    (the pack config's `cost`, which `policy/pack_config.py` writes for `pulumi preview`, when
    it has none)."""
    schema = policy.config_schema
    if schema is None or "cost" not in schema.properties or "cost" not in document:
        return settings
    return {**settings, "cost": document["cost"]}


def _run(policy: Policy, args: Any, default_urn: str | None) -> list[Violation]:
    found: list[Violation] = []

    def report(message: str, urn: str | None = None) -> None:
        found.append(Violation(policy.name, urn or default_urn, message))

    try:
        result = policy.validate(args, report)  # type: ignore[attr-defined]
    except UnknownValueError:
        # As in a preview: a rule that needs a value known only after deployment is skipped.
        return found
    if result is not None:
        raise TypeError(f"policy {policy.name} is asynchronous; the offline runner runs sync rules")
    return found


def _unknowns(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _unknowns(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unknowns(v) for v in value]
    return UNKNOWN_STRING_VALUE if value == UNKNOWN else value


def _props(inputs: Mapping[str, Any]) -> Mapping[str, Any]:
    return unknown_checking_proxy(_unknowns(dict(inputs)))


def _options(resource: Mapping[str, Any]) -> PolicyResourceOptions:
    options = resource.get("options", {})
    return PolicyResourceOptions(
        protect=bool(options.get("protect")),
        ignore_changes=list(options.get("ignoreChanges", [])),
        delete_before_replace=bool(options.get("deleteBeforeReplace")),
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=[],
        parent=resource.get("parent"),
    )


def _provider(
    resource: Mapping[str, Any], by_urn: Mapping[str, Mapping[str, Any]]
) -> PolicyProviderResource | None:
    ref = resource.get("provider")
    if not ref:
        return None
    urn = ref.rsplit("::", 1)[0]  # a provider reference is "<urn>::<id>"
    provider = by_urn.get(urn)
    if provider is None:
        return None
    return PolicyProviderResource(
        provider["type"], _props(provider["inputs"]), urn, provider["name"]
    )


def _stack_resources(
    resources: Iterable[Mapping[str, Any]], by_urn: Mapping[str, Mapping[str, Any]]
) -> list[PolicyResource]:
    built = {
        r["urn"]: PolicyResource(
            r["type"],
            _props(r["inputs"]),
            r["urn"],
            r["name"],
            _options(r),
            _provider(r, by_urn),
            None,
            [],
            {},
        )
        for r in resources
    }
    for r in resources:
        node = built[r["urn"]]
        node.parent = built.get(r.get("parent") or "")
        node.dependencies = [built[d] for d in r.get("dependencies", []) if d in built]
    return list(built.values())


def _cost_note(document: Mapping[str, Any], config: Mapping[str, Any]) -> str | None:
    """The full-scale cost and budget the cost rule judged (reported whether it passed or not)."""
    settings = policy_config(cost.cost_at_full_scale, config)
    if settings is None:
        return None
    budget, idle = settings.get("maxPerHour"), settings.get("maxIdlePerHour")
    return cost.budget_note(
        document.get("cost", settings.get("cost")),
        None if budget is None else float(budget),
        None if idle is None else float(idle),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpufleet_policy.offline",
        description="Run gpufleet's policy pack over `python -m components plan STACK --json` output.",
    )
    parser.add_argument("plans", nargs="+", type=Path, metavar="PLAN.json")
    parser.add_argument(
        "--config", type=Path, help="policy pack config JSON (as --policy-pack-config)"
    )
    options = parser.parse_args(argv)
    config = json.loads(options.config.read_text()) if options.config else {}
    failed = False
    for path in options.plans:
        document = json.loads(path.read_text())
        violations = run_pack(document, config)
        for violation in violations:
            print(f"{path}: {violation}")
        if not violations:
            print(f"{path}: {len(POLICIES)} policies passed")
        note = _cost_note(document, config)
        if note:
            print(f"{path}: {note}")
        failed = failed or bool(violations)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
