"""DaemonSet pods on a GKE GPU node, besides gpufleet's charts, where a source gives requests.

- GKE's NVIDIA device plugin (`kube-system/nvidia-gpu-device-plugin`) runs on every GPU node
  unless the pool carries `gke-no-default-nvidia-gpu-device-plugin` (the GPU Operator's case).
  Google publishes its manifest in GoogleCloudPlatform/container-engine-accelerators,
  `cmd/nvidia_gpu/device-plugin.yaml` (commit 992db812): requests cpu 50m, memory 100Mi.
- With the GPU Operator, gpufleet applies Google's driver installer (components/gcp/model/
  driver_installer.py, same commit): its init containers request cpu 150m and its only regular
  container (pause) nothing, so the pod's effective request is 150m.
kube-proxy, fluentbit-gke, gke-metrics-agent and pdcsi-node are not counted: no source read here
gives their requests (see components/model/daemonsets.py).
"""

from __future__ import annotations

from components.gcp.model import driver_installer
from components.model.allocatable import MIB
from components.model.daemonsets import NodeDaemonSet
from components.model.schema import SoftwareMode

_SOURCE = f"{driver_installer.REPOSITORY} @ {driver_installer.COMMIT[:8]}"
GKE_DEVICE_PLUGIN = NodeDaemonSet(
    "kube-system/nvidia-gpu-device-plugin",
    50,
    100 * MIB,
    f"{_SOURCE} cmd/nvidia_gpu/device-plugin.yaml: requests cpu 50m, memory 100Mi",
)
DRIVER_INSTALLER = NodeDaemonSet(
    "/".join(driver_installer.DAEMONSET),
    150,
    0,
    f"{_SOURCE} {driver_installer.PATH}: init containers request cpu 150m",
)


def node_daemonsets(mode: SoftwareMode) -> tuple[NodeDaemonSet, ...]:
    if mode == "gpu-operator":
        return (DRIVER_INSTALLER,)
    return (GKE_DEVICE_PLUGIN,)
