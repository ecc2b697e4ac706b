"""A plan diff as text for a terminal and as Markdown for a pull-request comment."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from components.model.resource_index import role
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
from components.tooling.diff_paths import Path, format_path, same, walk
from components.tooling.diff_warnings import warning_lines, warning_markdown
from components.tooling.mockcloud import mocked_input

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


# Element keys that name a list item (a pool, a tag): lists of such items are shown item by
# item, then key by key, instead of as two long values.
_ITEM_KEYS = ("name", "key")

# Longest rendering of one list item or one value inside a list or map that changed: lists and
# maps are shown in full, only a blob (user data) inside them is cut.
MAX_ITEM_CHARS = 400


def _item_key(items: list[Any]) -> str | None:
    """The key that names every item of a list uniquely, if there is one: ``name`` or ``key``
    first, else any key every item has with a distinct string value (``resourceType``)."""
    if not items or not all(isinstance(item, dict) for item in items):
        return None
    common = set.intersection(*(set(item) for item in items))
    for key in (*[key for key in _ITEM_KEYS if key in common], *sorted(common)):
        names = [item[key] for item in items]
        if all(isinstance(name, str) for name in names) and len(set(names)) == len(names):
            return key
    return None


def _leaf_lines(path: str, old: Any, new: Any) -> list[str]:
    """One line per changed leaf under ``path`` (maps key by key)."""
    if isinstance(old, dict) and isinstance(new, dict):
        leaves: list[tuple[Path, Any, Any]] = []
        walk(old, new, (), leaves)
        return [
            f"    {path}{_suffix(leaf)}: {_clip(_json(a), limit=MAX_ITEM_CHARS)} -> "
            f"{_clip(_json(b), limit=MAX_ITEM_CHARS)}"
            for leaf, a, b in leaves
        ]
    old_text, new_text = _format_pair(old, new)
    return [f"    {path}: {old_text} -> {new_text}"]


def _suffix(leaf: Path) -> str:
    text = format_path(leaf)
    return "" if not text else (text if text.startswith("[") else f".{text}")


def _list_lines(path: str, old: list[Any], new: list[Any]) -> list[str]:
    """A changed list: named items key by key, other items as whole removed and added items."""
    old_key, new_key = _item_key(old), _item_key(new)
    if old and new and old_key and old_key == new_key:
        old_items = {item[old_key]: item for item in old}
        new_items = {item[new_key]: item for item in new}
        lines: list[str] = []
        for name in dict.fromkeys([*old_items, *new_items]):
            before, after = old_items.get(name, ABSENT), new_items.get(name, ABSENT)
            if same(before, after):
                continue
            item_path = f"{path}[{old_key}={json.dumps(name, ensure_ascii=False)}]"
            if before is ABSENT or after is ABSENT:
                lines.append(
                    f"    {item_path}: {_clip(_json(before), limit=MAX_ITEM_CHARS)} -> "
                    f"{_clip(_json(after), limit=MAX_ITEM_CHARS)}"
                )
            else:
                lines += _leaf_lines(item_path, before, after)
        return lines or [f"    {path}: the same items in a new order"]
    unmatched = list(new)
    removed = []
    for item in old:
        match = next((index for index, other in enumerate(unmatched) if same(item, other)), None)
        if match is None:
            removed.append(item)
        else:
            unmatched.pop(match)
    lines = [f"    {path}: {len(old)} items -> {len(new)} items"]
    lines += [f"      - {_clip(_json(item), limit=MAX_ITEM_CHARS)}" for item in removed]
    lines += [f"      + {_clip(_json(item), limit=MAX_ITEM_CHARS)}" for item in unmatched]
    if not removed and not unmatched:
        lines[0] = f"    {path}: the same items in a new order"
    return lines


def _missing(value: Any) -> bool:
    return value is ABSENT or value is None


def _describe(value: Any) -> str:
    return f"{len(value)} items" if isinstance(value, list) else _json(value)


def _property_lines(item: PropertyChange) -> list[str]:
    """A changed property on one ``path: old -> new`` line; a list or map too long for one line
    is shown item by item (named items key by key) or key by key instead of being cut."""
    old, new = item.old, item.new
    if len(_json(old)) <= MAX_VALUE_CHARS and len(_json(new)) <= MAX_VALUE_CHARS:
        return [_change_line(item)]
    if (isinstance(old, list) or _missing(old)) and (isinstance(new, list) or _missing(new)):
        lines = _list_lines(
            item.path, old if isinstance(old, list) else [], new if isinstance(new, list) else []
        )
        if not (isinstance(old, list) and isinstance(new, list)):
            lines[0] = f"    {item.path}: {_describe(old)} -> {_describe(new)}"
        return lines
    for present, other, added in ((new, old, True), (old, new, False)):
        if isinstance(present, dict) and present and _missing(other):
            shown = (_json(other), "(a map)") if added else ("(a map)", _json(other))
            leaves = (
                _leaf_lines(item.path, {}, present)
                if added
                else _leaf_lines(item.path, present, {})
            )
            return [f"    {item.path}: {shown[0]} -> {shown[1]}", *leaves]
    return [_change_line(item)]


# A removed resource with retainOnDelete: Pulumi drops it from the stack and deletes nothing.
KEPT = " (leaves the stack, kept in the cloud: retainOnDelete; Pulumi only forgets it)"


def _grouped_lines(sign: str, refs: Iterable[ResourceRef], labels: dict[str, str]) -> list[str]:
    """Added or removed resources, each under the topmost component that comes or goes with
    it, so one cause (a pool, the Spot drainer) reads as one entry with its reason."""
    refs = list(refs)
    moving = {ref.urn: ref for ref in refs}

    def top(ref: ResourceRef) -> ResourceRef:
        while ref.parent in moving:
            ref = moving[ref.parent]
        return ref

    members: dict[str, list[ResourceRef]] = {}
    for ref in refs:
        members.setdefault(top(ref).urn, []).append(ref)

    def label(ref: ResourceRef) -> str:
        return labels[ref.urn] + (KEPT if ref.kept and sign == "-" else "")

    lines: list[str] = []
    for urn, group in members.items():
        head = moving[urn]
        under = [ref for ref in group if ref.urn != urn]
        reason = role(head.type)
        if not under:
            lines.append(f"{sign} {label(head)}")
        else:
            why = f"; exists only while {reason}" if reason else ""
            noun = "resource" if len(under) == 1 else "resources"
            lines.append(f"{sign} {label(head)} (with the {len(under)} {noun} under it{why})")
        lines += [f"    note: {note}" for note in head.notes]
        for ref in under:
            lines.append(f"    {sign} {label(ref)}")
            lines += [f"        note: {note}" for note in ref.notes]
        lines += _removal_lines(group)
    return lines


def _removal_lines(group: list[ResourceRef]) -> list[str]:
    """``running nodes:`` under removed resources that run nodes, once per kind."""
    kinds: dict[tuple[str, str], int] = {}
    for ref in group:
        if ref.node_note:
            kinds[(ref.type, ref.node_note)] = kinds.get((ref.type, ref.node_note), 0) + 1
    return [
        f"    running nodes ({count} {type_token} removed): {note}"
        for (type_token, note), count in kinds.items()
    ]


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


def _node_lines(change: ResourceChange) -> list[str]:
    """``running nodes:`` lines under an in-place update of a resource that carries nodes."""
    return [
        f"    running nodes: {note.says} ({', '.join(note.paths)})" for note in change.node_notes
    ]


def _roll_lines(change: ResourceChange, label: str, effect: str = "rolls") -> list[str]:
    marker = "~ ROLLS" if effect == "rolls" else "~ STARTS NODES"
    return [
        f"{marker} {label}: {', '.join(note.paths)} ({note.says})"
        for note in change.node_notes
        if note.effect == effect
    ]


_VERDICT_WORDS = {
    "update": "update in place",
    "roll": "update in place, rolls running nodes",
    "replace": "replace",
    "reject": "REJECTED",
    "none": "Pulumi's state only, nothing sent",
}
# Paths that only order the update (a dependency, or the parent a child follows).
_ORDER_PATHS = frozenset({"options.dependsOn", "parent"})


def _verdict_words(change: ResourceChange) -> str:
    if change.verdict == "none" and all(item.path in _ORDER_PATHS for item in change.changes):
        return "order only, nothing sent"
    return _VERDICT_WORDS[change.verdict]


def _body_lines(diff: PlanDiff) -> list[str]:
    """The ``+``/``-``/``~`` blocks followed by the ``!! REPLACES``, ``~ ROLLS`` and
    ``!! REJECTED`` lines."""
    labels = _labels([*diff.added, *diff.removed, *diff.changed])
    lines = _grouped_lines("+", diff.added, labels)
    lines += _grouped_lines("-", diff.removed, labels)
    for change in diff.changed:
        lines.append(f"~ {labels[change.urn]} ({_verdict_words(change)})")
        for item in change.changes:
            lines += _property_lines(item)
            mocked = mocked_input(change.type, item.path)
            lines += [f"      ^ {mocked}"] if mocked else []
        lines += _node_lines(change)
        lines += [f"    note: {note}" for note in change.notes]
    lines += [_replace_line(change, labels[change.urn]) for change in diff.replaced]
    for change in diff.rolled:
        lines += _roll_lines(change, labels[change.urn])
    for change in diff.started:
        lines += _roll_lines(change, labels[change.urn], "starts")
    for change in diff.rejected:
        lines += _reject_lines(change, labels[change.urn])
    lines += [f"!! REJECTED {refusal}" for refusal in diff.refusals]
    return lines


def render_text(diff: PlanDiff) -> str:
    """Plain text for a terminal or CI log, ending with the one-line summary."""
    lines = _body_lines(diff)
    if diff.outputs:
        lines.append("Outputs:")
        lines += [line for item in diff.outputs for line in _property_lines(item)]
    if not lines:
        lines.append("No changes.")
    lines += warning_lines(diff)
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


def _effect_items(
    changes: Sequence[ResourceChange], effect: str, labels: Mapping[str, str]
) -> list[str]:
    """One alert item per node note of `effect`: the resource, the paths and what happens."""
    return [
        f"> - {_md_code(labels[change.urn])} because of "
        f"{', '.join(_md_code(path) for path in note.paths)}: {note.says}"
        for change in changes
        for note in change.node_notes
        if note.effect == effect
    ]


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
    if diff.refusals:
        parts += [
            "",
            "> [!CAUTION]",
            "> **Refused by gpufleet**: `pulumi up` would take running nodes down. Do this "
            "instead:",
            *(f"> - {refusal}" for refusal in diff.refusals),
        ]
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
    rolled = diff.rolled
    if rolled:
        noun = "resource rolls" if len(rolled) == 1 else "resources roll"
        parts += [
            "",
            "> [!WARNING]",
            f"> {len(rolled)} {noun} **its running nodes** in place: the resource is updated, "
            "but the cloud drains and replaces (or reboots) the nodes, evicting their pods "
            "(training jobs included).",
        ]
        parts += _effect_items(rolled, "rolls", labels)

    started = diff.started
    if started:
        noun = "resource starts" if len(started) == 1 else "resources start"
        parts += [
            "",
            "> [!IMPORTANT]",
            f"> {len(started)} {noun} **nodes at `pulumi up`**, billed from their start and "
            "kept while idle:",
        ]
        parts += _effect_items(started, "starts", labels)
    new_warnings, every_warning = warning_markdown(diff)
    parts += new_warnings
    body = _body_lines(diff)
    if diff.outputs:
        body.append("Outputs:")
        body += [line for item in diff.outputs for line in _property_lines(item)]
    if body:
        content = "\n".join(body)
        fence = _fence(content)
        parts += ["", f"{fence}diff", content, fence]
    else:
        parts += ["", "No changes."]
    parts += every_warning
    if diff.cost is not None:
        parts += ["", *cost_markdown(diff.cost)]
    return "\n".join(parts) + "\n"
