"""The GPU network fabric of a pool (`gpuPools[].interconnect: fabric`), as data.

Multi-node training moves gradients between nodes over the machine type's GPU network (EFA on
EC2, GPUDirect-TCPX/TCPXO/RDMA on GCE, InfiniBand on Azure ND), not the default VPC network.
Each cloud keeps one table of `FabricFacts` keyed by machine type (`<cloud>/model/fabric.py`,
every row with its source) and answers `Cloud.fabric_facts`; a pool with `interconnect: fabric`
resolves to a `PoolFabric` on its `PoolSpec`, which `plan`, `fit`, the `gpuPools` output and
the NCCL sample read without asking which cloud it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from components.model.catalog.charts import NCCL_NAMESPACE
from components.model.labels import POOL_LABEL

# `gpuPools[].interconnect`: the pool's nodes talk over the default network only, or over the
# machine type's GPU fabric too.
Interconnect = Literal["none", "fabric"]
INTERCONNECTS: tuple[Interconnect, ...] = ("none", "fabric")


@dataclass(frozen=True)
class FabricFacts:
    """One machine type's GPU network, as its cloud documents it."""

    machine_type: str
    # What the fabric is, as the cloud names it ("EFA", "GPUDirect-TCPXO", "GPUDirect RDMA",
    # "InfiniBand NDR").
    kind: str
    # GPU network interfaces per node (EFA devices, extra GPU NICs, IB HCAs).
    interfaces: int
    # The node's GPU network bandwidth, Gbit/s.
    bandwidth_gbps: int
    # The extended resource a pod requests to get the fabric's devices, and how many a node
    # offers (None: the cloud gives the devices through pod annotations instead, GKE).
    resource: str | None
    resource_per_node: int
    # What delivers the devices to pods (a device plugin, an installer DaemonSet, an operator).
    delivered_by: str
    # Published NCCL bus bandwidth on this machine type, two nodes, for the sample's check.
    expected_busbw: NcclFigure | None
    source: str


@dataclass(frozen=True)
class NcclFigure:
    """A published NCCL test result: the collective, the bus bandwidth and where it is from."""

    collective: Literal["all_reduce", "all_gather"]
    busbw_gbytes_per_s: float
    message_bytes: int
    nodes: int
    source: str


@dataclass(frozen=True)
class PoolFabric:
    """A fabric pool's GPU network as resolved for one pool (on `PoolSpec.fabric`)."""

    facts: FabricFacts
    # The one zone the pool's nodes run in.
    zone: str
    # How the cloud keeps the nodes close ("cluster placement group", "compact placement",
    # "one scale set"), and the most nodes one placement holds (None: no documented cap).
    placement: str
    placement_max_nodes: int | None
    # What a pod must carry to use the fabric beyond the resource request: annotations (GKE
    # multi-networking), and whether it needs the cloud's sidecar or settings (said in
    # `consumers` and the sample).
    pod_annotations: Mapping[str, str] = field(default_factory=dict)
    # Pod annotation keys whose presence means a pod asks for the fabric (fit).
    request_annotation_keys: tuple[str, ...] = ()
    # Linux capabilities the fabric's container adds (IPC_LOCK: RDMA pins memory), and whether
    # it mounts a memory-backed /dev/shm (NCCL's shared-memory transport within the node).
    capabilities: tuple[str, ...] = ()
    shared_memory: bool = False
    notes: tuple[str, ...] = ()
    # What the pod runs and mounts beside its GPU container (GKE's TCPX/TCPXO receive-datapath
    # sidecar), and what the GPU container sets and mounts, as `consumers` prints them; where
    # they come from, and whether gpufleet builds them (False: the pod copies them from there).
    sidecars: tuple[Mapping[str, Any], ...] = ()
    volumes: tuple[Mapping[str, Any], ...] = ()
    container_env: tuple[Mapping[str, Any], ...] = ()
    container_mounts: tuple[Mapping[str, Any], ...] = ()
    pod_source: str = ""
    pod_rendered: bool = True

    @property
    def resource(self) -> str | None:
        return self.facts.resource

    def requested_by(self, requests: Mapping[str, Any], annotations: Mapping[str, str]) -> bool:
        """Whether a pod with these resource requests and annotations asks for this fabric."""
        if self.facts.resource is not None and self.facts.resource in requests:
            return True
        return any(key in annotations for key in self.request_annotation_keys)

    def summary(self) -> str:
        """One line for `plan`'s pool table: "EFA x32, 3200 Gbps"."""
        return f"{self.facts.kind} x{self.facts.interfaces}, {self.facts.bandwidth_gbps} Gbps"


@dataclass(frozen=True)
class NcclTest:
    """A cloud's multi-node NCCL test on a fabric pool, rendered by `samples`.

    `manifests` are the Kubernetes objects (the workers, their Service, any config), whole; the
    sample prints them with the command that reads the result and the published figure.
    """

    manifests: tuple[Mapping[str, Any], ...]
    # The command that shows the bus bandwidth once the test ran (kubectl logs ...).
    result_command: str
    # What must be on the cluster that gpufleet does not install (said as "not checked").
    requires: tuple[str, ...] = ()
    expected: NcclFigure | None = None
    sources: tuple[str, ...] = ()


# The fewest nodes a fabric joins: it carries traffic between nodes only, so a one-node pool gains
# nothing from it, and its NCCL test (two nodes, the published figures' setup) cannot schedule.
FABRIC_MIN_NODES = 2


# nccl-tests allocates its buffers at the largest size (`-e`) on every GPU before the first row
# (NVIDIA/nccl-tests src/common.cu `AllocateBuffs`: send, receive, and the expected result while
# the data check is on, `-c 1`, the default). At most this share of a GPU's memory goes to them;
# the rest is the CUDA context and NCCL's own buffers.
NCCL_BUFFER_SHARE = 0.75


def largest_message_bytes(gpu_memory_gb: int, buffers: int) -> int:
    """The largest power-of-two message size whose `buffers` buffers fit in `NCCL_BUFFER_SHARE`
    of a GPU of `gpu_memory_gb` GB (decimal, as the catalog lists it: the smaller reading)."""
    budget = gpu_memory_gb * 1e9 * NCCL_BUFFER_SHARE / buffers
    size = 1
    while size * 2 <= budget:
        size *= 2
    return size


def size_flag(size: int) -> str:
    """A power-of-two byte count as nccl-tests' `-b`/`-e` take it: 16G, 512M, 8."""
    for suffix, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{suffix}"
    return str(size)


def figure_size_note(figure: NcclFigure | None, largest: int) -> tuple[str, ...]:
    """What a test whose largest message is below the published figure's must say (nothing when
    the figure's size is among its rows)."""
    if figure is None or figure.message_bytes <= largest:
        return ()
    return (
        f"the published figure was measured at {size_flag(figure.message_bytes)}B messages, "
        f"more than this pool's GPUs hold; this test stops at {size_flag(largest)}B, where "
        "busbw is lower",
    )


# A Service's or Pod's name, and a label value, is a DNS label: at most 63 characters.
DNS_LABEL_MAX = 63
# The MPI Operator names an MPIJob's launcher Job `<name>-launcher` and its worker pods
# `<name>-worker-<i>` (kubeflow/mpi-operator @caa3c47f pkg/controller/mpi_job_controller.go).
MPI_NAME_RESERVE = len("-launcher")


def nccl_name(pool_name: str, suffix: str, reserve: int = 0) -> str:
    """`<pool>-<suffix>`, the name of a pool's NCCL test object: one per pool, so two fabric
    pools' tests never collide. The pool's name is cut so the name plus `reserve` characters
    (what a controller appends, e.g. the MPI Operator's `-launcher`) stays a DNS label."""
    room = DNS_LABEL_MAX - reserve - len(suffix) - 1
    return f"{pool_name[:room].rstrip('-')}-{suffix}"


def nccl_metadata(pool_name: str, name: str) -> dict[str, Any]:
    """An NCCL test object's metadata: its name, the NCCL tests' namespace and the pool label
    every sample carries (`kubectl delete -l gpufleet.io/pool=<pool>` removes them all)."""
    return {"name": name, "namespace": NCCL_NAMESPACE, "labels": {POOL_LABEL: pool_name}}
