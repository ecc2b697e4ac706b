"""NVIDIA's GPU software on GKE: which `gpuSoftware.mode` GKE allows, the GPU Operator's and the
DCGM exporter's values around GKE's own driver, and what containers need to find it.

Sources: NVIDIA's GPU Operator on GKE guide (cloud-native-docs gpu-operator/google-gke.rst),
NVIDIA/cloud-native-docs#312, the dcgm-exporter GKE values NVIDIA and Kubecost document.
"""

from __future__ import annotations

from typing import Any

from components.gcp.model.kinds.node_pools import DRIVER_DISABLED, gke_driver
from components.model.problems import Problem
from components.model.schema import GpuPoolConfig, GpuSoftwareConfig, SoftwareMode, StackConfig

# Where GKE's driver lives on the host, and where its device plugin mounts it in containers.
NVIDIA_HOST_DIR = "/home/kubernetes/bin/nvidia"
CONTAINER_LD_LIBRARY_PATH = "/usr/local/nvidia/lib64"


def software_problems(software: GpuSoftwareConfig, mode: SoftwareMode) -> list[Problem]:
    """The modes GKE refuses: NVIDIA's device plugin beside GKE's own."""
    if mode != "device-plugin":
        return []
    return [
        Problem(
            "gpuSoftware.mode",
            "NVIDIA's device plugin conflicts with GKE's own on GKE-managed drivers; "
            "use auto, cloud-managed or gpu-operator",
            software.mode,
        )
    ]


def container_env(config: StackConfig, pool: GpuPoolConfig) -> dict[str, str]:
    """GKE's device plugin mounts its driver here; CUDA images do not look there themselves."""
    if gke_driver(config.gpu_software_mode, pool) == DRIVER_DISABLED:
        return {}
    return {"LD_LIBRARY_PATH": CONTAINER_LD_LIBRARY_PATH}


def gpu_operator_preset(config: StackConfig) -> dict[str, Any]:
    """GKE pools run with INSTALLATION_DISABLED and the no-default-plugin label; the driver
    comes from Google's driver-installer DaemonSet, which gpufleet applies pinned by commit
    (components/gcp/driver_installer.py)."""
    preset: dict[str, Any] = {
        "driver": {"enabled": False},
        # Always file-based: on GKE 1.33+ the toolkit otherwise misconfigures containerd
        # (NVIDIA/cloud-native-docs#312), and a release channel upgrades a cluster past
        # the configured minimum without asking, so the version cannot gate it.
        "toolkit": {
            "installDir": NVIDIA_HOST_DIR,
            "env": [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}],
        },
        "hostPaths": {"driverInstallDir": NVIDIA_HOST_DIR},
        "cdi": {"enabled": True},
    }
    if any(pool.mig_partition_size for pool in config.gpu_pools):
        # GKE nodes must reboot to apply a MIG layout (NVIDIA's GPU Operator on GKE guide,
        # cloud-native-docs gpu-operator/google-gke.rst).
        preset["migManager"] = {"env": [{"name": "WITH_REBOOT", "value": "true"}]}
    return preset


def dcgm_exporter_values() -> dict[str, Any]:
    """GKE's driver lives on the host under /home/kubernetes/bin/nvidia and no container
    runtime hook injects it, so the exporter mounts it and needs device access (the
    dcgm-exporter GKE values NVIDIA and Kubecost document)."""
    return {
        "securityContext": {"privileged": True, "allowPrivilegeEscalation": True},
        "extraHostVolumes": [{"name": "nvidia-install-dir-host", "hostPath": NVIDIA_HOST_DIR}],
        "extraVolumeMounts": [
            {
                "name": "nvidia-install-dir-host",
                "mountPath": "/usr/local/nvidia",
                "readOnly": True,
            },
        ],
        "extraEnv": [{"name": "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE", "value": "device-name"}],
    }
