"""A plan diff as text for a terminal and as Markdown for a pull-request comment."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from components.tooling.diff_cost import cost_lines, cost_markdown
from components.tooling.diff_model import (
    ABSENT,
    DIFF_CONTEXT_CHARS,
    MAX_VALUE_CHARS,
    TRUNCATION_MARK,
    PlanDiff,
    PropertyChange,
    ResourceChange,
    ResourceRef,
)

# --------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------


def _json(value: Any) -> str:
    """Compact, stable JSON (sorted keys) for one value; :data:`ABSENT` reads ``(absent)``."""
    if value is ABSENT:
        return "(absent)"
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _clip(text: str, start: int = 0, limit: int = MAX_VALUE_CHARS) -> str:
    """At most ``limit`` characters of ``text`` from ``start``, saying how many were left out."""
    if len(text) <= limit:
        return text
    lead = TRUNCATION_MARK if start else ""
    # Size the suffix for the largest possible count, so the result never exceeds ``limit``.
    budget = max(limit - len(lead) - len(f"{TRUNCATION_MARK} (+{len(text)} chars)"), 1)
    body = text[start : start + budget]
    omitted = len(text) - len(body)
    return f"{lead}{body}{TRUNCATION_MARK} (+{omitted} chars)"


def _format_pair(old: Any, new: Any) -> tuple[str, str]:
    """Old and new value for a ``path: old -> new`` line.

    When both are long and only differ far in (an accelerator list whose driver version
    changed), both are cut to a window just before the first difference, so the part that
    changed stays visible.
    """
    old_text, new_text = _json(old), _json(new)
    if len(old_text) <= MAX_VALUE_CHARS and len(new_text) <= MAX_VALUE_CHARS:
        return old_text, new_text
    first_difference = next(
        (i for i, (a, b) in enumerate(zip(old_text, new_text, strict=False)) if a != b),
        min(len(old_text), len(new_text)),
    )
    start = 0
    if first_difference > MAX_VALUE_CHARS // 2:
        start = first_difference - DIFF_CONTEXT_CHARS
    return _clip(old_text, start), _clip(new_text, start)


def _change_line(item: PropertyChange) -> str:
    old_text, new_text = _format_pair(item.old, item.new)
    return f"    {item.path}: {old_text} -> {new_text}"


def _labels(items: Iterable[ResourceRef | ResourceChange]) -> dict[str, str]:
    """``type name`` per URN; the URN is appended where two entries would read the same."""
    items = list(items)
    counts: dict[tuple[str, str], int] = {}
    for item in items:
        counts[(item.type, item.name)] = counts.get((item.type, item.name), 0) + 1
    return {
        item.urn: (
            f"{item.type} {item.name}"
            if counts[(item.type, item.name)] == 1
            else f"{item.type} {item.name} ({item.urn})"
        )
        for item in items
    }


def _replace_line(change: ResourceChange, label: str) -> str:
    takes_down = f"; down while it is recreated: {change.downtime}" if change.downtime else ""
    return (
        f"!! REPLACES {label}: {', '.join(change.replace_paths)} "
        f"(the provider recreates this resource{takes_down})"
    )


def _reject_lines(change: ResourceChange, label: str) -> list[str]:
    return [f"!! REJECTED {label}: {reason}" for reason in change.refusals]


_VERDICT_WORDS = {"update": "update in place", "replace": "replace", "reject": "REJECTED"}


def _body_lines(diff: PlanDiff) -> list[str]:
    """The ``+``/``-``/``~`` blocks followed by the ``!! REPLACES`` lines."""
    labels = _labels([*diff.added, *diff.removed, *diff.changed])
    lines = [f"+ {labels[ref.urn]}" for ref in diff.added]
    lines += [f"- {labels[ref.urn]}" for ref in diff.removed]
    for change in diff.changed:
        lines.append(f"~ {labels[change.urn]} ({_VERDICT_WORDS[change.verdict]})")
        lines += [_change_line(item) for item in change.changes]
    lines += [_replace_line(change, labels[change.urn]) for change in diff.replaced]
    for change in diff.rejected:
        lines += _reject_lines(change, labels[change.urn])
    return lines


def render_text(diff: PlanDiff) -> str:
    """Plain text for a terminal or CI log, ending with the one-line summary."""
    lines = _body_lines(diff)
    if diff.outputs:
        lines.append("Outputs:")
        lines += [_change_line(item) for item in diff.outputs]
    if not lines:
        lines.append("No changes.")
    if diff.cost is not None:
        lines += cost_lines(diff.cost)
    lines.append(diff.summary())
    return "\n".join(lines) + "\n"


def _fence(content: str) -> str:
    """A backtick fence longer than any backtick run in ``content`` (values are user data)."""
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    return "`" * max(3, longest + 1)


def _md_code(text: str) -> str:
    """Inline code that survives backticks inside ``text``."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def render_markdown(diff: PlanDiff) -> str:
    """A PR comment: heading, summary, a warning listing replacements, then a ``diff`` block."""
    target = " / ".join(part for part in (diff.project, diff.stack) if part)
    heading = f"### Plan diff: {target}" if target else "### Plan diff"
    parts = [heading, "", f"**{diff.summary()}**"]

    labels = _labels([*diff.added, *diff.removed, *diff.changed])
    if diff.rejected:
        count = len(diff.rejected)
        parts += [
            "",
            "> [!CAUTION]",
            f"> {count} change{'s' if count > 1 else ''} would be **refused by the cloud**: "
            "`pulumi up` fails there. Change the config back or do this instead:",
        ]
        for change in diff.rejected:
            parts += [f"> - {_md_code(labels[change.urn])}: {reason}" for reason in change.refusals]
    replaced = diff.replaced
    if replaced:
        noun, pronoun = ("resource is", "it") if len(replaced) == 1 else ("resources are", "them")
        parts += [
            "",
            "> [!WARNING]",
            f"> {len(replaced)} {noun} **replaced**, not updated in place: the provider deletes "
            f"and recreates {pronoun}, interrupting whatever runs there (nodes, pods, jobs).",
        ]
        for change in replaced:
            paths = ", ".join(_md_code(path) for path in change.replace_paths)
            down = f" (down: {change.downtime})" if change.downtime else ""
            parts.append(f"> - {_md_code(labels[change.urn])} because of {paths}{down}")

    body = _body_lines(diff)
    if diff.outputs:
        body.append("Outputs:")
        body += [_change_line(item) for item in diff.outputs]
    if body:
        content = "\n".join(body)
        fence = _fence(content)
        parts += ["", f"{fence}diff", content, fence]
    else:
        parts += ["", "No changes."]
    if diff.cost is not None:
        parts += ["", *cost_markdown(diff.cost)]
    return "\n".join(parts) + "\n"
