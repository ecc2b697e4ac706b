"""GPUs on AKS beyond the agent pool: the MIG partitions AKS makes (`gpuInstanceProfile`) and
NVIDIA's GPU software around AKS's driver (what the operator's own driver cannot do, the GPU
Operator's values).

Sources: the AKS documentation FACTS.md cites (multi-instance GPU, the GPU Operator on AKS),
NVIDIA's AKS guide, NVIDIA/gpu-operator v26.7.0 (cited below).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.azure.model.catalog import (
    AKS_MIG_PROFILES,
    AKS_MIG_SIZES,
    CATALOG,
    GRID_DRIVER_SIZES,
)
from components.azure.model.config import software_options
from components.azure.model.fabric import fabric_pools
from components.azure.model.rdma import gpu_operator_rdma
from components.model.problems import Problem
from components.model.schema import GpuPoolConfig, GpuSoftwareConfig, SoftwareMode, StackConfig


def gpu_instance_profile(mig_partition_size: str | None) -> str | None:
    """The agent pool's `gpuInstanceProfile` for a MIG partition size (None: no MIG)."""
    if mig_partition_size is None:
        return None
    return AKS_MIG_PROFILES[mig_partition_size.split(".")[0]]


def mig_problems(pool: GpuPoolConfig, path: str) -> list[Problem]:
    """What AKS cannot partition: a size without MIG, or a partition AKS does not build."""
    where = f"{path}.migPartitionSize"
    size = pool.mig_partition_size
    assert size is not None
    problems = []
    # Without machineType the pool gets the catalog's default size, which must support MIG too.
    vm_size = pool.machine_type or CATALOG.defaults.get(pool.accelerator)
    machine = CATALOG.machine(pool.accelerator, vm_size or "")
    if machine is not None and not machine.mig_capable:
        problems.append(Problem(where, f"{vm_size} does not support MIG on AKS", size))
    if size.split(".")[0] not in AKS_MIG_PROFILES:
        problems.append(Problem(where, "AKS has no gpuInstanceProfile for this partition", size))
    elif size not in AKS_MIG_SIZES.get(pool.accelerator, {}):
        built = ", ".join(AKS_MIG_SIZES.get(pool.accelerator, {})) or "none"
        problems.append(
            Problem(where, f"AKS builds only these {pool.accelerator} partitions: {built}", size)
        )
    return problems


def software_problems(
    software: GpuSoftwareConfig, mode: SoftwareMode, pools: Sequence[GpuPoolConfig]
) -> list[Problem]:
    """What the operator's own driver cannot do on AKS."""
    if not (software_options(software).operator_driver and mode == "gpu-operator"):
        return []
    problems = []
    for index, pool in enumerate(pools):
        if pool.mig_partition_size:
            problems.append(
                Problem(
                    "gpuSoftware.operatorDriver",
                    f"AKS partitions MIG GPUs only when it installs the driver, so "
                    f"gpuPools[{index}] ({pool.name}) would never be partitioned; keep AKS's "
                    "driver (operatorDriver: false) with MIG pools",
                    True,
                )
            )
        vm_size = pool.machine_type or CATALOG.defaults.get(pool.accelerator, "")
        if vm_size in GRID_DRIVER_SIZES:
            problems.append(
                Problem(
                    "gpuSoftware.operatorDriver",
                    f"gpuPools[{index}] ({pool.name}) runs on {vm_size}, whose virtual GPUs "
                    "need the GRID driver AKS installs; keep AKS's driver "
                    "(operatorDriver: false)",
                    True,
                )
            )
    return problems


def gpu_operator_preset(config: StackConfig) -> dict[str, Any]:
    """The GPU Operator's values on AKS."""
    # operatorDriver: the pools are created with gpuProfile.driver None and the operator
    # installs driver and toolkit; otherwise AKS's driver and runtime stay in charge.
    own = software_options(config.gpu_software).operator_driver
    preset: dict[str, Any] = {
        "driver": {"enabled": own},
        "toolkit": {"enabled": own},
        # AKS partitions MIG GPUs itself (gpuInstanceProfile); the MIG manager would reset
        # them to its default `all-disabled` config.
        "migManager": {"enabled": False},
    }
    if own and fabric_pools(config.gpu_pools):
        # GPUDirect RDMA on InfiniBand pools: the operator's driver loads nvidia-peermem
        # (components/azure/model/rdma.py; with AKS's driver a DaemonSet does it instead).
        preset["driver"].update(gpu_operator_rdma()["driver"])
    if not own:
        # AKS's containerd defines only this runtime on GPU nodes (AgentBaker's template;
        # NVIDIA's AKS guide sets it): the chart's default `nvidia` has no handler there.
        preset["operator"] = {"runtimeClass": "nvidia-container-runtime"}
        # Operator 25.10 and later default to CDI (values.yaml `cdi.enabled: true`, NVIDIA/
        # gpu-operator PR 1578): the device plugin then hands out CDI devices
        # (DEVICE_LIST_STRATEGY cdi-annotations,cdi-cri) and the toolkit, which is off here,
        # installs the CDI hook and turns CDI on in containerd (v26.7.0 controllers/
        # object_controls.go transformDevicePluginCtrForCDI, transformToolkitCtrForCDI).
        # Nothing shows AKS's own containerd and nvidia-container-runtime resolving CDI
        # devices, and NVIDIA's AKS guide predates the default: devices are handed to
        # AKS's runtime by environment variable, as before (review aks-3 N-2).
        preset["cdi"] = {"enabled": False}
    return preset
