"""What every tool's settings share: the request, the GPU a pod asks for, YAML and comments."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from components.model.capacity import QUEUE_LABEL, PoolQueue
from components.model.catalog import gpus
from components.model.pools import PoolSpec, Taint
from components.model.schema import StackConfig


class ConsumerError(ValueError):
    """The pools cannot be expressed in the tool's settings; the message says why."""


@dataclass(frozen=True)
class Request:
    """What the command hands a tool's renderer: the stack, its chosen GPU pools, the options."""

    stack: str
    config: StackConfig
    pools: tuple[PoolSpec, ...]
    always_on: bool = False  # fiftyone: also always-on delegated operator deployments
    format: str = "helm"  # jupyterhub: "helm" (Zero to JupyterHub values) or "python"

    @property
    def cloud(self) -> str:
        return self.config.cloud


def gpu_request(spec: PoolSpec) -> dict[str, int]:
    """The GPU resource a workload on this pool asks for (what `podScheduling` puts in limits),
    with, on a fabric pool, its GPUs' share of the fabric's devices."""
    limits: dict[str, int] = dict(spec.pod_scheduling["resources"].get("limits", {}))
    return {**limits, **fabric_request(spec, limits.get(spec.gpu_resource, 0))}


def fabric_request(spec: PoolSpec, gpus: int) -> dict[str, int]:
    """What a pod asking for `gpus` GPUs of a fabric pool requests of the fabric's resource:
    those GPUs' share of the node's devices (at least one), so pods that fill the node's GPUs
    also take all its fabric (EFA 32 per 8 GPUs on p5.48xlarge: 4 per GPU)."""
    fabric = spec.fabric
    if fabric is None or fabric.resource is None or gpus <= 0:
        return {}
    per_node = fabric.facts.resource_per_node
    share = per_node * gpus // max(spec.gpus_allocatable, 1)
    return {fabric.resource: max(1, min(per_node, share))}


SHARED_MEMORY_VOLUME = "dshm"


def fabric_container(spec: PoolSpec) -> dict[str, Any]:
    """What the fabric's container adds: its capabilities and the /dev/shm mount."""
    fabric = spec.fabric
    if fabric is None:
        return {}
    container: dict[str, Any] = {}
    if fabric.capabilities:
        container["securityContext"] = {"capabilities": {"add": list(fabric.capabilities)}}
    if fabric.shared_memory:
        container["volumeMounts"] = [{"name": SHARED_MEMORY_VOLUME, "mountPath": "/dev/shm"}]
    return container


def fabric_volumes(spec: PoolSpec) -> list[dict[str, Any]]:
    """The pod's volumes a fabric pool's container mounts (a memory-backed /dev/shm)."""
    if spec.fabric is None or not spec.fabric.shared_memory:
        return []
    return [{"name": SHARED_MEMORY_VOLUME, "emptyDir": {"medium": "Memory"}}]


def fabric_annotations(spec: PoolSpec) -> dict[str, str]:
    """The pod annotations a fabric pool's pods carry to get the fabric (GKE multi-networking)."""
    return dict(spec.fabric.pod_annotations) if spec.fabric is not None else {}


def gpu_name(spec: PoolSpec) -> str:
    model = gpus.GPU_MODELS.get(spec.accelerator)
    return model.description if model else spec.accelerator


def describe(spec: PoolSpec) -> str:
    """One line for humans: GPU model, share per pod, machine, Spot, scale-to-zero."""
    per_node = spec.allocatable_per_node.get(spec.gpu_resource, 0)
    if spec.sharing_strategy:
        share = f"1 of {per_node} {spec.gpu_resource} per node ({spec.sharing_strategy})"
    elif spec.mig_partition_size:
        share = f"1 of {per_node} MIG {spec.mig_partition_size} slices per node"
    else:
        share = f"1 of {per_node} {spec.gpu_resource} per node"
    parts = [gpu_name(spec), share]
    if spec.machine_types:
        parts.append("/".join(spec.machine_types))
    if spec.spot:
        parts.append("Spot")
    if spec.queue is not None:
        parts.append("queued (Kueue admits a Job whole)")
    elif spec.min_nodes == 0:
        parts.append("scales from zero (the first pod waits for a node)")
    return ", ".join(parts)


def queue_lines(spec: PoolSpec) -> list[str]:
    """For a queued pool: the label a Job needs, where, and what it buys (comment lines)."""
    queue = spec.queue
    if queue is None:
        return []
    return [
        "",
        "Queued pool: submit the work as a Job (batch/v1, or a JobSet, RayJob, ... Kueue runs) in "
        f"namespace {' or '.join(queue.namespaces)},",
        "with this label in the Job's own metadata (not its pod template's):",
        "  metadata:",
        "    labels:",
        f"      {QUEUE_LABEL}: {queue.local_queue}",
        _admission_line(queue),
    ]


def _admission_line(queue: PoolQueue) -> str:
    """When Kueue starts a Job of this queue: nodes at once (queued) or quota (queues.pools)."""
    if queue.requested:
        return (
            "Kueue starts the Job only when nodes for all its pods can be had at once (all or "
            "nothing)."
        )
    borrow = (
        f", else on pool {queue.borrow_from} by borrowing its unused quota"
        if queue.borrow_from
        else ""
    )
    return (
        f"Kueue starts the Job when the pool's quota ({queue.quota_nodes} nodes' worth) holds "
        f"all its pods{borrow}."
    )


def queued_warnings(request: Request) -> list[str]:
    """Tools whose settings cannot carry a queue label: what that means on queued pools."""
    return [
        f"pool {spec.name} is queued: these settings carry no {QUEUE_LABEL} label, so the "
        "pods they start bypass its queue (one node at a time, not all or nothing); use --for "
        "pod for Jobs"
        for spec in request.pools
        if spec.queue is not None
    ]


def queue_guard(spec: PoolSpec, every_pool: Sequence[PoolSpec]) -> Taint | None:
    """A queued pool's own taint, which no other pool of the stack has: it keeps every pod
    Kueue did not admit (Kueue adds its toleration on admission) off the pool's nodes, as AKS's
    `gpufleet.io/queued` does. None: the pool has none (a queued pool of a cluster gpufleet did
    not create may share its taints with other pools)."""
    if spec.queue is None:
        return None
    others = {t for other in every_pool if other.name != spec.name for t in other.node_taints}
    return next((t for t in spec.node_taints if t not in others), None)


def unreachable_pools(pools: Sequence[PoolSpec], every_pool: Sequence[PoolSpec]) -> list[PoolSpec]:
    """Queued pools a tool's pods, which carry no queue label, must not take: where nodes come
    only through ProvisioningRequests (GKE's queued provisioning) they would never get one, and
    where the pool's own taint keeps unadmitted pods off (AKS), tolerating it would start them
    outside the queue; Flyte's tolerations go to every GPU task, so tasks for any pool would
    land there (review issue 30, Flyte on queued pools). A pool of `queues.pools` (paid
    capacity under a quota) is left out too: its nodes carry no taint of the queue's own, so an
    unlabelled pod would run there uncounted by Kueue and take GPUs its admitted Jobs then wait
    for (Kueue adds a flavor's tolerations and node labels to admitted pods only)."""
    return [
        spec
        for spec in pools
        if spec.queue is not None
        and (
            spec.queue.only_requested
            or not spec.queue.requested
            or queue_guard(spec, every_pool) is not None
        )
    ]


def left_out(spec: PoolSpec, what: str, guard: Taint | None = None) -> str:
    """Why a queued pool gets no `what` (for stderr or a comment); `guard`: its own taint."""
    queue = spec.queue
    assert queue is not None
    job = (
        f"Jobs labelled {QUEUE_LABEL}={queue.local_queue} in namespace "
        f"{' or '.join(queue.namespaces)}"
    )
    if not queue.requested:
        return (
            f"pool {spec.name}: no {what}: its GPUs are the quota of Kueue queue "
            f"{queue.local_queue} (queues.pools), which counts only {job}; these settings "
            "carry no queue label, so their pods would take the pool's GPUs uncounted and "
            "the Jobs Kueue admits there would stay Pending; use --for pod for such a Job"
        )
    if queue.only_requested or guard is None:
        return (
            f"pool {spec.name}: no {what}: its nodes come only through ProvisioningRequests "
            f"({queue.provisioning_class}), which Kueue makes for {job}; use --for pod for "
            "such a Job"
        )
    return (
        f"pool {spec.name}: no {what}: it is queued, and its taint {guard} keeps off its nodes "
        f"every pod Kueue did not admit (Kueue adds the toleration when it admits one of the "
        f"{job}); these settings carry no queue label, so tolerating the taint would start "
        "pods outside the queue; use --for pod for such a Job"
    )


def camel(*words: str) -> str:
    parts = [p for word in words for p in word.replace("_", "-").split("-") if p]
    return parts[0].lower() + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def to_yaml(document: Any) -> str:
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False).rstrip("\n")


def comment(*lines: str) -> str:
    return "\n".join(f"# {line}" if line else "#" for line in lines)


def and_list(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def python_literal(value: Any, indent: int = 0) -> str:
    """Indented Python source for plain data (str, int, bool, None, list, dict), laid out like
    JSON with 4-space indents; the round trip through `ast.literal_eval` is checked by tests."""
    pad, inner = " " * indent, " " * (indent + 4)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{inner}{json.dumps(str(key), ensure_ascii=False)}: {python_literal(item, indent + 4)}"
            for key, item in value.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        items = [f"{inner}{python_literal(item, indent + 4)}" for item in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None or isinstance(value, bool | int | float):
        return repr(value)
    raise ConsumerError(f"cannot write {value!r} as a Python literal")


def keep_running(pools: Sequence[PoolSpec]) -> dict[str, str]:
    """The pod annotations that keep a running job's node from being consolidated away."""
    found: dict[str, str] = {}
    for spec in pools:
        # Each pool's kind says which (components/model/pool_spec.py: SAFE_TO_EVICT, ...).
        found.update(spec.keep_running_annotations)
    return found
