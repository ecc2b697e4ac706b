"""Property paths of a plan diff: walking two input trees, Pulumi's ignoreChanges and
replaceOnChanges paths, and what makes the provider replace a resource."""

from __future__ import annotations

import copy
import ipaddress
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from components.model.resource_index import replaced_unless_widened, replacement_paths
from components.tooling.diff_model import ABSENT

# A path segment printed bare (``nodeConfig.spot``); anything else, such as a label key with dots
# or slashes, is printed Pulumi-style as ``labels["cloud.google.com/gke-nodepool"]``.
_BARE_SEGMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# One segment of a Pulumi property path as written in ignoreChanges/replaceOnChanges:
# ``name``, ``["quoted key"]``, ``[0]`` or ``[*]``.
_PATH_TOKEN = re.compile(r'\.?([A-Za-z_$][\w$-]*)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+|\*)\]')

# --------------------------------------------------------------------------------------------
# Comparing values
# --------------------------------------------------------------------------------------------

Path = tuple[str, ...]


def same(old: Any, new: Any) -> bool:
    """JSON equality: like ``==`` but ``true`` is not ``1`` (Python says ``True == 1``)."""
    if isinstance(old, bool) or isinstance(new, bool):
        return type(old) is type(new) and old == new
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        return old.keys() == new.keys() and all(same(old[key], new[key]) for key in old)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(same(a, b) for a, b in zip(old, new, strict=True))
    if isinstance(old, Mapping | list) or isinstance(new, Mapping | list):
        return False
    return bool(old == new)


def walk(old: Any, new: Any, path: Path, out: list[tuple[Path, Any, Any]]) -> None:
    """Append ``(path, old, new)`` for every differing leaf; dicts recurse, lists do not."""
    if same(old, new):
        return
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new), key=str):
            walk(old.get(key, ABSENT), new.get(key, ABSENT), (*path, str(key)), out)
        return
    out.append((path, old, new))


def lookup(value: Any, path: Path) -> Any:
    """The value at ``path`` inside nested dicts, or :data:`ABSENT`."""
    for segment in path:
        if not isinstance(value, Mapping) or segment not in value:
            return ABSENT
        value = value[segment]
    return value


def format_path(path: Path) -> str:
    """Dotted display form, bracket-quoting keys that are not plain identifiers."""
    text = ""
    for segment in path:
        if _BARE_SEGMENT.match(segment):
            text = f"{text}.{segment}" if text else segment
        else:
            text += f"[{json.dumps(segment, ensure_ascii=False)}]"
    return text


def parse_property_path(text: str) -> tuple[Path, bool] | None:
    """Parse a Pulumi property path (``a.b``, ``a["k.8s/x"]``, ``a[0].b``, ``a[*]``).

    Returns the dict segments up to the first list index and whether the path went on past
    that index (which this diff, comparing lists whole, cannot follow), or ``None`` when the
    text is not a path this parser understands.
    """
    segments: list[str] = []
    position = 0
    while position < len(text):
        match = _PATH_TOKEN.match(text, position)
        if match is None or (position == 0 and match.group(0).startswith(".")):
            return None
        position = match.end()
        if match.group(1) is not None:
            segments.append(match.group(1))
        elif match.group(2) is not None:
            segments.append(json.loads(f'"{match.group(2)}"'))
        else:
            return tuple(segments), True
    return (tuple(segments), False) if segments else None


def _option_paths(options: Mapping[str, Any], key: str) -> list[str]:
    """The string entries of a list-valued option such as ``ignoreChanges``."""
    value = options.get(key)
    if not isinstance(value, list):
        return []
    return [entry for entry in value if isinstance(entry, str)]


def apply_ignores(old: Any, new: Any, ignore: Sequence[Path]) -> Any:
    """``new`` with every ignored path reset to its ``old`` value, as Pulumi's engine does."""
    if not ignore or not isinstance(new, Mapping):
        return new
    if () in ignore:
        return old
    result: dict[str, Any] = copy.deepcopy(dict(new))
    for path in ignore:
        old_value = lookup(old, path)
        parent: Any = result
        for segment in path[:-1]:
            if not isinstance(parent, dict):
                break
            if segment not in parent and old_value is not ABSENT:
                parent[segment] = {}
            parent = parent.get(segment)
        if not isinstance(parent, dict):
            continue  # the new value has no dict there: nothing Pulumi could keep
        if old_value is ABSENT:
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = copy.deepcopy(old_value)
    return result


def ignore_prefixes(options: Mapping[str, Any]) -> list[Path]:
    """ignoreChanges entries this diff can apply.

    An entry that goes through a list index (``tags[0]``) ignores only part of a list this diff
    compares whole, so it is not applied: showing a change Pulumi would skip is safer than
    hiding one it would make.
    """
    prefixes: list[Path] = []
    for entry in _option_paths(options, "ignoreChanges"):
        if entry == "*":
            prefixes.append(())
            continue
        parsed = parse_property_path(entry)
        if parsed is not None and not parsed[1]:
            prefixes.append(parsed[0])
    return prefixes


def is_default_provider(reference: str) -> bool:
    """Pulumi's own rule: a provider whose URN name starts with ``default``."""
    urn = reference.rsplit("::", 1)[0] if reference.count("::") >= 4 else reference
    return urn.rsplit("::", 1)[-1].startswith("default")


def widens(old: Any, new: Any) -> bool:
    """Whether CIDR ``new`` contains CIDR ``old`` (a range grown in place); anything that is not
    two ranges of one family (absent, unknown, unparsable) is not."""
    try:
        before, after = ipaddress.ip_network(old), ipaddress.ip_network(new)
    except (TypeError, ValueError):
        return False
    return before.version == after.version and before.subnet_of(after)  # type: ignore[arg-type]


def replacement_triggers(
    type_token: str, old_inputs: Any, new_inputs: Any, new_options: Mapping[str, Any]
) -> list[str]:
    """The paths whose change makes Pulumi replace this resource (ignoreChanges applied)."""
    triggers: list[str] = []

    def differs(path: Path) -> bool:
        # Compare the values *at* the path rather than matching changed leaves, so that a
        # wholesale change above it (a block added or removed) counts too.
        return not same(lookup(old_inputs, path), lookup(new_inputs, path))

    for table_path in replacement_paths(type_token):
        if differs(tuple(table_path.split("."))):
            triggers.append(table_path)
    for cidr_path in replaced_unless_widened(type_token):
        path = tuple(cidr_path.split("."))
        if differs(path) and not widens(lookup(old_inputs, path), lookup(new_inputs, path)):
            triggers.append(cidr_path)

    # The resource's own replaceOnChanges option, as the engine applies it.
    for entry in _option_paths(new_options, "replaceOnChanges"):
        if entry == "*":
            if not same(old_inputs, new_inputs):
                triggers.append("*")
            continue
        parsed = parse_property_path(entry)
        # A path through a list index is cut at the list: over-warning, never under-warning.
        if parsed is not None and parsed[0] and differs(parsed[0]) and entry not in triggers:
            triggers.append(entry)
    return triggers


def options_of(resource: Mapping[str, Any]) -> Mapping[str, Any]:
    """The resource's ``options`` object, or an empty one."""
    options = resource.get("options")
    return options if isinstance(options, Mapping) else {}
