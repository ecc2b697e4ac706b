"""What the cloud does with one changed resource: update it, replace it, or refuse the change.

`diff_paths.replacement_triggers` says when Pulumi replaces; this adds the refusals of
`components.model.catalog.rejections`: properties the cloud fixes at creation, and replacements
the cloud refuses because the new resource would take the old one's name while it still exists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from components.model.catalog import rejections
from components.tooling.diff_paths import lookup, same


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def in_place_refusals(
    type_token: str, old_inputs: Any, program_inputs: Any, replace_paths: Sequence[str]
) -> list[str]:
    """Why the cloud refuses this update, one line per property (none when it is replaced).

    ``program_inputs`` are the new program's inputs before ignoreChanges: a property gpufleet
    ignores because the cloud cannot change it is reported too, since it will not be applied.
    """
    if replace_paths:
        return []
    found = []
    for refusal in rejections.refusals(type_token):
        if any(lookup(old_inputs, tuple(k.split("."))) != v for k, v in refusal.when.items()):
            continue
        path = tuple(refusal.path.split("."))
        old, new = lookup(old_inputs, path), lookup(program_inputs, path)
        if same(old, new):
            continue
        if refusal.trigger == "increase":
            before, after = _number(old), _number(new)
            if before is None or after is None or after <= before:
                continue
        reason = refusal.reason.format(new=new)
        found.append(f"{refusal.path}: {reason}; instead: {refusal.instead}")
    return found


def same_name_refusal(
    type_token: str, old_inputs: Any, new_inputs: Any, new_options: Mapping[str, Any]
) -> str | None:
    """A replacement the cloud refuses: created first, under the name the old one still holds."""
    key = rejections.name_input(type_token)
    if key is None or new_options.get("deleteBeforeReplace"):
        return None
    old_name, new_name = lookup(old_inputs, (key,)), lookup(new_inputs, (key,))
    if not isinstance(new_name, str) or old_name != new_name:
        return None
    return (
        f"replacement under the same {key} {new_name!r}: Pulumi creates the new resource before "
        "deleting the old one (no deleteBeforeReplace), and the cloud refuses a second resource "
        "of that name; instead: "
        + rejections.SAME_NAME_INSTEAD.get(
            type_token, "give the resource deleteBeforeReplace, or change its name"
        )
    )


def verdict_note(type_token: str) -> str:
    """What a replacement of this type takes down."""
    return rejections.downtime(type_token)
