"""What one catalogued machine type asks of the pool that names it: a minimum Kubernetes minor
and the GPU counts it can attach (how a machine is sold, e.g. GKE's Spot- or reservation-only
machines, is its cloud's capacity rule: `Cloud.check_pool`)."""

from __future__ import annotations

from components.model.catalog.gpus import MachineType
from components.model.problems import Problem
from components.model.schema import GpuPoolConfig


def _minor(version: str) -> int:
    """The minor of a "1.34"-style version (0 when it is not one; the version check says so)."""
    _, _, minor = version.partition(".")
    return int(minor) if minor.isdigit() else 0


def machine_problems(
    machine: MachineType,
    pool: GpuPoolConfig,
    kubernetes_version: str,
    cloud: str,
    *,
    where: str,
    path: str,
    defaulted: bool,
) -> list[Problem]:
    """The problems of ``pool`` running on ``machine`` on ``cloud``; ``where`` is the key that names the
    machine (``defaulted``: none does, the catalog's default was taken)."""
    problems: list[Problem] = []
    name = machine.name
    if machine.min_kubernetes and _minor(kubernetes_version) < _minor(machine.min_kubernetes):
        problems.append(
            Problem(
                f"{path}.accelerator" if defaulted else where,
                f"{name} nodes need Kubernetes {machine.min_kubernetes} or later on {cloud}; "
                f"cluster.kubernetesVersion is {kubernetes_version}",
                pool.accelerator if defaulted else name,
            )
        )
    default_note = " (the default machineType)" if defaulted else ""
    if machine.attach_counts:
        count = pool.gpus_per_node or 1
        if count not in machine.attach_counts:
            counts = ", ".join(str(c) for c in machine.attach_counts)
            problems.append(
                Problem(
                    f"{path}.gpusPerNode",
                    f"{name}{default_note} takes {counts} attached {pool.accelerator} GPU(s)",
                    count,
                    is_default=pool.gpus_per_node is None,
                )
            )
    elif pool.gpus_per_node is not None and pool.gpus_per_node != machine.gpus:
        problems.append(
            Problem(
                f"{path}.gpusPerNode",
                f"{name}{default_note} always has {machine.gpus} GPU(s); leave gpusPerNode "
                f"unset or set {machine.gpus}",
                pool.gpus_per_node,
            )
        )
    return problems
