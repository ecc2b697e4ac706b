"""Changes a cloud refuses, and what each replacement takes down: data for the `diff` verdicts.

`replacements.py` says when Pulumi deletes and recreates a resource. This module adds the two
other things a reviewer must know before `pulumi up`:

* **Refused in place.** Some properties a provider would update in place are fixed by the cloud
  at creation, so the update fails at `up` (the stack is stuck until the config is changed
  back). A resource that replaces on such a path (`replaceOnChanges`) is not refused: it is
  replaced. Where gpufleet ignores such a property after creation (`ignoreChanges`), the change
  is not applied at all; the diff still shows it, as refused.
* **A replacement under the same name.** Pulumi creates the replacement first unless the
  resource has `deleteBeforeReplace`. Where the name is fixed (not auto-named), the cloud finds
  the old one still there and refuses: GKE answers 409 `nodePools/<name> already exists`,
  pulumi-azure-native says `cannot create already existing resource`, EKS
  `ResourceInUseException`.

Sources: reviews/aks.md F2 (Microsoft Learn spot-node-pool, aks-managed-gpu-nodes,
gpu-multi-instance, reliability-availability-zones-configure; azure-native provider.go Create),
reviews/gke.md S1-1 (pulumi/pulumi#1620, hashicorp/terraform-provider-google#13052), reviews/eks.md
S1-1 (terraform-aws-modules/terraform-aws-eks issues 3683, 3521, 944, 748).

Each cloud keeps its rules in its folder (`components/<cloud>/model/change_rules.py`), written
in the types below, and hands them over through `Cloud.resource_knowledge`; the shared rule (an
explicit Kubernetes provider) is here. `components/model/resource_index.py` looks them up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal

# How a rule fires: any change of the value; only a numeric increase; a Kubernetes minor
# ("1.35") that goes down, or up by more than one; a value that was set and is now absent; a
# value that was absent and is now set.
# "replaced": set before and after, to another value (a move, not an addition or a removal).
Trigger = Literal[
    "change", "increase", "minor-decrease", "minor-skip", "removed", "added", "replaced"
]


@dataclass(frozen=True)
class Refusal:
    """A property the cloud will not change in place on an existing resource."""

    path: str  # camelCase input path, as in replacements.py (`[0]` indexes a list)
    reason: str  # what the cloud says or documents
    instead: str  # what the user can do
    trigger: Trigger = "change"
    # Only for a resource whose current inputs have these values (input path -> value).
    when: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class UnsafeTogether:
    """A change the cloud accepts, refused because the same `up` removes what runs the
    workloads the change is meant to take over."""

    path: str  # input path of the changed resource
    value: object  # the value the change sets
    removed_type: str  # a resource type the same plan removes
    reason: str
    instead: str


@dataclass(frozen=True)
class UnsafeMove:
    """A plan that removes one kind of pool and adds another in the same `up`, refused as a
    whole: the old pools' nodes go before anything runs the workloads elsewhere."""

    removed_types: tuple[str, ...]  # any of these removed...
    added_types: tuple[str, ...]  # ...while any of these is added
    what: str  # names the move, after "!! REJECTED "
    reason: str
    instead: str


@dataclass(frozen=True)
class ReplacementNote:
    """What a reviewer must know about one kind of replacement beyond what goes down: said when
    the value at ``inner`` of the first item of the list at ``path`` changes to or from
    ``marker``."""

    path: str
    inner: str
    marker: str
    says: str
    source: str


# What to do instead of a same-name replacement of a cluster, where "delete it first" would be
# the wrong advice: a cluster replaced delete-first takes every workload with it.
REBUILD_CLUSTER: Final = (
    "revert the change that forces the replacement; if the cluster really must be rebuilt, "
    "create it in a new stack and move the workloads over"
)

# What a replacement takes down, for the verdict line (default: the resource itself).
DOWNTIME: Final[Mapping[str, str]] = MappingProxyType(
    {"pulumi:providers:kubernetes": "every Kubernetes resource it manages, replaced with it"}
)
