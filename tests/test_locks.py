"""The hashed locks (`*.lock`) that the README's commands, CI and the cloud preview install with
`pip install --require-hashes`: every entry pinned and hashed, every input pin in its lock at
the same version, nothing in a lock that no input needs, and one version of each package across
the three locks (scripts/lock_requirements.py writes them)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from components.tooling.stacks import PROJECT_DIR
from scripts.lock_requirements import COMMAND, LOCKS

SHA256 = re.compile(r"--hash=sha256:[0-9a-f]{64}")


@dataclass(frozen=True)
class Locked:
    version: str
    marker: Marker | None
    hashes: tuple[str, ...]

    def applies(self) -> bool:
        """Whether pip installs it on this interpreter and platform."""
        return self.marker is None or self.marker.evaluate()


def entries(text: str) -> list[str]:
    """The lock's requirement entries, each with its continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [line for line in joined.splitlines() if line and not line.startswith((" ", "#"))]


def read_lock(path: str) -> dict[str, Locked]:
    locked: dict[str, Locked] = {}
    for entry in entries((PROJECT_DIR / path).read_text()):
        head, *hashes = entry.split(" --hash=")
        requirement = Requirement(head)
        (specifier,) = requirement.specifier
        assert specifier.operator == "==", f"{path}: {head} is not pinned to one version"
        name = canonicalize_name(requirement.name)
        assert name not in locked, f"{path}: {name} twice"
        locked[name] = Locked(specifier.version, requirement.marker, tuple(hashes))
    return locked


def input_pins(path: str) -> dict[str, Requirement]:
    """The pins an input file names, following its `-r` includes."""
    pins: dict[str, Requirement] = {}
    for line in (PROJECT_DIR / path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-r "):
            pins |= input_pins(str(Path(path).parent / line[3:].strip()))
            continue
        requirement = Requirement(line)
        pins[canonicalize_name(requirement.name)] = requirement
    return pins


@pytest.mark.parametrize(("source", "lock"), [(s, lock) for s, lock, _ in LOCKS])
def test_every_locked_package_is_pinned_and_hashed(source: str, lock: str) -> None:
    text = (PROJECT_DIR / lock).read_text()
    assert f"#    {COMMAND}\n" in text, f"{lock}: written by {COMMAND}"
    for entry in entries(text):
        assert SHA256.search(entry), f"{lock}: {entry.split()[0]} has no sha256"
        assert all(SHA256.fullmatch(h) for h in re.findall(r"--hash=\S+", entry)), entry
    locked = read_lock(lock)
    assert locked, lock
    # Binary packages carry one hash per wheel: Linux x86_64 and aarch64, CPython 3.11-3.13.
    if "pydantic-core" in locked:
        assert len(locked["pydantic-core"].hashes) >= 6


@pytest.mark.parametrize(("source", "lock"), [(s, lock) for s, lock, _ in LOCKS])
def test_every_input_pin_is_in_its_lock_at_the_same_version(source: str, lock: str) -> None:
    locked = read_lock(lock)
    for name, requirement in input_pins(source).items():
        assert name in locked, f"{source} pins {name}, {lock} lacks it: run {COMMAND}"
        assert requirement.specifier.contains(locked[name].version), (
            f"{source} pins {requirement}, {lock} has {locked[name].version}: run {COMMAND}"
        )


def test_the_locks_agree_on_every_version() -> None:
    """The program's and the policy pack's virtualenvs hold what the tests ran."""
    dev = read_lock("requirements-dev.lock")
    for _, lock, constraints in LOCKS:
        if constraints is None:
            continue
        for name, entry in read_lock(lock).items():
            assert name in dev and dev[name].version == entry.version, (lock, name)


def closure(pins: dict[str, Requirement]) -> set[str]:
    """Every distribution the pins need on this interpreter, from the installed metadata."""
    needed: set[str] = set()
    todo = [(name, frozenset(r.extras)) for name, r in pins.items() if _applies(r, frozenset())]
    while todo:
        name, extras = todo.pop()
        if name in needed and not extras:
            continue
        needed.add(name)
        for text in metadata.requires(name) or []:
            requirement = Requirement(text)
            if _applies(requirement, extras):
                todo.append((canonicalize_name(requirement.name), frozenset(requirement.extras)))
    return needed


def _applies(requirement: Requirement, extras: frozenset[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": e}) for e in (extras or {""}))


def test_the_dev_lock_holds_exactly_what_the_inputs_need_here() -> None:
    """A package dropped from the inputs leaves the lock too (no stale, unreviewed entry), and
    nothing the inputs need is missing (pip would refuse the install)."""
    locked = {n for n, entry in read_lock("requirements-dev.lock").items() if entry.applies()}
    try:
        needed = closure(input_pins("requirements-dev.txt"))
    except metadata.PackageNotFoundError as missing:
        pytest.fail(f"{missing} is needed but not installed: reinstall from requirements-dev.lock")
    assert sorted(locked - needed) == [], f"in the lock, needed by nothing: run {COMMAND}"
    assert sorted(needed - locked) == [], f"needed, not in the lock: run {COMMAND}"
