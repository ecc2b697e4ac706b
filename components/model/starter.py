"""A new stack's config from a few choices: what `python -m components new` writes.

The choices are the ones a newcomer can answer (cloud, region, GPU, Spot, provisioner, an
existing cluster, the ids of their account); everything else keeps gpufleet's defaults. Each
cloud turns them into its own sections (`Cloud.starter`, in `components/<cloud>/model/
starter.py`); values the user did not give that only they know (their API ranges, their project
id) are written as placeholders, which `plan` names and a real preview refuses until filled in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from components.model.schema import ClusterConfig

# Written where the user gave no value of their own (components/model/placeholders.py knows them).
PLACEHOLDER_CIDR = "203.0.113.0/24"
PLACEHOLDER_PROJECT = "gpufleet-dev-project"
DEFAULT_MAX_NODES = 2
DEFAULT_KUBERNETES_VERSION: str = ClusterConfig.model_fields["kubernetes_version"].default


@dataclass(frozen=True)
class StarterChoices:
    """What the user chose; None (or empty) where they left it to gpufleet."""

    name: str
    region: str | None = None
    gpu: str | None = None
    spot: bool = False
    max_nodes: int = DEFAULT_MAX_NODES
    zones: tuple[str, ...] = ()
    kubernetes_version: str | None = None
    # Adopt this cluster instead of creating one (cluster.existing).
    existing_cluster: str | None = None
    provisioner: str | None = None
    project: str | None = None
    resource_group: str | None = None
    # azure: the subscription the cluster is (or goes) in.
    subscription: str | None = None
    api_cidrs: tuple[str, ...] = ()
    # cloud existing: a label the GPU nodes already carry, and the kubeconfig context.
    node_label: str | None = None
    context: str | None = None

    def given(self) -> set[str]:
        """The choices that differ from their defaults."""
        defaults = StarterChoices(name=self.name)
        return {
            f.name
            for f in fields(self)
            if f.name != "name" and getattr(self, f.name) != getattr(defaults, f.name)
        }


# How each choice is spelled on the command line (for messages).
OPTION = {
    "region": "--region",
    "gpu": "--gpu",
    "spot": "--spot",
    "max_nodes": "--max-nodes",
    "zones": "--zones",
    "kubernetes_version": "--kubernetes-version",
    "existing_cluster": "--existing-cluster",
    "provisioner": "--provisioner",
    "project": "--project",
    "resource_group": "--resource-group",
    "subscription": "--subscription",
    "api_cidrs": "--api-cidr",
    "node_label": "--node-label",
    "context": "--context",
}


class StarterError(Exception):
    """Choices a new stack cannot be written from; each problem names the option."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class Starter:
    """A new stack's `gpufleet:` keys (prefix stripped) and a note per choice made for the user."""

    config: Mapping[str, Any]
    notes: tuple[str, ...] = ()


def pool_name(gpu: str, spot: bool, accepts: Callable[[str], bool]) -> str:
    """`l4`, `l4-spot`; `l4spot` where the cloud's pool names take no dash (AKS)."""
    name = f"{gpu}-spot" if spot else gpu
    for candidate in (name, re.sub(r"[^a-z0-9]", "", name), "gpuspot" if spot else "gpu"):
        if accepts(candidate):
            return candidate
    return "gpu"


def gpu_pool(
    choices: StarterChoices, gpu: str, accepts: Callable[[str], bool], **fields_: Any
) -> dict[str, Any]:
    """One GPU pool of the chosen GPU that scales to zero (`accepts`: the cloud's pool names)."""
    pool: dict[str, Any] = {"name": pool_name(gpu, choices.spot, accepts), "accelerator": gpu}
    pool.update(fields_)
    pool.update({"minNodes": 0, "maxNodes": choices.max_nodes})
    if choices.spot:
        pool["spot"] = True
    return pool


def stack_config(
    cloud: str, cluster: dict[str, Any], pools: list[dict[str, Any]]
) -> dict[str, Any]:
    """The whole `gpufleet:` config of a new stack, in the order a reader wants it."""
    return {
        "cloud": cloud,
        "cluster": cluster,
        "gpuPools": pools,
        "gpuSoftware": {"mode": "auto"},
        "samples": {"enabled": False},
    }


def unused(choices: StarterChoices, reads: frozenset[str], cloud: str) -> list[str]:
    """A problem for every choice this cloud does not read (never ignored silently)."""
    return [
        f"{OPTION[name]}: does not apply to --cloud {cloud}"
        for name in sorted(choices.given() - reads)
    ]
