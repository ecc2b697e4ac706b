"""The multi-node NCCL test of an EKS fabric pool: all_reduce_perf over EFA, as AWS runs it.

The shape is aws-samples/awsome-distributed-training
`micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml` @50820097a734ff9300a05149b6a60ed5eb7f91af:
a Kubeflow `MPIJob` (kubeflow.org/v2beta1) with one launcher running `mpirun` over
`slotsPerWorker` ranks per worker, `FI_PROVIDER=efa`, `FI_EFA_FORK_SAFE=1`, and workers
asking for every GPU and EFA device of a node (`vpc.amazonaws.com/efa`). The recipe also asks
for 5120Mi of 2 MiB huge pages; this sample does not: the pool's nodes, as gpufleet models
them, advertise no `hugepages-2Mi` (nothing it creates sets `vm.nr_hugepages`), so the request
would leave the workers Pending, and libfabric's EFA provider falls back to regular pages. The image is AWS's public nccl-tests build (tag form and default of the
README's "Amazon EKS" section, `micro-benchmarks/nccl-tests/README.md` @0162aacd:
efa1.43.2, aws-ofi-nccl v1.16.3, NCCL v2.27.7-1, nccl-tests v2.16.9). gpufleet does not install
the MPI Operator that runs an MPIJob: `requires` says so.

`FI_EFA_USE_DEVICE_RDMA` is left unset, as the recipe leaves it: libfabric's EFA provider then
uses RDMA where the device has it, while `1` on a device without RDMA aborts the application
(ofiwg/libfabric man/fi_efa.7.md), and which G-family types lack it was not verified.

The largest message (`-e`) is sized from the pool's GPU memory (`largest_message_bytes`, three
buffers: the data check stays on): the recipe's 16 GiB on 80 GB GPUs, less on smaller ones,
which would run out of memory at 16 GiB (3 x 16 GiB).
"""

from __future__ import annotations

from typing import Any, Final

from components.aws.model.fabric import EFA_RESOURCE, fabric_facts
from components.model.catalog.charts import NCCL_NAMESPACE
from components.model.catalog.gpus import GPU_MODELS
from components.model.fabric import (
    MPI_NAME_RESERVE,
    NcclTest,
    figure_size_note,
    largest_message_bytes,
    nccl_metadata,
    nccl_name,
    size_flag,
)
from components.model.labels import POOL_LABEL
from components.model.pool_spec import PoolSpec

IMAGE: Final = "public.ecr.aws/hpc-cloud/nccl-tests:efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9"
# Send, receive and expected buffers: the recipe keeps the data check on.
BUFFERS: Final = 3
# The MPIJob is `<pool>-nccl-allreduce-efa`: one per fabric pool.
NAME_SUFFIX: Final = "nccl-allreduce-efa"
MANIFEST_SOURCE: Final = (
    "aws-samples/awsome-distributed-training @50820097 "
    "micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml"
)
MPI_OPERATOR: Final = (
    "the Kubeflow MPI Operator (kubeflow.org/v2beta1 MPIJob; github.com/kubeflow/mpi-operator), "
    "which gpufleet does not install"
)
HUGEPAGES_NOTE: Final = (
    "huge pages: the recipe's workers ask for hugepages-2Mi: 5120Mi (EFA bounce buffers); "
    "this sample leaves them out because gpufleet sets aside none on the nodes"
)
MPIRUN_ENV: Final = (
    "FI_PROVIDER=efa",
    "FI_EFA_FORK_SAFE=1",
    "NCCL_DEBUG=INFO",
    "NCCL_BUFFSIZE=8388608",
    "NCCL_P2P_NET_CHUNKSIZE=524288",
)


def _mpirun(ranks: int, per_node: int, largest: int) -> list[str]:
    command = ["/opt/amazon/openmpi/bin/mpirun", "--allow-run-as-root", "--tag-output"]
    command += ["-np", str(ranks), "-N", str(per_node), "--bind-to", "none"]
    command += ["-x", "PATH", "-x", "LD_LIBRARY_PATH"]
    for setting in MPIRUN_ENV:
        command += ["-x", setting]
    command += ["--mca", "pml", "^cm,ucx", "--mca", "btl", "tcp,self"]
    command += ["--mca", "btl_tcp_if_exclude", "lo,docker0,veth_def_agent"]
    # 8 B to `largest`, doubling: every power of two, so the published figure's row is printed
    # whenever it fits.
    end = size_flag(largest)
    return [*command, "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", end, "-f", "2"]


def nccl_test(pool: PoolSpec, nodes: int) -> NcclTest | None:
    """An all_reduce across `nodes` nodes of a fabric pool, every GPU and EFA device of each."""
    facts = pool.fabric.facts if pool.fabric else fabric_facts(pool.machine_types[0])
    if facts is None or nodes < 2:
        return None
    gpus = pool.gpus_per_node
    largest = largest_message_bytes(GPU_MODELS[pool.accelerator].memory_gb, BUFFERS)
    scheduling = pool.pod_scheduling
    name = nccl_name(pool.name, NAME_SUFFIX, MPI_NAME_RESERVE)
    labels = {POOL_LABEL: pool.name}
    resources = {
        pool.gpu_resource: gpus,
        EFA_RESOURCE: facts.resource_per_node,
        "memory": "32000Mi",
    }
    worker: dict[str, Any] = {
        "replicas": nodes,
        "template": {
            "metadata": {"labels": dict(labels)},
            "spec": {
                "nodeSelector": dict(scheduling["nodeSelector"]),
                "tolerations": list(scheduling["tolerations"]),
                "containers": [
                    {
                        "name": "worker",
                        "image": IMAGE,
                        "resources": {"requests": resources, "limits": resources},
                        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
                    }
                ],
                "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}],
            },
        },
    }
    launcher: dict[str, Any] = {
        "replicas": 1,
        "template": {
            "metadata": {"labels": dict(labels)},
            "spec": {
                "restartPolicy": "OnFailure",
                "containers": [
                    {
                        "name": "launcher",
                        "image": IMAGE,
                        "env": [
                            {
                                "name": "LD_LIBRARY_PATH",
                                "value": "/opt/amazon/openmpi/lib:/opt/nccl/build/lib:"
                                "/opt/amazon/efa/lib:/opt/aws-ofi-nccl/install/lib:"
                                "/usr/local/nvidia/lib",
                            },
                        ],
                        "command": _mpirun(gpus * nodes, gpus, largest),
                    }
                ],
            },
        },
    }
    job = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": nccl_metadata(pool.name, name),
        "spec": {
            "slotsPerWorker": gpus,
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 20},
            "mpiReplicaSpecs": {"Launcher": launcher, "Worker": worker},
        },
    }
    return NcclTest(
        manifests=(job,),
        result_command=(
            f"kubectl -n {NCCL_NAMESPACE} logs -f job/{name}-launcher "
            f"| grep -E 'Avg bus bandwidth|{largest}'"
        ),
        requires=(MPI_OPERATOR, HUGEPAGES_NOTE, *figure_size_note(facts.expected_busbw, largest)),
        expected=facts.expected_busbw,
        sources=(MANIFEST_SOURCE, facts.source),
    )
