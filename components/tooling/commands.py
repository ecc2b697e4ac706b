"""What every command of `python -m components` shares: reading a validated stack, picking pools.

Commands raise `BadInput`; `components.tooling.cli.main` prints its message and exits with status 2,
so no command repeats that plumbing and none prints a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from components.model.config import KNOWN_KEYS, ConfigError, StackConfig, parse_config
from components.model.config_hints import ENCRYPTED, SECRET_ONLY_KEYS
from components.model.config_namespace import stack_key_problems
from components.model.placeholders import find_placeholders
from components.model.pools import PoolSpec
from components.model.problems import Problem
from components.model.production import unprotected_warning
from components.model.registry import cloud_of
from components.tooling.stack_yaml import StackFileError
from components.tooling.stacks import StackFile, load_stack

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class BadInput(Exception):
    """Input a command cannot use (stack, config, manifest, pool name): exit status 2."""


def load_validated(ref: str, *, name_placeholders: bool = False) -> tuple[StackFile, StackConfig]:
    """The stack file and its validated config; config warnings go to stderr, and with
    `name_placeholders` (`plan`) one warning per placeholder the user must fill in."""
    try:
        stack = load_stack(ref)
    except StackFileError as error:
        raise BadInput(f"error: {error}") from None
    typos = stack_key_problems(stack.config, KNOWN_KEYS)
    if not stack.gpufleet:
        missing = Problem(
            "gpufleet:cloud",
            "the file sets no gpufleet:* key; under `config:` write gpufleet:cloud, "
            "gpufleet:cluster and gpufleet:gpuPools",
            has_value=False,
        )
        raise BadInput(f"{stack.path}: {ConfigError([*typos, missing]).render()}")
    raw: dict[str, object] = dict(stack.gpufleet)
    for key in SECRET_ONLY_KEYS:
        if f"gpufleet:{key}" in stack.secret_keys:
            raw[key] = ENCRYPTED  # unreadable offline; only that it is set, encrypted, matters
    try:
        config = parse_config(raw)
    except ConfigError as error:
        raise BadInput(f"{stack.path}: {ConfigError([*typos, *error.problems]).render()}") from None
    if typos:
        raise BadInput(f"{stack.path}: {ConfigError(typos).render()}")
    for warning in config.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    unprotected = unprotected_warning(stack.name, cloud_of(config), config)
    if unprotected is not None and name_placeholders:
        print(f"warning: {unprotected}", file=sys.stderr)
    for placeholder in find_placeholders(stack.gpufleet) if name_placeholders else ():
        print(
            f"warning: {placeholder}; a real `pulumi preview` or `pulumi up` refuses this stack "
            "until then",
            file=sys.stderr,
        )
    return stack, config


def config_warnings(stack: StackFile, config: StackConfig) -> set[str]:
    """The warnings `load_validated` prints for a stack (its config's and its placeholders'),
    as the program logs them too: a command that also shows the program's prints the rest."""
    return {*config.warnings, *(str(p) for p in find_placeholders(stack.gpufleet))}


def select_gpu_pools(
    pools: Sequence[PoolSpec], names: Sequence[str] | None, stack: str
) -> list[PoolSpec]:
    """The GPU pools named by repeated `--pool` options (all when none), in the order given."""
    gpu_pools = {pool.name: pool for pool in pools if pool.kind == "gpu"}
    if not gpu_pools:
        raise BadInput(f"error: stack {stack} has no GPU pools")
    if not names:
        return list(gpu_pools.values())
    unknown = [name for name in names if name not in gpu_pools]
    if unknown:
        known = ", ".join(gpu_pools)
        raise BadInput(f"error: no GPU pool {', '.join(unknown)} in {stack} (pools: {known})")
    return [gpu_pools[name] for name in dict.fromkeys(names)]
