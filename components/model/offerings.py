"""Dated tables of a cloud's regions and of where it sells each GPU machine, and the words
gpufleet uses about them.

Each cloud keeps its table as data in `components/<cloud>/model/offerings.json`, written by
`scripts/offerings.py` from public sources (named in the file with their commit, date and
licence). The tables answer three questions: does this region exist, does the region (or a
zone) sell this machine, and does the table know at all. Where it does not know, `plan` says
"not checked" rather than passing silently; a region or machine it knows is absent is an error.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from components.model.catalog.gpus import MachineCatalog, MachineType
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

REGENERATE = "scripts/offerings.py"


@dataclass(frozen=True)
class Source:
    """Where one part of a table came from."""

    repository: str
    path: str
    commit: str
    commit_date: str

    def cite(self) -> str:
        dated = f" of {self.commit_date}" if self.commit_date != "unknown" else ""
        return f"{self.repository} {self.path} @{self.commit[:8]}{dated}"


@functools.cache
def load_table(path: Path) -> Mapping[str, Any]:
    """A cloud's offerings.json (read once)."""
    table: Mapping[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return table


def source(table: Mapping[str, Any], part: str) -> Source:
    found = table["sources"][part]
    return Source(found["repository"], found["path"], found["commit"], found["commit_date"])


def listing(names: Collection[str], limit: int = 12) -> str:
    """Names for a message, sorted; a long list is cut with a count of the rest."""
    ordered = sorted(names)
    if len(ordered) <= limit:
        return ", ".join(ordered)
    return f"{', '.join(ordered[:limit])} and {len(ordered) - limit} more"


def unknown_region(
    path: str, region: str, known: Collection[str], cloud: str, table: Mapping[str, Any]
) -> Problem:
    """A region the cloud's dated list lacks: the closest names, or all. `cloud` as a message
    says it ("an AWS", "a GCP")."""
    close = difflib.get_close_matches(region, sorted(known), n=3, cutoff=0.75)
    hint = f"did you mean {', '.join(close)}?" if close else f"known: {listing(known, 80)}"
    return Problem(
        path,
        f"not {cloud} region ({hint}); the list is {source(table, 'regions').cite()}, read "
        f"{table['read']}: if the region opened since, regenerate it with {REGENERATE}",
        region,
    )


def not_offered(
    path: str,
    machine: str,
    where: str,
    offered_in: Collection[str],
    table: Mapping[str, Any],
    value: object,
) -> Problem:
    """A machine the table knows `where` (a region, or the pool's zones) does not sell."""
    elsewhere = (
        f"regions that sell it: {listing(offered_in, 40)}"
        if offered_in
        else "no region the table covers sells it"
    )
    return Problem(
        path,
        f"{machine} is not offered in {where}; {elsewhere} (per "
        f"{source(table, 'offerings').cite()}, read {table['read']})",
        value,
    )


@dataclass(frozen=True)
class PoolZones:
    """The zones a pool's nodes go to, and the key a problem with them names: the pool's own
    `zones` also when it takes cluster.zones, since the cluster's zones suit its system pool and
    the fix is the pool's own list (`inherited` says so first)."""

    key: str
    zones: list[str]
    inherited: str

    def problem(self, message: str) -> Problem:
        if self.inherited:
            return Problem(self.key, f"{self.inherited}; {message}", has_value=False)
        return Problem(self.key, message, self.zones)


def pool_zones(cluster: ClusterConfig, pool: GpuPoolConfig, path: str) -> PoolZones:
    if pool.zones:
        return PoolZones(f"{path}.zones", list(pool.zones), "")
    zones = list(cluster.zones or [])
    said = f"not set, so the pool takes cluster.zones ({', '.join(zones)})"
    return PoolZones(f"{path}.zones", zones, said)


def not_checked(path: str, what: str, why: str, how: str) -> str:
    """The warning for what a table cannot answer: what, why, and how to check it by hand."""
    return f"{path}: {what} not checked: {why}; {how}"


@dataclass(frozen=True)
class MachineKey:
    """One machine type of a pool and the config key that names it."""

    name: str
    key: str  # relative to the pool: machineType, machineTypes[i], or accelerator
    value: object
    # The pool names no machine type: the catalog's default for its accelerator.
    defaulted: bool = False

    @property
    def described(self) -> str:
        return f"{self.name} (the default for {self.value})" if self.defaulted else self.name


def machine_keys(
    machine_type: str | None, machine_types: list[str] | None, accelerator: str, default: str
) -> list[MachineKey]:
    """The pool's machine types with their keys; the catalog's default speaks for the
    accelerator when the pool names none."""
    if machine_types is not None:
        return [MachineKey(n, f"machineTypes[{i}]", n) for i, n in enumerate(machine_types)]
    if machine_type is not None:
        return [MachineKey(machine_type, "machineType", machine_type)]
    return [MachineKey(default, "accelerator", accelerator, True)] if default else []


def catalog_knows(catalog: MachineCatalog, pool: GpuPoolConfig) -> bool:
    """Whether every machine type the pool names (or its default) carries its GPU in the
    catalog: only those are looked up (the others are refused by the catalog checks)."""
    names = pool.machine_types or [pool.machine_type or catalog.defaults.get(pool.accelerator, "")]
    return bool(names) and all(catalog.machine(pool.accelerator, name) for name in names)


class Offerings(Protocol):
    """A cloud's dated offerings table, as the shared checks and `fit` ask it."""

    def region_problems(self, cluster: ClusterConfig) -> list[Problem]:
        """The cluster's region (and zones) against the cloud's region list."""

    def offered(self, machine: MachineType, region: str) -> bool | None:
        """Whether the region sells the machine (None: the table has no answer there)."""

    def pool_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str, warnings: list[str]
    ) -> list[Problem]:
        """The pool's machines (and zones) against where the cloud sells them, adding a
        "not checked" warning where the table has no answer; only for catalog machines."""
