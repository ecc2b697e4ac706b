"""The README's quickstart is what CI runs, and every shipped stack is documented."""

from __future__ import annotations

import re
from pathlib import Path

from components.tooling.stacks import PROJECT_DIR

README = (PROJECT_DIR / "README.md").read_text()
CI = (PROJECT_DIR / ".ci" / "run").read_text()


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    blocks = re.findall(r"```sh\n(.*?)\n```", README, flags=re.S)
    test_commands = [b for b in blocks if "pytest" in b]
    assert test_commands, "the README names a test command"
    ci_lines = [line for line in CI.splitlines() if line and not line.startswith("#")]
    assert test_commands[0] in ci_lines


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
    assert "requirements.txt" in plan[0]


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
    from components.model.schema import GpuSoftwareConfig, SamplesConfig

    # The README's reference, and the reference pages under docs/.
    reference = README.split("## Configuration reference", 1)[1] + "".join(
        page.read_text() for page in sorted((PROJECT_DIR / "docs").glob("*.md"))
    )
    keys = _leaf_keys(ClusterConfig) + _leaf_keys(GpuPoolConfig) + _leaf_keys(GpuSoftwareConfig)
    keys += ["samples." + k for k in _leaf_keys(SamplesConfig)]
    missing = [k for k in keys if f"`{k}`" not in reference]
    assert missing == []


def test_the_config_writing_example_uses_only_real_keys() -> None:
    import yaml

    from components.model.config import ConfigError, parse_config

    section = README.split("### Writing config", 1)[1].split("\n### ", 1)[0]
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
