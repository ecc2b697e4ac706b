"""The standalone DCGM exporter (`dcgm-exporter` chart), for modes without the GPU Operator.

The chart's defaults tolerate only the control-plane taint and have no affinity: it would run
on CPU nodes (and fail there) and never on tainted GPU nodes. We give it the GPU pools' node
affinity and tolerations. A ServiceMonitor is rendered only when asked: it needs the Prometheus
Operator's CRDs. With the GPU Operator, its own DCGM exporter operand is used instead.

The metrics list is the chart's default list (`dcgm_default_metrics.json`, generated from the
pinned chart by scripts/dcgm_metrics.py) plus the XID count the drain rule reads
(components/model/gpu_health.py): `customMetrics` replaces the list, so it must be complete. The
chart renders it into its metrics ConfigMap, which its default `arguments` (`-f`) already read.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.kubernetes import targeting
from components.kubernetes.helm import pinned_release
from components.model import gpu_health
from components.model.catalog import charts
from components.model.pools import PoolSpec
from components.model.registry import software_platform
from components.model.schema import StackConfig

PIN = charts.DCGM_EXPORTER
DEFAULT_METRICS_FILE = Path(__file__).with_name("dcgm_default_metrics.json")
RELEASE_NAME = "dcgm-exporter"
CHART_TOLERATIONS = (
    {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
)
# The chart's default mount of its metrics list; restated because our list replaces the chart's.
_METRICS_MOUNT = {
    "name": "exporter-metrics-volume",
    "mountPath": "/etc/dcgm-exporter/default-counters.csv",
    "subPath": "default-counters.csv",
}


@cache
def chart_default_metrics() -> tuple[str, ...]:
    """The pinned chart's default metrics list, one CSV line per metric."""
    data = json.loads(DEFAULT_METRICS_FILE.read_text())
    assert data["version"] == PIN.version, "run scripts/dcgm_metrics.py for the new chart pin"
    return tuple(data["metrics"])


METRICS_CHECKSUM_ANNOTATION = "gpufleet.io/metrics-checksum"


def metrics_checksum(metrics: str) -> str:
    return hashlib.sha256(metrics.encode()).hexdigest()[:16]


def metrics_list() -> str:
    """The exporter's metrics CSV: the chart's default list and the XID count."""
    return "\n".join((*chart_default_metrics(), gpu_health.XID_COUNT_LINE)) + "\n"


def values(config: StackConfig, pools: Sequence[PoolSpec]) -> dict[str, Any]:
    """Our values for the chart, given the GPU pools it must run on (non-empty)."""
    metrics = metrics_list()
    result: dict[str, Any] = {
        "serviceMonitor": {"enabled": config.gpu_software.monitoring.service_monitor},
        "customMetrics": metrics,
        # The exporter reads its list only at start, and a ConfigMap change alone restarts no
        # pod: the list's checksum in the pod template rolls the DaemonSet when the list
        # changes, so an upgraded cluster emits the XID count too (review fix-5 F5-6).
        "podAnnotations": {METRICS_CHECKSUM_ANNOTATION: metrics_checksum(metrics)},
        "affinity": targeting.node_affinity(pools),
        "tolerations": targeting.tolerations(pools, CHART_TOLERATIONS),
    }
    platform = software_platform(config).dcgm_exporter_values()
    if "extraVolumeMounts" in platform:
        # Our mounts replace the chart's list: keep its metrics-list mount first.
        platform["extraVolumeMounts"] = [_METRICS_MOUNT, *platform["extraVolumeMounts"]]
    result.update(platform)
    return result


def release(
    name: str,
    config: StackConfig,
    pools: Sequence[PoolSpec],
    namespace: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
) -> k8s.helm.v3.Release:
    return pinned_release(name, PIN, RELEASE_NAME, namespace, values(config, pools), opts)
