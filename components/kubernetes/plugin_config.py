"""The NVIDIA device plugin's per-node configs: time-slicing, MPS and MIG strategy per pool.

The plugin (standalone chart `config.map` or the operator's `devicePlugin.config.data`) holds
one named config document per entry; each node picks its entry by its
`nvidia.com/device-plugin.config` label, which shared pools carry with the pool's name
(`pools.py`). Nodes without the label use the `default` entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import yaml

from components.model.pool_spec import PLUGIN_FAILS_REQUESTS_GREATER_THAN_ONE
from components.model.pools import DEVICE_PLUGIN_CONFIG_LABEL, GPU_RESOURCE, PoolSpec

DEFAULT_ENTRY = "default"
MigStrategy = Literal["none", "single"]


def entry_document(pool: PoolSpec | None, default_mig_strategy: MigStrategy) -> dict[str, Any]:
    """The config document for one pool's nodes (None: the default entry)."""
    if pool is not None and pool.mig_partition_size:
        # The pool's GPUs are already partitioned (AKS gpuInstanceProfile, or by the operator's
        # MIG manager); `single` advertises each slice as one nvidia.com/gpu.
        return {"version": "v1", "flags": {"migStrategy": "single"}}
    document: dict[str, Any] = {"version": "v1", "flags": {"migStrategy": default_mig_strategy}}
    if pool is None or not pool.sharing_strategy or not pool.max_shared_clients_per_gpu:
        return document
    strategy = "mps" if pool.sharing_strategy == "mps" else "timeSlicing"
    document["sharing"] = {
        strategy: {
            # Keep the resource name nvidia.com/gpu so pods and the gpuPools output agree.
            "renameByDefault": False,
            # A shared slot is not more GPU: a pod asking for 2 would get two slices of one GPU.
            "failRequestsGreaterThanOne": PLUGIN_FAILS_REQUESTS_GREATER_THAN_ONE,
            "resources": [{"name": GPU_RESOURCE, "replicas": pool.max_shared_clients_per_gpu}],
        }
    }
    return document


def config_entries(pools: Sequence[PoolSpec], default_mig_strategy: MigStrategy) -> dict[str, str]:
    """Entry name -> YAML document, for every pool that selects its own config, plus `default`.

    Empty when no pool selects a config: the plugin then runs with its built-in defaults.
    """
    selecting = [p for p in pools if p.declared_labels.get(DEVICE_PLUGIN_CONFIG_LABEL)]
    if not selecting:
        return {}
    entries = {DEFAULT_ENTRY: _dump(entry_document(None, default_mig_strategy))}
    for pool in selecting:
        name = pool.declared_labels[DEVICE_PLUGIN_CONFIG_LABEL]
        entries[name] = _dump(entry_document(pool, default_mig_strategy))
    return entries


def _dump(document: dict[str, Any]) -> str:
    return yaml.safe_dump(document, sort_keys=False)
