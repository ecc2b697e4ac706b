"""Finding stack config files (`stacks/Pulumi.<stack>.yaml`); `stack_yaml` reads them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.tooling.stack_yaml import StackFileError, read_stack_yaml

PROJECT = "gpufleet"
PROJECT_DIR = Path(__file__).resolve().parents[2]
STACKS_DIR = PROJECT_DIR / "stacks"
PROGRAM = PROJECT_DIR / "__main__.py"


class StackNotFound(StackFileError):
    """A stack name or path that names no stack config file."""


@dataclass(frozen=True)
class StackFile:
    name: str
    path: Path
    # Every config key of the file ("gpufleet:cluster", "gcp:project", ...), values as parsed.
    config: dict[str, Any]
    # Keys whose value is an encrypted `secure:` blob (unreadable offline).
    secret_keys: frozenset[str]

    @property
    def gpufleet(self) -> dict[str, Any]:
        """The `gpufleet:` keys with the prefix stripped, as `parse_config` takes them."""
        prefix = f"{PROJECT}:"
        return {
            key[len(prefix) :]: value
            for key, value in self.config.items()
            if key.startswith(prefix) and key not in self.secret_keys
        }


def shipped_stacks() -> list[str]:
    """Names of the example stacks in stacks/, sorted."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in STACKS_DIR.glob("Pulumi.*.yaml"))


def load_stack(ref: str) -> StackFile:
    """A stack by name (stacks/Pulumi.<name>.yaml) or by path to a stack config YAML file."""
    candidate = Path(ref)
    if candidate.suffix in (".yaml", ".yml") or "/" in ref:
        path = candidate
        name = candidate.name
        if name.startswith("Pulumi.") and name.endswith((".yaml", ".yml")):
            name = name[len("Pulumi.") :].rsplit(".", 1)[0]
        else:
            name = candidate.stem
    else:
        path = STACKS_DIR / f"Pulumi.{ref}.yaml"
        name = ref
    if not path.is_file():
        known = ", ".join(shipped_stacks()) or "none"
        raise StackNotFound(f"no stack config at {path} (shipped stacks: {known})")
    config = read_stack_yaml(path)
    secret_keys = frozenset(
        key for key, value in config.items() if isinstance(value, dict) and "secure" in value
    )
    return StackFile(name=name, path=path, config=config, secret_keys=secret_keys)
