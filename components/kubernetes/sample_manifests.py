"""Sample CUDA workloads that prove each GPU pool end to end, as plain Kubernetes manifests.

Per GPU pool: a vector-add Job (prints `Test PASSED`), an `nvidia-smi` Job and, for pools that
advertise more GPUs than they have (time-slicing, MPS, MIG), a Deployment with one replica more
than the node's physical GPUs, all on one node, which only becomes ready if sharing works.
Every pod uses exactly the pool's `podScheduling` (selector, tolerations, one GPU).

These pure functions are shared by the Pulumi program (`components.kubernetes.samples`, when
`samples.enabled`) and by `python -m components samples STACK`, which prints them as YAML for
`kubectl apply -f -` on any cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from components.model import pod_security
from components.model.catalog import charts
from components.model.labels import POOL_LABEL
from components.model.pools import GPU_RESOURCE, PoolSpec

NAMESPACE = charts.SAMPLES_NAMESPACE
APP = "gpufleet-sample"
# Long enough for a GPU pool to scale up from zero and pull CUDA images; short enough that a
# broken pool fails instead of keeping a GPU node up.
ACTIVE_DEADLINE_SECONDS = 3600
TTL_AFTER_FINISHED_SECONDS = 3600
BACKOFF_LIMIT = 2
# Who the samples run as: neither image sets a USER (both start as root unless told), and what
# they run (nvidia-smi, a vector add) needs no more than the GPU device files, which the NVIDIA
# runtime hands to the container readable by any user.
SAMPLE_USER = 1000
_RESOURCES = {
    "requests": {"cpu": "100m", "memory": "256Mi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}


def is_shared(pool: PoolSpec) -> bool:
    """The pool advertises more GPUs per node than it has (time-slicing, MPS or MIG)."""
    return pool.extended_resources.get(GPU_RESOURCE, 0) > pool.gpus_per_node


def namespace_manifest(level: pod_security.Level = "restricted") -> dict[str, Any]:
    """The samples' namespace, enforcing `level` (`namespace_level`: restricted unless a pool's
    samples need more)."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": NAMESPACE,
            "labels": {"app.kubernetes.io/managed-by": "gpufleet", **pod_security.labels(level)},
        },
    }


def runs_as_root(pool: PoolSpec) -> bool:
    """MPS clients keep root: the MPS control daemon (GKE's on the host, or the device plugin's)
    runs as root and starts the MPS server as its first client's user, and whether a non-root
    client reaches its pipe directory is not checked (NVIDIA MPS docs, "Multi-user"). Every
    other sample runs as SAMPLE_USER."""
    return pool.sharing_strategy == "mps"


def namespace_level(pools: Sequence[PoolSpec]) -> pod_security.Level:
    """The most restrictive Pod Security level that admits every sample of `pools` (restricted,
    unless an MPS pool's samples run as root or need the host's IPC namespace)."""
    pods = [
        _pod_template(manifest)
        for pool in pools
        if has_samples(pool)
        for manifest in pool_manifests(pool)
    ]
    return pod_security.strictest(pods)


def _pod_template(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    spec: Mapping[str, Any] = manifest["spec"]["template"]["spec"]
    return spec


# The vector add prints its own start-up timeline (docs/cold-start.md, measuring): when the
# container started, when the driver answered (nvidia-smi, which the NVIDIA runtime mounts
# into the container), and when CUDA's initialisation and first kernel were done (the vector
# add, /cuda-samples/vectorAdd in NVIDIA/k8s-samples deployments/container/Dockerfile.ubuntu);
# with the pod's creationTimestamp and conditions they give the real cold start.
TIMELINE_SCRIPT = """set -e
mark() { echo "gpufleet-timeline $1 $(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)"; }
mark container-started
if nvidia-smi -L >/dev/null 2>&1; then mark driver-answered; else echo "gpufleet-timeline driver-answered unknown (nvidia-smi absent or failed)"; fi
/cuda-samples/vectorAdd
mark cuda-first-kernel-done
"""


def vectoradd_job(pool: PoolSpec) -> dict[str, Any]:
    """CUDA vector addition on one GPU of the pool; its log says `Test PASSED`, between the
    lines of its start-up timeline (`gpufleet-timeline <step> <UTC time>`)."""
    command = ["/bin/sh", "-c", TIMELINE_SCRIPT]
    container = _container("vectoradd", charts.CUDA_VECTORADD_IMAGE, command, pool)
    return _job(pool, "vectoradd", container)


def nvidia_smi_job(pool: PoolSpec) -> dict[str, Any]:
    """`nvidia-smi` on one GPU of the pool: shows the driver, CUDA version and the GPU it got."""
    container = _container("nvidia-smi", charts.CUDA_BASE_IMAGE, ["nvidia-smi"], pool)
    return _job(pool, "nvidia-smi", container)


def sharing_deployment(pool: PoolSpec) -> dict[str, Any] | None:
    """Physical GPUs + 1 replicas, each holding one GPU, required onto one node (None if unshared).

    It can only become ready when the node advertises more nvidia.com/gpu than it has GPUs,
    i.e. when time-slicing, MPS or MIG really works on the pool.
    """
    if not is_shared(pool):
        return None
    name = _name(pool, "sharing")
    labels = _labels(pool, "sharing", name)
    selector = {"app.kubernetes.io/name": APP, "app.kubernetes.io/instance": name}
    container = _container(
        "sharing", charts.CUDA_BASE_IMAGE, ["sh", "-c", "nvidia-smi -L && sleep infinity"], pool
    )
    pod_spec = _pod_spec(pool, container, restart_policy="Always")
    pod_spec["affinity"] = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": dict(selector)},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": pool.gpus_per_node + 1,
            "selector": {"matchLabels": dict(selector)},
            # Replicas hold GPU slots; a rolling update would need slots that do not exist.
            "strategy": {"type": "Recreate"},
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec},
        },
    }


def pool_manifests(pool: PoolSpec) -> list[dict[str, Any]]:
    """The samples of one GPU pool."""
    manifests = [vectoradd_job(pool), nvidia_smi_job(pool)]
    deployment = sharing_deployment(pool)
    if deployment is not None:
        manifests.append(deployment)
    return manifests


def has_samples(pool: PoolSpec) -> bool:
    """A GPU pool whose nodes a plain Job can get: not one whose nodes come only through
    ProvisioningRequests (GKE's queued provisioning), where an unqueued sample never starts."""
    return pool.kind == "gpu" and not (pool.queue is not None and pool.queue.only_requested)


def manifests(pools: Sequence[PoolSpec]) -> list[dict[str, Any]]:
    """The samples namespace and every GPU pool's samples, in pool order."""
    result = [namespace_manifest(namespace_level(pools))]
    for pool in pools:
        if has_samples(pool):
            result += pool_manifests(pool)
    return result


# --- building blocks ---------------------------------------------------------------------------


def _name(pool: PoolSpec, suffix: str) -> str:
    # Job names must fit a label value (63); pool names are DNS labels ending alphanumeric.
    return f"{pool.name[: 62 - len(suffix)].rstrip('-')}-{suffix}"


def _labels(pool: PoolSpec, component: str, name: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": APP,
        "app.kubernetes.io/instance": name,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/managed-by": "gpufleet",
        POOL_LABEL: pool.name,
    }


def _container(name: str, image: str, command: list[str] | None, pool: PoolSpec) -> dict[str, Any]:
    scheduling = pool.pod_scheduling
    gpu_limits: Mapping[str, Any] = scheduling["resources"].get("limits", {})
    container: dict[str, Any] = {
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "resources": {
            "requests": dict(_RESOURCES["requests"]),
            "limits": {**_RESOURCES["limits"], **gpu_limits},
        },
        # No capability and no way to gain privileges (Pod Security restricted).
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "privileged": False,
            "capabilities": {"drop": ["ALL"]},
        },
    }
    if command:
        container["command"] = command
    if pool.container_env:
        # Where the cloud mounts its driver (GKE: FACTS.md, GKE workloads).
        container["env"] = [{"name": k, "value": v} for k, v in pool.container_env.items()]
    return container


def _pod_spec(pool: PoolSpec, container: dict[str, Any], restart_policy: str) -> dict[str, Any]:
    scheduling = pool.pod_scheduling
    security: dict[str, Any] = {"seccompProfile": {"type": "RuntimeDefault"}}
    if not runs_as_root(pool):
        security.update(runAsNonRoot=True, runAsUser=SAMPLE_USER, runAsGroup=SAMPLE_USER)
    spec: dict[str, Any] = {
        "restartPolicy": restart_policy,
        "automountServiceAccountToken": False,
        "securityContext": security,
        "containers": [container],
    }
    if scheduling["nodeSelector"]:
        spec["nodeSelector"] = dict(scheduling["nodeSelector"])
    if scheduling["tolerations"]:
        spec["tolerations"] = [dict(t) for t in scheduling["tolerations"]]
    spec.update(pool.pod_settings)
    return spec


def _job(pool: PoolSpec, component: str, container: dict[str, Any]) -> dict[str, Any]:
    name = _name(pool, component)
    labels = _labels(pool, component, name)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "backoffLimit": BACKOFF_LIMIT,
            "activeDeadlineSeconds": ACTIVE_DEADLINE_SECONDS,
            "ttlSecondsAfterFinished": TTL_AFTER_FINISHED_SECONDS,
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": _pod_spec(pool, container, restart_policy="Never"),
            },
        },
    }
