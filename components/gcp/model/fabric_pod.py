"""What a pod on a GPUDirect pool runs beside its NCCL container, per mode: the receive-datapath
sidecar, the volumes, and the GPU container's environment and mounts. One builder for `consumers`
(the pod fragment) and `samples` (the NCCL test, components/gcp/model/nccl_test.py), so the two
never disagree.

Sources (GoogleCloudPlatform/container-engine-accelerators @992db812):
- TCPXO: gpudirect-tcpxo/nccl-test-latest.yaml L79-144: the `tcpxo-daemon` sidecar
  (tcpgpudmarxd-dev:v1.0.21, `--num_hops=2`, NET_ADMIN + NET_BIND_SERVICE, /sys and /proc/sys
  of the host), the NVIDIA libraries at /usr/local/nvidia/lib64, `/dev/aperture_devices` with
  `NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY`, and /dev/shm in memory.
- RDMA: gpudirect-rdma/nccl-test.yaml: no sidecar; the NVIDIA libraries and the gIB plugin of
  the host (/home/kubernetes/bin/nvidia, /home/kubernetes/bin/gib), /dev/shm in memory; NCCL's
  settings come from `source /usr/local/gib/scripts/set_nccl_env.sh` in the container.
- TCPX (A3 High): gpudirect-tcpx/nccl-test-latest.yaml; gpufleet does not render its sidecar
  yet (its recipe also needs CEA's nccl-configmap): `consumers` names the file to copy from.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

CEA = "https://github.com/GoogleCloudPlatform/container-engine-accelerators/blob/992db81257553607f1477945f1b3219632991829"
TCPXO_RXDM = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21"
SOURCES: Final[Mapping[str, str]] = {
    "tcpx": f"{CEA}/gpudirect-tcpx/nccl-test-latest.yaml",
    "tcpxo": f"{CEA}/gpudirect-tcpxo/nccl-test-latest.yaml",
    "rdma": f"{CEA}/gpudirect-rdma/nccl-test.yaml",
}
_LIBRARY_PATH: Final = {"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"}


@dataclass(frozen=True)
class FabricPod:
    """What a pod adds for one mode: containers beside the GPU container, pod volumes, and the
    GPU container's env and volumeMounts. `rendered` False: gpufleet does not build it (the pod
    copies it from `source`)."""

    sidecars: tuple[Mapping[str, Any], ...] = ()
    volumes: tuple[Mapping[str, Any], ...] = ()
    env: tuple[Mapping[str, Any], ...] = ()
    volume_mounts: tuple[Mapping[str, Any], ...] = ()
    source: str = ""
    rendered: bool = True


def _host_path(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": path}}


def _shared_memory(size: str) -> dict[str, Any]:
    return {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": size}}


_TCPXO_DAEMON: Final = {
    "name": "tcpxo-daemon",
    "image": TCPXO_RXDM,
    "command": ["/bin/sh", "-c"],
    "args": [
        "set -ex\nchmod 755 /fts/entrypoint_rxdm_container.sh\n"
        "/fts/entrypoint_rxdm_container.sh --num_hops=2\n"
    ],
    "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_BIND_SERVICE"]}},
    "volumeMounts": [
        {"name": "nvidia", "mountPath": "/usr/local/nvidia/lib64"},
        {"name": "sys", "mountPath": "/hostsysfs"},
        {"name": "proc-sys", "mountPath": "/hostprocsysfs"},
    ],
    "env": [_LIBRARY_PATH],
}

_PODS: Final[Mapping[str, FabricPod]] = {
    "tcpxo": FabricPod(
        sidecars=(_TCPXO_DAEMON,),
        volumes=(
            _host_path("nvidia", "/home/kubernetes/bin/nvidia/lib64"),
            _shared_memory("1Gi"),
            _host_path("sys", "/sys"),
            _host_path("proc-sys", "/proc/sys"),
            _host_path("aperture-devices", "/dev/aperture_devices"),
        ),
        env=(
            _LIBRARY_PATH,
            {"name": "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY", "value": "/dev/aperture_devices"},
        ),
        volume_mounts=(
            {"name": "nvidia", "mountPath": "/usr/local/nvidia/lib64"},
            {"name": "shared-memory", "mountPath": "/dev/shm"},
            {"name": "aperture-devices", "mountPath": "/dev/aperture_devices"},
        ),
        source=SOURCES["tcpxo"],
    ),
    "rdma": FabricPod(
        volumes=(
            _host_path("library-dir-host", "/home/kubernetes/bin/nvidia"),
            _host_path("gib", "/home/kubernetes/bin/gib"),
            _shared_memory("250Gi"),
        ),
        env=(_LIBRARY_PATH,),
        volume_mounts=(
            {"name": "library-dir-host", "mountPath": "/usr/local/nvidia"},
            {"name": "gib", "mountPath": "/usr/local/gib"},
            {"name": "shared-memory", "mountPath": "/dev/shm"},
        ),
        source=SOURCES["rdma"],
    ),
    "tcpx": FabricPod(source=SOURCES["tcpx"], rendered=False),
}


def fabric_pod(mode: str) -> FabricPod:
    """What a pod on a pool of this GPUDirect mode ("tcpx", "tcpxo", "rdma") adds (copies: a
    caller's manifest never shares a dict with another's)."""
    pod = _PODS[mode]
    return FabricPod(
        sidecars=copy.deepcopy(pod.sidecars),
        volumes=copy.deepcopy(pod.volumes),
        env=copy.deepcopy(pod.env),
        volume_mounts=copy.deepcopy(pod.volume_mounts),
        source=pod.source,
        rendered=pod.rendered,
    )
