"""How the GPU software reaches exactly the GPU pools: node affinity and tolerations from PoolSpecs.

Everything here derives from the resolved pools, the same data the `gpuPools` output and the
sample workloads use, so the DaemonSets, the samples and the docs never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from components.model.pools import DEVICE_PLUGIN_CONFIG_LABEL, MIG_CONFIG_LABEL, PoolSpec

# Labels that choose a configuration on a node, not which pool it belongs to: the plugin must
# still run (with its default config) on a node of an existing cluster that lacks them.
_CONFIG_LABELS = (DEVICE_PLUGIN_CONFIG_LABEL, MIG_CONFIG_LABEL)


def nvidia_pools(pools: Sequence[PoolSpec]) -> list[PoolSpec]:
    """The GPU pools whose nodes need NVIDIA's device plugin (or operator) from us."""
    return [p for p in pools if p.kind == "gpu" and not p.own_device_plugin]


def pool_selector(pool: PoolSpec) -> dict[str, str]:
    """The labels that identify the pool's nodes (its podScheduling selector, config labels aside)."""
    selector: Mapping[str, str] = pool.pod_scheduling["nodeSelector"]
    return {k: v for k, v in sorted(selector.items()) if k not in _CONFIG_LABELS}


def node_affinity(pools: Sequence[PoolSpec]) -> dict[str, Any]:
    """Required node affinity matching any node of `pools` (one OR-ed term per pool)."""
    terms = [
        {
            "matchExpressions": [
                {"key": key, "operator": "In", "values": [value]}
                for key, value in pool_selector(pool).items()
            ]
        }
        for pool in pools
    ]
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    }


def tolerations(
    pools: Iterable[PoolSpec], base: Iterable[Mapping[str, str]] = ()
) -> list[dict[str, str]]:
    """`base` plus a toleration for every taint of every pool, without duplicates, in order."""
    result: list[dict[str, str]] = []
    for toleration in [*base, *(t.toleration() for p in pools for t in p.node_taints)]:
        entry = dict(toleration)
        if entry not in result:
            result.append(entry)
    return result
