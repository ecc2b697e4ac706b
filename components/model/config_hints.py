"""Config mistakes whose fix is not obvious from the rule alone: each problem says what to do.

A nested key written on one line (`gpufleet:cluster.protect: true`), a kubeconfig on a stack whose
cluster gpufleet reaches by itself or written in plaintext, and another cloud's machine type for
the system pool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from components.model.cloud import Cloud
from components.model.managed_cloud import ManagedCloud
from components.model.problems import Problem
from components.model.schema import ClusterConfig

KUBECONFIG_KEY = "kubeconfig"
# Keys that hold credentials: Pulumi must keep them encrypted (`pulumi config set --secret`,
# `secure:` in the stack file), never as plaintext committed with the stack file.
SECRET_ONLY_KEYS = (KUBECONFIG_KEY,)


class Encrypted:
    """A config value Pulumi keeps encrypted (`secure:` in the stack file): what callers put in
    place of it, since only whether it is set, and encrypted, matters to the checks."""

    def __repr__(self) -> str:
        return "[secret]"


ENCRYPTED = Encrypted()


def _yaml(value: Any) -> str:
    """A value as it would be written in the stack file."""
    return value if isinstance(value, str) else json.dumps(value)


def flat_key_problem(key: str, value: Any, known: tuple[str, ...]) -> Problem | None:
    """`cluster.protect` or `gpuPools[0].maxNodes` as one key: YAML and Pulumi do not read dots
    as nesting (`pulumi config set` without `--path` writes such keys)."""
    head = re.split(r"[.\[]", key, maxsplit=1)[0]
    if head == key or head not in known:
        return None
    rest = key[len(head) :]
    index = re.match(r"\[(\d+)\]\.?", rest)
    parts = (rest[index.end() :] if index else rest.lstrip(".")).split(".")
    sections = [f"`gpufleet:{head}:`"]
    if index:
        sections.append(f"its item {index.group(1)}")
    sections += [f"`{part}:`" for part in parts[:-1]]
    where = " > ".join(sections)
    nested = f"{parts[-1]}: {_yaml(value)}"
    return Problem(
        key,
        f"a nested key written on one line is not read as nested (the key is `gpufleet:{key}`); "
        f"write `{nested}` under {where} in the stack file, or set it with "
        f"`pulumi config set --path 'gpufleet:{key}' {_yaml(value)}`",
        has_value=False,
    )


def kubeconfig_problem(raw: Mapping[str, Any], cloud: Cloud) -> Problem | None:
    """`gpufleet:kubeconfig` is how a `cloud: existing` stack reaches its cluster, and only
    encrypted (review security-1 SEC-5: in plaintext, the cluster credentials it holds are
    committed to git and shown in pull requests); elsewhere gpufleet builds the kubeconfig from
    the cluster it creates or adopts, so one set by hand is never used. The value is never
    echoed."""
    if KUBECONFIG_KEY not in raw:
        return None
    plaintext = not isinstance(raw[KUBECONFIG_KEY], Encrypted)
    exposed = (
        "; it is in plaintext, so also rotate the credentials it holds (git history keeps them)"
        if plaintext
        else ""
    )
    if not cloud.reads_kubeconfig:
        return Problem(
            KUBECONFIG_KEY,
            f"is used only on `cloud: existing`; on {cloud.name} gpufleet builds the kubeconfig "
            "from the cluster it creates or adopts (with your cloud credentials), so this one "
            f"would be ignored: remove it (`pulumi config rm gpufleet:{KUBECONFIG_KEY}`){exposed}",
            has_value=False,
        )
    if not plaintext:
        return None
    return Problem(
        KUBECONFIG_KEY,
        "is stored in plaintext (not under `secure:`), so the cluster credentials it holds are "
        "committed with the stack file and shown in pull requests; store it encrypted with "
        f'`pulumi config set --secret gpufleet:{KUBECONFIG_KEY} "$(cat path/to/kubeconfig)"` '
        "(which replaces the plaintext with a `secure:` value), then rotate the credentials "
        "this copy exposed (git history keeps them)",
        has_value=False,
    )


def system_machine_problems(
    cloud: Cloud, cluster: ClusterConfig, clouds: Mapping[str, Cloud]
) -> list[Problem]:
    """The system pool's machine type must be named as this cloud names its machines: a GCE
    type on EKS (or an EC2 type on AKS) fails only when the cloud is asked for it."""
    machine = cluster.system_pool.machine_type
    if not isinstance(cloud, ManagedCloud) or machine is None or cloud.adopted(cluster):
        return []
    rule = cloud.machine_name_rule
    if rule.accepts(machine):
        return []
    others = [
        other.name
        for other in clouds.values()
        if isinstance(other, ManagedCloud)
        and other is not cloud
        and other.machine_name_rule.accepts(machine)
    ]
    looks = f"it looks like a {', '.join(others)} machine type; " if others else ""
    return [
        Problem(
            "cluster.systemPool.machineType",
            f"not a machine type of {cloud.name}; {looks}the system pool needs {rule.rule} "
            f"(default {cloud.default_system_machine})",
            machine,
        )
    ]
