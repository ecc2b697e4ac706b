"""What a plan diff is made of: changed properties, resources, the whole diff (for `diff`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from components.model.catalog.node_effects import Effect
from components.tooling.diff_cost import CostChange

SECRET: Final = "[secret]"
"""How the plan document masks a secret value."""

# Longest rendering of one value in a ``path: old -> new`` line. Long enough for a typical
# accelerator list or subnet list, short enough that a changed user-data blob stays one line.
MAX_VALUE_CHARS: Final = 80

TRUNCATION_MARK: Final = "..."

# Characters kept before the first difference when a long value is windowed.
DIFF_CONTEXT_CHARS: Final = 32


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
    """An added or removed resource (``parent``: its parent's URN, where the plan says)."""

    urn: str
    type: str
    name: str
    parent: str | None = None
    # Removed but kept in the cloud (`retainOnDelete`): Pulumi only forgets it.
    kept: bool = False
    # Removed: what that does to the nodes it runs (Cloud.removal_effects; "" for no nodes).
    node_note: str = ""


NodeEffectOrUnknown = Effect | Literal["unknown"]


@dataclass(frozen=True)
class NodeNote:
    """What an in-place change does to the running nodes: the effect, said in a sentence, and
    the changed paths it comes from (``unknown``: gpufleet has no fact for those paths)."""

    effect: NodeEffectOrUnknown
    says: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class ResourceChange:
    """A resource present in both plans whose inputs, options or provider differ.

    ``replace_paths`` are the paths that make Pulumi delete and recreate it (empty for an
    in-place update); ``refusals`` say why the cloud would refuse the change (empty when it
    accepts it); ``downtime`` is what a replacement takes down; ``node_notes`` say what an
    in-place update of a resource that carries nodes does to the nodes already running.
    """

    urn: str
    type: str
    name: str
    changes: tuple[PropertyChange, ...]
    replace_paths: tuple[str, ...] = ()
    refusals: tuple[str, ...] = ()
    downtime: str = ""
    node_notes: tuple[NodeNote, ...] = ()
    # What the plans cannot show but the reviewer must know (a secret that may have changed).
    notes: tuple[str, ...] = ()

    @property
    def replaces(self) -> bool:
        """True when the provider recreates the resource instead of updating it."""
        return bool(self.replace_paths)

    @property
    def rolls(self) -> bool:
        """True when the update, made in place, drains and replaces (or reboots) running nodes."""
        return not self.replaces and any(note.effect == "rolls" for note in self.node_notes)

    @property
    def verdict(self) -> str:
        """What the cloud does: ``reject``, ``replace``, ``roll`` (an update in place that
        drains and replaces the running nodes) or ``update``."""
        if self.refusals:
            return "reject"
        if self.replaces:
            return "replace"
        return "roll" if self.rolls else "update"


@dataclass(frozen=True)
class PlanDiff:
    """Everything that differs between two plans, each group sorted by (type, name, urn)."""

    added: tuple[ResourceRef, ...] = ()
    removed: tuple[ResourceRef, ...] = ()
    changed: tuple[ResourceChange, ...] = ()
    project: str | None = None
    stack: str | None = None
    outputs: tuple[PropertyChange, ...] = ()
    # What the stack costs idle and at full scale, before and after (None: neither plan says).
    cost: CostChange | None = None
    # Why gpufleet refuses the plan as a whole (a move that removes and adds pools together).
    refusals: tuple[str, ...] = ()

    @property
    def replaced(self) -> tuple[ResourceChange, ...]:
        """The changed resources that are replaced."""
        return tuple(change for change in self.changed if change.replaces)

    @property
    def rolled(self) -> tuple[ResourceChange, ...]:
        """The changed resources updated in place in a way that rolls their running nodes."""
        return tuple(change for change in self.changed if change.rolls)

    @property
    def rejected(self) -> tuple[ResourceChange, ...]:
        """The changed resources whose change the cloud refuses."""
        return tuple(change for change in self.changed if change.refusals)

    @property
    def refused(self) -> bool:
        """True when `pulumi up` must not run as planned (a change or the plan refused)."""
        return bool(self.rejected or self.refusals)

    @property
    def is_empty(self) -> bool:
        """True when ``pulumi up`` would do nothing (stack outputs aside)."""
        return not (self.added or self.removed or self.changed)

    def summary(self) -> str:
        """``N to add, N to change (N replaced[; N roll running nodes]), N to delete[; N to
        forget, kept in the cloud]``."""
        rolled = f"; {len(self.rolled)} roll running nodes" if self.rolled else ""
        kept = sum(ref.kept for ref in self.removed)
        return (
            f"{len(self.added)} to add, {len(self.changed)} to change "
            f"({len(self.replaced)} replaced{rolled}), {len(self.removed) - kept} to delete"
            + (f"; {kept} to forget, kept in the cloud" if kept else "")
            + (f"; {len(self.rejected)} refused by the cloud" if self.rejected else "")
            + (f"; {len(self.refusals)} refused by gpufleet" if self.refusals else "")
        )
