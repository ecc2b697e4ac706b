"""What the cloud does with one changed resource: update it, replace it, or refuse the change.

`diff_paths.replacement_triggers` says when Pulumi replaces; this adds the refusals of
`components.model.catalog.rejections` (per cloud, looked up in
`components.model.resource_index`): properties the cloud fixes at creation, and replacements
the cloud refuses because the new resource would take the old one's name while it still exists.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from components.model import resource_index
from components.tooling.diff_model import ABSENT, ResourceChange, ResourceRef
from components.tooling.diff_nodes import with_removal_note, with_split_note
from components.tooling.diff_paths import lookup, options_of, same

# A refusal path: dict keys separated by dots, `[n]` indexing a list (`agentPoolProfiles[0].x`).
_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
_MINOR = re.compile(r"^v?(\d+)\.(\d+)")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _at(value: Any, path: str) -> Any:
    """The value at a refusal path, or ABSENT; unlike the diff's own paths it can index lists."""
    for key, index in _SEGMENT.findall(path):
        if index:
            if not isinstance(value, list) or int(index) >= len(value):
                return ABSENT
            value = value[int(index)]
        elif isinstance(value, Mapping) and key in value:
            value = value[key]
        else:
            return ABSENT
    return value


def _minor(value: Any) -> tuple[int, int] | None:
    """(1, 35) of "1.35" or "1.35.7"; None for anything else."""
    found = _MINOR.match(value) if isinstance(value, str) else None
    return (int(found.group(1)), int(found.group(2))) if found else None


def _fires(trigger: str, old: Any, new: Any) -> bool:
    """Whether a refusal's trigger holds for a property that changed from old to new."""
    if trigger == "change":
        return True
    if trigger == "increase":
        before, after = _number(old), _number(new)
        return before is not None and after is not None and after > before
    if trigger == "removed":
        return old is not ABSENT and old is not None and (new is ABSENT or new is None)
    if trigger == "added":
        return (old is ABSENT or old is None) and new is not ABSENT and new is not None
    if trigger == "replaced":
        return old is not ABSENT and old is not None and new is not ABSENT and new is not None
    before_minor, after_minor = _minor(old), _minor(new)
    if before_minor is None or after_minor is None or before_minor[0] != after_minor[0]:
        return False
    if trigger == "minor-decrease":
        return after_minor[1] < before_minor[1]
    return trigger == "minor-skip" and after_minor[1] > before_minor[1] + 1


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
    for refusal in resource_index.refusals(type_token):
        if any(lookup(old_inputs, tuple(k.split("."))) != v for k, v in refusal.when.items()):
            continue
        old, new = _at(old_inputs, refusal.path), _at(program_inputs, refusal.path)
        if same(old, new) or not _fires(refusal.trigger, old, new):
            continue
        reason = refusal.reason.format(new=new)
        found.append(f"{refusal.path}: {reason}; instead: {refusal.instead}")
    return found


def same_name_refusal(
    type_token: str, old_inputs: Any, new_inputs: Any, new_options: Mapping[str, Any]
) -> str | None:
    """A replacement the cloud refuses: created first, under the name the old one still holds."""
    key = resource_index.name_input(type_token)
    if key is None or new_options.get("deleteBeforeReplace"):
        return None
    old_name, new_name = lookup(old_inputs, (key,)), lookup(new_inputs, (key,))
    if not isinstance(new_name, str) or old_name != new_name:
        return None
    return (
        f"replacement under the same {key} {new_name!r}: Pulumi creates the new resource before "
        "deleting the old one (no deleteBeforeReplace), and the cloud refuses a second resource "
        "of that name; instead: " + resource_index.same_name_instead(type_token)
    )


def protected_refusal(old_options: Mapping[str, Any], new_options: Mapping[str, Any]) -> str | None:
    """A replacement Pulumi refuses: the resource is protected in the state and the program
    (pulumi/pulumi pkg/resource/deploy/step_generator.go: `new.Protect && old.Protect`; a
    replacement entails a delete). Unprotecting and replacing in one `up` is allowed."""
    if not (old_options.get("protect") and new_options.get("protect")):
        return None
    return (
        "replacement of a protected resource (protect: true, cluster.protect): Pulumi stops the "
        '`up` ("unable to replace resource ... as it is currently marked for protection"); '
        "instead: revert the change that forces the replacement, or, if the resource really "
        "must be rebuilt, unprotect it in one `up` and replace it in the next"
    )


def _created_first(type_token: str, new_inputs: Any, new_options: Mapping[str, Any]) -> str:
    key = resource_index.name_input(type_token)
    named = key is not None and isinstance(lookup(new_inputs, (key,)), str)
    return resource_index.created_first(
        type_token, named, bool(new_options.get("deleteBeforeReplace"))
    )


def verdict_note(type_token: str, new_inputs: Any, new_options: Mapping[str, Any]) -> str:
    """What a replacement of this type takes down ("": nothing, it is created first)."""
    if _created_first(type_token, new_inputs, new_options):
        return ""
    return resource_index.downtime(type_token)


def replacement_notes(
    type_token: str, old_inputs: Any, new_inputs: Any, new_options: Mapping[str, Any]
) -> list[str]:
    """What else a reviewer must know about this replacement (a cloud's REPLACEMENT_NOTES,
    and what a replacement created first means)."""
    first = _created_first(type_token, new_inputs, new_options)
    found = [first] if first else []
    for note in resource_index.replacement_notes(type_token):
        path = tuple(note.path.split("."))
        inner = tuple(note.inner.split("."))
        old, new = (
            lookup(items[0], inner) if isinstance(items, list) and items else None
            for items in (lookup(old_inputs, path), lookup(new_inputs, path))
        )
        if not same(old, new) and note.marker in (old, new):
            found.append(note.says)
    return found


def unsafe_together_refusals(
    type_token: str, old_inputs: Any, new_inputs: Any, removed_types: set[str]
) -> list[str]:
    """Why gpufleet refuses this change together with a removal in the same plan
    (a cloud's UNSAFE_TOGETHER)."""
    found = []
    for rule in resource_index.unsafe_together(type_token):
        old, new = _at(old_inputs, rule.path), _at(new_inputs, rule.path)
        if new == rule.value and old != rule.value and rule.removed_type in removed_types:
            found.append(f"{rule.path}: {rule.reason}; instead: {rule.instead}")
    return found


def whole_plan_verdicts(
    changed: Sequence[ResourceChange],
    added: Sequence[ResourceRef],
    removed: Sequence[ResourceRef],
    old_index: Mapping[str, Mapping[str, Any]],
    new_index: Mapping[str, Mapping[str, Any]],
) -> tuple[list[ResourceChange], list[ResourceRef], list[str]]:
    """What only the whole plan shows: a change refused with a removal in the same `up`
    (a cloud's UNSAFE_TOGETHER), a roll with a change to split from it, what a removal does to
    the nodes it runs, and a move between kinds of pool refused as a whole
    (a cloud's UNSAFE_MOVES)."""
    removed_types = {ref.type for ref in removed}
    verdicts = []
    for change in changed:
        extra = unsafe_together_refusals(
            change.type,
            old_index[change.urn].get("inputs", {}),
            new_index[change.urn].get("inputs", {}),
            removed_types,
        )
        if extra:
            change = dataclasses.replace(change, refusals=(*change.refusals, *extra))
        verdicts.append(with_split_note(change))
    moves = resource_index.unsafe_moves(removed_types, {ref.type for ref in added})
    return verdicts, [with_removal_note(ref) for ref in removed], moves


def peak_refusals(
    changed: Sequence[ResourceChange],
    added: Sequence[ResourceRef],
    old_index: Mapping[str, Mapping[str, Any]],
    new_index: Mapping[str, Mapping[str, Any]],
    limits: Any,
) -> list[str]:
    """An `up` that holds more of a resource type at once than the cloud allows (the new plan's
    `limits`): Pulumi creates added resources and create-first replacements before it deletes
    anything (removals last), so the peak is what runs plus what is created first."""
    found = []
    for type_token, limit in (limits if isinstance(limits, Mapping) else {}).items():
        running = sum(1 for r in old_index.values() if r.get("type") == type_token)
        created = sum(1 for ref in added if ref.type == type_token)
        first = sum(
            1
            for change in changed
            if change.type == type_token
            and change.replaces
            and not options_of(new_index[change.urn]).get("deleteBeforeReplace")
        )
        peak = running + created + first
        if peak <= limit["limit"]:
            continue
        found.append(
            f"this `up` holds {peak} {limit['what']} at once ({running} running, {created} "
            f"added and {first} replaced by creating the new one first, before any is deleted) "
            f"where the cluster may have {limit['limit']}: the create past it fails halfway "
            "through `pulumi up`, and so does every retry; instead: split it, first an `up` "
            "that only removes (a renamed pool: remove it, then add it under its new name; a "
            "replaced system group: remove a pool for the time), then one that adds; or "
            f"{limit['raise']}"
        )
    return found
