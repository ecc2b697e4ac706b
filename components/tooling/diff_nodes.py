"""What an in-place update does to the running nodes of a pool, from each cloud's table
(`ResourceKnowledge.node_effects`, merged in `resource_index`; the effects in :mod:`components.model.catalog.node_effects`): the
``running nodes:`` lines and the ``~ ROLLS`` verdict of `diff`."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Sequence, Set
from typing import Any

from components.model import resource_index
from components.model.catalog.node_effects import EFFECTS, NodeEffect
from components.tooling.diff_model import (
    NodeEffectOrUnknown,
    NodeNote,
    ResourceChange,
    ResourceRef,
)
from components.tooling.diff_paths import Path, format_path, lookup, parse_property_path, same

_UNKNOWN = (
    "not known: gpufleet has no fact on what the cloud does to running nodes on this change; "
    "check the cloud's documentation before `pulumi up`"
)
_ORDER = {effect: position for position, effect in enumerate((*EFFECTS, "unknown"))}
_MINOR = re.compile(r"^v?(\d+\.\d+)")

# Every cloud's tables, merged (a type two clouds describe is refused there). NODE_EFFECTS is a
# copy a test may reorder.
NODE_EFFECTS: dict[str, tuple[NodeEffect, ...]] = dict(resource_index.NODE_EFFECTS)
CONTROL_PLANE_VERSION = resource_index.CONTROL_PLANE_VERSION
VERSION_BUMP_EFFECTS = resource_index.VERSION_BUMP_EFFECTS
REMOVAL_EFFECTS = resource_index.REMOVAL_EFFECTS
SPLIT_FROM_ROLL = resource_index.SPLIT_FROM_ROLL


def _minor(value: Any) -> str | None:
    found = _MINOR.match(value) if isinstance(value, str) else None
    return found.group(1) if found else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _holds(effect: NodeEffect, old: Any, new: Any) -> bool:
    """Whether an entry's `when` holds for this change of its value."""
    if effect.when == "always":
        return True
    if effect.when == "raised":
        before, after = _number(old), _number(new)
        return before is not None and after is not None and after > before
    changes = _minor(old) is not None and _minor(new) is not None and _minor(old) != _minor(new)
    return changes if effect.when == "minor-changes" else not changes


@functools.cache
def _parsed(type_token: str) -> tuple[tuple[Path, NodeEffect], ...] | None:
    effects = NODE_EFFECTS.get(type_token)
    if effects is None:
        return None
    parsed = []
    for effect in effects:
        path = parse_property_path(effect.path)
        if path is None or path[1]:
            raise ValueError(f"node effect path {effect.path!r} of {type_token} is not a dict path")
        parsed.append((path[0], effect))
    return tuple(parsed)


def node_notes(
    type_token: str, old_inputs: Any, new_inputs: Any, changed: Sequence[Path]
) -> tuple[NodeNote, ...]:
    """The notes for the changed input paths of one resource (empty for a type without nodes).

    A changed path takes the most specific entry at or above it; a block changed as a whole
    (added or removed) takes every entry inside it whose value differs. A path no entry covers
    is "not known".
    """
    entries = _parsed(type_token)
    if entries is None:
        return ()
    grouped: dict[tuple[NodeEffectOrUnknown, str], list[str]] = {}

    def differs(entry: tuple[Path, NodeEffect]) -> bool:
        return not same(lookup(old_inputs, entry[0]), lookup(new_inputs, entry[0]))

    def holds(entry: tuple[Path, NodeEffect]) -> bool:
        return _holds(entry[1], lookup(old_inputs, entry[0]), lookup(new_inputs, entry[0]))

    def rank(entry: tuple[Path, NodeEffect]) -> tuple[int, bool]:
        # The most specific path, and at one path the entry whose `when` holds over the
        # unconditional one (a raised minimum over the minimum's general entry).
        return len(entry[0]), entry[1].when != "always"

    for path in changed:
        above = [entry for entry in entries if path[: len(entry[0])] == entry[0] and holds(entry)]
        inside: dict[Path, tuple[Path, NodeEffect]] = {}
        for entry in entries:
            if not (
                len(entry[0]) > len(path)
                and entry[0][: len(path)] == path
                and differs(entry)
                and holds(entry)
            ):
                continue
            if entry[0] not in inside or rank(entry) > rank(inside[entry[0]]):
                inside[entry[0]] = entry
        found = [max(above, key=rank)] if above else []
        found += inside.values()
        for entry_path, effect in found:
            grouped.setdefault((effect.effect, effect.says), []).append(format_path(entry_path))
        if not found:
            grouped.setdefault(("unknown", _UNKNOWN), []).append(format_path(path))
    notes = [
        NodeNote(effect=effect, says=says, paths=tuple(dict.fromkeys(paths)))
        for (effect, says), paths in grouped.items()
    ]
    return tuple(sorted(notes, key=lambda note: (_ORDER[note.effect], note.paths)))


def with_version_bump_notes(change: ResourceChange, present: Set[str]) -> ResourceChange:
    """A control plane's minor bump, with what it does to the nodes of the provisioners in
    the new plan (`present`: its resource types) that do not follow it on their own."""
    path = CONTROL_PLANE_VERSION.get(change.type)
    if path is None or change.replaces or not any(c.path == path for c in change.changes):
        return change
    notes = [
        NodeNote(effect=effect.effect, says=effect.says, paths=(path,))
        for marker, effect in VERSION_BUMP_EFFECTS.items()
        if marker in present
    ]
    if not notes:
        return change
    merged = sorted((*change.node_notes, *notes), key=lambda note: _ORDER[note.effect])
    return dataclasses.replace(change, node_notes=tuple(merged))


def with_removal_note(ref: ResourceRef) -> ResourceRef:
    """A removed resource that runs nodes, with what its removal does to them."""
    effect = REMOVAL_EFFECTS.get(ref.type)
    return dataclasses.replace(ref, node_note=effect.says) if effect and not ref.kept else ref


def with_split_note(change: ResourceChange) -> ResourceChange:
    """A change that rolls the resource's nodes together with a change that must not ride
    along (SplitFromRoll): noted, to be split into two `up`s."""
    rule = SPLIT_FROM_ROLL.get(change.type)
    if rule is None or not change.rolls:
        return change
    if not any(c.path.startswith(rule.paths) for c in change.changes):
        return change
    return dataclasses.replace(change, notes=(*change.notes, rule.says))
