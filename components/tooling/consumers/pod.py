"""`--for pod`: a pod spec fragment per pool, in the form of Kubernetes' GPU scheduling page."""

from __future__ import annotations

import json
from typing import Any

from components.model.pools import PoolSpec
from components.tooling.consumers.shared import (
    Request,
    comment,
    describe,
    fabric_annotations,
    fabric_container,
    fabric_volumes,
    gpu_request,
    keep_running,
    queue_lines,
    to_yaml,
)

K8S_GPU_DOC = "https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/"


def pod_fragment(spec: PoolSpec) -> dict[str, Any]:
    """A pod spec fragment placing one container on the pool (with the pod-level fields the
    pool needs, e.g. `hostIPC` on GKE MPS pools)."""
    scheduling = spec.pod_scheduling
    main: dict[str, Any] = {"name": "main", "resources": _resources(spec), **fabric_container(spec)}
    fabric = spec.fabric
    fragment: dict[str, Any] = {
        "nodeSelector": dict(scheduling["nodeSelector"]),
        "tolerations": list(scheduling["tolerations"]),
        **dict(spec.pod_settings),
        "containers": [main],
    }
    if fabric is not None:
        # What the fabric's NCCL plugin needs beside and in the GPU container (GKE's TCPXO
        # receive-datapath sidecar, its volumes and env), built as the NCCL sample builds it.
        if fabric.container_env:
            main["env"] = [dict(item) for item in fabric.container_env]
        if fabric.container_mounts:
            main["volumeMounts"] = [
                *main.get("volumeMounts", []),
                *(dict(item) for item in fabric.container_mounts),
            ]
        fragment["containers"] += [dict(sidecar) for sidecar in fabric.sidecars]
        volumes = [*fabric_volumes(spec), *(dict(volume) for volume in fabric.volumes)]
        if volumes:
            fragment["volumes"] = volumes
    return fragment


def _resources(spec: PoolSpec) -> dict[str, Any]:
    """The container's resources: one GPU, and on a fabric pool its share of the fabric."""
    if spec.fabric is None:
        return dict(spec.pod_scheduling["resources"])
    return {"limits": gpu_request(spec)}


def _fabric_lines(spec: PoolSpec) -> list[str]:
    """A fabric pool's pod annotations (metadata, not the pod spec this fragment is)."""
    annotations = fabric_annotations(spec)
    if not annotations or spec.fabric is None:
        return []
    fabric = spec.fabric
    if not fabric.pod_rendered:
        where = (
            "GPU fabric: gpufleet does not build this mode's receive-datapath sidecar: copy "
            f"the {fabric.pod_source}, with its volumes and the NCCL container's env and "
            "volumeMounts"
        )
    elif fabric.sidecars or fabric.volumes:
        names = ", ".join(str(s["name"]) for s in fabric.sidecars)
        where = (
            "GPU fabric: the container `main` (the one running NCCL) carries the env and "
            "volumeMounts below"
            + (f", beside the sidecar {names}" if names else "")
            + f" and the volumes, as in {fabric.pod_source}"
        )
    else:
        where = ""
    return [
        *([where] if where else []),
        "GPU fabric: the pod's metadata.annotations must carry:",
        # One line per annotation: a value may span lines (GKE's device list), and every line
        # of this header is a YAML comment.
        *(f"  {key}: {json.dumps(value)}" for key, value in sorted(annotations.items())),
    ]


def _keep_running_lines(spec: PoolSpec) -> list[str]:
    annotations = keep_running([spec])
    if not annotations:
        return []
    shown = ", ".join(f'{key}: "{value}"' for key, value in annotations.items())
    return [
        f"A training job's pod also sets metadata.annotations {{{shown}}}, so the autoscaler "
        "does not evict it to consolidate nodes."
    ]


def render_pod(request: Request) -> str:
    documents = []
    for spec in request.pools:
        header = comment(
            f"gpufleet stack {request.stack} ({request.cloud}), GPU pool {spec.name}: "
            f"{describe(spec)}",
            "Merge into a pod spec (`spec:` of a Pod, `spec.template.spec:` of a Deployment "
            "or Job);",
            "`resources` belongs to the container that uses the GPU. Format: " + K8S_GPU_DOC,
            *queue_lines(spec),
            *_keep_running_lines(spec),
            *_fabric_lines(spec),
        )
        documents.append(f"{header}\n{to_yaml(pod_fragment(spec))}")
    return "\n---\n".join(documents)
