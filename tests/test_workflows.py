"""The pull request workflows in .github/workflows: valid for GitHub, scripts that parse and call
commands that exist, least privilege, and the offline diff step run here for real."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.tooling.cli import COMMANDS
from components.tooling.stacks import PROJECT_DIR, shipped_stacks

WORKFLOWS = PROJECT_DIR / ".github" / "workflows"
PLAN_DIFF = WORKFLOWS / "plan-diff.yml"
PREVIEW = WORKFLOWS / "preview.yml"
EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.S)


def load(path: Path) -> dict[str, Any]:
    # PyYAML reads the key `on` as True; GitHub reads it as "on".
    document = yaml.safe_load(path.read_text())
    document["on"] = document.pop(True)
    return document


def steps(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for job_name, job in load(path)["jobs"].items():
        for step in job.get("steps", []):
            yield job_name, step


def step_named(path: Path, start: str) -> dict[str, Any]:
    found = [s for _, s in steps(path) if s.get("name", "").startswith(start)]
    assert len(found) == 1, f"{path.name}: one step named {start!r}"
    return found[0]


def workflow_files() -> list[Path]:
    return sorted(WORKFLOWS.glob("*.yml"))


def test_workflows_exist() -> None:
    assert [p.name for p in workflow_files()] == ["plan-diff.yml", "preview.yml"]


def check_jsonschema(*paths: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema with its vendored copy of SchemaStore's GitHub workflow schema (offline)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_workflows_match_githubs_schema(tmp_path: Path) -> None:
    result = check_jsonschema(*workflow_files())
    assert result.returncode == 0, result.stdout + result.stderr
    # The linter does reject a broken workflow (here: a step that is a string).
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: pull_request\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps: [oops]\n"
    )
    assert check_jsonschema(broken).returncode != 0


@pytest.mark.parametrize("path", workflow_files(), ids=lambda p: p.name)
def test_run_scripts_parse(path: Path) -> None:
    for job, step in steps(path):
        if "run" not in step:
            continue
        # Expressions are substituted by GitHub before the shell sees the script.
        script = EXPRESSION.sub("expr", step["run"])
        result = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True)
        assert result.returncode == 0, f"{path.name}/{job}/{step.get('name')}: {result.stderr}"
        for body in re.findall(r"<<'PY'\n(.*?)\n\s*PY\n", script, re.S):
            compile(textwrap.dedent(body), f"{path.name}:{step.get('name')}", "exec")


@pytest.mark.parametrize("path", workflow_files(), ids=lambda p: p.name)
def test_run_scripts_call_existing_commands(path: Path) -> None:
    for _, step in steps(path):
        script = step.get("run", "")
        for command in re.findall(r"-m components (\w+)", script):
            assert command in COMMANDS, f"{path.name}: unknown command `components {command}`"
        for module in re.findall(r"-m (gpufleet_policy\.\w+)", script):
            assert (PROJECT_DIR / "policy" / (module.replace(".", "/") + ".py")).is_file(), module
        for script_path in re.findall(r"\b((?:head/)?policy/\w+\.py)", script):
            assert (PROJECT_DIR / script_path.removeprefix("head/")).is_file(), script_path


def readme_test_command() -> str:
    """The README's test command: the one command line that installs and runs pytest."""
    lines = [
        line.strip()
        for line in (PROJECT_DIR / "README.md").read_text().splitlines()
        if "pytest" in line and "-m venv" in line
    ]
    assert len(lines) == 1, lines
    return lines[0]


def test_offline_job_runs_the_readme_test_command() -> None:
    step = step_named(PLAN_DIFF, "Install, lint, type-check and test")
    assert step["run"].strip() == readme_test_command()
    assert step["working-directory"] == "head"


def test_offline_job_checks_out_head_and_base_and_posts_one_comment() -> None:
    workflow = load(PLAN_DIFF)
    assert "pull_request" in workflow["on"]
    checkouts = [
        s for _, s in steps(PLAN_DIFF) if str(s.get("uses", "")).startswith("actions/checkout@")
    ]
    assert [c["with"]["path"] for c in checkouts] == ["head", "base"]
    assert checkouts[1]["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    script = step_named(PLAN_DIFF, "Plan every stack")["run"]
    assert '-m components plan "$stack" --json' in script
    assert "-m components diff" in script and "--format markdown" in script
    assert "gpufleet_policy.offline" in script
    comment = step_named(PLAN_DIFF, "Create or update the comment")
    assert comment["uses"].startswith("actions/github-script@")
    assert "<!-- gpufleet-plan-diff -->" in comment["with"]["script"]
    assert "<!-- gpufleet-plan-diff -->" in script


def test_permissions_are_minimal() -> None:
    for path in workflow_files():
        workflow = load(path)
        assert workflow["permissions"] == {"contents": "read"}, path.name
        for name, job in workflow["jobs"].items():
            granted = job.get("permissions")
            assert isinstance(granted, dict), f"{path.name}/{name} must declare its permissions"
            writes = {k for k, v in granted.items() if v == "write"}
            assert writes <= {"pull-requests", "id-token"}, f"{path.name}/{name}: {writes}"
    offline = load(PLAN_DIFF)["jobs"]
    # The job that runs the pull request's code holds no write token.
    assert offline["offline"]["permissions"] == {"contents": "read"}
    assert offline["comment"]["permissions"] == {"pull-requests": "write"}
    assert not any("checkout" in str(s.get("uses")) for s in offline["comment"]["steps"])
    preview = load(PREVIEW)["jobs"]["preview"]["permissions"]
    assert preview == {"contents": "read", "id-token": "write", "pull-requests": "write"}


def test_cloud_job_previews_with_comment_and_policy_pack() -> None:
    step = next(
        s for _, s in steps(PREVIEW) if str(s.get("uses", "")).startswith("pulumi/actions@")
    )
    options = step["with"]
    assert options["command"] == "preview"
    assert options["upsert"] is False, "a branch never creates a stack in the backend"
    assert options["comment-on-pr"] is True
    assert (PROJECT_DIR / options["policyPacks"] / "PulumiPolicy.yaml").is_file()
    assert options["policyPackConfigs"] == "${{ runner.temp }}/policy-config.json"
    pins = dict(
        line.split("==")
        for line in (PROJECT_DIR / "requirements.txt").read_text().splitlines()
        if "==" in line
    )
    assert options["pulumi-version"] == pins["pulumi"], "CLI and SDK from the same release"
    install = step_named(PREVIEW, "Install the program and the policy pack")["run"]
    venv = yaml.safe_load((PROJECT_DIR / "Pulumi.yaml").read_text())["runtime"]["options"][
        "virtualenv"
    ]
    assert f"python -m venv {venv} " in install and "python -m venv policy/venv" in install
    assert (
        'policy/pack_config.py "stacks/Pulumi.$STACK.yaml" > "$RUNNER_TEMP/policy-config.json"'
        in install
    )


def test_cloud_job_signs_in_with_oidc_per_cloud() -> None:
    by_action = {str(s.get("uses", "")).split("@")[0]: s for _, s in steps(PREVIEW)}
    expected = {
        "google-github-actions/auth": ("gcp", {"workload_identity_provider", "service_account"}),
        "aws-actions/configure-aws-credentials": ("aws", {"role-to-assume", "aws-region"}),
        "azure/login": ("azure", {"client-id", "tenant-id", "subscription-id"}),
    }
    for action, (cloud, inputs) in expected.items():
        step = by_action[action]
        assert step["if"] == f"matrix.cloud == '{cloud}'"
        assert set(step["with"]) == inputs  # identities only: no keys or client secrets
    job = load(PREVIEW)["jobs"]["preview"]
    signing_in = [s for s in job["steps"] if str(s.get("uses", "")).split("@")[0] in expected]
    assert "secrets." not in json.dumps(signing_in), "cloud credentials come from OIDC, not secrets"


def select_stacks(root: Path, **ready: bool) -> list[dict[str, str]]:
    """Run the workflow's stack selection script in `root` with some clouds configured."""
    script = step_named(PREVIEW, "Select the stacks")["run"]
    body = textwrap.dedent(re.search(r"<<'PY'\n(.*?)\n\s*PY\n", script, re.S)[1])  # type: ignore[index]
    env = {
        **os.environ,
        **{f"{k.upper()}_READY": "true" if v else "false" for k, v in ready.items()},
    }
    result = subprocess.run(
        [sys.executable, "-c", body],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    outputs = dict(line.split("=", 1) for line in result.stdout.splitlines())
    include: list[dict[str, str]] = json.loads(outputs["matrix"])["include"]
    assert outputs["any"] == ("true" if include else "false")
    return include


def test_cloud_job_runs_only_for_configured_clouds_and_never_the_examples(
    tmp_path: Path,
) -> None:
    """The examples hold placeholders a real preview refuses: only the team's stacks run."""
    (tmp_path / "stacks").mkdir()
    for example in shipped_stacks():
        name = f"Pulumi.{example}.yaml"
        shutil.copy(PROJECT_DIR / "stacks" / name, tmp_path / "stacks" / name)
    shutil.copytree(
        PROJECT_DIR / "components", tmp_path / "components", ignore=shutil.ignore_patterns("*.pyc")
    )
    users = PROJECT_DIR / "tests" / "fixtures" / "user_stacks"
    for stack in users.glob("Pulumi.*.yaml"):
        shutil.copy(stack, tmp_path / "stacks" / stack.name)
    clouds = {
        path.name[len("Pulumi.") : -len(".yaml")]: yaml.safe_load(path.read_text())["config"][
            "gpufleet:cloud"
        ]
        for path in sorted(users.glob("Pulumi.*.yaml"))
    }
    assert set(clouds.values()) == {"gcp", "aws", "azure"}
    assert select_stacks(tmp_path, backend=False, gcp=True, aws=True, azure=True) == []
    assert select_stacks(tmp_path, backend=True, gcp=False, aws=False, azure=False) == []
    only_aws = select_stacks(tmp_path, backend=True, gcp=False, aws=True, azure=False)
    assert [s["stack"] for s in only_aws] == [s for s, c in clouds.items() if c == "aws"]
    assert all(s["region"] for s in only_aws), "configure-aws-credentials needs the region"
    everything = select_stacks(tmp_path, backend=True, gcp=True, aws=True, azure=True)
    assert {s["stack"] for s in everything} == set(clouds)
    assert not {s["stack"] for s in everything} & set(shipped_stacks())


# --- The offline diff step, run for real on a pull request that changes, adds and removes stacks


def checkout(root: Path, stacks: dict[str, str]) -> None:
    """A copy of the program with the given stack files (name -> YAML text)."""
    ignore = shutil.ignore_patterns("__pycache__", "venv", ".venv")
    for item in ("components", "policy"):
        shutil.copytree(PROJECT_DIR / item, root / item, ignore=ignore)
    for item in ("__main__.py", "Pulumi.yaml"):
        shutil.copy(PROJECT_DIR / item, root / item)
    (root / "stacks").mkdir()
    for name, text in stacks.items():
        (root / "stacks" / f"Pulumi.{name}.yaml").write_text(text)


@pytest.mark.slow
def test_the_diff_step_comments_changes_new_and_removed_stacks_and_policy_violations(
    tmp_path: Path,
) -> None:
    dev = (PROJECT_DIR / "stacks" / "Pulumi.gcp-dev.yaml").read_text()
    assert "      minNodes: 0\n      maxNodes: 2\n" in dev
    warm = dev.replace(
        "      minNodes: 0\n      maxNodes: 2\n", "      minNodes: 1\n      maxNodes: 2\n"
    )
    # The team's budget, in the stack file: the workflow enforces it with no option of its own.
    warm = warm.rstrip("\n") + "\n  gpufleet:cost:\n    maxPerHour: 1\n"
    # The added and the removed stack: any valid stack shows the step's handling of a stack on
    # one side only; an existing cluster's plan imports no cloud SDK, so each of its runs costs
    # half of a cloud stack's.
    lab = (PROJECT_DIR / "stacks" / "Pulumi.existing-dev.yaml").read_text()
    checkout(tmp_path / "base", {"gcp-dev": dev, "gone": lab})
    checkout(
        tmp_path / "head",
        {"gcp-dev": warm, "fresh": lab, "broken": "config:\n  gpufleet:cloud: mars\n"},
    )
    output, summary = tmp_path / "github_output", tmp_path / "summary.md"
    env = {
        **os.environ,
        "PY": sys.executable,
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    env.pop("PYTHONPATH", None)
    script = step_named(PLAN_DIFF, "Plan every stack")["run"]
    result = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    comment = (tmp_path / "comment.md").read_text()
    assert comment.startswith("<!-- gpufleet-plan-diff -->")
    assert summary.read_text() == comment

    sections = dict(
        re.findall(r"^### Plan diff: gpufleet / ([\w-]+)\n(.*?)(?=^### |\Z)", comment, re.S | re.M)
    )
    assert sorted(sections) == ["broken", "fresh", "gcp-dev", "gone"]
    assert "totalMinNodeCount" in sections["gcp-dev"]
    assert "The policy pack rejects this plan" in sections["gcp-dev"]
    assert "gpu-pools-scale-to-zero" in sections["gcp-dev"]
    assert "fails on this pull request" in sections["broken"] and "mars" in sections["broken"]
    fresh = plan_count(tmp_path / "plans" / "head" / "fresh.json")
    assert f"{fresh} to add, 0 to change (0 replaced), 0 to delete" in sections["fresh"]
    gone = plan_count(tmp_path / "plans" / "base" / "gone.json")
    assert f"0 to add, 0 to change (0 replaced), {gone} to delete" in sections["gone"]
    assert "The policy pack rejects" not in sections["fresh"]
    # The comment carries the cost: warming the T4 pool adds one T4 node to idle ...
    idle = r"\| idle \| \$[\d.,]+/h \(\$[\d.,]+/month\) \| \$[\d.,]+/h \(\$[\d.,]+/month\) \| \+\$"
    assert re.search(idle, sections["gcp-dev"]), sections["gcp-dev"]
    # ... and the stack file's budget fails the pull request.
    assert "gpu-cost-at-full-scale" in sections["gcp-dev"]
    assert "above the budget of $1.00/h (gpufleet:cost.maxPerHour)" in sections["gcp-dev"]
    assert "| idle | not in the plan |" in sections["fresh"]
    assert output.read_text().strip() == "violations=1"


def plan_count(path: Path) -> int:
    return len(json.loads(path.read_text())["resources"])
