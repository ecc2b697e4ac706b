"""A team's own stacks in stacks/ keep the README's test command green, with no other step.

`stacks/` holds gpufleet's examples and the user's own stacks (Pulumi reads every stack from
there). Tests about the examples name them (`EXAMPLE_STACKS`); tests that loop over stacks/ are
marked `every_stack` and check only what every valid stack has. Here three stacks written as a
user writes them (an EKS production stack, GPU pools on an adopted AKS cluster, a GKE stack in
Europe; tests/fixtures/user_stacks/) are dropped into a copy of the project, and the every-stack
tests run there on just those three (GPUFLEET_TEST_STACKS), so the proof costs their plans only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from components.tooling import stacks
from components.tooling.cli import main as cli_main
from components.tooling.stacks import EXAMPLE_STACKS, PROJECT_DIR, STACKS_DIR, load_stack

USER_STACKS = Path(__file__).parent / "fixtures" / "user_stacks"
ALL_HERE = stacks.all_stacks()
# What a clone holds that the tests read (no virtualenv, no caches).
PROJECT_FILES = (
    ".ci",
    ".github",
    "components",
    "docs",
    "policy",
    "scripts",
    "stacks",
    "tests",
    "Pulumi.yaml",
    "README.md",
    "__main__.py",
    "pyproject.toml",
    "requirements-dev.txt",
    "requirements-dev.lock",
    "requirements.txt",
    "requirements.lock",
)


def user_stack_names() -> list[str]:
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in USER_STACKS.glob("Pulumi.*.yaml"))


def clone_with_user_stacks(root: Path) -> Path:
    """A copy of the project with the user stacks added to its stacks/."""
    ignore = shutil.ignore_patterns("__pycache__", ".venv", "venv", "*.pyc")
    for name in PROJECT_FILES:
        source = PROJECT_DIR / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=ignore)
        elif source.is_file():
            shutil.copy(source, root / name)
    for stack in USER_STACKS.glob("Pulumi.*.yaml"):
        shutil.copy(stack, root / "stacks" / stack.name)
    return root


def every_stack_modules(project: Path) -> list[str]:
    """The test modules with every-stack tests (only they are collected: the rest would be
    imported and deselected for nothing)."""
    return [
        path.relative_to(project).as_posix()
        for path in sorted((project / "tests").glob("test_*.py"))
        if "every_stack" in path.read_text() and path.name != Path(__file__).name
    ]


def test_the_user_stacks_are_three_and_not_examples() -> None:
    names = user_stack_names()
    assert len(names) == 3
    assert not set(names) & set(EXAMPLE_STACKS)
    clouds = {load_stack(str(p)).gpufleet["cloud"] for p in USER_STACKS.glob("Pulumi.*.yaml")}
    assert clouds == {"aws", "azure", "gcp"}


@pytest.mark.slow
def test_every_stack_test_passes_on_user_stacks_dropped_into_stacks(tmp_path: Path) -> None:
    project = clone_with_user_stacks(tmp_path / "gpufleet")
    report = tmp_path / "report.xml"
    names = user_stack_names()
    env = {**os.environ, "GPUFLEET_TEST_STACKS": ",".join(names), "PYTHONHASHSEED": "0"}
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_ADDOPTS", None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *every_stack_modules(project),
            "-m",
            "every_stack",
            "-n",
            "0",
            "-q",
            "-p",
            "no:randomly",
            f"--junitxml={report}",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    cases = [
        f"{case.get('classname')}::{case.get('name')}"
        for case in ElementTree.parse(report).getroot().iter("testcase")
    ]
    # Every stack-looping module ran on each user stack, and on no example.
    for name in names:
        ran = [case for case in cases if name in case]
        modules = {case.split("::")[0] for case in ran}
        assert len(modules) >= 10, (name, sorted(modules))
    assert not [c for c in cases if any(f"[{e}" in c or f"{e}-" in c for e in EXAMPLE_STACKS)]


# --- what the commands say about stacks/ with the user's stacks in it ------------------------


@pytest.fixture
def stacks_with_user_stacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "stacks"
    shutil.copytree(STACKS_DIR, directory)
    for stack in USER_STACKS.glob("Pulumi.*.yaml"):
        shutil.copy(stack, directory / stack.name)
    monkeypatch.setattr(stacks, "STACKS_DIR", directory)
    return directory


def test_the_commands_list_the_users_stacks_apart_from_the_examples(
    stacks_with_user_stacks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # This checkout's own stacks (a team's) are there too.
    yours = sorted({*user_stack_names(), *(n for n in ALL_HERE if n not in EXAMPLE_STACKS)})
    assert stacks.user_stacks() == yours
    assert stacks.shipped_stacks() == sorted(EXAMPLE_STACKS)
    assert cli_main(["--help"]) == 0
    out = capsys.readouterr().out
    assert f"your stacks: {', '.join(yours)}\n" in out
    assert "examples:    aws-auto-mode, " in out and "ml-prod-eks" not in out.split("examples:")[1]
    assert cli_main(["plan", "no-such-stack"]) == 2
    err = capsys.readouterr().err
    assert f"your stacks: {', '.join(yours)}; examples: aws-auto-mode" in err
    assert "shipped" not in err
