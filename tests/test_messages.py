"""Messages that say what to do: outside the virtual environment, a nested key written flat, an
unreadable YAML file, a kubeconfig a cloud stack never uses or one in plaintext, another cloud's
machine type for the system pool."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pulumi
import pytest

from components.model.config import ConfigError, parse_config
from components.model.config_hints import ENCRYPTED
from components.model.registry import CLOUDS
from components.tooling.cli import main
from components.tooling.commands import BadInput
from components.tooling.engine import plan_stack
from components.tooling.stacks import PROJECT_DIR, load_stack


def problems(raw: dict[str, Any]) -> list[str]:
    try:
        parse_config(raw)
    except ConfigError as error:
        return [str(p) for p in error.problems]
    return []


def test_outside_the_virtualenv_it_says_how_to_create_and_use_it() -> None:
    # -S: no site-packages, as with a system Python that never had requirements.txt installed.
    result = subprocess.run(
        [sys.executable, "-S", "-m", "components", "plan", "gcp-dev"],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "No module named" in result.stderr
    assert (
        "  python3 -m venv .venv && .venv/bin/pip install -q --require-hashes -r requirements.lock\n"
        in result.stderr
    )
    assert "  .venv/bin/python -m components plan gcp-dev\n" in result.stderr
    # The same virtualenv and install as the README's quickstart.
    readme = (PROJECT_DIR / "README.md").read_text()
    assert (
        "python3 -m venv .venv && .venv/bin/pip install -q --require-hashes -r requirements.lock"
        in readme
    )


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        (
            "cluster.protect",
            True,
            "write `protect: true` under `gpufleet:cluster:` in the stack file, or set it with "
            "`pulumi config set --path 'gpufleet:cluster.protect' true`",
        ),
        (
            "gpuPools[0].maxNodes",
            "4",
            "write `maxNodes: 4` under `gpufleet:gpuPools:` > its item 0 in the stack file",
        ),
        ("cluster.gcp.project", "p", "write `project: p` under `gpufleet:cluster:` > `gcp:`"),
    ],
)
def test_a_nested_key_written_flat_says_how_to_nest_it(key: str, value: Any, said: str) -> None:
    raw = {**load_stack("gcp-dev").gpufleet, key: value}
    (found,) = [p for p in problems(raw) if p.startswith(f"{key}:")]
    assert "is not read as nested" in found and said in found
    assert "unknown config key" not in found
    # A key that is not gpufleet's at all stays an unknown key.
    (typo,) = [p for p in problems({**raw, "clutser.protect": True}) if p.startswith("clutser")]
    assert "unknown config key" in typo


@pytest.mark.parametrize("stack", ["gcp-dev", "aws-dev", "azure-dev", "gcp-existing"])
def test_a_kubeconfig_on_a_cloud_stack_is_refused_with_what_to_do(stack: str) -> None:
    raw = {**load_stack(stack).gpufleet, "kubeconfig": "apiVersion: v1"}
    (found,) = problems(raw)
    assert found.startswith("kubeconfig: is used only on `cloud: existing`")
    assert "remove it (`pulumi config rm gpufleet:kubeconfig`)" in found
    assert "apiVersion" not in found  # a secret is never echoed
    assert "rotate the credentials" in found  # it was in plaintext
    assert problems({**load_stack("existing-dev").gpufleet, "kubeconfig": ENCRYPTED}) == []


STATIC_TOKEN = "s3cr3t-static-token"
PLAINTEXT_KUBECONFIG = (
    "  gpufleet:kubeconfig: |\n    apiVersion: v1\n    kind: Config\n    users:\n"
    f"    - name: admin\n      user: {{token: {STATIC_TOKEN}}}\n"
)


def existing_stack(tmp_path: Path, kubeconfig: str) -> Path:
    path = tmp_path / "Pulumi.lab.yaml"
    path.write_text((PROJECT_DIR / "stacks" / "Pulumi.existing-dev.yaml").read_text() + kubeconfig)
    return path


def test_a_plaintext_kubeconfig_is_refused_with_the_command_that_encrypts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review security-1 SEC-5: static cluster credentials committed with the stack file."""
    assert main(["plan", str(existing_stack(tmp_path, PLAINTEXT_KUBECONFIG))]) == 2
    err = capsys.readouterr().err
    assert "kubeconfig: is stored in plaintext (not under `secure:`)" in err
    assert 'pulumi config set --secret gpufleet:kubeconfig "$(cat path/to/kubeconfig)"' in err
    assert STATIC_TOKEN not in err and "Traceback" not in err
    # Encrypted, the same stack plans.
    secure = "  gpufleet:kubeconfig:\n    secure: AAABAGpvmQ==\n"
    assert main(["plan", str(existing_stack(tmp_path, secure))]) == 0


def test_the_program_refuses_a_plaintext_kubeconfig_too(tmp_path: Path) -> None:
    """`pulumi preview`/`up` run the program, not `plan`: it asks the engine which keys are
    secret, and a plaintext one stops it before anything is created."""
    with pytest.raises(BadInput, match="kubeconfig: is stored in plaintext") as refused:
        plan_stack(load_stack(str(existing_stack(tmp_path, PLAINTEXT_KUBECONFIG))))
    assert STATIC_TOKEN not in str(refused.value)


def test_the_program_takes_a_kubeconfig_the_engine_says_is_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Pulumi language host lists secret keys in PULUMI_CONFIG_SECRET_KEYS."""
    from pulumi.runtime.config import set_all_config

    from components.pulumi_config import load_from_pulumi

    stack = load_stack("existing-dev")
    config = {key: json.dumps(value) for key, value in stack.config.items()}
    set_all_config({**config, "gpufleet:kubeconfig": "apiVersion: v1"}, secret_keys=[])
    try:
        monkeypatch.setenv("PULUMI_CONFIG_SECRET_KEYS", '["gpufleet:kubeconfig"]')
        assert load_from_pulumi().cloud == "existing"
        monkeypatch.setenv("PULUMI_CONFIG_SECRET_KEYS", "[]")
        with pytest.raises(pulumi.RunError, match="stored in plaintext"):
            load_from_pulumi()
    finally:
        set_all_config({}, secret_keys=[])


def test_a_secret_kubeconfig_is_refused_offline_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (PROJECT_DIR / "stacks" / "Pulumi.gcp-dev.yaml").read_text()
    path = tmp_path / "Pulumi.mine.yaml"
    path.write_text(text + "  gpufleet:kubeconfig:\n    secure: AAABAGpvmQ==\n")
    assert main(["fit", str(path), str(PROJECT_DIR / "tests/fixtures/fit/gke-gpu-pod.yaml")]) == 2
    assert "kubeconfig: is used only on `cloud: existing`" in capsys.readouterr().err


# Machine types each cloud names its own way, and the cloud they belong to.
MACHINES = {
    "gcp": [
        "e2-standard-4",
        "e2-medium",
        "n2-highmem-8",
        "n2-custom-4-16384",
        "c3-standard-4-lssd",
    ],
    "aws": ["m6i.large", "m7i-flex.xlarge", "c7i.metal-24xl", "t3.medium", "m5.24xlarge"],
    "azure": ["Standard_D4s_v5", "Standard_E8-4ds_v5", "Standard_D2as_v4"],
}


@pytest.mark.parametrize("cloud", sorted(MACHINES))
def test_the_system_pool_takes_only_its_own_clouds_machine_names(cloud: str) -> None:
    stack = {"gcp": "gcp-dev", "aws": "aws-dev", "azure": "azure-dev"}[cloud]
    base = load_stack(stack).gpufleet
    for owner, machines in MACHINES.items():
        for machine in machines:
            raw = copy.deepcopy(dict(base))
            raw["cluster"]["systemPool"]["machineType"] = machine
            found = [p for p in problems(raw) if p.startswith("cluster.systemPool.machineType")]
            if owner == cloud:
                assert found == [], machine
                continue
            (message,) = found
            assert f"not a machine type of {cloud}; it looks like a {owner} machine type" in message
            assert f"(default {CLOUDS[cloud].default_system_machine})" in message  # type: ignore[attr-defined]


def test_every_clouds_default_system_machine_follows_its_own_rule() -> None:
    from components.model.managed_cloud import ManagedCloud

    managed = [c for c in CLOUDS.values() if isinstance(c, ManagedCloud)]
    assert len(managed) == 3
    for cloud in managed:
        assert cloud.machine_name_rule.accepts(cloud.default_system_machine)
        for shape in cloud.system_machine_shapes:
            assert cloud.machine_name_rule.accepts(shape), shape
        for other in managed:
            if other is not cloud:
                assert not other.machine_name_rule.accepts(cloud.default_system_machine)


def test_yaml_errors_name_the_file_and_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "Pulumi.broken.yaml"
    path.write_text("config:\n  gpufleet:cloud: gcp\n   gpufleet:cluster: {}\n")
    assert main(["plan", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot read {path}: not valid YAML at line 3, column ")
    assert "<unicode string>" not in err and "Traceback" not in err


def test_the_policy_config_script_names_an_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.broken.yaml"
    path.write_text("config:\n  gpufleet:cloud: [\n")
    for target in (path, tmp_path / "Pulumi.absent.yaml"):
        result = subprocess.run(
            [sys.executable, str(PROJECT_DIR / "policy" / "pack_config.py"), str(target)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2
        assert result.stderr.startswith(f"error: cannot read {target}: ")
        assert "Traceback" not in result.stderr


def test_the_help_documents_gpufleet_debug(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "GPUFLEET_DEBUG=1 in the environment shows its traceback" in capsys.readouterr().out
