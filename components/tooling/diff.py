"""Compare two ``python -m components plan --json`` documents and say what ``pulumi up`` changes.

The point is the warning: a PR that edits a GPU pool's accelerator type looks like a one-line
change, but the provider deletes and recreates the pool (every node, every running job). This
module names those replacements (:mod:`components.model.catalog.replacements`) before `up`.

Command line (wired into ``python -m components`` elsewhere)::

    python -m components diff OLD.json NEW.json [--format text|markdown] [--fail-on-replace]

Exit status: 0; 1 when the cloud would refuse a change (``pulumi up`` would fail), or with
``--fail-on-replace`` when something is replaced; 2 (one line on stderr) when a file cannot be
read, is not a plan, or the plans are of different projects.

Every changed resource gets a verdict: **update** in place, **roll** (an update in place after
which the cloud drains and replaces the running nodes: `diff_nodes`, data in
each cloud's `components/<cloud>/model/node_effects.py`), **replace** (with what that takes
down: every node of a pool, or the whole cluster), or **reject**: the cloud refuses the change,
either a property it fixes at creation or a replacement created under the name the old resource
still holds (`diff_verdicts`, data in :mod:`components.model.catalog.rejections`).

What the diff models, and what it does not:

* Resources are matched by URN; a renamed resource is a delete plus an add. Pieces: `diff_model`,
  `diff_paths` (property paths, ignore and replace rules), `diff_render` (text and Markdown).
* Plans of two stacks of one project (``gcp-dev`` and a copy under another stack name) are
  matched by logical identity: the URN without its stack part (project, type with its parent
  chain, name). The old plan's URNs, and every URN it refers to (``parent``, ``provider``,
  ``dependsOn``), are rewritten into the new stack first, so a resource only differs where the
  program declares it differently; the output says so on its first line. Plans of different
  projects share no resource and are refused.
* ``inputs`` are compared deeply: dicts recursed, lists compared whole at their path (the plan
  does not say whether a list is ordered or a set, so element-level diffs could mislead).
* A secret masked as ``"[secret]"`` on both sides counts as unchanged: the plan cannot show it.
  The same goes for ``"[unknown]"`` (a value only known after apply) on both sides; a known
  value becoming unknown is a change, and at a replacement path a (possible) replacement.
* Changes under the new resource's ``options.ignoreChanges`` are dropped, as Pulumi drops them.
* A replacement is flagged when a table path of the resource type, a path in the resource's
  ``options.replaceOnChanges``, or its explicit provider changes, and for every resource whose
  explicit provider is replaced (a Kubernetes provider whose cluster identity or kubeconfig
  active cluster changes) or moves it (a GCP provider's project): `diff_providers`. Removing an input counts as a
  change, which over-warns for optional+computed provider fields (the provider keeps the old
  value); better a spurious warning than a silent recreation.
* ``dependencies`` are not compared (they follow from the inputs); they say what waits for a
  new grant (`diff_waits`).
* A resource whose inputs are all equal, and whose ``dependsOn``, ``parent``, options or
  (unreplaced) provider differ, gets the verdict ``none``: Pulumi's engine asks the provider to
  diff the inputs only (pulumi/pulumi ``pkg/resource/deploy/step_generator.go``,
  ``generateStepsFromDiff`` -> ``diff`` -> ``diffResource``), finds no change and takes a
  "same" step that only records the rest in its state. Shown, but not counted "to change".
* Stack ``outputs`` are listed when they differ, but do not count as resource changes.
* The new plan's ``warnings`` (the config's and the program's) are listed, and those the old
  plan did not carry are called new (`diff_warnings`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from components.model.catalog.provider_changes import KUBERNETES_PROVIDER
from components.tooling.diff_cost import cost_change
from components.tooling.diff_documents import (
    check_plan,
    identities,
    load_plan,
    plan_warnings,
    restack,
    stacks_note,
)
from components.tooling.diff_model import (
    ABSENT,
    SECRET,
    PlanDiff,
    PlanError,
    PropertyChange,
    ResourceChange,
    ResourceRef,
)
from components.tooling.diff_nodes import node_notes, with_version_bump_notes
from components.tooling.diff_paths import (
    Path,
    apply_ignores,
    format_path,
    ignore_prefixes,
    options_of,
    replacement_triggers,
    same,
    walk,
)
from components.tooling.diff_providers import (
    kubernetes_provider_verdict,
    provider_move_replaces,
    replacement_refusals,
    with_managed_replacements,
)
from components.tooling.diff_render import render_markdown, render_text
from components.tooling.diff_verdicts import (
    in_place_refusals,
    peak_refusals,
    replacement_notes,
    verdict_note,
    whole_plan_verdicts,
)
from components.tooling.diff_waits import with_grant_waits

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
    "stacks_note",
]


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
    parent = resource.get("parent")
    return ResourceRef(
        urn=resource["urn"],
        type=_type_of(resource),
        name=_name_of(resource),
        parent=parent if isinstance(parent, str) and parent else None,
        kept=bool(options_of(resource).get("retainOnDelete")),
    )


def _sort_key(item: ResourceRef | ResourceChange) -> tuple[str, str, str]:
    return (item.type, item.name, item.urn)


def _still_depended_on(path: Path, old: Any, new: Any, resource: Mapping[str, Any]) -> bool:
    """An explicit `dependsOn` entry that became a dependency through an input (the resource now
    reads one of its outputs): the order is the same and Pulumi shows nothing (review of SEC-18,
    R-3)."""
    if path != ("options", "dependsOn") or not isinstance(old, list) or not isinstance(new, list):
        return False
    dropped, added = (
        set(map(str, old)) - set(map(str, new)),
        set(map(str, new)) - set(map(str, old)),
    )
    return not added and dropped <= set(map(str, resource.get("dependencies") or []))


def _diff_resource(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    old_index: Mapping[str, Mapping[str, Any]],
    new_index: Mapping[str, Mapping[str, Any]],
) -> ResourceChange | None:
    """Compare one resource present in both plans; ``None`` when nothing differs. The plans'
    indexes let a move to another explicit provider be judged as the engine does."""
    type_token = _type_of(new)
    new_options = options_of(new)
    old_options = options_of(old)
    old_inputs = old.get("inputs", {})
    program_inputs = new.get("inputs", {})
    # Pulumi applies the *new* program's ignoreChanges: the old value stands for those paths.
    new_inputs = apply_ignores(old_inputs, program_inputs, ignore_prefixes(new_options))

    raw: list[tuple[Path, Any, Any]] = []
    walk(old_inputs, new_inputs, (), raw)
    changes = [
        PropertyChange(format_path(path) or "inputs", old_value, new_value)
        for path, old_value, new_value in raw
    ]

    option_changes: list[tuple[Path, Any, Any]] = []
    walk(old_options, new_options, ("options",), option_changes)
    changes.extend(
        PropertyChange(format_path(p), a, b)
        for p, a, b in option_changes
        if not _still_depended_on(p, a, b, new)
    )

    triggers = replacement_triggers(type_token, old_inputs, new_inputs, new_options)
    notes: list[str] = []
    if type_token == KUBERNETES_PROVIDER:
        paths, shown, notes = kubernetes_provider_verdict(old, new)
        triggers += paths
        changes.extend(shown)

    for key in ("provider", "parent"):
        old_value, new_value = old.get(key), new.get(key)
        if same(old_value, new_value):
            continue
        changes.append(PropertyChange(key, old_value, new_value))
        if key == "provider" and provider_move_replaces(old_value, new_value, old_index, new_index):
            triggers.append("provider")

    refusals = in_place_refusals(type_token, old_inputs, program_inputs, triggers)
    if triggers:
        notes += replacement_notes(type_token, old_inputs, new_inputs, new_options)
        refusals += replacement_refusals(type_token, old, new, new_inputs, old_index, new_index)
    if not changes and refusals:
        # Only ignored properties changed: show them, since they will not be applied.
        ignored: list[tuple[Path, Any, Any]] = []
        walk(old_inputs, program_inputs, (), ignored)
        changes = [PropertyChange(format_path(p) or "inputs", a, b) for p, a, b in ignored]
    if not changes:
        return None
    state_only = not (raw or triggers or refusals or notes) and all(
        item.path.startswith("options.") or item.path in ("parent", "provider") for item in changes
    )
    nodes = (
        ()
        if triggers
        else node_notes(type_token, old_inputs, new_inputs, [path for path, _, _ in raw])
    )
    return ResourceChange(
        urn=new["urn"],
        type=type_token,
        name=_name_of(new),
        changes=tuple(changes),
        replace_paths=tuple(triggers),
        refusals=tuple(refusals),
        downtime=verdict_note(type_token, new_inputs, new_options) if triggers else "",
        node_notes=nodes,
        notes=tuple(notes),
        state_only=state_only,
    )


def diff_plans(old: Mapping[str, Any], new: Mapping[str, Any]) -> PlanDiff:
    """Compare two plan documents (as printed by ``python -m components plan --json``).

    Raises :class:`PlanError` if either is not a plan.
    """
    check_plan(old, "old plan")
    check_plan(new, "new plan")
    old_stack, new_stack, project = identities(old, new)
    original = {urn: urn for urn in _index(old)}
    if old_stack and new_stack and project and old_stack != new_stack:
        # Match by logical identity: the old plan as if it were the new stack's.
        restacked = restack(dict(old), project, old_stack, new_stack)
        original = {restack(urn, project, old_stack, new_stack): urn for urn in original}
        old = restacked
    old_index, new_index = _index(old), _index(new)

    added = sorted(
        (_ref(new_index[urn]) for urn in new_index.keys() - old_index.keys()), key=_sort_key
    )
    removed = sorted(
        (
            _ref(
                {
                    **old_index[urn],
                    "urn": original[urn],
                    "parent": original.get(old_index[urn].get("parent") or ""),
                }
            )
            for urn in old_index.keys() - new_index.keys()
        ),
        key=_sort_key,
    )
    present = {_type_of(resource) for resource in new_index.values()}
    changed = sorted(
        with_managed_replacements(
            (
                with_version_bump_notes(change, present)
                for urn in old_index.keys() & new_index.keys()
                if (change := _diff_resource(old_index[urn], new_index[urn], old_index, new_index))
                is not None
            ),
            old_index,
            new_index,
        ),
        key=_sort_key,
    )

    changed, removed, refusals = whole_plan_verdicts(changed, added, removed, old_index, new_index)
    refusals += peak_refusals(changed, added, old_index, new_index, new.get("limits"))

    output_changes: list[tuple[Path, Any, Any]] = []
    old_outputs, new_outputs = old.get("outputs", {}), new.get("outputs", {})
    if isinstance(old_outputs, Mapping) and isinstance(new_outputs, Mapping):
        for key in sorted(set(old_outputs) | set(new_outputs)):
            # Stack outputs are compared whole per output: they are usually small values.
            old_value, new_value = old_outputs.get(key, ABSENT), new_outputs.get(key, ABSENT)
            if not same(old_value, new_value):
                output_changes.append(((str(key),), old_value, new_value))

    project, stack = new.get("project"), new.get("stack")
    diff = PlanDiff(
        added=tuple(added),
        removed=tuple(removed),
        changed=tuple(changed),
        project=project if isinstance(project, str) else None,
        stack=stack if isinstance(stack, str) else None,
        outputs=tuple(PropertyChange(format_path(p), a, b) for p, a, b in output_changes),
        cost=cost_change(old.get("cost"), new.get("cost")),
        warnings=plan_warnings(new) or (),
        old_warnings=plan_warnings(old),
        refusals=tuple(refusals),
    )
    return with_grant_waits(diff, new_index)


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
            "an EKS node group's instance types, ...) are flagged with '!! REPLACES'; "
            "updates in place that drain and replace a pool's running nodes (an EKS managed "
            "group's new launch template or version, a GKE pool's machine type or disk, an "
            "AKS pool's Kubernetes minor) with '~ ROLLS'; changes the cloud refuses (a "
            "property it fixes at creation, a same-name replacement, an EKS Capacity "
            "Block group updated while it has nodes, a Kubernetes minor lowered or skipped on AKS, "
            "Entra ID turned off) with '!! REJECTED'. Every in-place change of a pool says "
            "what happens to its "
            "running nodes ('running nodes: ...'); resources that come or go with a "
            "component are listed under it, with why it exists."
        ),
        epilog=(
            "Exit status: 0 on success; 1 when the cloud would refuse a change, or with "
            "--fail-on-replace when a resource is replaced; "
            "2 when a file cannot be read or is not a plan, or the plans are of different "
            "projects. Plans of two stacks of one project are compared by logical identity "
            "(the URN without its stack), which the first line of the output says. Use '-' "
            "to read a plan from stdin."
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
        note = stacks_note(old, new)
    except PlanError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.format == "markdown":
        rendered = render_markdown(diff)
        if note:
            heading, rest = rendered.split("\n", 1)
            rendered = f"{heading}\n\n> [!NOTE]\n> {note}\n{rest}"
    else:
        rendered = render_text(diff)
        if note:
            rendered = f"{note}\n{rendered}"
    sys.stdout.write(rendered)
    if diff.refused:
        return 1
    return 1 if args.fail_on_replace and diff.replaced else 0


if __name__ == "__main__":  # pragma: no cover - the package CLI calls main() directly
    raise SystemExit(main())
