"""The stack's `gpufleet:*` config as a running Pulumi program sees it, validated by the model."""

from __future__ import annotations

import json
from typing import Any

import pulumi
from pulumi.runtime.config import (
    CONFIG,
    get_config_env,
    get_config_secret_keys_env,
    is_config_secret,
)

from components.model.config import KNOWN_KEYS, parse_config
from components.model.config_hints import ENCRYPTED, SECRET_ONLY_KEYS
from components.model.config_namespace import stack_key_problems
from components.model.placeholders import find_placeholders, refusal
from components.model.problems import ConfigError
from components.model.schema import StackConfig


def running_under_mocks() -> bool:
    """Whether the program runs under Pulumi's mock runtime (gpufleet's offline engine, or a
    unit test's `set_mocks`) rather than a real `pulumi preview` or `pulumi up`."""
    from pulumi.runtime.mocks import MockMonitor
    from pulumi.runtime.settings import get_monitor

    return isinstance(get_monitor(), MockMonitor)


def load_from_pulumi() -> StackConfig:
    """Read and validate the stack's config inside a Pulumi program.

    Raises `pulumi.RunError` (printed without a traceback by the Pulumi CLI) on bad config, and
    on placeholders (documentation IP ranges, the examples' ids) in a real preview or up; under
    mocks they are warnings, so the examples plan offline as they are.
    """
    all_config: dict[str, Any] = {**get_config_env(), **CONFIG.get()}
    raw: dict[str, Any] = {}
    for full_key, value in all_config.items():
        namespace, _, key = full_key.partition(":")
        if namespace != "gpufleet":
            continue
        if key in SECRET_ONLY_KEYS:
            # Only whether it is set, and encrypted, matters to the checks; the value never
            # enters them. The language host lists the secret keys in PULUMI_CONFIG_SECRET_KEYS.
            secret = is_config_secret(full_key) or full_key in get_config_secret_keys_env()
            raw[key] = ENCRYPTED if secret else "[plaintext]"
            continue
        try:
            raw[key] = json.loads(value) if isinstance(value, str) else value
        except json.JSONDecodeError:
            raw[key] = value
    typos = stack_key_problems(all_config, KNOWN_KEYS)
    try:
        config = parse_config(raw)
    except ConfigError as error:
        raise pulumi.RunError(ConfigError([*typos, *error.problems]).render()) from None
    if typos:
        raise pulumi.RunError(ConfigError(typos).render())
    for warning in config.warnings:
        pulumi.log.warn(warning)
    placeholders = find_placeholders(raw)
    if placeholders and not running_under_mocks():
        raise pulumi.RunError(refusal(placeholders))
    for placeholder in placeholders:
        pulumi.log.warn(str(placeholder))
    return config
