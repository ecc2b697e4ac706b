"""The cluster autoscaler's priority expander on AKS: which GPU pool to grow first.

With `cluster.azure.autoscalerExpander: priority` AKS's autoscaler reads its priorities from
the ConfigMap `cluster-autoscaler-priority-expander` in kube-system, and without one it has
nothing to rank by (learn.microsoft.com/azure/aks/cluster-autoscaler-overview: the ConfigMap
and its `priorities` of regexes over node group names; review aks.md N3). gpufleet writes it:
a pending pod that fits several pools gets a Spot pool first, and an on-demand pool when Azure
has no Spot capacity (the autoscaler then tries the next priority). Node groups are the pools'
scale sets, named `aks-<pool>-<number>-vmss`, so a pool is matched by `-<pool>-`.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.model.pools import PoolSpec

CONFIG_MAP = "cluster-autoscaler-priority-expander"
NAMESPACE = "kube-system"
SPOT_PRIORITY = 20
ON_DEMAND_PRIORITY = 10


def priorities(pools: Sequence[PoolSpec]) -> str:
    """The ConfigMap's `priorities` value: higher numbers are grown first."""
    ranked: dict[int, list[str]] = {}
    for pool in pools:
        priority = SPOT_PRIORITY if pool.spot else ON_DEMAND_PRIORITY
        ranked.setdefault(priority, []).append(f".*-{pool.name}-.*")
    lines = []
    for priority in sorted(ranked, reverse=True):
        lines.append(f"{priority}:")
        lines += [f"  - {pattern}" for pattern in ranked[priority]]
    return "\n".join(lines) + "\n"
