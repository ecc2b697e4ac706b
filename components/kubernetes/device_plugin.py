"""NVIDIA's device plugin (`nvidia-device-plugin` chart) placed on exactly the GPU pools.

The chart's default affinity selects NFD's `pci-10de` label or `nvidia.com/gpu.present`. NFD is
not installed, and only EKS's AL2023 nodes carry the second (nodeadm sets it from 1.35), so it
would miss every other pool: we replace it with one node-affinity term per GPU pool on the
pool's own labels, and tolerate every taint of every GPU pool (e.g. AKS `sku=gpu` and the spot
taint, which the chart's defaults do not).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.kubernetes import plugin_config, targeting
from components.kubernetes.helm import pinned_release
from components.model.catalog import charts
from components.model.pools import PoolSpec

PIN = charts.NVIDIA_DEVICE_PLUGIN
RELEASE_NAME = "nvidia-device-plugin"
# The chart's own default tolerations, kept so behaviour on untainted GPU nodes is unchanged.
CHART_TOLERATIONS = (
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
)


def values(pools: Sequence[PoolSpec]) -> dict[str, Any]:
    """Our values for the chart, given the GPU pools it must run on (non-empty)."""
    result: dict[str, Any] = {
        "affinity": targeting.node_affinity(pools),
        "tolerations": targeting.tolerations(pools, CHART_TOLERATIONS),
    }
    entries = plugin_config.config_entries(pools, default_mig_strategy="none")
    if entries:
        result["config"] = {"map": entries, "default": plugin_config.DEFAULT_ENTRY}
    return result


def release(
    name: str,
    pools: Sequence[PoolSpec],
    namespace: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
) -> k8s.helm.v3.Release:
    """The chart as a real Helm release in its own namespace."""
    return pinned_release(name, PIN, RELEASE_NAME, namespace, values(pools), opts)
