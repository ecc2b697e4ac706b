"""What gpufleet knows of a cloud's resource types, in one shape: each cloud fills one
`ResourceKnowledge` in its folder (`components/<cloud>/model/resources.py`) and hands it over as
`Cloud.resource_knowledge`; `components/model/resource_index.py` merges them with the shared
Kubernetes and Pulumi tables for `diff`, `plan`'s tree, the Mermaid chart, `fit` and the mocks.

Every table is keyed by a type token (a provider's `aws:eks/cluster:Cluster`, or a component's
`gpufleet:aws:Cluster`), so shared code never names one. What each table means, and where its
facts come from, is said where the shared rules that read it live: `catalog/replacements.py`
(replacements), `catalog/rejections.py` (refusals, downtime, notes), `catalog/component_roles.py`,
`catalog/provider_changes.py`; what updates and removals do to running nodes, in
`catalog/node_effects.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from components.model.catalog.node_effects import NodeEffect, RemovalEffect, SplitFromRoll
from components.model.catalog.rejections import Refusal, ReplacementNote, UnsafeMove, UnsafeTogether


def _empty() -> Mapping[Any, Any]:
    return MappingProxyType({})


def input_at(inputs: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path of nested mappings, or None."""
    value: Any = inputs
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


@dataclass(frozen=True)
class DeclaredPool:
    """A node pool as the planned graph declares it (name, machine, size), GPU or not."""

    name: str
    machine: str
    min_nodes: Any
    max_nodes: Any
    label: str  # the gpufleet.io/pool label value, "" when the pool carries none


# Reads the node pools a resource of one type declares, from its inputs and resource name.
PoolReader = Callable[[Mapping[str, Any], str], list[DeclaredPool]]
# Reads a node group's tags (key -> value) from its inputs.
TagReader = Callable[[Mapping[str, Any]], dict[str, str]]


@dataclass(frozen=True)
class ClusterShape:
    """Where a cluster resource keeps what the Mermaid chart shows of it."""

    kind: str  # shown: "GKE", "EKS", "AKS"
    name: str  # input path of the cluster's name
    version: str  # input path of its Kubernetes version
    location: str = ""  # input path of its location ("": the explicit provider's region)


@dataclass(frozen=True)
class ResourceKnowledge:
    """One cloud's (or the shared Kubernetes layer's) knowledge, per resource type token."""

    # diff, replacements: input paths whose change makes the provider recreate the resource.
    replacement_paths: Mapping[str, tuple[str, ...]] = field(default_factory=_empty)
    # diff, replacements: CIDR inputs the provider widens in place but replaces on any other
    # change (a new range that does not contain the old one).
    replaced_unless_widened: Mapping[str, tuple[str, ...]] = field(default_factory=_empty)
    # diff, refusals: properties the cloud will not change in place.
    refused_in_place: Mapping[str, tuple[Refusal, ...]] = field(default_factory=_empty)
    # A cloud's own advice instead of a shared type's refusals (what to do on its clusters).
    refusal_instead: Mapping[str, str] = field(default_factory=_empty)
    # The input holding a resource's fixed cloud name (a same-name replacement is refused).
    name_inputs: Mapping[str, str] = field(default_factory=_empty)
    # What a replacement takes down, for the verdict line.
    downtime: Mapping[str, str] = field(default_factory=_empty)
    # What a replacement created before the old one goes means (a name from a prefix).
    create_first: Mapping[str, str] = field(default_factory=_empty)
    # What to do instead of a same-name replacement, where "delete it first" is wrong advice.
    same_name_instead: Mapping[str, str] = field(default_factory=_empty)
    replacement_notes: Mapping[str, tuple[ReplacementNote, ...]] = field(default_factory=_empty)
    # Changes refused with a removal in the same `up`, and moves between kinds of pool.
    unsafe_together: Mapping[str, tuple[UnsafeTogether, ...]] = field(default_factory=_empty)
    unsafe_moves: tuple[UnsafeMove, ...] = ()
    # Why each of gpufleet's components exists, by component type token.
    component_roles: Mapping[str, str] = field(default_factory=_empty)
    # Explicit providers whose input change recreates the resources they manage: provider type
    # -> input -> the resource types recreated; with the source, the note said on the provider
    # and what goes down with it.
    moves_managed_resources: Mapping[str, Mapping[str, tuple[str, ...]]] = field(
        default_factory=_empty
    )
    moves_source: Mapping[str, str] = field(default_factory=_empty)
    moves_note: Mapping[str, str] = field(default_factory=_empty)
    managed_downtime: Mapping[str, str] = field(default_factory=_empty)
    # diff, day two: what an in-place change of each node-carrying type does to its running
    # nodes (components/<cloud>/model/node_effects.py), the control plane's version input per
    # cluster type, and what its minor bump does to the nodes of a provisioner that does not
    # follow it (keyed by the type that marks the provisioner).
    node_effects: Mapping[str, tuple[NodeEffect, ...]] = field(default_factory=_empty)
    control_plane_version: Mapping[str, str] = field(default_factory=_empty)
    version_bump_effects: Mapping[str, NodeEffect] = field(default_factory=_empty)
    # What deleting each node-carrying type does to its nodes, and which changes must not go in
    # the `up` that rolls the same resource.
    removal_effects: Mapping[str, RemovalEffect] = field(default_factory=_empty)
    split_from_roll: Mapping[str, SplitFromRoll] = field(default_factory=_empty)
    # What `diff` says of a resource whose inputs wait for a grant made (or replaced) in the
    # same `up` to propagate, by (grant type, type of what waits).
    grant_waits: Mapping[tuple[str, str], str] = field(default_factory=_empty)
    # plan's tree: the input properties worth seeing at a glance (dotted camelCase paths).
    highlights: Mapping[str, tuple[str, ...]] = field(default_factory=_empty)
    # The Mermaid chart: clusters gpufleet creates, and the components of clusters it adopts
    # (-> the kind shown), and the node pools each type declares.
    clusters: Mapping[str, ClusterShape] = field(default_factory=_empty)
    adopted_clusters: Mapping[str, str] = field(default_factory=_empty)
    pool_readers: Mapping[str, PoolReader] = field(default_factory=_empty)
    # `fit`: node groups whose tags carry the cluster autoscaler's node-template tags.
    node_template_tags: Mapping[str, TagReader] = field(default_factory=_empty)
    # The API groups of the cloud's own Kubernetes custom resources (`karpenter.k8s.aws`): their
    # `kubernetes:<group>/...` tokens belong in the cloud's folder (the architecture test).
    # Karpenter's `karpenter.sh` is every cloud's, and is not listed.
    crd_groups: tuple[str, ...] = ()
    # The module of the cloud's offline mock (its `MOCK`, a `components.mock_world.CloudMock`);
    # "" when the cloud has none. A name, not an import: the mock is no part of the model.
    mock_module: str = ""
