"""`--for fiftyone`: FiftyOne Enterprise Helm values (fiftyone-teams-app chart 2.22.1).

Keys as the chart's GPU guide and delegated-operator guide at tag fiftyone-teams-app-2.22.1
write them: `delegatedOperatorJobTemplates.jobs.<name>` (on-demand Kubernetes Jobs, the
default) and, with `--always-on`, `delegatedOperatorDeployments.deployments.<name>` with
`replicaCount`, each with `nodeSelector`, `tolerations`, `resources` and `env` (a map).
Every entry asks for CPU and memory that fit the pool's node (`sizing`), less the chart's
telemetry sidecar that runs beside each executor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.model.pools import PoolSpec
from components.tooling.consumers.shared import (
    Request,
    camel,
    comment,
    describe,
    gpu_name,
    keep_running,
    to_yaml,
)
from components.tooling.consumers.sizing import MIB, PodShare, pod_share

CHART = "fiftyone-teams-app chart 2.22.1"
_DOCS = (
    "https://github.com/voxel51/fiftyone-teams-app-deploy/blob/fiftyone-teams-app-2.22.1/helm/docs/"
)
FIFTYONE_DOC = _DOCS + "configuring-gpu-workloads.md"
FIFTYONE_MERGE_DOC = _DOCS + "configuring-delegated-operators.md"
# telemetry.enabled is true by default; its sidecar (a native sidecar in Jobs, a container in
# Deployments) requests and limits this much beside every executor (values.yaml,
# telemetry.sidecar.resources).
TELEMETRY_SIDECAR_CPU_MILLIS = 200
TELEMETRY_SIDECAR_MEMORY_BYTES = 512 * MIB


def fiftyone_key(spec: PoolSpec) -> str:
    return camel("gpu", spec.name)


def fiftyone_share(spec: PoolSpec) -> PodShare | None:
    """CPU and memory of one executor on the pool, leaving room for its telemetry sidecar."""
    return pod_share(
        spec,
        overhead_cpu_millis=TELEMETRY_SIDECAR_CPU_MILLIS,
        overhead_memory_bytes=TELEMETRY_SIDECAR_MEMORY_BYTES,
    )


def fiftyone_entry(spec: PoolSpec) -> dict[str, Any]:
    """One delegated-operator job template or deployment (keys as in the chart's GPU guide,
    whose examples set limits equal to requests for cpu, memory and the GPU)."""
    scheduling = spec.pod_scheduling
    amounts: dict[str, Any] = {}
    share = fiftyone_share(spec)
    if share:
        amounts = {"cpu": share.cpu, "memory": share.memory}
    # The GPU only: an operation is one pod on one node and never uses a fabric pool's GPU
    # network, whose device request could hold a whole node (1 EFA for 8 GPUs on g6.48xlarge).
    amounts.update(scheduling["resources"].get("limits", {}))
    entry: dict[str, Any] = {
        "nodeSelector": dict(scheduling["nodeSelector"]),
        "tolerations": list(scheduling["tolerations"]),
        "resources": {"limits": dict(amounts), "requests": dict(amounts)},
    }
    annotations = keep_running([spec])
    if annotations:
        # A running operation is not evicted to consolidate nodes (podAnnotations: the chart's
        # delegated-operator-job-configmap.yaml and -instance-deployment.yaml at 2.22.1).
        entry["podAnnotations"] = annotations
    if spec.container_env:
        entry["env"] = dict(spec.container_env)
    return entry


def fiftyone_values(pools: Sequence[PoolSpec], *, always_on: bool = False) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if always_on:
        # replicaCount is explicit: the chart's deployment template defaults it to 3.
        values["delegatedOperatorDeployments"] = {
            "deployments": {
                fiftyone_key(s): {"replicaCount": 1, **fiftyone_entry(s)} for s in pools
            }
        }
    values["delegatedOperatorJobTemplates"] = {
        "jobs": {fiftyone_key(s): fiftyone_entry(s) for s in pools}
    }
    return values


def always_on_cost(spec: PoolSpec) -> str:
    """What one always-on replica keeps running: the pool's node, named by machine and GPUs."""
    machine = " or ".join(spec.machine_types) or "GPU"
    cost = (
        f"{fiftyone_key(spec)}: one {machine} node of pool {spec.name} "
        f"({spec.gpus_per_node} x {gpu_name(spec)}) running around the clock"
    )
    if spec.min_nodes > 0:
        cost += f" (the pool keeps {spec.min_nodes} running anyway: minNodes)"
    return cost


def always_on_warnings(request: Request) -> list[str]:
    if not request.always_on:
        return []
    return [
        "--always-on: every delegated operator deployment keeps a GPU node running and billed "
        "around the clock:",
        *(f"  {always_on_cost(spec)}" for spec in request.pools),
    ]


def _sizing_line(spec: PoolSpec) -> str:
    share = fiftyone_share(spec)
    if share is None:
        return (
            "    no cpu/memory set: this pool's machine shape is unknown (or too small to "
            "share); add requests that fit its nodes"
        )
    return (
        f"    per pod cpu {share.cpu}, memory {share.memory}: {share.summary()}, less the "
        "telemetry sidecar"
    )


def render_fiftyone(request: Request) -> str:
    pools = request.pools
    lines = [
        f"FiftyOne Enterprise Helm values ({CHART}) for gpufleet stack {request.stack} "
        f"({request.cloud}).",
        "Format: " + FIFTYONE_DOC,
    ]
    for spec in pools:
        lines += [f"  {fiftyone_key(spec)}: pool {spec.name}: {describe(spec)}", _sizing_line(spec)]
        if spec.pod_settings:
            fields = ", ".join(f"{k}: {v}" for k, v in spec.pod_settings.items())
            lines.append(f"    the pool also needs {fields} on the pod; the chart has no setting")
    lines += [
        "delegatedOperatorJobTemplates: on-demand Jobs. A GPU pod starts only while an operation",
        "runs, so every pool can stay at zero nodes. The chart calls them beta, and the teams-api",
        "image needs the `kubernetes` Python client: " + FIFTYONE_MERGE_DOC,
    ]
    if request.always_on:
        lines += [
            "ALWAYS ON (--always-on): the delegatedOperatorDeployments below keep one node of",
            "each pool running, and billed, around the clock (replicaCount: 1; the chart's",
            "template default is 3):",
            *(f"  {always_on_cost(spec)}" for spec in pools),
        ]
    else:
        lines += [
            "No always-on delegatedOperatorDeployments: each replica would keep one GPU node of",
            "its pool running around the clock (--always-on adds them, with that cost).",
        ]
    lines += [
        "cpu/memory: 1/N of a node's CPU and memory after the kubelet's reserve and the DaemonSets",
        "(N = GPUs or GPU shares per node), less the chart's telemetry sidecar (200m, 512Mi);",
        "limits equal requests, as in the chart's GPU examples.",
        "A `template:` next to `deployments:`/`jobs:` merges maps (nodeSelector, resources) into",
        "these entries and is overridden by their lists (tolerations): " + FIFTYONE_MERGE_DOC,
    ]
    return f"{comment(*lines)}\n{to_yaml(fiftyone_values(pools, always_on=request.always_on))}"
