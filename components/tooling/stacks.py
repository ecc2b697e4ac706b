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


# The example stacks gpufleet ships in stacks/, by name: the one list of them. Tests about the
# examples (snapshots, the README's table, expected verdicts) name these; `stacks/` also holds
# the user's own stacks, which tests check only for what every valid stack has.
EXAMPLE_STACKS: tuple[str, ...] = (
    "aws-auto-mode",
    "aws-dev",
    "aws-efa",
    "aws-existing",
    "aws-karpenter",
    "aws-reserved",
    "aws-training",
    "azure-a100-mig",
    "azure-dev",
    "azure-existing",
    "azure-infiniband",
    "azure-nap",
    "azure-reserved",
    "existing-dev",
    "gcp-a100-mig",
    "gcp-compute-class",
    "gcp-dev",
    "gcp-existing",
    "gcp-flex-start",
    "gcp-gpudirect",
)


def shipped_stacks() -> list[str]:
    """Names of the example stacks gpufleet ships (EXAMPLE_STACKS), sorted."""
    return sorted(EXAMPLE_STACKS)


def all_stacks() -> list[str]:
    """Names of every stack file in stacks/ (the examples and the user's own), sorted."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in STACKS_DIR.glob("Pulumi.*.yaml"))


def user_stacks() -> list[str]:
    """Names of the stacks in stacks/ that are not gpufleet's examples, sorted."""
    return [name for name in all_stacks() if name not in EXAMPLE_STACKS]


def known_stacks_note() -> str:
    """The stacks in stacks/, the user's own apart from the examples (for messages)."""
    examples = [name for name in all_stacks() if name in EXAMPLE_STACKS]
    yours = user_stacks()
    parts = [f"your stacks: {', '.join(yours) if yours else 'none yet'}"]
    if examples:
        parts.append(f"examples: {', '.join(examples)}")
    return "; ".join(parts)


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
        raise StackNotFound(
            f"no stack config at {path} ({known_stacks_note()}); "
            "`python -m components new --help` writes a new one"
        )
    config = read_stack_yaml(path)
    secret_keys = frozenset(
        key for key, value in config.items() if isinstance(value, dict) and "secure" in value
    )
    return StackFile(name=name, path=path, config=config, secret_keys=secret_keys)
