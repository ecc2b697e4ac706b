"""Pinned Helm charts, container images and version tables: one place, as data.

Chart versions match the `values.yaml` snapshots in ../shared/reference/helm/ (see its README);
image tags are explicit so nothing ever floats on `latest`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class ChartPin:
    """A Helm chart at a fixed version from a fixed repository."""

    chart: str
    version: str
    repo: str
    namespace: str


NVIDIA_DEVICE_PLUGIN = ChartPin(
    "nvidia-device-plugin",
    "0.20.0",
    "https://nvidia.github.io/k8s-device-plugin",
    "nvidia-device-plugin",
)
GPU_OPERATOR = ChartPin(
    "gpu-operator", "v26.7.0", "https://helm.ngc.nvidia.com/nvidia", "gpu-operator"
)
CLUSTER_AUTOSCALER = ChartPin(
    "cluster-autoscaler", "9.59.0", "https://kubernetes.github.io/autoscaler", "kube-system"
)
DCGM_EXPORTER = ChartPin(
    "dcgm-exporter", "4.8.2", "https://nvidia.github.io/dcgm-exporter/helm-charts", "gpu-monitoring"
)

CHARTS: Mapping[str, ChartPin] = {
    pin.chart: pin
    for pin in (NVIDIA_DEVICE_PLUGIN, GPU_OPERATOR, CLUSTER_AUTOSCALER, DCGM_EXPORTER)
}

# Kubernetes minors gpufleet supports, with the cluster-autoscaler release for each: CA's minor
# must match the cluster's (latest patches per FACTS.md, "CA flags").
CLUSTER_AUTOSCALER_IMAGE_TAGS: Mapping[str, str] = {
    "1.32": "v1.32.7",
    "1.33": "v1.33.6",
    "1.34": "v1.34.5",
    "1.35": "v1.35.2",
    "1.36": "v1.36.1",
}
KUBERNETES_MINORS: tuple[str, ...] = tuple(CLUSTER_AUTOSCALER_IMAGE_TAGS)

# The sample workloads' namespace (components/kubernetes/sample_manifests.py).
SAMPLES_NAMESPACE = "gpufleet-samples"
# The multi-node NCCL tests' namespace (components/tooling/nccl_sample.py): their pods need more
# than the samples' restricted level (root, host paths, added capabilities), so they get their
# own namespace instead of loosening the samples'.
NCCL_NAMESPACE = "gpufleet-nccl"


def own_namespaces() -> frozenset[str]:
    """The namespaces gpufleet creates for its own software (not kube-system, which it only
    uses): removing that software deletes the namespace with whatever else runs in it."""
    return frozenset(pin.namespace for pin in CHARTS.values()) - {"kube-system"} | {
        SAMPLES_NAMESPACE
    }


# Sample workload images (pinned tags; vectoradd prints "Test PASSED").
CUDA_VECTORADD_IMAGE = "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0"
CUDA_BASE_IMAGE = "nvcr.io/nvidia/cuda:12.5.0-base-ubuntu22.04"
