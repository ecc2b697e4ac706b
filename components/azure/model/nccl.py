"""The multi-node NCCL test on an AKS InfiniBand pool: Azure's own recipe (a Kubeflow MPIJob,
two or more workers of 8 GPUs and `rdma/ib: 8`, `all_reduce_perf` from 8 B to 16 GiB), read
with `kubectl logs`, checked against the guide's published figure.

Source: Azure/aks-rdma-infiniband @700dabb4fe0451d482ae09a373617ed68658b021
`tests/scenarios/k8s/templates/mpi-job.yaml`, `tests/scenarios/k8s/values.yaml` (image,
NCCL_IB_DISABLE=0, NCCL_NET_GDR_LEVEL=SYS), `tests/expected-output.md` (the figure, on the HDR
sizes only: see fabric.py). The largest message is sized from the pool's GPU memory (two buffers:
the recipe turns the data check off with `-c 0`); with `-f 4` from 8 B the rows are the odd powers
of two, so the last row stays the figure's 8 GiB on every ND size.
"""

from __future__ import annotations

from typing import Any, Final

from components.azure.model.fabric import GUIDE_BROKEN_BELOW_GBYTES_PER_S, RDMA_GUIDE
from components.azure.model.kinds.agent_pools import AGENT_POOL_LABEL
from components.model.catalog.charts import NCCL_NAMESPACE
from components.model.catalog.gpus import GPU_MODELS
from components.model.fabric import (
    MPI_NAME_RESERVE,
    NcclFigure,
    NcclTest,
    figure_size_note,
    largest_message_bytes,
    nccl_metadata,
    nccl_name,
    size_flag,
)
from components.model.labels import POOL_LABEL
from components.model.pool_spec import PoolSpec

# The MPIJob is `<pool>-nccl-allreduce`: one per fabric pool.
JOB_SUFFIX = "nccl-allreduce"
# The guide builds and publishes this image and pushes only `latest` (build-nccl-tests-image.yaml
# @0db1aee6: metadata-action tags `type=raw,value=latest` on push, a dated tag on scheduled runs
# only, and the workflow has no schedule), so there is no tag to pin; its digest is not readable
# offline. `requires` says the build is unpinned.
IMAGE = "ghcr.io/azure/aks-rdma-infiniband/nccl-tests:latest"
IMAGE_UNPINNED: Final = (
    f"the image {IMAGE} is the guide's newest build (it publishes no other tag), not "
    "necessarily the one its figure was measured with"
)
_SOURCES: Final = (
    f"{RDMA_GUIDE} tests/scenarios/k8s/templates/mpi-job.yaml",
    f"{RDMA_GUIDE} tests/scenarios/k8s/values.yaml",
    "github.com/Azure/aks-rdma-infiniband @0db1aee6 .github/workflows/build-nccl-tests-image.yaml",
)
# Send and receive buffers only: `-c 0` turns the data check off.
BUFFERS: Final = 2


def _all_reduce(largest: int) -> str:
    return (
        "mpirun -np $NUMBER_OF_PROCESSES -bind-to none -x NCCL_IB_DISABLE=0 "
        "-x NCCL_NET_GDR_LEVEL=SYS -x CUDA_DEVICE_ORDER=PCI_BUS_ID "
        f"/opt/nccl_tests/build/all_reduce_perf -c 0 -b 8 -e {size_flag(largest)} -f 4 -g 1 -n 10"
    )


def _judging(figure: NcclFigure | None, link_gbps: int) -> tuple[str, ...]:
    """How to judge the result: the guide's threshold where its figure applies, else the links'
    rate, since nothing published names the size."""
    if figure is not None:
        return (
            f"the last busbw row (8 GiB and up) below {GUIDE_BROKEN_BELOW_GBYTES_PER_S:g} GB/s "
            "means the fabric is not working, per the guide (which does not say on which ND "
            "size it measured)",
        )
    return (
        "no published busbw for this size (the guide's figure was measured on HDR links); "
        f"compare the last busbw row with the links' {link_gbps // 8} GB/s",
    )


def nccl_test(pool: PoolSpec, nodes: int) -> NcclTest:
    """An MPIJob over `nodes` nodes of the fabric pool, one worker per node with all its GPUs
    and all its InfiniBand HCAs, tolerating every taint of the pool (GPU, Spot, user)."""
    fabric = pool.fabric
    assert fabric is not None and fabric.resource is not None
    gpus = pool.gpus_per_node
    largest = largest_message_bytes(GPU_MODELS[pool.accelerator].memory_gb, BUFFERS)
    figure = fabric.facts.expected_busbw
    limits = {"nvidia.com/gpu": gpus, fabric.resource: fabric.facts.resource_per_node}
    name = nccl_name(pool.name, JOB_SUFFIX, MPI_NAME_RESERVE)
    labels = {POOL_LABEL: pool.name}
    worker_spec: dict[str, Any] = {
        "nodeSelector": {AGENT_POOL_LABEL: pool.name},
        "tolerations": list(pool.pod_scheduling["tolerations"]),
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"task": name}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        },
        "containers": [
            {
                "name": "nccl",
                "image": IMAGE,
                "resources": {"limits": limits, "requests": limits},
                # RDMA pins memory: without IPC_LOCK the locked-memory limit stays at 64 KiB.
                "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
                "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
            }
        ],
        "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}],
    }
    launcher_spec: dict[str, Any] = {
        "restartPolicy": "OnFailure",
        "containers": [
            {
                "name": "nccl",
                "image": IMAGE,
                "env": [
                    {"name": "OMPI_ALLOW_RUN_AS_ROOT", "value": "1"},
                    {"name": "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "value": "1"},
                    {"name": "NUMBER_OF_PROCESSES", "value": str(gpus * nodes)},
                ],
                "command": ["/bin/bash", "-c", f"set -e; {_all_reduce(largest)}"],
                "resources": {"requests": {"cpu": "50m", "memory": "128Mi"}},
            }
        ],
    }
    job = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": nccl_metadata(pool.name, name),
        "spec": {
            "slotsPerWorker": gpus,
            "runPolicy": {"cleanPodPolicy": "Running"},
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "template": {"metadata": {"labels": dict(labels)}, "spec": launcher_spec},
                },
                "Worker": {
                    "replicas": nodes,
                    "template": {
                        "metadata": {"labels": {**labels, "task": name}},
                        "spec": worker_spec,
                    },
                },
            },
        },
    }
    return NcclTest(
        manifests=(job,),
        result_command=f"kubectl -n {NCCL_NAMESPACE} logs -f job/{name}-launcher",
        requires=(
            "the Kubeflow MPI Operator (kubeflow.org/v2beta1 MPIJob), which gpufleet does not "
            "install",
            IMAGE_UNPINNED,
            "the guide also mounts an NCCL topology file for ND v4/v5 (tests/scenarios/"
            "nvidia-topology/); this sample lets NCCL detect the topology",
            *_judging(figure, fabric.facts.bandwidth_gbps),
            *figure_size_note(figure, largest),
        ),
        expected=figure,
        sources=(*_SOURCES, *((figure.source,) if figure else ())),
    )
