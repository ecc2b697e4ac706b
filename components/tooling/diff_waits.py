"""What waits for a grant the same `pulumi up` makes: the `note:` lines `diff` adds for it.

A cloud's new grant can take minutes to take effect after its API accepted it, and gpufleet
holds back what needs it (an AKS pool in a capacity reservation group, the Kubernetes provider
of an Entra ID cluster: components/azure/rbac.py), so such an `up` takes longer than its changes
suggest. A plan records each resource's dependencies; those that are not explicit
(`options.dependsOn`) are the resources its inputs come from. Where an input comes from a grant
that is added or replaced in this diff, and the cloud says what waits for it
(`ResourceKnowledge.grant_waits`), the note goes on what waits when it is added or changed, else on the
grant (naming what waits).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from components.model import resource_index
from components.tooling.diff_model import PlanDiff, ResourceChange, ResourceRef

# Every cloud's table, merged: each grant type belongs to one cloud (resource_index refuses two).
GRANT_WAITS = resource_index.GRANT_WAITS
_GRANT_TYPES = frozenset(grant for grant, _ in GRANT_WAITS)
Noted = TypeVar("Noted", ResourceRef, ResourceChange)


def _input_sources(resource: Mapping[str, Any]) -> set[str]:
    """The URNs a resource's inputs come from: its dependencies less the explicit ones."""
    options = resource.get("options") or {}
    explicit = set(options.get("dependsOn") or ())
    return {urn for urn in resource.get("dependencies") or () if urn not in explicit}


def _with_notes(item: Noted, notes: list[str]) -> Noted:
    return dataclasses.replace(item, notes=(*item.notes, *notes)) if notes else item


def with_grant_waits(diff: PlanDiff, new_index: Mapping[str, Mapping[str, Any]]) -> PlanDiff:
    """`diff` with a note on everything that waits for a grant it adds or replaces."""
    items: list[ResourceRef | ResourceChange] = [*diff.added, *diff.replaced]
    grants = {item.urn: item for item in items if item.type in _GRANT_TYPES}
    if not grants:
        return diff
    moved = {ref.urn for ref in diff.added} | {change.urn for change in diff.changed}
    on_item: dict[str, list[str]] = {}
    for urn, resource in new_index.items():
        resource_type = str(resource.get("type", ""))
        for source in sorted(_input_sources(resource) & grants.keys()):
            grant = grants[source]
            says = GRANT_WAITS.get((grant.type, resource_type))
            if says is None:
                continue
            if urn in moved:
                on_item.setdefault(urn, []).append(f"waits for the new grant {grant.name}: {says}")
            else:
                name = resource.get("name") or urn
                on_item.setdefault(source, []).append(
                    f"{resource_type} {name} waits for it: {says}"
                )
    if not on_item:
        return diff
    return dataclasses.replace(
        diff,
        added=tuple(_with_notes(ref, on_item.get(ref.urn, [])) for ref in diff.added),
        changed=tuple(_with_notes(c, on_item.get(c.urn, [])) for c in diff.changed),
    )
