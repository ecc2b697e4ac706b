"""The README is a newcomer's first ten minutes and its commands work; the reference in docs/
names every config key, and every link between them resolves."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from components.tooling.stacks import PROJECT_DIR

README = (PROJECT_DIR / "README.md").read_text()
CI = (PROJECT_DIR / ".ci" / "run").read_text()
DOCS = sorted((PROJECT_DIR / "docs").glob("*.md"))
CONFIGURATION = (PROJECT_DIR / "docs" / "configuration.md").read_text()


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    blocks = re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)
    test_commands = [b for b in blocks if "pytest" in b]
    assert test_commands, "the README names a test command"
    ci_lines = [line for line in CI.splitlines() if line and not line.startswith("#")]
    assert test_commands[0] in ci_lines
    # Only the reviewed, hashed packages install (tests/test_locks.py checks the lock).
    assert " --require-hashes -r requirements-dev.lock &&" in test_commands[0]


def test_one_virtualenv_name_for_pulumi_the_readme_and_ci() -> None:
    import yaml

    venv = yaml.safe_load((PROJECT_DIR / "Pulumi.yaml").read_text())["runtime"]["options"][
        "virtualenv"
    ]
    blocks = re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)
    for command in [b for b in blocks if "-m venv" in b]:
        assert f"-m venv {venv} " in command, command
    assert f"rm -rf {venv}\n" in CI


def test_quickstart_plans_a_shipped_stack() -> None:
    blocks = re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)
    plan = [b for b in blocks if "-m components plan" in b]
    assert plan and (Path(PROJECT_DIR) / "stacks" / "Pulumi.gcp-dev.yaml").is_file()
    assert "pip install -q --require-hashes -r requirements.lock &&" in plan[0]


def _leaf_keys(model: type, prefix: str = "") -> list[str]:
    from pydantic import BaseModel

    keys = []
    for name, field in model.model_fields.items():  # type: ignore[attr-defined]
        key = prefix + (field.alias or name)
        annotation = field.annotation
        nested = [
            a
            for a in (annotation, *getattr(annotation, "__args__", ()))
            if isinstance(a, type) and issubclass(a, BaseModel)
        ]
        if nested and not str(annotation).startswith("list"):
            keys += _leaf_keys(nested[0], key + ".")
        else:
            keys.append(key)
    return keys


def test_every_config_key_is_in_the_reference() -> None:
    from components.model.config import ClusterModel as ClusterConfig
    from components.model.config import GpuPoolModel as GpuPoolConfig
    from components.model.config import GpuSoftwareModel as GpuSoftwareConfig
    from components.model.schema import SamplesConfig

    reference = "\n".join(path.read_text() for path in DOCS)
    keys = _leaf_keys(ClusterConfig) + _leaf_keys(GpuPoolConfig) + _leaf_keys(GpuSoftwareConfig)
    keys += ["samples." + k for k in _leaf_keys(SamplesConfig)]
    missing = [k for k in keys if f"`{k}`" not in reference]
    assert missing == []


def test_the_config_writing_example_uses_only_real_keys() -> None:
    import yaml

    from components.model.config import ConfigError, parse_config

    section = CONFIGURATION.split("## Writing config", 1)[1].split("\n## ", 1)[0]
    (example,) = re.findall(r"```yaml\n(.*?)\n```", section, flags=re.S)
    config = yaml.safe_load(example)["config"]
    raw = {k.removeprefix("gpufleet:"): v for k, v in config.items()}
    try:
        parse_config(raw)
    except ConfigError as error:
        unknown = [str(p) for p in error.problems if "unknown" in p.message]
        assert unknown == []
    for path in re.findall(r"--path\s+'gpufleet:([^']+)'", section):
        top = path.split(".")[0].split("[")[0]
        assert top in raw, path


# --- the README is short, the reference lives in docs/ ------------------------------------------


def test_the_readme_is_a_newcomers_ten_minutes() -> None:
    assert len(README.splitlines()) <= 250
    sections = re.findall(r"^## (.+)$", README, flags=re.M)
    assert sections == [
        "Quickstart",
        "Your first stack",
        "Example stacks",
        "Real use with CI",
        "Commands",
        "Reference",
    ]
    linked = set(re.findall(r"\]\((docs/[\w-]+\.md)", README))
    assert linked == {f"docs/{path.name}" for path in DOCS}, "every reference page is linked"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@pytest.mark.parametrize(
    "path", [PROJECT_DIR / "README.md", *DOCS], ids=lambda p: p.relative_to(PROJECT_DIR).as_posix()
)
def test_every_relative_link_and_anchor_resolves(path: Path) -> None:
    text = path.read_text()
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http://", "https://")):
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        assert linked.is_file(), f"{path.name}: {target}"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", linked.read_text(), flags=re.M)
            assert anchor in {_slug(h) for h in headings}, f"{path.name}: {target}"


@pytest.mark.parametrize(
    "path", [PROJECT_DIR / "README.md", *DOCS], ids=lambda p: p.relative_to(PROJECT_DIR).as_posix()
)
def test_table_cells_stay_readable(path: Path) -> None:
    for line in path.read_text().splitlines():
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line.strip())
            assert max(len(cell) for cell in cells) <= 500, line[:80]


@pytest.mark.slow
def test_the_first_stack_and_policy_commands_work_and_write_nothing_into_the_repository(
    tmp_path: Path,
) -> None:
    """The README's "Your first stack" and offline policy blocks, run as written in a copy of
    the project: the stack is written to stacks/, it plans, the policy pack passes it, and no
    other file appears in the checkout (plan.json goes to a temporary directory)."""
    blocks = re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)
    (first,) = [b for b in blocks if "-m components new" in b]
    (policy,) = [b for b in blocks if "gpufleet_policy.offline" in b]
    project = tmp_path / "gpufleet"
    ignore = shutil.ignore_patterns("__pycache__", ".venv", "venv", "tests", "docs", ".git*")
    shutil.copytree(PROJECT_DIR, project, ignore=ignore)
    (project / ".venv").symlink_to(Path(sys.prefix))
    before = {p.relative_to(project) for p in project.rglob("*") if ".venv" not in p.parts}
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", f"{first}\n{policy}"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "l4-spot  l4           g6.xlarge" in result.stdout
    after = {
        p.relative_to(project)
        for p in project.rglob("*")
        if ".venv" not in p.parts and "__pycache__" not in p.parts
    }
    assert after - before == {Path("stacks/Pulumi.ml-dev.yaml")}


def test_the_example_table_names_exactly_the_shipped_examples() -> None:
    from components.tooling.stacks import shipped_stacks

    table = README.split("## Example stacks", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\| `([\w-]+)` \|", table, flags=re.M) != []
    assert sorted(re.findall(r"^\| `([\w-]+)` \|", table, flags=re.M)) == shipped_stacks()


def test_the_readmes_plan_output_is_what_plan_prints() -> None:
    """The README's abridged `plan gcp-dev` output: every line it shows is a line the command
    prints, in the same order (regenerate the block from `plan gcp-dev` when this fails)."""
    from components.tooling.render import render_pool_table, render_tree
    from tests.conftest import plan_of

    section = README.split("What `plan` prints for `gcp-dev` (abridged)", 1)[1]
    (shown,) = re.findall(r"```\n(.*?)\n```", section.split("\n## ", 1)[0], flags=re.S)[:1]
    plan = plan_of("gcp-dev")
    printed = iter(
        f"{render_tree(plan)}\n\n{render_pool_table(plan.outputs['gpuPools'])}".splitlines()
    )
    for line in shown.splitlines():
        assert any(line == real for real in printed), f"not printed (in this order): {line}"


# Where a path outside the repository would be: a sibling checkout, a machine's own directories.
OUTSIDE = re.compile(r"(?<![\w.])(\.\./[\w.-]+|/(?:work|home|tmp|Users|mnt)/[\w./-]+|~/[\w.-]+)")
# Paths a user's own machine has, which the docs show on purpose.
USERS_OWN = ("~/.kube/", "~/.aws/", "~/.azure/", "~/.config/")


@pytest.mark.parametrize(
    "path", [PROJECT_DIR / "README.md", *DOCS], ids=lambda p: p.relative_to(PROJECT_DIR).as_posix()
)
def test_no_doc_names_a_path_outside_the_repository(path: Path) -> None:
    """A reader has the repository only: a doc that points at ../shared (the maintainers'
    reference copies) or at a machine's directories sends them nowhere. Link targets between
    docs (`](file.md)`, checked above) stay inside; commands run from the repository's root, so
    a `../` in text leaves it; a user's own ~/.kube and the like are theirs."""
    text = re.sub(r"\]\([^)\s]+\)", "]()", path.read_text())
    found = [match for match in OUTSIDE.findall(text) if not match.startswith(USERS_OWN)]
    assert found == [], f"{path.name} names paths outside the repository: {found}"
