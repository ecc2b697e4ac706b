"""GKE's multi-node NCCL test on a GPUDirect pool (`Cloud.nccl_test`), Google's own recipe.

One Pod per node with all its GPUs (`<pool>-nccl-test-host-N`) and a headless Service per Pod
(`<pool>-nccl-host-N`; the pool in the names keeps two fabric pools' tests apart), the Pods
carrying the pool's network annotations (components/gcp/model/fabric.py); the test runs from
the first Pod over all of them. It is an **all_gather** test, as Google publishes it: its bus
bandwidth is not comparable to an all_reduce figure (busbw = algbw x (n-1)/n for all_gather,
x 2(n-1)/n for all_reduce).

Sources (GoogleCloudPlatform/container-engine-accelerators @992db812):
- TCPXO: gpudirect-tcpxo/nccl-test-latest.yaml (last changed abbe8ddf): the `tcpxo-daemon`
  sidecar (tcpgpudmarxd-dev:v1.0.21) beside `nccl-test` (nccl-plugin-gpudirecttcpx-dev:v1.0.15,
  the installer's version), `/scripts/allgather.sh` written at start; run with
  `kubectl exec nccl-test-host-1 -c nccl-test -- /scripts/allgather.sh nccl-host-1 ...`
  (cluster-toolkit @10470803 examples/gke-a3-megagpu/README.md).
- RDMA: gpudirect-rdma/nccl-test.yaml (155bfa49): image nccl-plugin-gib-diagnostic:v1.1.1, no
  sidecar; run with `/usr/local/gib/scripts/run_nccl_tests.sh -t all_gather -b 1K -e 8G
  nccl-host-1 ...` (GKE docs gpu-bandwidth-gpudirect-rdma).
- TCPX (A3 High): its recipe needs CEA's `nccl-configmap` scripts beside the Pods; gpufleet does
  not render it yet (None).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from components.gcp.model.fabric import FABRICS, MODES
from components.model.catalog.charts import NCCL_NAMESPACE
from components.model.fabric import NcclTest, nccl_metadata, nccl_name
from components.model.labels import POOL_LABEL
from components.model.pool_spec import PoolSpec

CEA = "https://github.com/GoogleCloudPlatform/container-engine-accelerators/blob/992db81257553607f1477945f1b3219632991829"
_TCPXO_RXDM = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21"
_TCPXO_NCCL = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15"
_GIB_DIAGNOSTIC = "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-diagnostic:v1.1.1"
SOURCES: Final[Mapping[str, str]] = {
    "tcpxo": f"{CEA}/gpudirect-tcpxo/nccl-test-latest.yaml",
    "rdma": f"{CEA}/gpudirect-rdma/nccl-test.yaml",
}


def _host_path(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": path}}


def _tcpxo_containers(hosts: int) -> list[dict[str, Any]]:
    run = (
        "set -ex\n"
        "chmod 755 /scripts/demo-run-nccl-test-tcpxo-via-mpi.sh\n"
        "cat >/scripts/allgather.sh <<EOF\n#!/bin/bash\n/scripts/init_ssh.sh \\${@};\n"
        "pushd /scripts;\n/scripts/gen_hostfiles.sh \\${@};\npopd;\n"
        f"BENCHMARK=all_gather_perf NHOSTS={hosts} "
        'NCCL_LIB_DIR="${LD_LIBRARY_PATH}" LD_LIBRARY_PATH="${LD_LIBRARY_PATH}" '
        "/scripts/demo-run-nccl-test-tcpxo-via-mpi.sh\nEOF\n"
        "chmod +x /scripts/allgather.sh\nservice ssh restart;\nsleep infinity;\n"
    )
    library = {"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"}
    return [
        {
            "name": "tcpxo-daemon",
            "image": _TCPXO_RXDM,
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
            "env": [library],
        },
        {
            "name": "nccl-test",
            "image": _TCPXO_NCCL,
            "command": ["/bin/sh", "-c", run],
            "env": [
                library,
                {"name": "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY", "value": "/dev/aperture_devices"},
            ],
            "volumeMounts": [
                {"name": "nvidia", "mountPath": "/usr/local/nvidia/lib64"},
                {"name": "shared-memory", "mountPath": "/dev/shm"},
                {"name": "aperture-devices", "mountPath": "/dev/aperture_devices"},
            ],
            "resources": {"limits": {"nvidia.com/gpu": 8}},
        },
    ]


_TCPXO_VOLUMES: Final = [
    _host_path("nvidia", "/home/kubernetes/bin/nvidia/lib64"),
    {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
    _host_path("sys", "/sys"),
    _host_path("proc-sys", "/proc/sys"),
    _host_path("aperture-devices", "/dev/aperture_devices"),
]


def _rdma_containers() -> list[dict[str, Any]]:
    return [
        {
            "name": "test",
            "image": _GIB_DIAGNOSTIC,
            "command": ["/bin/bash", "-c"],
            "args": [
                "/scripts/container_entry.sh shell\n"
                "source /usr/local/gib/scripts/set_nccl_env.sh\nsleep infinity\n"
            ],
            "env": [{"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"}],
            "volumeMounts": [
                {"name": "library-dir-host", "mountPath": "/usr/local/nvidia"},
                {"name": "gib", "mountPath": "/usr/local/gib"},
                {"name": "shared-memory", "mountPath": "/dev/shm"},
            ],
            "resources": {"requests": {"cpu": "150m"}, "limits": {"nvidia.com/gpu": 8}},
        }
    ]


_RDMA_VOLUMES: Final = [
    _host_path("library-dir-host", "/home/kubernetes/bin/nvidia"),
    _host_path("gib", "/home/kubernetes/bin/gib"),
    {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "250Gi"}},
]


def nccl_test(pool: PoolSpec, nodes: int) -> NcclTest | None:
    """The test over `nodes` nodes of a fabric pool (None: no fabric, or TCPX)."""
    fabric = pool.fabric
    if fabric is None or fabric.facts.machine_type not in FABRICS:
        return None
    mode = MODES[FABRICS[fabric.facts.machine_type][0]]
    if mode.key not in SOURCES:
        return None
    hosts = [nccl_name(pool.name, f"nccl-host-{i}") for i in range(1, nodes + 1)]
    pods = [nccl_name(pool.name, f"nccl-test-host-{i}") for i in range(1, nodes + 1)]
    tolerations = [
        {"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect}
        for t in pool.declared_taints
    ]
    manifests: list[dict[str, Any]] = []
    for i, (host, pod) in enumerate(zip(hosts, pods, strict=True), start=1):
        manifests.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": nccl_metadata(pool.name, host),
                "spec": {"selector": {"name": host}, "clusterIP": "None"},
            }
        )
        manifests.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    **nccl_metadata(pool.name, pod),
                    "labels": {
                        **nccl_metadata(pool.name, pod)["labels"],
                        "name": host,
                        "gpufleet.io/nccl-test": pool.name,
                    },
                    "annotations": dict(fabric.pod_annotations),
                },
                "spec": {
                    "hostname": f"host{i}",
                    "subdomain": host,
                    "nodeSelector": {POOL_LABEL: pool.name},
                    "tolerations": tolerations,
                    # One Pod per node: each takes all eight GPUs and NICs of its node.
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "labelSelector": {
                                        "matchLabels": {"gpufleet.io/nccl-test": pool.name}
                                    },
                                    "topologyKey": "kubernetes.io/hostname",
                                }
                            ]
                        }
                    },
                    "containers": _tcpxo_containers(nodes)
                    if mode.key == "tcpxo"
                    else _rdma_containers(),
                    "volumes": list(_TCPXO_VOLUMES if mode.key == "tcpxo" else _RDMA_VOLUMES),
                },
            }
        )
    names = " ".join(hosts)
    command = (
        f"kubectl -n {NCCL_NAMESPACE} exec {pods[0]} -c nccl-test -- /scripts/allgather.sh {names}"
        if mode.key == "tcpxo"
        else f"kubectl -n {NCCL_NAMESPACE} exec {pods[0]} -- "
        "/usr/local/gib/scripts/run_nccl_tests.sh "
        f"-t all_gather -b 1K -e 8G {names}"
    )
    return NcclTest(
        manifests=tuple(manifests),
        result_command=command,
        requires=(
            f"{mode.kind} NCCL plugin on the nodes (gpufleet installs it on the pool: "
            f"{mode.installer}); the test image's plugin version matches it",
        ),
        expected=fabric.facts.expected_busbw,
        sources=(SOURCES[mode.key], fabric.facts.source),
    )
