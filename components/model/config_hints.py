"""Config mistakes whose fix is not obvious from the rule alone: each problem says what to do.

A nested key written on one line (`gpufleet:cluster.protect: true`), a kubeconfig on a stack whose
cluster gpufleet reaches by itself, and another cloud's machine type for the system pool.
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
    """`gpufleet:kubeconfig` is how a `cloud: existing` stack reaches its cluster; elsewhere
    gpufleet builds the kubeconfig from the cluster it creates or adopts, so one set by hand is
    never used."""
    if KUBECONFIG_KEY not in raw or cloud.reads_kubeconfig:
        return None
    return Problem(
        KUBECONFIG_KEY,
        f"is used only on `cloud: existing`; on {cloud.name} gpufleet builds the kubeconfig "
        "from the cluster it creates or adopts (with your cloud credentials), so this one "
        f"would be ignored: remove it (`pulumi config rm gpufleet:{KUBECONFIG_KEY}`)",
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
