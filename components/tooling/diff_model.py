"""What a plan diff is made of: changed properties, resources, the whole diff (for `diff`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

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
    """An added or removed resource."""

    urn: str
    type: str
    name: str


@dataclass(frozen=True)
class ResourceChange:
    """A resource present in both plans whose inputs, options or provider differ.

    ``replace_paths`` are the paths that make Pulumi delete and recreate it (empty for an
    in-place update); ``refusals`` say why the cloud would refuse the change (empty when it
    accepts it); ``downtime`` is what a replacement takes down.
    """

    urn: str
    type: str
    name: str
    changes: tuple[PropertyChange, ...]
    replace_paths: tuple[str, ...] = ()
    refusals: tuple[str, ...] = ()
    downtime: str = ""

    @property
    def replaces(self) -> bool:
        """True when the provider recreates the resource instead of updating it."""
        return bool(self.replace_paths)

    @property
    def verdict(self) -> str:
        """What the cloud does: ``reject``, ``replace`` or ``update``."""
        if self.refusals:
            return "reject"
        return "replace" if self.replaces else "update"


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

    @property
    def replaced(self) -> tuple[ResourceChange, ...]:
        """The changed resources that are replaced."""
        return tuple(change for change in self.changed if change.replaces)

    @property
    def rejected(self) -> tuple[ResourceChange, ...]:
        """The changed resources whose change the cloud refuses."""
        return tuple(change for change in self.changed if change.refusals)

    @property
    def is_empty(self) -> bool:
        """True when ``pulumi up`` would do nothing (stack outputs aside)."""
        return not (self.added or self.removed or self.changed)

    def summary(self) -> str:
        """``N to add, N to change (N replaced), N to delete``."""
        return (
            f"{len(self.added)} to add, {len(self.changed)} to change "
            f"({len(self.replaced)} replaced), {len(self.removed)} to delete"
            + (f"; {len(self.rejected)} refused by the cloud" if self.rejected else "")
        )
