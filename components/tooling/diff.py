"""Compare two ``python -m components plan --json`` documents and say what ``pulumi up`` changes.

The point is the warning: a PR that edits a GPU pool's accelerator type looks like a one-line
change, but the provider deletes and recreates the pool (every node, every running job). This
module names those replacements, using :mod:`components.model.catalog.replacements`, before anyone
runs ``pulumi up``.

Command line (wired into ``python -m components`` elsewhere)::

    python -m components diff OLD.json NEW.json [--format text|markdown] [--fail-on-replace]

Exit status: 0, or 1 with ``--fail-on-replace`` when something is replaced, or 2 (one line on
stderr) when a file cannot be read or is not a plan.

What the diff models, and what it does not:

* Resources are matched by URN; a renamed resource is a delete plus an add.
* ``inputs`` are compared deeply: dicts recursed, lists compared whole at their path (the plan
  does not say whether a list is ordered or a set, so element-level diffs could mislead).
* A secret masked as ``"[secret]"`` on both sides counts as unchanged: the plan cannot show it.
  The same goes for ``"[unknown]"`` (a value only known after apply) on both sides; a known
  value becoming unknown is a change, and at a replacement path a (possible) replacement.
* Changes under the new resource's ``options.ignoreChanges`` are dropped, as Pulumi drops them.
* A replacement is flagged when a table path of the resource type, a path in the resource's
  ``options.replaceOnChanges``, or its explicit provider changes. Removing an input counts as a
  change, which over-warns for optional+computed provider fields (the provider keeps the old
  value); better a spurious warning than a silent recreation.
* ``dependencies`` are not compared: they follow from the inputs, which are.
* Stack ``outputs`` are listed when they differ, but do not count as resource changes.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TextIO

from components.model.catalog.replacements import replacement_paths

__all__ = [
    "ABSENT",
    "SECRET",
    "PlanDiff",
    "PlanError",
    "PropertyChange",
    "ResourceChange",
    "ResourceRef",
    "diff_plans",
    "load_plan",
    "main",
    "render_markdown",
    "render_text",
]

SECRET: Final = "[secret]"
"""How the plan document masks a secret value."""

# Longest rendering of one value in a ``path: old -> new`` line. Long enough for a typical
# accelerator list or subnet list, short enough that a changed user-data blob stays one line.
MAX_VALUE_CHARS: Final = 80

_TRUNCATION_MARK: Final = "..."

# Characters kept before the first difference when a long value is windowed.
_DIFF_CONTEXT_CHARS: Final = 32

# A path segment printed bare (``nodeConfig.spot``); anything else, such as a label key with dots
# or slashes, is printed Pulumi-style as ``labels["cloud.google.com/gke-nodepool"]``.
_BARE_SEGMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# One segment of a Pulumi property path as written in ignoreChanges/replaceOnChanges:
# ``name``, ``["quoted key"]``, ``[0]`` or ``[*]``.
_PATH_TOKEN = re.compile(r'\.?([A-Za-z_$][\w$-]*)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+|\*)\]')


class _Absent:
    """Marker for "no value at this path" (distinct from JSON ``null``)."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()
"""The old or new value of a property that one side does not have."""


class PlanError(ValueError):
    """The input is not a plan document (bad JSON shape, missing ``resources``, ...)."""


@dataclass(frozen=True)
class PropertyChange:
    """One changed value: ``path`` is display text (``nodeConfig.spot``, ``options.protect``)."""

    path: str
    old: Any
    new: Any


@dataclass(frozen=True)
class ResourceRef:
    """An added or removed resource."""

    urn: str
    type: str
    name: str


@dataclass(frozen=True)
class ResourceChange:
    """A resource present in both plans whose inputs, options or provider differ.

    ``replace_paths`` are the paths that make Pulumi delete and recreate it (empty for an
    in-place update).
    """

    urn: str
    type: str
    name: str
    changes: tuple[PropertyChange, ...]
    replace_paths: tuple[str, ...] = ()

    @property
    def replaces(self) -> bool:
        """True when the provider recreates the resource instead of updating it."""
        return bool(self.replace_paths)


@dataclass(frozen=True)
class PlanDiff:
    """Everything that differs between two plans, each group sorted by (type, name, urn)."""

    added: tuple[ResourceRef, ...] = ()
    removed: tuple[ResourceRef, ...] = ()
    changed: tuple[ResourceChange, ...] = ()
    project: str | None = None
    stack: str | None = None
    outputs: tuple[PropertyChange, ...] = ()

    @property
    def replaced(self) -> tuple[ResourceChange, ...]:
        """The changed resources that are replaced."""
        return tuple(change for change in self.changed if change.replaces)

    @property
    def is_empty(self) -> bool:
        """True when ``pulumi up`` would do nothing (stack outputs aside)."""
        return not (self.added or self.removed or self.changed)

    def summary(self) -> str:
        """``N to add, N to change (N replaced), N to delete``."""
        return (
            f"{len(self.added)} to add, {len(self.changed)} to change "
            f"({len(self.replaced)} replaced), {len(self.removed)} to delete"
        )


# --------------------------------------------------------------------------------------------
# Reading plans
# --------------------------------------------------------------------------------------------


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
    _check_plan(document, path)
    return dict(document)


def _check_plan(document: Any, label: str) -> None:
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


def _index(document: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Map URN -> resource."""
    return {resource["urn"]: resource for resource in document["resources"]}


def _type_of(resource: Mapping[str, Any]) -> str:
    """The type token, falling back to the URN's type segment for sparse documents."""
    value = resource.get("type")
    if isinstance(value, str) and value:
        return value
    # urn:pulumi:stack::project::[parent$]type::name
    parts = str(resource["urn"]).split("::")
    return parts[2].rsplit("$", 1)[-1] if len(parts) >= 4 else "?"


def _name_of(resource: Mapping[str, Any]) -> str:
    """The logical name, falling back to the URN's last segment."""
    value = resource.get("name")
    if isinstance(value, str) and value:
        return value
    return str(resource["urn"]).rsplit("::", 1)[-1]


def _ref(resource: Mapping[str, Any]) -> ResourceRef:
    return ResourceRef(urn=resource["urn"], type=_type_of(resource), name=_name_of(resource))


def _sort_key(item: ResourceRef | ResourceChange) -> tuple[str, str, str]:
    return (item.type, item.name, item.urn)


# --------------------------------------------------------------------------------------------
# Comparing values
# --------------------------------------------------------------------------------------------

Path = tuple[str, ...]


def _same(old: Any, new: Any) -> bool:
    """JSON equality: like ``==`` but ``true`` is not ``1`` (Python says ``True == 1``)."""
    if isinstance(old, bool) or isinstance(new, bool):
        return type(old) is type(new) and old == new
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        return old.keys() == new.keys() and all(_same(old[key], new[key]) for key in old)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new, strict=True))
    if isinstance(old, Mapping | list) or isinstance(new, Mapping | list):
        return False
    return bool(old == new)


def _walk(old: Any, new: Any, path: Path, out: list[tuple[Path, Any, Any]]) -> None:
    """Append ``(path, old, new)`` for every differing leaf; dicts recurse, lists do not."""
    if _same(old, new):
        return
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new), key=str):
            _walk(old.get(key, ABSENT), new.get(key, ABSENT), (*path, str(key)), out)
        return
    out.append((path, old, new))


def _lookup(value: Any, path: Path) -> Any:
    """The value at ``path`` inside nested dicts, or :data:`ABSENT`."""
    for segment in path:
        if not isinstance(value, Mapping) or segment not in value:
            return ABSENT
        value = value[segment]
    return value


def _format_path(path: Path) -> str:
    """Dotted display form, bracket-quoting keys that are not plain identifiers."""
    text = ""
    for segment in path:
        if _BARE_SEGMENT.match(segment):
            text = f"{text}.{segment}" if text else segment
        else:
            text += f"[{json.dumps(segment, ensure_ascii=False)}]"
    return text


def _parse_property_path(text: str) -> tuple[Path, bool] | None:
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


def _apply_ignores(old: Any, new: Any, ignore: Sequence[Path]) -> Any:
    """``new`` with every ignored path reset to its ``old`` value, as Pulumi's engine does."""
    if not ignore or not isinstance(new, Mapping):
        return new
    if () in ignore:
        return old
    result: dict[str, Any] = copy.deepcopy(dict(new))
    for path in ignore:
        old_value = _lookup(old, path)
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


def _ignore_prefixes(options: Mapping[str, Any]) -> list[Path]:
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
        parsed = _parse_property_path(entry)
        if parsed is not None and not parsed[1]:
            prefixes.append(parsed[0])
    return prefixes


def _is_default_provider(reference: str) -> bool:
    """Pulumi's own rule: a provider whose URN name starts with ``default``."""
    urn = reference.rsplit("::", 1)[0] if reference.count("::") >= 4 else reference
    return urn.rsplit("::", 1)[-1].startswith("default")


def _replacement_triggers(
    type_token: str, old_inputs: Any, new_inputs: Any, new_options: Mapping[str, Any]
) -> list[str]:
    """The paths whose change makes Pulumi replace this resource (ignoreChanges applied)."""
    triggers: list[str] = []

    def differs(path: Path) -> bool:
        # Compare the values *at* the path rather than matching changed leaves, so that a
        # wholesale change above it (a block added or removed) counts too.
        return not _same(_lookup(old_inputs, path), _lookup(new_inputs, path))

    for table_path in replacement_paths(type_token):
        if differs(tuple(table_path.split("."))):
            triggers.append(table_path)

    # The resource's own replaceOnChanges option, as the engine applies it.
    for entry in _option_paths(new_options, "replaceOnChanges"):
        if entry == "*":
            if not _same(old_inputs, new_inputs):
                triggers.append("*")
            continue
        parsed = _parse_property_path(entry)
        # A path through a list index is cut at the list: over-warning, never under-warning.
        if parsed is not None and parsed[0] and differs(parsed[0]) and entry not in triggers:
            triggers.append(entry)
    return triggers


def _options_of(resource: Mapping[str, Any]) -> Mapping[str, Any]:
    """The resource's ``options`` object, or an empty one."""
    options = resource.get("options")
    return options if isinstance(options, Mapping) else {}


def _diff_resource(old: Mapping[str, Any], new: Mapping[str, Any]) -> ResourceChange | None:
    """Compare one resource present in both plans; ``None`` when nothing differs."""
    type_token = _type_of(new)
    new_options = _options_of(new)
    old_options = _options_of(old)
    old_inputs = old.get("inputs", {})
    # Pulumi applies the *new* program's ignoreChanges: the old value stands for those paths.
    new_inputs = _apply_ignores(old_inputs, new.get("inputs", {}), _ignore_prefixes(new_options))

    raw: list[tuple[Path, Any, Any]] = []
    _walk(old_inputs, new_inputs, (), raw)
    changes = [
        PropertyChange(_format_path(path) or "inputs", old_value, new_value)
        for path, old_value, new_value in raw
    ]

    option_changes: list[tuple[Path, Any, Any]] = []
    _walk(old_options, new_options, ("options",), option_changes)
    changes.extend(PropertyChange(_format_path(p), a, b) for p, a, b in option_changes)

    triggers = _replacement_triggers(type_token, old_inputs, new_inputs, new_options)

    for key in ("provider", "parent"):
        old_value, new_value = old.get(key), new.get(key)
        if _same(old_value, new_value):
            continue
        changes.append(PropertyChange(key, old_value, new_value))
        # The engine replaces a resource whose provider reference changes unless both are
        # default providers (then it asks the provider; a version bump usually is not one).
        if key == "provider" and not (
            isinstance(old_value, str)
            and isinstance(new_value, str)
            and _is_default_provider(old_value)
            and _is_default_provider(new_value)
        ):
            triggers.append("provider")

    if not changes:
        return None
    return ResourceChange(
        urn=new["urn"],
        type=type_token,
        name=_name_of(new),
        changes=tuple(changes),
        replace_paths=tuple(triggers),
    )


def diff_plans(old: Mapping[str, Any], new: Mapping[str, Any]) -> PlanDiff:
    """Compare two plan documents (as printed by ``python -m components plan --json``).

    Raises :class:`PlanError` if either is not a plan.
    """
    _check_plan(old, "old plan")
    _check_plan(new, "new plan")
    old_index, new_index = _index(old), _index(new)

    added = sorted(
        (_ref(new_index[urn]) for urn in new_index.keys() - old_index.keys()), key=_sort_key
    )
    removed = sorted(
        (_ref(old_index[urn]) for urn in old_index.keys() - new_index.keys()), key=_sort_key
    )
    changed = sorted(
        (
            change
            for urn in old_index.keys() & new_index.keys()
            if (change := _diff_resource(old_index[urn], new_index[urn])) is not None
        ),
        key=_sort_key,
    )

    output_changes: list[tuple[Path, Any, Any]] = []
    old_outputs, new_outputs = old.get("outputs", {}), new.get("outputs", {})
    if isinstance(old_outputs, Mapping) and isinstance(new_outputs, Mapping):
        for key in sorted(set(old_outputs) | set(new_outputs)):
            # Stack outputs are compared whole per output: they are usually small values.
            old_value, new_value = old_outputs.get(key, ABSENT), new_outputs.get(key, ABSENT)
            if not _same(old_value, new_value):
                output_changes.append(((str(key),), old_value, new_value))

    project, stack = new.get("project"), new.get("stack")
    return PlanDiff(
        added=tuple(added),
        removed=tuple(removed),
        changed=tuple(changed),
        project=project if isinstance(project, str) else None,
        stack=stack if isinstance(stack, str) else None,
        outputs=tuple(PropertyChange(_format_path(p), a, b) for p, a, b in output_changes),
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
    lead = _TRUNCATION_MARK if start else ""
    # Size the suffix for the largest possible count, so the result never exceeds ``limit``.
    budget = max(limit - len(lead) - len(f"{_TRUNCATION_MARK} (+{len(text)} chars)"), 1)
    body = text[start : start + budget]
    omitted = len(text) - len(body)
    return f"{lead}{body}{_TRUNCATION_MARK} (+{omitted} chars)"


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
        start = first_difference - _DIFF_CONTEXT_CHARS
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
    return (
        f"!! REPLACES {label}: {', '.join(change.replace_paths)} "
        "(the provider recreates this resource)"
    )


def _body_lines(diff: PlanDiff) -> list[str]:
    """The ``+``/``-``/``~`` blocks followed by the ``!! REPLACES`` lines."""
    labels = _labels([*diff.added, *diff.removed, *diff.changed])
    lines = [f"+ {labels[ref.urn]}" for ref in diff.added]
    lines += [f"- {labels[ref.urn]}" for ref in diff.removed]
    for change in diff.changed:
        lines.append(f"~ {labels[change.urn]}")
        lines += [_change_line(item) for item in change.changes]
    lines += [_replace_line(change, labels[change.urn]) for change in diff.replaced]
    return lines


def render_text(diff: PlanDiff) -> str:
    """Plain text for a terminal or CI log, ending with the one-line summary."""
    lines = _body_lines(diff)
    if diff.outputs:
        lines.append("Outputs:")
        lines += [_change_line(item) for item in diff.outputs]
    if not lines:
        lines.append("No changes.")
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

    replaced = diff.replaced
    if replaced:
        labels = _labels([*diff.added, *diff.removed, *diff.changed])
        noun, pronoun = ("resource is", "it") if len(replaced) == 1 else ("resources are", "them")
        parts += [
            "",
            "> [!WARNING]",
            f"> {len(replaced)} {noun} **replaced**, not updated in place: the provider deletes "
            f"and recreates {pronoun}, interrupting whatever runs there (nodes, pods, jobs).",
        ]
        for change in replaced:
            paths = ", ".join(_md_code(path) for path in change.replace_paths)
            parts.append(f"> - {_md_code(labels[change.urn])} because of {paths}")

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
    return "\n".join(parts) + "\n"


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m components diff",
        description=(
            "Compare two plan documents written by 'python -m components plan STACK --json' "
            "and show what 'pulumi up' would add, change and delete. Changes that make the "
            "provider delete and recreate a resource (a GPU pool's accelerator or VM size, "
            "an EKS node group's instance types, ...) are flagged with '!! REPLACES'."
        ),
        epilog=(
            "Exit status: 0 on success; 1 with --fail-on-replace when a resource is replaced; "
            "2 when a file cannot be read or is not a plan. Use '-' to read a plan from stdin."
        ),
    )
    parser.add_argument("old", metavar="OLD.json", help="the plan before the change (e.g. main)")
    parser.add_argument("new", metavar="NEW.json", help="the plan after the change (e.g. the PR)")
    parser.add_argument(
        "--format",
        choices=("text", "markdown"),
        default="text",
        help="text for terminals and CI logs (default), markdown for a PR comment",
    )
    parser.add_argument(
        "--fail-on-replace",
        action="store_true",
        help="exit 1 when any resource would be replaced",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m components diff``; returns the exit status (argparse exits on bad usage)."""
    args = _parser().parse_args(argv)
    try:
        old = load_plan(args.old)
        new = load_plan(args.new)
        diff = diff_plans(old, new)
    except PlanError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    rendered = render_markdown(diff) if args.format == "markdown" else render_text(diff)
    sys.stdout.write(rendered)
    return 1 if args.fail_on_replace and diff.replaced else 0


if __name__ == "__main__":  # pragma: no cover - the package CLI calls main() directly
    raise SystemExit(main())
