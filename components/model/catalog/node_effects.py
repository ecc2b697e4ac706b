"""What an in-place change of a node property does to the nodes already running: data for `diff`.

`replacements.py` says when the provider recreates a resource, `rejections.py` when the cloud
refuses a change. An update the provider makes in place can still reach the running nodes: a new
launch template version on an EKS managed node group drains and replaces every node of the
group, while the same change on a self-managed auto scaling group only shapes the instances it
launches next. A reviewer must know which, before `pulumi up` runs during a training job.

Per resource type that carries nodes, each entry names an input path (a Pulumi property path:
``nodeConfig.machineType``, ``nodeConfig.labels["nvidia.com/mig.config"]``; a change at or under
it matches, the most specific entry wins) and one of four effects:

* ``rolls``: the cloud drains and replaces, or reboots, every running node of the pool (`diff`
  marks the resource ``~ ROLLS``).
* ``starts``: running nodes stay, and the cloud starts nodes now, billed from their start (a
  raised minimum the cloud enforces at once); `diff` counts them and the pull-request comment
  says so.
* ``new-nodes``: running nodes keep the old value; only nodes created from now on get the new
  one, so the pool is mixed until the old nodes are scaled down or replaced.
* ``in-place``: the cloud applies the change to the running nodes; nothing restarts.
* ``none``: the running nodes are not touched (autoscaling bounds, settings of later upgrades).

A changed input of such a type that no entry covers is reported as "not known", never passed
over in silence. Options (``protect``, ``ignoreChanges``) never reach nodes and are not matched.

Each cloud keeps its own table (`components/<cloud>/model/node_effects.py`) and hands it to the
diff in its resource knowledge (`ResourceKnowledge.node_effects`, set in its `resources.py` and
merged in `resource_index`), with the control plane's version input and what its minor bump does
to nodes that do not follow it (`control_plane_version`, `version_bump_effects`).

What removing such a resource does to its nodes (``RemovalEffect``, `removal_effects`):
`diff` says it under the removal, with the number of such resources that go. And a change that
rolls a resource's nodes together with another change of the same resource that should go in an
`up` of its own (``SplitFromRoll``, `split_from_roll`) gets a note saying to split it.

An entry may hold only ``when`` a Kubernetes version value changes its minor (``minor-changes``)
or keeps it (``minor-kept``: also a version named where none was): AKS upgrades a pool when its
``orchestratorVersion`` moves to another minor, and naming the minor it runs upgrades nothing.
Or only when a number rises (``raised``): a pool's minimum raised above what runs starts nodes
on some clouds, while a lowered one only lets the autoscaler remove them later. An entry with a
``when`` wins over one without at the same path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Effect = Literal["rolls", "starts", "new-nodes", "in-place", "none"]
When = Literal["always", "minor-changes", "minor-kept", "raised"]

EFFECTS: Final[tuple[Effect, ...]] = ("rolls", "starts", "new-nodes", "in-place", "none")


@dataclass(frozen=True)
class NodeEffect:
    """What changing ``path`` in place does to the running nodes, and where that comes from."""

    path: str
    effect: Effect
    says: str  # one sentence about the running nodes, read after "running nodes: "
    source: str
    when: When = "always"


@dataclass(frozen=True)
class RemovalEffect:
    """What deleting a node-carrying resource does to its running nodes."""

    says: str  # read after "running nodes: "
    source: str


@dataclass(frozen=True)
class SplitFromRoll:
    """Changes of ``paths`` that must not ride along with a roll of the same resource."""

    paths: tuple[str, ...]
    says: str  # the note: why, and what to do instead
    source: str
