"""The DaemonSet pods on every GPU node, and what their requests leave the user's pods.

A DaemonSet pod's requests count against the node's allocatable exactly like a user pod's (the
scheduler adds them up; the cluster autoscaler adds the DaemonSets to the node it imagines at
zero), so a pool's room for workloads is allocatable minus these. Each entry names the number's
source. gpufleet's own DaemonSets come from the pinned charts' `values.yaml` (gpufleet sets no
`resources` of its own); the clouds' per-node agents are in each cloud's `model/daemonsets.py`,
only where a source gives their requests. Agents whose requests no source read here gives
(kube-proxy, logging and metrics agents, CSI node plugins) are not subtracted: the figures are an
upper bound by that much, and the consumers keep a margin for them (`consumers/sizing.py`).

Effective requests follow the scheduler: the larger of the biggest init container and the sum of
the regular containers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from components.model.allocatable import MIB, NodeAllocatable
from components.model.catalog.charts import DCGM_EXPORTER, GPU_OPERATOR, NVIDIA_DEVICE_PLUGIN
from components.model.schema import SoftwareMode


@dataclass(frozen=True)
class NodeDaemonSet:
    """One DaemonSet pod on the node and its effective requests."""

    name: str  # namespace/name
    cpu_millis: int
    memory_bytes: int
    source: str


def after_daemonsets(node: NodeAllocatable, daemonsets: Sequence[NodeDaemonSet]) -> NodeAllocatable:
    """The node's allocatable less the DaemonSet pods' requests (and one pod slot each)."""
    return replace(
        node,
        cpu_millis=node.cpu_millis - sum(d.cpu_millis for d in daemonsets),
        memory_bytes=node.memory_bytes - sum(d.memory_bytes for d in daemonsets),
        pods=node.pods - len(daemonsets),
    )


def _chart(pin: Any, where: str) -> str:
    return f"{pin.chart} chart {pin.version} values.yaml, {where}"


# gpufleet's device plugin: the chart's `resources: {}`.
DEVICE_PLUGIN = NodeDaemonSet(
    f"{NVIDIA_DEVICE_PLUGIN.namespace}/nvidia-device-plugin",
    0,
    0,
    _chart(NVIDIA_DEVICE_PLUGIN, "resources: {}"),
)
# The standalone exporter of `gpuSoftware.monitoring.dcgmExporter`.
DCGM_EXPORTER_DAEMONSET = NodeDaemonSet(
    f"{DCGM_EXPORTER.namespace}/dcgm-exporter",
    100,
    128 * MIB,
    _chart(DCGM_EXPORTER, "resources.requests cpu 100m, memory 128Mi"),
)
# The GPU Operator's operands on a GPU node: every one has `resources: {}` in the chart, except
# NFD's worker, whose requests come from the node-feature-discovery subchart's defaults.
_OPERATOR_OPERANDS = (
    "nvidia-device-plugin-daemonset",
    "gpu-feature-discovery",
    "nvidia-operator-validator",
)
NFD_WORKER = NodeDaemonSet(
    f"{GPU_OPERATOR.namespace}/gpu-operator-node-feature-discovery-worker",
    5,
    64 * MIB,
    "node-feature-discovery subchart of gpu-operator "
    f"{GPU_OPERATOR.version}, worker.resources.requests cpu 5m, memory 64Mi",
)


def _operand(name: str) -> NodeDaemonSet:
    return NodeDaemonSet(
        f"{GPU_OPERATOR.namespace}/{name}", 0, 0, _chart(GPU_OPERATOR, "resources: {}")
    )


def gpufleet_daemonsets(
    mode: SoftwareMode,
    *,
    dcgm_exporter: bool,
    own_device_plugin: bool,
    operator_preset: Mapping[str, Any],
    mig: bool,
) -> tuple[NodeDaemonSet, ...]:
    """The DaemonSet pods gpufleet's GPU software puts on one node of a GPU pool."""
    found: list[NodeDaemonSet] = []
    if mode == "gpu-operator" and not own_device_plugin:
        found.append(NFD_WORKER)
        found += [_operand(name) for name in _OPERATOR_OPERANDS]
        optional = (
            ("dcgmExporter", "nvidia-dcgm-exporter", dcgm_exporter),
            ("driver", "nvidia-driver-daemonset", True),
            ("toolkit", "nvidia-container-toolkit-daemonset", True),
            ("migManager", "nvidia-mig-manager", mig),
        )
        for operand, name, wanted in optional:
            if wanted and operator_preset.get(operand, {}).get("enabled", True):
                found.append(_operand(name))
    elif mode == "device-plugin" and not own_device_plugin:
        found.append(DEVICE_PLUGIN)
    if dcgm_exporter and mode != "gpu-operator":
        found.append(DCGM_EXPORTER_DAEMONSET)
    return tuple(found)
