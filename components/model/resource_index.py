"""Every resource type gpufleet knows, looked up by type token: each cloud's knowledge
(`Cloud.resource_knowledge`, from `components/<cloud>/model/resources.py`) merged with the shared
Kubernetes and Pulumi tables of `catalog/`. What `diff` (replacements, refusals, what changes do to
running nodes, grant waits), `plan`'s tree, the Mermaid chart, `fit` and the mocks ask about a
type, they ask here, so none of them names a cloud's type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final, TypeVar

from components.model import karpenter_day_two
from components.model.catalog import provider_changes
from components.model.catalog.component_roles import KUBERNETES_COMPONENT_ROLES
from components.model.catalog.highlights import KUBERNETES_HIGHLIGHTS
from components.model.catalog.node_effects import NodeEffect, RemovalEffect, SplitFromRoll
from components.model.catalog.rejections import (
    DOWNTIME,
    Refusal,
    ReplacementNote,
    UnsafeTogether,
)
from components.model.catalog.replacements import (
    KUBERNETES_REPLACEMENT_PATHS,
    unlisted_replacement_paths,
)
from components.model.registry import CLOUDS
from components.model.resource_knowledge import (
    ClusterShape,
    PoolReader,
    ResourceKnowledge,
    TagReader,
)

# What every cloud shares: Kubernetes objects, Helm releases, the explicit Kubernetes provider
# and gpufleet's Kubernetes components.
SHARED: Final = ResourceKnowledge(
    replacement_paths=KUBERNETES_REPLACEMENT_PATHS,
    downtime=DOWNTIME,
    component_roles=KUBERNETES_COMPONENT_ROLES,
    managed_downtime=provider_changes.MANAGED_DOWNTIME,
    highlights=KUBERNETES_HIGHLIGHTS,
    refused_in_place=karpenter_day_two.REFUSED_IN_PLACE,
    node_effects=karpenter_day_two.NODE_EFFECTS,
    removal_effects=karpenter_day_two.REMOVAL_EFFECTS,
)
KNOWLEDGE: Final[tuple[ResourceKnowledge, ...]] = (
    SHARED,
    *(cloud.resource_knowledge for cloud in CLOUDS.values()),
)


Key = TypeVar("Key")
Value = TypeVar("Value")


def merged(tables: Iterable[Mapping[Key, Value]]) -> Mapping[Key, Value]:
    """One table of several; a type token two of them claim is a programming error."""
    result: dict[Key, Value] = {}
    for table in tables:
        for key, value in table.items():
            if key in result:
                raise ValueError(f"{key} is described twice in the clouds' resource knowledge")
            result[key] = value
    return MappingProxyType(result)


REPLACEMENT_PATHS: Final[Mapping[str, tuple[str, ...]]] = merged(
    k.replacement_paths for k in KNOWLEDGE
)
_UNLESS_WIDENED: Final[Mapping[str, tuple[str, ...]]] = merged(
    k.replaced_unless_widened for k in KNOWLEDGE
)
_REFUSED: Final[Mapping[str, tuple[Refusal, ...]]] = merged(k.refused_in_place for k in KNOWLEDGE)
_REFUSAL_INSTEAD: Final[Mapping[str, str]] = merged(k.refusal_instead for k in KNOWLEDGE)
_NAME_INPUTS: Final[Mapping[str, str]] = merged(k.name_inputs for k in KNOWLEDGE)
_DOWNTIME: Final[Mapping[str, str]] = merged(k.downtime for k in KNOWLEDGE)
_CREATE_FIRST: Final[Mapping[str, str]] = merged(k.create_first for k in KNOWLEDGE)
_SAME_NAME_INSTEAD: Final[Mapping[str, str]] = merged(k.same_name_instead for k in KNOWLEDGE)
_NOTES: Final[Mapping[str, tuple[ReplacementNote, ...]]] = merged(
    k.replacement_notes for k in KNOWLEDGE
)
_UNSAFE_TOGETHER: Final[Mapping[str, tuple[UnsafeTogether, ...]]] = merged(
    k.unsafe_together for k in KNOWLEDGE
)
UNSAFE_MOVES: Final = tuple(move for k in KNOWLEDGE for move in k.unsafe_moves)
COMPONENT_ROLES: Final[Mapping[str, str]] = merged(k.component_roles for k in KNOWLEDGE)
MOVES_MANAGED_RESOURCES: Final[Mapping[str, Mapping[str, tuple[str, ...]]]] = merged(
    k.moves_managed_resources for k in KNOWLEDGE
)
MOVES_SOURCE: Final[Mapping[str, str]] = merged(k.moves_source for k in KNOWLEDGE)
MOVES_NOTE: Final[Mapping[str, str]] = merged(k.moves_note for k in KNOWLEDGE)
MANAGED_DOWNTIME: Final[Mapping[str, str]] = merged(k.managed_downtime for k in KNOWLEDGE)
HIGHLIGHTS: Final[Mapping[str, tuple[str, ...]]] = merged(k.highlights for k in KNOWLEDGE)
CLUSTERS: Final[Mapping[str, ClusterShape]] = merged(k.clusters for k in KNOWLEDGE)
ADOPTED_CLUSTERS: Final[Mapping[str, str]] = merged(k.adopted_clusters for k in KNOWLEDGE)
POOL_READERS: Final[Mapping[str, PoolReader]] = merged(k.pool_readers for k in KNOWLEDGE)
NODE_TEMPLATE_TAGS: Final[Mapping[str, TagReader]] = merged(k.node_template_tags for k in KNOWLEDGE)
NODE_EFFECTS: Final[Mapping[str, tuple[NodeEffect, ...]]] = merged(
    k.node_effects for k in KNOWLEDGE
)
CONTROL_PLANE_VERSION: Final[Mapping[str, str]] = merged(k.control_plane_version for k in KNOWLEDGE)
VERSION_BUMP_EFFECTS: Final[Mapping[str, NodeEffect]] = merged(
    k.version_bump_effects for k in KNOWLEDGE
)
REMOVAL_EFFECTS: Final[Mapping[str, RemovalEffect]] = merged(k.removal_effects for k in KNOWLEDGE)
SPLIT_FROM_ROLL: Final[Mapping[str, SplitFromRoll]] = merged(k.split_from_roll for k in KNOWLEDGE)
GRANT_WAITS: Final[Mapping[tuple[str, str], str]] = merged(k.grant_waits for k in KNOWLEDGE)
MOCK_MODULES: Final[tuple[str, ...]] = tuple(k.mock_module for k in KNOWLEDGE if k.mock_module)


def replaced_unless_widened(type_token: str) -> tuple[str, ...]:
    """CIDR input paths whose change replaces the resource unless the new range contains the
    old one."""
    return _UNLESS_WIDENED.get(type_token, ())


def replacement_paths(type_token: str) -> tuple[str, ...]:
    """The input paths whose change replaces a resource of ``type_token``.

    Unknown types return ``()`` (no warning) rather than guessing, except Kubernetes objects
    not in the table, which pulumi-kubernetes always replaces when their name or namespace
    changes.
    """
    paths = REPLACEMENT_PATHS.get(type_token)
    return paths if paths is not None else unlisted_replacement_paths(type_token)


def refusals(type_token: str) -> tuple[Refusal, ...]:
    """The type's refusals, with the cloud's own advice where it gives one."""
    found = _REFUSED.get(type_token, ())
    instead = _REFUSAL_INSTEAD.get(type_token)
    if instead is None:
        return found
    return tuple(dataclasses.replace(refusal, instead=instead) for refusal in found)


def name_input(type_token: str) -> str | None:
    return _NAME_INPUTS.get(type_token)


def downtime(type_token: str) -> str:
    return _DOWNTIME.get(type_token, "this resource while it is recreated")


def created_first(type_token: str, name_given: bool, delete_first: bool) -> str:
    """What a replacement created before the old resource goes means ("": not such a one)."""
    return "" if name_given or delete_first else _CREATE_FIRST.get(type_token, "")


def same_name_instead(type_token: str) -> str:
    """What to do instead of a replacement the cloud refuses under the same name."""
    return _SAME_NAME_INSTEAD.get(
        type_token, "give the resource deleteBeforeReplace, or change its name"
    )


def replacement_notes(type_token: str) -> tuple[ReplacementNote, ...]:
    return _NOTES.get(type_token, ())


def unsafe_together(type_token: str) -> tuple[UnsafeTogether, ...]:
    return _UNSAFE_TOGETHER.get(type_token, ())


def unsafe_moves(removed: set[str], added: set[str]) -> list[str]:
    """Why gpufleet refuses a plan that removes and adds these component types together."""
    return [
        f"{move.what}: {move.reason}; instead: {move.instead}"
        for move in UNSAFE_MOVES
        if removed & set(move.removed_types) and added & set(move.added_types)
    ]


def role(type_token: str) -> str | None:
    """Why a component of this type exists, or None for a type that is not gpufleet's."""
    return COMPONENT_ROLES.get(type_token)


def moves_managed(provider_type: str, provider_input: str) -> tuple[str, ...]:
    """The resource types a change of this provider input recreates (none when not listed)."""
    return MOVES_MANAGED_RESOURCES.get(provider_type, {}).get(provider_input, ())
