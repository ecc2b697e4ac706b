"""The README's quickstart is what CI runs, and every shipped stack is documented."""

from __future__ import annotations

import re
from pathlib import Path

from components.stacks import PROJECT_DIR

README = (PROJECT_DIR / "README.md").read_text()
CI = (PROJECT_DIR / ".ci" / "run").read_text()


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    blocks = re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)
    test_commands = [b for b in blocks if "pytest" in b]
    assert test_commands, "the README names a test command"
    ci_lines = [line for line in CI.splitlines() if line and not line.startswith("#")]
    assert test_commands[0] in ci_lines


def test_quickstart_plans_a_shipped_stack() -> None:
    blocks = re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)
    plan = [b for b in blocks if "-m components plan" in b]
    assert plan and (Path(PROJECT_DIR) / "stacks" / "Pulumi.gcp-dev.yaml").is_file()
    assert "requirements.txt" in plan[0]
