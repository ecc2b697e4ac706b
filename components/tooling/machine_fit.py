"""For a pod no pool takes: which machine types of the pools' GPUs would.

`fit` asks this when a pod template fits no pool. For every GPU pool it resolves the same pool
again on each machine type of its accelerator in the cloud's catalog (every GPU count a GKE N1
machine can attach) and checks the pod's requests against that node's allocatable, less the
DaemonSets, as `fit` does for the real pool. Where the cloud's offerings table knows the
stack's region, a machine the region does not sell is named apart. Only the resources are
judged: labels, taints and affinity are the pool's, whatever its machine type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from components.model.catalog.gpus import MachineType
from components.model.pools import resolve_pool
from components.model.registry import cloud_of
from components.model.schema import GpuPoolConfig, StackConfig
from components.tooling.pool_views import node_template
from components.tooling.scheduling.resources import fit_reasons, pod_requests


@dataclass(frozen=True)
class MachineHint:
    """The machine types of one accelerator (for the pools that use it) that would take the
    pod, and those that would but are not sold in the stack's region."""

    accelerator: str
    pools: tuple[str, ...]
    candidates: int  # machine types (and GPU counts) tried
    fitting: tuple[str, ...]
    not_offered: tuple[str, ...]
    # None: the cloud's offerings table has no answer for the region.
    region: str | None
    region_checked: bool
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "accelerator": self.accelerator,
            "pools": list(self.pools),
            "fitting": list(self.fitting),
            "fitting_not_offered_in_region": list(self.not_offered),
            "region": self.region,
            "region_checked": self.region_checked,
            "note": self.note,
        }

    def text(self) -> str:
        who = f"{'pool' if len(self.pools) == 1 else 'pools'} {', '.join(self.pools)}"
        if self.note:
            return f"{self.accelerator} ({who}): {self.note}"
        if not self.fitting and not self.not_offered:
            return (
                f"{self.accelerator} ({who}): none of the {self.candidates} machine type "
                "choices would fit"
            )
        parts = []
        if self.fitting:
            unchecked = "" if self.region_checked else f" (sold in {self.region}: not checked)"
            parts.append(f"{', '.join(self.fitting)} would fit{unchecked}")
        else:
            parts.append("none sold in the region would fit")
        if self.not_offered:
            parts.append(f"{', '.join(self.not_offered)} would too, but not sold in {self.region}")
        return f"{self.accelerator} ({who}): {'; '.join(parts)}"


def _variants(machine: MachineType) -> list[tuple[str, int | None]]:
    """The machine as a pool can take it: once, or once per GPU count it can attach."""
    if not machine.attach_counts:
        return [(machine.name, None)]
    return [(f"{machine.name} with {n} GPU(s)", n) for n in sorted(machine.attach_counts)]


def _limits(machine: MachineType) -> str:
    if machine.spot_only:
        return " (Spot or Flex-start only)"
    if machine.reservation_only:
        return " (on demand from a reservation only)"
    return ""


def _hint(config: StackConfig, pool: GpuPoolConfig, pod_spec: Mapping[str, Any]) -> MachineHint:
    cloud = cloud_of(config)
    region = config.cluster.region
    machines = cloud.catalog.machines_for(pool.accelerator)
    if not machines:
        return MachineHint(
            pool.accelerator,
            (pool.name,),
            0,
            (),
            (),
            region,
            False,
            note=f"the {cloud.name} catalog names no machine type for it",
        )
    requested, _ = pod_requests(pod_spec)
    fitting: list[str] = []
    not_offered: list[str] = []
    checked = True
    tried = 0
    for machine in machines:
        offered = cloud.offered(machine, region) if region else None
        checked = checked and offered is not None
        for label, count in _variants(machine):
            tried += 1
            variant = pool.model_copy(
                update={"machine_type": machine.name, "machine_types": None, "gpus_per_node": count}
            )
            if fit_reasons(requested, node_template(resolve_pool(config, variant))):
                continue
            (not_offered if offered is False else fitting).append(label + _limits(machine))
    return MachineHint(
        pool.accelerator, (pool.name,), tried, tuple(fitting), tuple(not_offered), region, checked
    )


def machine_hints(config: StackConfig, pod_spec: Mapping[str, Any]) -> list[MachineHint]:
    """One hint per accelerator and answer, naming the pools it speaks for (config order)."""
    hints: list[MachineHint] = []
    for pool in config.gpu_pools:
        hint = _hint(config, pool, pod_spec)
        same = next(
            (
                i
                for i, h in enumerate(hints)
                if (h.accelerator, h.fitting, h.not_offered, h.note)
                == (hint.accelerator, hint.fitting, hint.not_offered, hint.note)
            ),
            None,
        )
        if same is None:
            hints.append(hint)
        else:
            hints[same] = replace(hints[same], pools=(*hints[same].pools, pool.name))
    return hints


def render_hints(hints: Sequence[MachineHint]) -> list[str]:
    """Lines for `fit`'s text report."""
    if not hints:
        return []
    lines = ["  machine types of the pools' GPUs whose allocatable would take it:"]
    lines += [f"    - {hint.text()}" for hint in hints]
    return lines
