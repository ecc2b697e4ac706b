"""The multi-node NCCL test on an AKS InfiniBand pool: Azure's own recipe (a Kubeflow MPIJob,
two or more workers of 8 GPUs and `rdma/ib: 8`, `all_reduce_perf` from 8 B to 16 GiB), read
with `kubectl logs`, checked against the guide's published figure.

Source: Azure/aks-rdma-infiniband @700dabb4fe0451d482ae09a373617ed68658b021
`tests/scenarios/k8s/templates/mpi-job.yaml`, `tests/scenarios/k8s/values.yaml` (image,
NCCL_IB_DISABLE=0, NCCL_NET_GDR_LEVEL=SYS), `tests/expected-output.md` (the figure).
"""

from __future__ import annotations

from typing import Any, Final

from components.azure.model.fabric import (
    GUIDE_BROKEN_BELOW_GBYTES_PER_S,
    GUIDE_FIGURE,
    RDMA_GUIDE,
)
from components.azure.model.kinds.agent_pools import AGENT_POOL_LABEL
from components.model.catalog.charts import NCCL_NAMESPACE
from components.model.fabric import MPI_NAME_RESERVE, NcclTest, nccl_metadata, nccl_name
from components.model.labels import POOL_LABEL
from components.model.pool_spec import PoolSpec

# The MPIJob is `<pool>-nccl-allreduce`: one per fabric pool.
JOB_SUFFIX = "nccl-allreduce"
# The guide builds and publishes this image (its workflow build-nccl-tests-image.yaml) and names
# no tag: it runs the newest one.
IMAGE = "ghcr.io/azure/aks-rdma-infiniband/nccl-tests:latest"
_SOURCES: Final = (
    f"{RDMA_GUIDE} tests/scenarios/k8s/templates/mpi-job.yaml",
    f"{RDMA_GUIDE} tests/scenarios/k8s/values.yaml",
    GUIDE_FIGURE.source,
)
_ALL_REDUCE = (
    "mpirun -np $NUMBER_OF_PROCESSES -bind-to none -x NCCL_IB_DISABLE=0 "
    "-x NCCL_NET_GDR_LEVEL=SYS -x CUDA_DEVICE_ORDER=PCI_BUS_ID "
    "/opt/nccl_tests/build/all_reduce_perf -c 0 -b 8 -e 16G -f 4 -g 1 -n 10"
)


def nccl_test(pool: PoolSpec, nodes: int) -> NcclTest:
    """An MPIJob over `nodes` nodes of the fabric pool, one worker per node with all its GPUs
    and all its InfiniBand HCAs, tolerating every taint of the pool (GPU, Spot, user)."""
    fabric = pool.fabric
    assert fabric is not None and fabric.resource is not None
    gpus = pool.gpus_per_node
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
                "command": ["/bin/bash", "-c", f"set -e; {_ALL_REDUCE}"],
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
            "install: not checked",
            "the guide also mounts an NCCL topology file for ND v4/v5 (tests/scenarios/"
            "nvidia-topology/); this sample lets NCCL detect the topology",
            f"the last busbw row (8 GiB and up) below {GUIDE_BROKEN_BELOW_GBYTES_PER_S:g} GB/s "
            "means the fabric is not working, per the guide (which does not say on which ND "
            "size it measured)",
        ),
        expected=GUIDE_FIGURE,
        sources=_SOURCES,
    )
