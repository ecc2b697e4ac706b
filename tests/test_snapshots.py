"""Graph snapshots: the `plan --json` of the pinned stacks, committed and compared.

The pinned stacks are gpufleet's examples and the stacks a team lists in
tests/pinned_stacks.txt (one name a line); the other stacks in stacks/ are checked by the
every-stack tests, not pinned. A change to the program fails here until the snapshots are
rewritten with

    pytest tests/test_snapshots.py --snapshot-update

and the rewritten `tests/__snapshots__/test_snapshots/*.json` files then show the change in the
pull request as a line diff of resources and properties. A pinned stack without a snapshot fails
too, and so does a snapshot whose stack is no longer pinned (syrupy reports it unused).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from components.tooling.engine import SECRET
from components.tooling.snapshots import snapshot_text, unmasked_secrets
from components.tooling.stacks import PROJECT_DIR, STACKS_DIR, shipped_stacks
from tests.conftest import PINNED_TODAY, over_every_stack, plan_of

PINNED_FILE = Path(__file__).parent / "pinned_stacks.txt"


def team_pinned(path: Path = PINNED_FILE) -> list[str]:
    """The stack names a team pins besides the examples: one a line, `#` starts a comment."""
    if not path.is_file():
        return []
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line]


def pinned_stacks() -> list[str]:
    """The stacks whose plan is pinned by a snapshot: the examples and the team's own."""
    return sorted({*shipped_stacks(), *team_pinned()})


class PlanJsonSnapshot(SingleFileSnapshotExtension):
    """One JSON file per stack, stored verbatim as `plan STACK --json` prints it."""

    _write_mode = WriteMode.TEXT
    file_extension = "json"

    def serialize(self, data: Any, **_: Any) -> str:
        assert isinstance(data, str), "pass snapshot_text(plan)"
        return data


@pytest.fixture
def plan_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(PlanJsonSnapshot)


@pytest.mark.parametrize("stack", pinned_stacks())
def test_plan_graph_matches_committed_snapshot(
    stack: str, plan_snapshot: SnapshotAssertion
) -> None:
    assert snapshot_text(plan_of(stack)) == plan_snapshot


@over_every_stack
def test_snapshot_masks_secrets_and_names_no_local_path(stack: str) -> None:
    text = snapshot_text(plan_of(stack))
    document = json.loads(text)
    assert unmasked_secrets(document) == []
    assert document["outputs"]["kubeconfig"] == SECRET
    for provider in (
        r for r in document["resources"] if r["type"] == "pulumi:providers:kubernetes"
    ):
        assert provider["inputs"].get("kubeconfig") in (SECRET, None)
    # A path of this checkout would make the snapshot differ on every other machine.
    assert str(PROJECT_DIR) not in text
    assert str(Path.home()) not in text


@pytest.mark.slow
def test_snapshots_are_reproducible_in_another_process(tmp_path: Path) -> None:
    """Another interpreter (other hash seed, other working directory) prints the same bytes
    through the CLI, so snapshots never flake and `plan --json` output can be diffed."""
    # The same day as the tests' (plans carry warnings judged on it, `warnings`).
    # The collector's thresholds as the test workers set them (tests/conftest.py): fifteen plans
    # in one process spent a third of their time walking the heap. They change no output byte.
    script = (
        "import contextlib, gc, io, json, sys\n"
        "gc.set_threshold(10_000, 20, 20)\n"
        "from datetime import date\n"
        "from components.model import config\n"
        f"config.clock_today = lambda: date.fromisoformat({PINNED_TODAY.isoformat()!r})\n"
        "from components.tooling.cli import main\n"
        "from components.tooling.stacks import shipped_stacks\n"
        "texts = {}\n"
        "for stack in shipped_stacks():\n"
        "    out = io.StringIO()\n"
        "    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):\n"
        "        assert main(['plan', stack, '--json']) == 0, stack\n"
        "    texts[stack] = out.getvalue()\n"
        "json.dump(texts, sys.stdout)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(PROJECT_DIR), "PYTHONHASHSEED": "4242"}
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    texts = json.loads(result.stdout)
    assert sorted(texts) == shipped_stacks()
    for stack, text in texts.items():
        assert text == snapshot_text(plan_of(stack)), f"{stack}: plan --json differs between runs"


def test_unmasked_credentials_are_found() -> None:
    document = {
        "resources": [
            {
                "inputs": {
                    "kubeconfig": "apiVersion: v1",
                    "metadataOptions": {"httpTokens": "required"},
                }
            },
            {"inputs": {"adminPassword": SECRET, "clientSecret": "s3cr3t"}},
        ],
        "outputs": {"kubeconfig": SECRET, "token": "abc"},
    }
    assert unmasked_secrets(document) == [
        "$.resources[0].inputs.kubeconfig",
        "$.resources[1].inputs.clientSecret",
        "$.outputs.token",
    ]


def test_every_pinned_stack_has_a_stack_file() -> None:
    missing = [
        name for name in pinned_stacks() if not (STACKS_DIR / f"Pulumi.{name}.yaml").is_file()
    ]
    assert missing == [], (
        f"pinned but not in stacks/: {missing}; remove them from {PINNED_FILE.name} "
        "(or gpufleet's example list)"
    )


def test_team_pins_are_read_one_name_a_line(tmp_path: Path) -> None:
    assert team_pinned(tmp_path / "absent.txt") == []
    listed = tmp_path / "pinned.txt"
    listed.write_text("# our stacks\nml-prod\n\n  research-aks  # the shared cluster\n")
    assert team_pinned(listed) == ["ml-prod", "research-aks"]
