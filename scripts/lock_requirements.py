"""Regenerate the hashed locks that CI, the README's commands and the cloud preview install from.

    python3 scripts/lock_requirements.py              # after editing a requirements*.txt
    python3 scripts/lock_requirements.py --upgrade    # also move every transitive pin forward

The human-edited inputs are the top-level pins: `requirements.txt` (the program),
`requirements-dev.txt` (adds the test, lint and type-check tools) and `policy/requirements.txt`
(the policy pack's own virtualenv). Each `*.lock` beside them holds every package the input
needs, transitively, pinned to one version with the sha256 of every file PyPI has for that
version (every wheel: Linux x86_64 and aarch64, CPython 3.11 to 3.13, and the rest), resolved
once for every platform and every Python from 3.11 on (`uv pip compile --universal`), so
`pip install --require-hashes -r <lock>` installs exactly the reviewed files on any machine, or
stops. The program's and the policy pack's locks are resolved within the dev lock's versions, so
the tests run the very packages that deploy. Without `--upgrade`, uv keeps every pin the
existing lock has unless an input needs another.

uv itself is installed into a temporary virtualenv from `scripts/lock_tool.txt` (one pinned
version, hashed). `tests/test_locks.py` fails while a lock and its input disagree.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import venv
from collections.abc import Sequence
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[1]
TOOL_LOCK = "scripts/lock_tool.txt"
COMMAND = "python3 scripts/lock_requirements.py"
# The oldest Python gpufleet supports (pyproject.toml's target): the locks cover it and newer.
PYTHON_FLOOR = "3.11"
# (input, lock, constraints): the dev lock first, the others within its versions.
LOCKS: tuple[tuple[str, str, str | None], ...] = (
    ("requirements-dev.txt", "requirements-dev.lock", None),
    ("requirements.txt", "requirements.lock", "requirements-dev.lock"),
    ("policy/requirements.txt", "policy/requirements.lock", "requirements-dev.lock"),
)


def compile_args(source: str, lock: str, constraints: str | None, upgrade: bool) -> list[str]:
    """The `uv pip compile` arguments that write `lock` from `source`."""
    args = [
        "pip",
        "compile",
        "--universal",
        "--python-version",
        PYTHON_FLOOR,
        "--generate-hashes",
        "--custom-compile-command",
        COMMAND,
        "--quiet",
        source,
        "--output-file",
        lock,
    ]
    if constraints is not None:
        args += ["--constraint", constraints]
    if upgrade:
        args.append("--upgrade")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--upgrade", action="store_true", help="move every pin forward, not only what changed"
    )
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gpufleet-lock-") as tmp:
        tools = Path(tmp) / "venv"
        venv.create(tools, with_pip=True)
        pip = [str(tools / "bin" / "python"), "-m", "pip", "install", "-q", "--require-hashes"]
        subprocess.run([*pip, "-r", str(PROJECT_DIR / TOOL_LOCK)], check=True)
        uv = str(tools / "bin" / "uv")
        for source, lock, constraints in LOCKS:
            args = compile_args(source, lock, constraints, options.upgrade)
            subprocess.run([uv, *args], cwd=PROJECT_DIR, check=True)
            print(f"wrote {lock} from {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
