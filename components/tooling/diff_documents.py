"""Plan documents for `diff`: reading and checking one (``python -m components plan --json``),
the warnings it carries, and matching the plans of two stacks of one project by logical identity
(the URN without its stack)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from components.tooling.diff_model import PlanError


def load_plan(path: str, stdin: TextIO | None = None) -> dict[str, Any]:
    """Read and validate a plan document; ``"-"`` reads standard input.

    Raises :class:`PlanError` with a one-line reason for anything unusable, so the command line
    can report it without a traceback.
    """
    try:
        if path == "-":
            text = (stdin or sys.stdin).read()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise PlanError(f"cannot read {path}: {reason}") from error
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise PlanError(
            f"{path} is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from error
    check_plan(document, path)
    return dict(document)


def check_plan(document: Any, label: str) -> None:
    """Raise :class:`PlanError` unless ``document`` has the shape the plan command prints."""
    if not isinstance(document, Mapping) or not isinstance(document.get("resources"), list):
        raise PlanError(f'{label} is not a plan: expected a JSON object with a "resources" list')
    seen: set[str] = set()
    for index, resource in enumerate(document["resources"]):
        if not isinstance(resource, Mapping):
            raise PlanError(f"{label} is not a plan: resources[{index}] is not an object")
        urn = resource.get("urn")
        if not isinstance(urn, str) or not urn:
            raise PlanError(f'{label} is not a plan: resources[{index}] has no "urn"')
        if urn in seen:
            # Pulumi itself refuses duplicate URNs; matching by URN would silently pick one.
            raise PlanError(f"{label} is not a plan: duplicate urn {urn}")
        seen.add(urn)
    warnings = document.get("warnings", [])
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        raise PlanError(f'{label} is not a plan: "warnings" is not a list of strings')


def plan_warnings(document: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The warnings a checked plan carries, each once in its order; None for a plan written
    before plans carried them (or an empty stand-in), which says nothing either way."""
    warnings = document.get("warnings")
    return None if warnings is None else tuple(dict.fromkeys(warnings))


_URN_PREFIX = "urn:pulumi:"


def _urn_parts(urn: str) -> tuple[str, str, str] | None:
    """``(stack, project, rest)`` of ``urn:pulumi:STACK::PROJECT::[parent$]type::name``.

    Stack and project names cannot contain ``::``; the rest (type chain and name) may."""
    if not urn.startswith(_URN_PREFIX):
        return None
    parts = urn[len(_URN_PREFIX) :].split("::", 2)
    if len(parts) != 3 or not all(parts):
        return None
    return parts[0], parts[1], parts[2]


def _identity(document: Mapping[str, Any], label: str) -> tuple[str | None, str | None]:
    """The stack and project a plan's URNs name, else its ``stack``/``project`` fields."""
    parsed = [_urn_parts(str(resource["urn"])) for resource in document["resources"]]
    found: list[str | None] = []
    for position, field in ((0, "stack"), (1, "project")):
        names = sorted({parts[position] for parts in parsed if parts})
        if len(names) > 1:
            raise PlanError(f"{label} is not a plan: its URNs name several {field}s: {names}")
        value = names[0] if names else document.get(field)
        found.append(value if isinstance(value, str) and value else None)
    return found[0], found[1]


def identities(
    old: Mapping[str, Any], new: Mapping[str, Any]
) -> tuple[str | None, str | None, str | None]:
    """``(old stack, new stack, project)``; PlanError when the projects differ."""
    old_stack, old_project = _identity(old, "old plan")
    new_stack, new_project = _identity(new, "new plan")
    if old_project and new_project and old_project != new_project:
        raise PlanError(
            f"the plans are of different Pulumi projects (old: {old_project}, new: "
            f"{new_project}); a resource's identity includes its project, so they share none"
        )
    return old_stack, new_stack, new_project or old_project


def stacks_note(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """The sentence that heads the output when the plans are of different stacks, else None."""
    old_stack, new_stack, project = identities(old, new)
    if not (old_stack and new_stack and project and old_stack != new_stack):
        return None
    return (
        f"Stacks differ (old: {old_stack}, new: {new_stack}, project {project}): resources are "
        "matched by logical identity (type, parent chain and name: the URN without its stack)."
    )


def restack(value: Any, project: str, old_stack: str, new_stack: str) -> Any:
    """``value`` with every URN of ``old_stack`` rewritten into ``new_stack``, including the
    root stack resource's name (``PROJECT-STACK``, Pulumi's convention)."""
    old_prefix = f"{_URN_PREFIX}{old_stack}::{project}::"
    old_root = f"pulumi:pulumi:Stack::{project}-{old_stack}"
    new_root = f"pulumi:pulumi:Stack::{project}-{new_stack}"
    if isinstance(value, str):
        if not value.startswith(old_prefix):
            return value
        rest = value[len(old_prefix) :]
        if rest == old_root or rest.startswith(f"{old_root}::"):
            rest = new_root + rest[len(old_root) :]
        return f"{_URN_PREFIX}{new_stack}::{project}::{rest}"
    if isinstance(value, Mapping):
        return {key: restack(item, project, old_stack, new_stack) for key, item in value.items()}
    if isinstance(value, list):
        return [restack(item, project, old_stack, new_stack) for item in value]
    return value
