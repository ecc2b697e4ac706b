"""Provider changes in a plan diff: when an explicit provider is replaced, or changes an input its
resources depend on, the resources it manages are replaced with it, although their own inputs
did not change. Data and sources: :mod:`components.model.catalog.provider_changes`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from components.model.catalog.provider_changes import (
    ACTIVE_CLUSTER,
    CLUSTER_IDENTIFIER,
    KUBERNETES_ALWAYS_REPLACES,
    KUBERNETES_PROVIDER,
)
from components.model.resource_index import (
    MANAGED_DOWNTIME,
    MOVES_MANAGED_RESOURCES,
    MOVES_NOTE,
    moves_managed,
)
from components.tooling.diff_model import ABSENT, SECRET, PropertyChange, ResourceChange
from components.tooling.diff_paths import (
    format_path,
    ignore_prefixes,
    is_default_provider,
    lookup,
    options_of,
    same,
    walk,
)
from components.tooling.diff_verdicts import protected_refusal, same_name_refusal

_UNSEEN_KUBECONFIG = (
    "the kubeconfig is a secret in the plan and the {side} plan does not show its active "
    "cluster (a plan from an older gpufleet): if this `up` changes the cluster's endpoint or "
    "CA, pulumi-kubernetes replaces this provider and every resource it manages{identity}; "
    "see docs/upgrading-gpufleet.md"
)
_IDENTIFIER_ADDED = (
    ", since the clusterIdentifier it gains only protects the provider from the next `up` on"
)


def kubernetes_provider_verdict(
    old: Mapping[str, Any], new: Mapping[str, Any]
) -> tuple[list[str], list[PropertyChange], list[str]]:
    """What pulumi-kubernetes' DiffConfig does with this provider change: the paths that
    replace it, the change of the kubeconfig's active cluster (a secret's visible part), and
    notes where the plans cannot tell."""
    old_inputs, new_inputs = old.get("inputs", {}), new.get("inputs", {})
    old_active, new_active = old.get(ACTIVE_CLUSTER, ABSENT), new.get(ACTIVE_CLUSTER, ABSENT)
    leaves: list[tuple[tuple[str, ...], Any, Any]] = []
    walk(old_active, new_active, (ACTIVE_CLUSTER,), leaves)
    shown = [PropertyChange(format_path(path), before, after) for path, before, after in leaves]
    old_id = lookup(old_inputs, (CLUSTER_IDENTIFIER,))
    new_id = lookup(new_inputs, (CLUSTER_IDENTIFIER,))
    if _present(old_id) and _present(new_id):
        # Same identifier: never replaced; another one: replaced, whatever else changed.
        return ([] if same(old_id, new_id) else [CLUSTER_IDENTIFIER]), shown, []
    paths = [
        key
        for key in KUBERNETES_ALWAYS_REPLACES
        if not same(lookup(old_inputs, (key,)), lookup(new_inputs, (key,)))
    ]
    notes: list[str] = []
    if isinstance(old_active, Mapping) and isinstance(new_active, Mapping):
        if not same(old_active, new_active):
            paths.append("kubeconfig")
    elif _secret(old_inputs) or _secret(new_inputs):
        side = "old" if not isinstance(old_active, Mapping) else "new"
        added = not _present(old_id) and _present(new_id)
        notes.append(
            _UNSEEN_KUBECONFIG.format(side=side, identity=_IDENTIFIER_ADDED if added else "")
        )
    return paths, shown, notes


def _present(value: Any) -> bool:
    return value is not ABSENT and value is not None


def _secret(inputs: Mapping[str, Any]) -> bool:
    return lookup(inputs, ("kubeconfig",)) == SECRET


def _provider_urn(reference: Any) -> str | None:
    """The provider's URN in a ``URN::ID`` reference."""
    return reference.rsplit("::", 1)[0] if isinstance(reference, str) and reference else None


def with_managed_replacements(
    changed: Iterable[ResourceChange],
    old_index: Mapping[str, Mapping[str, Any]],
    new_index: Mapping[str, Mapping[str, Any]],
) -> list[ResourceChange]:
    """``changed`` plus the resources a changed provider replaces: every resource of a
    replaced provider, and those a provider input change recreates (a new GCP project)."""
    by_urn = {change.urn: change for change in changed}
    causes: dict[str, _Cause] = {}
    for change in by_urn.values():
        kind = change.type
        if not kind.startswith("pulumi:providers:"):
            continue
        if change.replaces:
            causes[change.urn] = _Cause("provider", None, None, MANAGED_DOWNTIME.get(kind, ""))
            continue
        for key in MOVES_MANAGED_RESOURCES.get(kind, {}):
            old_value = lookup(old_index[change.urn].get("inputs", {}), (key,))
            new_value = lookup(new_index[change.urn].get("inputs", {}), (key,))
            if not same(old_value, new_value):
                note = MOVES_NOTE.get(kind)
                if note and note not in change.notes:
                    by_urn[change.urn] = replace(change, notes=(*change.notes, note))
                causes[change.urn] = _Cause(
                    f"provider.{key}",
                    (old_value, new_value),
                    frozenset(moves_managed(kind, key)),
                    MANAGED_DOWNTIME.get(kind, ""),
                )
    if not causes:
        return list(by_urn.values())
    for urn in sorted(old_index.keys() & new_index.keys()):
        resource = new_index[urn]
        cause = causes.get(_provider_urn(resource.get("provider")) or "")
        if cause is None or (cause.types is not None and resource.get("type") not in cause.types):
            continue
        by_urn[urn] = _replaced_by_provider(by_urn.get(urn), resource, old_index[urn], cause)
    return list(by_urn.values())


@dataclass(frozen=True)
class _Cause:
    """Why a provider's resources are replaced: the path shown, its values (None: the
    provider itself is replaced), the resource types it reaches (None: all), the downtime."""

    path: str
    values: tuple[Any, Any] | None
    types: frozenset[str] | None
    downtime: str


def _replaced_by_provider(
    change: ResourceChange | None,
    new: Mapping[str, Any],
    old: Mapping[str, Any],
    cause: _Cause,
) -> ResourceChange:
    path = cause.path
    old_value, new_value = cause.values or (new.get("provider"), "(replaced with it)")
    shown = PropertyChange(path, old_value, new_value)
    if change is None:
        change = ResourceChange(
            urn=str(new["urn"]),
            type=str(new.get("type", "")),
            name=str(new.get("name", "")),
            changes=(shown,),
        )
    elif not any(item.path == path for item in change.changes):
        change = replace(change, changes=(*change.changes, shown))
    if path in change.replace_paths:
        return change
    refusals = change.refusals
    if not change.replaces:
        same_name = same_name_refusal(
            change.type, old.get("inputs", {}), new.get("inputs", {}), options_of(new)
        )
        refusals = (*refusals, same_name) if same_name else refusals
    return replace(
        change,
        replace_paths=(*change.replace_paths, path),
        refusals=refusals,
        downtime=change.downtime if change.replaces else cause.downtime,
        node_notes=(),
    )


def moves_scope(
    new: Mapping[str, Any],
    old: Mapping[str, Any],
    old_index: Mapping[str, Mapping[str, Any]],
    new_index: Mapping[str, Mapping[str, Any]],
) -> bool:
    """Whether a replacement of this resource is created somewhere else than the old one: its
    explicit provider changes an input that places what it creates (a GCP project), and the
    resource pins no value of its own for it. Its name is then free there, so the cloud has no
    same-name conflict to refuse (a project move replaces the cluster through its network;
    review gke-3.md R3-7)."""
    urn = _provider_urn(new.get("provider"))
    if urn is None or urn not in old_index or urn not in new_index:
        return False
    kind = str(new_index[urn].get("type", ""))
    for key in MOVES_MANAGED_RESOURCES.get(kind, {}):
        own = lookup(old.get("inputs", {}), (key,))
        if own is not ABSENT and same(own, lookup(new.get("inputs", {}), (key,))):
            continue  # pinned to the same value: the replacement stays where the old one is
        before = lookup(old_index[urn].get("inputs", {}), (key,))
        if not same(before, lookup(new_index[urn].get("inputs", {}), (key,))):
            return True
    return False


def replacement_refusals(
    type_token: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    new_inputs: Any,
    old_index: Mapping[str, Mapping[str, Any]],
    new_index: Mapping[str, Mapping[str, Any]],
) -> list[str]:
    """Why a replacement cannot be carried out: created first under the name the old resource
    still holds (not when it is created in another project), created in another project with
    the old project's values of its ignored properties, or protected."""
    found = []
    if not moves_scope(new, old, old_index, new_index):
        same_name = same_name_refusal(
            type_token, old.get("inputs", {}), new_inputs, options_of(new)
        )
        found += [same_name] if same_name else []
    else:
        stale = stale_ignored(old.get("inputs", {}), new.get("inputs", {}), options_of(new))
        found += [stale] if stale else []
    protected = protected_refusal(options_of(old), options_of(new))
    return found + ([protected] if protected else [])


def stale_ignored(
    old_inputs: Any, program_inputs: Any, new_options: Mapping[str, Any]
) -> str | None:
    """A replacement in another scope (a project move) that would carry Pulumi's state into it:
    for an ignored property the engine creates the replacement with the old inputs, not the
    program's (pulumi/pulumi#2657; Pulumi docs, ignoreChanges), so a GKE cluster moved to a new
    project would be created with the old project's node service account and zones (review
    gke-4 N1)."""
    paths = [
        path
        for path in ignore_prefixes(new_options)
        if path and not same(lookup(old_inputs, path), lookup(program_inputs, path))
    ]
    if not paths:
        return None
    shown = ", ".join(format_path(path) for path in paths)
    return (
        f"replacement in another project with the old project's {shown}: these are ignored "
        "after creation (ignoreChanges), and Pulumi creates a replacement with the values in "
        "its state, not the program's; instead: a new stack in the new project, with the "
        "workloads moved over, then `pulumi destroy` of this one"
    )


def provider_move_replaces(
    old_ref: Any,
    new_ref: Any,
    old_index: Mapping[str, Mapping[str, Any]],
    new_index: Mapping[str, Mapping[str, Any]],
) -> bool:
    """Whether the engine replaces a resource whose provider reference changes: it asks the new
    provider's DiffConfig to compare the old provider's inputs with the new one's, and replaces
    only when that says so (pulumi/pulumi pkg/resource/deploy/step_generator.go,
    `providerChanged`). Two default providers: a version bump usually is not a replacement.
    Two Kubernetes providers: pulumi-kubernetes' verdict; otherwise assumed to replace."""
    if not (isinstance(old_ref, str) and isinstance(new_ref, str)):
        return True
    if is_default_provider(old_ref) and is_default_provider(new_ref):
        return False
    old_provider = old_index.get(old_ref.rsplit("::", 1)[0])
    new_provider = new_index.get(new_ref.rsplit("::", 1)[0])
    if old_provider is None or new_provider is None:
        return True
    if old_provider.get("type") == new_provider.get("type") == KUBERNETES_PROVIDER:
        paths, _, _ = kubernetes_provider_verdict(old_provider, new_provider)
        return bool(paths)
    return True
