"""What keeps the pull request workflows from being hijacked (review security-1 SEC-1, SEC-6,
SEC-17): cloud access only after a person approves, secrets only in the step that needs them,
every action pinned by commit, only hashed packages installed, pinned tools, and the set-up
documented with the OIDC subject the workflow really presents."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.tooling.stacks import PROJECT_DIR
from tests.test_workflows import PLAN_DIFF, PREVIEW, load, step_named, steps, workflow_files

ENVIRONMENT = "cloud-preview"
PULL_REQUESTS_DOC = (PROJECT_DIR / "docs" / "pull-requests.md").read_text()
# `uses: owner/repo@<full commit SHA> # v1.2.3`, as Dependabot writes and updates them.
PINNED = re.compile(r"[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40} # v\d+\.\d+\.\d+")
CLOUD_SIGN_IN = (
    "google-github-actions/auth",
    "aws-actions/configure-aws-credentials",
    "azure/login",
)


def uses_lines(path: Path) -> list[str]:
    """Every `uses:` value as written, with its comment (YAML drops comments)."""
    return [
        match.group(1).strip()
        for match in re.finditer(r"^\s*(?:- )?uses:\s*(.+)$", path.read_text(), re.M)
    ]


def secrets_in(value: Any) -> list[str]:
    return re.findall(r"secrets\.(\w+)", json.dumps(value))


def environment_of(job: dict[str, Any]) -> str | None:
    environment = job.get("environment")
    return environment.get("name") if isinstance(environment, dict) else environment


# --- pins ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", workflow_files(), ids=lambda p: p.name)
def test_every_action_is_pinned_by_full_commit_sha_with_its_tag(path: Path) -> None:
    written = uses_lines(path)
    assert written, path.name
    for uses in written:
        assert PINNED.fullmatch(uses), f"{path.name}: {uses}"
    # The YAML value is the bare pin, comment apart.
    for _, step in steps(path):
        if "uses" in step:
            assert re.fullmatch(r"\S+@[0-9a-f]{40}", step["uses"]), step["uses"]


def test_one_pin_per_action_across_workflows() -> None:
    pins: dict[str, set[str]] = {}
    for path in workflow_files():
        for uses in uses_lines(path):
            action, _, pin = uses.partition("@")
            pins.setdefault(action.lower(), set()).add(pin)
    assert {a: p for a, p in pins.items() if len(p) > 1} == {}


def test_the_pin_test_rejects_tags_and_short_shas() -> None:
    for bad in (
        "actions/checkout@v4",
        "actions/checkout@v7.0.1",
        "actions/checkout@3d3c42e # v7.0.1",
        "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1",
        "actions/checkout@main # v7.0.1",
    ):
        assert not PINNED.fullmatch(bad), bad


def test_dependabot_keeps_the_actions_current() -> None:
    path = PROJECT_DIR / ".github" / "dependabot.yml"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.dependabot",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    config = yaml.safe_load(path.read_text())
    assert config["version"] == 2
    (actions,) = [u for u in config["updates"] if u["package-ecosystem"] == "github-actions"]
    assert actions["directory"] == "/" and actions["schedule"]["interval"]


def test_cloud_tools_are_pinned_releases() -> None:
    kubelogin = step_named(PREVIEW, "kubelogin")["run"]
    # az prepends the `v` itself (azure-cli acs/custom.py): the flags take bare versions.
    assert re.search(r"--client-version \d+\.\d+\.\d+ ", kubelogin), kubelogin
    assert re.search(r"--kubelogin-version \d+\.\d+\.\d+\b", kubelogin), kubelogin
    gcloud = step_named(PREVIEW, "gcloud and gke-gcloud-auth-plugin")["with"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", gcloud["version"]), "not 'latest' or a range"
    pulumi = next(s for _, s in steps(PREVIEW) if s.get("uses", "").startswith("pulumi/actions@"))
    assert re.fullmatch(r"\d+\.\d+\.\d+", pulumi["with"]["pulumi-version"])


@pytest.mark.parametrize("path", workflow_files(), ids=lambda p: p.name)
def test_only_hashed_packages_install(path: Path) -> None:
    installs = [
        line
        for _, step in steps(path)
        for line in step.get("run", "").splitlines()
        if "pip install" in line
    ]
    assert installs, path.name
    for line in installs:
        assert "--require-hashes" in line and re.search(r"-r \S+\.lock\b", line), line


# --- the approval gate and the secrets (SEC-1) ----------------------------------------------


def test_cloud_access_waits_for_a_reviewed_environment() -> None:
    jobs = load(PREVIEW)["jobs"]
    assert environment_of(jobs["preview"]) == ENVIRONMENT
    for path in workflow_files():
        for name, job in load(path)["jobs"].items():
            holds_access = job.get("permissions", {}).get("id-token") == "write" or secrets_in(job)
            if holds_access:
                assert environment_of(job) == ENVIRONMENT, (
                    f"{path.name}/{name} holds an OIDC token or secrets outside {ENVIRONMENT}"
                )


def test_secrets_reach_only_the_step_that_runs_pulumi() -> None:
    for path in workflow_files():
        workflow = load(path)
        assert secrets_in(workflow.get("env", {})) == [], f"{path.name}: workflow-level secrets"
        for name, job in workflow["jobs"].items():
            assert secrets_in(job.get("env", {})) == [], f"{path.name}/{name}: job-level secrets"
            assert secrets_in(job.get("if", "")) == [], f"{path.name}/{name}"
    holders = [
        (job, step.get("name"))
        for path in workflow_files()
        for job, step in steps(path)
        if secrets_in(step)
    ]
    assert holders == [("preview", "pulumi preview with the policy pack")]
    pulumi = step_named(PREVIEW, "pulumi preview with the policy pack")
    assert sorted(secrets_in(pulumi)) == ["PULUMI_ACCESS_TOKEN", "PULUMI_CONFIG_PASSPHRASE"]
    assert secrets_in(pulumi["with"]) == [], "in the step's env, not its inputs"


def test_nothing_installs_or_runs_pull_request_code_after_the_clouds_sign_in() -> None:
    """Installs run before any credential exists; after the sign-in only the tools and the
    preview itself (which runs the approved program) follow."""
    job = load(PREVIEW)["jobs"]["preview"]
    names = [s.get("uses", "").split("@")[0] or s.get("name") for s in job["steps"]]
    first_sign_in = min(names.index(action) for action in CLOUD_SIGN_IN)
    after = job["steps"][first_sign_in:]
    assert not any("pip install" in s.get("run", "") for s in after)
    assert [s.get("run") for s in after if "run" in s] == [], "no shell step after sign-in"
    assert names.index("kubelogin (the AKS kubeconfig runs it with the az login)") < (
        names.index("azure/login")
    )


def test_the_selection_job_has_no_secret_and_no_identity() -> None:
    job = load(PREVIEW)["jobs"]["stacks"]
    assert job["permissions"] == {"contents": "read"}
    assert environment_of(job) is None and secrets_in(job) == []


def test_whole_plans_are_kept_for_private_repositories_only() -> None:
    uploads = [s for _, s in steps(PLAN_DIFF) if s.get("uses", "").startswith("actions/upload")]
    public = [s for s in uploads if "private" not in s.get("if", "")]
    assert [s["with"]["path"] for s in public] == ["comment.md"]
    (plans,) = [s for s in uploads if "plans/" in s["with"]["path"]]
    assert "github.event.repository.private" in plans["if"]


# --- the documented set-up matches the workflow ----------------------------------------------


def test_the_docs_give_the_environment_subject_and_no_pull_request_subject() -> None:
    subject = f"repo:OWNER/REPO:environment:{ENVIRONMENT}"
    settings = PULL_REQUESTS_DOC.split("### Settings", 1)[1]
    assert settings.count(subject) >= 3, "AWS, Azure and Google Cloud each trust it"
    assert ":pull_request" not in settings, "no cloud trusts a pull request's own subject"
    for words in ("required reviewers", "environment secrets", "Prevent self-review"):
        assert words in PULL_REQUESTS_DOC, words


def test_the_docs_grant_the_state_read_only() -> None:
    setup = PULL_REQUESTS_DOC.split("## Setting up the cloud preview", 1)[1]
    assert "read/write on the state bucket" not in setup
    assert "Stack Read" in setup  # Pulumi Cloud's read-only permission set


def test_the_selection_job_installs_pyyaml_alone_from_its_lock_entry(tmp_path: Path) -> None:
    """The stacks job takes PyYAML's entry, with every hash, out of requirements.lock."""
    script = step_named(PREVIEW, "Select the stacks")["run"].split("python -m pip", 1)[0]
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=PROJECT_DIR,
        env={"PATH": "/usr/bin:/bin", "RUNNER_TEMP": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    entry = (tmp_path / "pyyaml.lock").read_text()
    assert entry.startswith("pyyaml==") and "# via" not in entry
    assert entry.count("--hash=sha256:") >= 6 and not entry.rstrip().endswith("\\")


def test_the_cloud_preview_skips_forks_and_dependabot() -> None:
    """Neither gets the environment's secrets: a fork's run would hold nothing, and Dependabot's
    would wait for an approval and then fail (security review 2 N-6)."""
    condition = " ".join(str(load(PREVIEW)["jobs"]["stacks"]["if"]).split())
    assert "github.event.pull_request.head.repo.full_name == github.repository" in condition
    assert "github.actor != 'dependabot[bot]'" in condition
