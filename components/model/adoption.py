"""Checks of a cluster gpufleet looked up (`cluster.existing`) against the stack's config.

Each cloud's component reads its provider's get function into plain facts; the rules here and in
each cloud's `model/adopted.py` say, before any resource exists, what about the real cluster
keeps gpufleet's pools from joining it, naming the config key and what to do.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from components.model.problems import ConfigError, Problem

_MINOR = re.compile(r"^v?(\d+)\.(\d+)")


def minor_of(version: str) -> str | None:
    """ "1.36" of "1.36.2-gke.1047000", "v1.36.1" or "1.36" (None: not a version)."""
    found = _MINOR.match(version.strip())
    return f"{found.group(1)}.{found.group(2)}" if found else None


def version_problem(cluster_name: str, configured_minor: str, running: str) -> Problem | None:
    """The stack's `kubernetesVersion` must be the minor the cluster runs: pools follow the
    control plane, and gpufleet's per-minor pins (AMIs, autoscaler, chart checks) use it."""
    if minor_of(running) == configured_minor:
        return None
    return Problem(
        "cluster.kubernetesVersion",
        f"the existing cluster {cluster_name} runs Kubernetes {running}; set the minor it runs "
        f"({minor_of(running) or running}), so the GPU pools and gpufleet's pins follow it "
        "(after its owner upgrades it, update this key in the same change)",
        configured_minor,
    )


class AdoptionError(ConfigError):
    """Everything about a looked-up cluster that keeps gpufleet's GPU pools from joining it."""

    def __init__(self, cluster_name: str, problems: Sequence[Problem]) -> None:
        self.cluster_name = cluster_name
        super().__init__(problems)

    @classmethod
    def unreadable(cls, cluster_name: str, where: str, error: Exception) -> AdoptionError:
        """The lookup failed: the provider's message says why (not found, no permission)."""
        return cls(
            cluster_name,
            [
                Problem(
                    "cluster.name",
                    f"no cluster {cluster_name} could be read {where}: {error}",
                    cluster_name,
                )
            ],
        )

    def render(self) -> str:
        lines = [
            f"the existing cluster {self.cluster_name} cannot take gpufleet's GPU pools "
            f"({len(self.problems)} problem(s)):"
        ]
        lines += [f"  - {p}" for p in self.problems]
        return "\n".join(lines)
