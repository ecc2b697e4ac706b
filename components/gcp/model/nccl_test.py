"""GKE's multi-node NCCL test on a GPUDirect pool (`Cloud.nccl_test`), Google's own recipe.

One Pod per node with all its GPUs (`<pool>-nccl-test-host-N`) and a headless Service per Pod
(`<pool>-nccl-host-N`; the pool in the names keeps two fabric pools' tests apart), the Pods
carrying the pool's network annotations (components/gcp/model/fabric.py); the test runs from
the first Pod over all of them. It is an **all_gather** test, as Google publishes it: its bus
bandwidth is not comparable to an all_reduce figure (busbw = algbw x (n-1)/n for all_gather,
x 2(n-1)/n for all_reduce).

Sources (GoogleCloudPlatform/container-engine-accelerators @992db812):
- TCPXO: gpudirect-tcpxo/nccl-test-latest.yaml (last changed abbe8ddf): the `tcpxo-daemon`
  sidecar, volumes and env of components/gcp/model/fabric_pod.py (which `consumers` prints
  too) beside `nccl-test` (nccl-plugin-gpudirecttcpx-dev:v1.0.15,
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
from components.gcp.model.fabric_pod import SOURCES as POD_SOURCES
from components.gcp.model.fabric_pod import fabric_pod
from components.model.catalog.charts import NCCL_NAMESPACE
from components.model.fabric import NcclTest, nccl_metadata, nccl_name
from components.model.labels import POOL_LABEL
from components.model.pool_spec import PoolSpec

_TCPXO_NCCL = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15"
_GIB_DIAGNOSTIC = "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib-diagnostic:v1.1.1"
# The modes with a test (TCPX: None, see above).
SOURCES: Final[Mapping[str, str]] = {mode: POD_SOURCES[mode] for mode in ("tcpxo", "rdma")}


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
    pod = fabric_pod("tcpxo")
    return [
        *(dict(sidecar) for sidecar in pod.sidecars),
        {
            "name": "nccl-test",
            "image": _TCPXO_NCCL,
            "command": ["/bin/sh", "-c", run],
            "env": list(pod.env),
            "volumeMounts": list(pod.volume_mounts),
            "resources": {"limits": {"nvidia.com/gpu": 8}},
        },
    ]


def _rdma_containers() -> list[dict[str, Any]]:
    pod = fabric_pod("rdma")
    return [
        {
            "name": "test",
            "image": _GIB_DIAGNOSTIC,
            "command": ["/bin/bash", "-c"],
            "args": [
                "/scripts/container_entry.sh shell\n"
                "source /usr/local/gib/scripts/set_nccl_env.sh\nsleep infinity\n"
            ],
            "env": list(pod.env),
            "volumeMounts": list(pod.volume_mounts),
            "resources": {"requests": {"cpu": "150m"}, "limits": {"nvidia.com/gpu": 8}},
        }
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
                    "volumes": list(fabric_pod(mode.key).volumes),
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
