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
    # What the reviewer must know about it (an added pool that waits for a new grant).
    notes: tuple[str, ...] = ()
    # Removed: what that does to the nodes it runs (ResourceKnowledge.removal_effects; "" for no nodes).
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
    # No input differs: only what Pulumi records changed (dependsOn, parent, an option, an
    # explicit provider it moves to without a replacement). Pulumi's engine asks the provider
    # to diff the inputs alone, finds none changed and takes a "same" step: nothing is sent to
    # the cloud (pulumi/pulumi pkg/resource/deploy/step_generator.go, see `diff`).
    state_only: bool = False

    @property
    def sends_nothing(self) -> bool:
        """True when `pulumi up` sends nothing for it and only updates its own state."""
        return self.state_only and not self.replaces and not self.refusals

    @property
    def replaces(self) -> bool:
        """True when the provider recreates the resource instead of updating it."""
        return bool(self.replace_paths)

    @property
    def rolls(self) -> bool:
        """True when the update, made in place, drains and replaces (or reboots) running nodes."""
        return not self.replaces and any(note.effect == "rolls" for note in self.node_notes)

    @property
    def starts_nodes(self) -> bool:
        """True when the update, made in place, makes the cloud start nodes now (a raised
        minimum it enforces at once)."""
        return not self.replaces and any(note.effect == "starts" for note in self.node_notes)

    @property
    def verdict(self) -> str:
        """What the cloud does: ``reject``, ``replace``, ``roll`` (an update in place that
        drains and replaces the running nodes), ``update``, or ``none`` (nothing is sent: only
        Pulumi's state changes)."""
        if self.refusals:
            return "reject"
        if self.replaces:
            return "replace"
        if self.sends_nothing:
            return "none"
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
    # The new plan's warnings (the program's and its config's), and the old plan's (None: a plan
    # written before plans carried them, so none can be called new).
    warnings: tuple[str, ...] = ()
    old_warnings: tuple[str, ...] | None = None

    @property
    def new_warnings(self) -> tuple[str, ...]:
        """The new plan's warnings that the old plan did not carry."""
        if self.old_warnings is None:
            return ()
        return tuple(w for w in self.warnings if w not in self.old_warnings)

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
    def started(self) -> tuple[ResourceChange, ...]:
        """The changed resources updated in place in a way that starts nodes now."""
        return tuple(change for change in self.changed if change.starts_nodes)

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
        """True when nothing differs (stack outputs aside; a change only Pulumi's state records
        is a difference, though nothing is sent for it)."""
        return not (self.added or self.removed or self.changed)

    @property
    def state_only(self) -> tuple[ResourceChange, ...]:
        """The changed resources for which `pulumi up` sends nothing (Pulumi's state only)."""
        return tuple(change for change in self.changed if change.sends_nothing)

    def summary(self) -> str:
        """``N to add, N to change (N replaced[; N roll running nodes][; N start nodes now]), N
        to delete[; N to forget, kept in the cloud][; N only in Pulumi's state, nothing sent]``:
        like Pulumi's own count, a resource sent nothing is not "to change"."""
        rolled = f"; {len(self.rolled)} roll running nodes" if self.rolled else ""
        rolled += f"; {len(self.started)} start nodes now" if self.started else ""
        kept = sum(ref.kept for ref in self.removed)
        unsent = len(self.state_only)
        return (
            f"{len(self.added)} to add, {len(self.changed) - unsent} to change "
            f"({len(self.replaced)} replaced{rolled}), {len(self.removed) - kept} to delete"
            + (f"; {kept} to forget, kept in the cloud" if kept else "")
            + (f"; {unsent} only in Pulumi's state, nothing sent" if unsent else "")
            + (f"; {len(self.rejected)} refused by the cloud" if self.rejected else "")
            + (f"; {len(self.refusals)} refused by gpufleet" if self.refusals else "")
        )
