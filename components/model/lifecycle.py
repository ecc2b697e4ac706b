"""Kubernetes minor versions per cloud as data, and what choosing one means on a given day.

Each cloud's table (`components/<cloud>/model/versions.py`) lists the minors that cloud has made
generally available, with the last day of standard support and the last day the cloud still
creates the minor at all (through its paid or long-term phase, if it has one). Every row names its
source. This module holds the cloud-neutral rules; it never reads the clock: callers pass `today`,
so plans and tests are reproducible.

Dates are inclusive last days: a minor is in standard support on `end_of_standard` itself and
creatable on `end_of_life` itself. A cloud that publishes "the day it ends" instead is converted
in its own table, which says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Literal

# Standard support ending within this many days (inclusive) is a warning.
WARNING_DAYS = 60
# A patch version written where gpufleet takes a minor ("1.35.7").
_PATCH = re.compile(r"(?P<minor>\d+\.\d+)\.\d+")

Status = Literal["unknown", "not-yet", "standard", "ending-soon", "extended", "ended"]
# The cloud will not create the cluster: the plan must stop.
ERRORS: frozenset[Status] = frozenset({"unknown", "not-yet", "ended"})
# The cluster can be created, but it costs more or needs an upgrade soon.
WARNINGS: frozenset[Status] = frozenset({"ending-soon", "extended"})


def minor_key(minor: str) -> tuple[int, int]:
    """`"1.34"` -> `(1, 34)`, for ordering minors numerically (`"1.4"` < `"1.34"`)."""
    major, _, rest = minor.partition(".")
    return int(major), int(rest)


@dataclass(frozen=True)
class MinorRelease:
    """One Kubernetes minor on one cloud."""

    minor: str  # "1.34"
    released: date | None  # GA on this cloud; None: no GA date known (treated as not yet GA)
    end_of_standard: date  # last day of standard support
    end_of_life: date  # last day the cloud creates it, paid/LTS phase included
    extended_support: str  # what that phase is called ("EKS extended support"); "" if none
    source: str  # where the dates come from: address and what it says


@dataclass(frozen=True)
class VersionLifecycle:
    """The minors one cloud creates, oldest first."""

    cloud: str  # display name: "GKE", "EKS", "AKS"
    rows: tuple[MinorRelease, ...]

    def __post_init__(self) -> None:
        problems = table_problems(self)
        if problems:
            raise ValueError(f"{self.cloud} version table: " + "; ".join(problems))

    def row(self, minor: str) -> MinorRelease | None:
        return next((row for row in self.rows if row.minor == minor), None)


def table_problems(lifecycle: VersionLifecycle) -> list[str]:
    """What is wrong with a table: order, duplicates, dates out of order, missing sources."""
    problems: list[str] = []
    minors = [row.minor for row in lifecycle.rows]
    if not minors:
        problems.append("no rows")
    if len(set(minors)) != len(minors):
        problems.append(f"a minor is listed twice: {minors}")
    try:
        if minors != sorted(minors, key=minor_key):
            problems.append(f"rows are not oldest first: {minors}")
    except ValueError:
        problems.append(f"a minor is not of the form 1.NN: {minors}")
    for row in lifecycle.rows:
        if row.released is not None and row.released > row.end_of_standard:
            problems.append(f"{row.minor}: released after its end of standard support")
        if row.end_of_standard > row.end_of_life:
            problems.append(f"{row.minor}: standard support ends after its end of life")
        if (row.end_of_life > row.end_of_standard) != bool(row.extended_support):
            problems.append(f"{row.minor}: a later end of life needs its phase named, and only it")
        if not row.source.strip():
            problems.append(f"{row.minor}: no source")
    return problems


@dataclass(frozen=True)
class Assessment:
    """What choosing `minor` on `cloud` means on one day, with a message naming the dates."""

    cloud: str
    minor: str
    status: Status
    message: str
    row: MinorRelease | None = None

    @property
    def is_error(self) -> bool:
        return self.status in ERRORS

    @property
    def is_warning(self) -> bool:
        return self.status in WARNINGS


def _is_ga(row: MinorRelease, today: date) -> bool:
    return row.released is not None and row.released <= today


def creatable(lifecycle: VersionLifecycle, today: date) -> list[str]:
    """The minors the cloud creates on `today`, oldest first (paid/LTS phases included)."""
    return [row.minor for row in lifecycle.rows if _is_ga(row, today) and today <= row.end_of_life]


def in_standard_support(lifecycle: VersionLifecycle, today: date) -> list[str]:
    """The minors in standard support on `today` (ending soon included), oldest first."""
    return [
        row.minor for row in lifecycle.rows if _is_ga(row, today) and today <= row.end_of_standard
    ]


def newest_standard(lifecycle: VersionLifecycle, today: date) -> str | None:
    """The cloud's newest minor in standard support on `today`: its newest GA minor."""
    minors = in_standard_support(lifecycle, today)
    return max(minors, key=minor_key) if minors else None


def common_default(lifecycles: Iterable[VersionLifecycle], today: date) -> str:
    """The newest minor that every given cloud has in standard support on `today`."""
    tables = list(lifecycles)
    if not tables:
        raise ValueError("common_default needs at least one cloud's table")
    common = set.intersection(*(set(in_standard_support(table, today)) for table in tables))
    if not common:
        clouds = ", ".join(table.cloud for table in tables)
        raise ValueError(
            f"no Kubernetes minor is in standard support on all of {clouds} on {today}"
        )
    return max(common, key=minor_key)


def _creatable_text(lifecycle: VersionLifecycle, today: date) -> str:
    """`1.35, 1.36 in standard support; 1.33, 1.34 only with EKS extended support`."""
    standard = in_standard_support(lifecycle, today)
    parts = [f"{', '.join(standard)} in standard support"] if standard else []
    can = creatable(lifecycle, today)
    paid: dict[str, list[str]] = {}
    for row in lifecycle.rows:
        if row.minor in can and row.minor not in standard:
            paid.setdefault(row.extended_support, []).append(row.minor)
    parts += [f"{', '.join(minors)} only with {phase}" for phase, minors in paid.items()]
    listed = "; ".join(parts) if parts else "none"
    return f"Minors {lifecycle.cloud} creates on {today}: {listed}."


def assess(lifecycle: VersionLifecycle, minor: str, today: date) -> Assessment:
    """Where `minor` stands on `lifecycle`'s cloud on `today` (see `Status`)."""
    cloud = lifecycle.cloud
    allowed = _creatable_text(lifecycle, today)
    row = lifecycle.row(minor)
    if row is None:
        patch = _PATCH.fullmatch(minor)
        if patch is not None and lifecycle.row(patch["minor"]) is not None:
            text = (
                f"{minor} is a patch version: write the minor, {patch['minor']}; {cloud} picks "
                "the patch and keeps it current."
            )
            return Assessment(cloud, minor, "unknown", text)
        first, last = lifecycle.rows[0].minor, lifecycle.rows[-1].minor
        text = f"Kubernetes {minor} is not in gpufleet's {cloud} table ({first} to {last})."
        return Assessment(cloud, minor, "unknown", f"{text} {allowed}")
    if row.released is None or today < row.released:
        when = f"from {row.released}" if row.released else "on a date not yet known"
        text = f"Kubernetes {minor} is not generally available on {cloud} on {today} (GA {when})."
        return Assessment(cloud, minor, "not-yet", f"{text} {allowed}", row)
    if today > row.end_of_life:
        ended = f"its standard support ran to {row.end_of_standard}"
        if row.extended_support:
            ended += f" and {row.extended_support} to {row.end_of_life}"
        text = f"{cloud} no longer creates Kubernetes {minor}: {ended}."
        return Assessment(cloud, minor, "ended", f"{text} {allowed}", row)
    if today > row.end_of_standard:
        days = (row.end_of_life - today).days
        text = (
            f"Kubernetes {minor} is past {cloud} standard support (last day {row.end_of_standard}):"
            f" {cloud} creates it until {row.end_of_life} ({days} days from today) only with"
            f" {row.extended_support}, at extra cost; plan an upgrade."
        )
        return Assessment(cloud, minor, "extended", f"{text} {allowed}", row)
    days = (row.end_of_standard - today).days
    if days <= WARNING_DAYS:
        after = (
            f"then only with {row.extended_support} until {row.end_of_life}"
            if row.extended_support
            else "then it can no longer be created"
        )
        text = (
            f"{cloud} standard support for Kubernetes {minor} lasts until {row.end_of_standard}"
            f" ({days} days from today), {after}."
        )
        return Assessment(cloud, minor, "ending-soon", f"{text} {allowed}", row)
    text = f"Kubernetes {minor} is in {cloud} standard support until {row.end_of_standard}."
    return Assessment(cloud, minor, "standard", text, row)
