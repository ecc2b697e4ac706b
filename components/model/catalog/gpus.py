"""The GPU catalog: portable GPU models and the machine types that carry them on each cloud.

Pure data plus small lookups. Facts come from ../shared/reference/FACTS.md (GKE, EKS and AKS
sections), which cites the clouds' GPU documentation. vCPU and memory figures are the clouds'
published machine shapes; the scheduler simulation (`fit`) and the EKS mixed-instance check use them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

Cloud = Literal["gcp", "aws", "azure"]
CLOUDS: tuple[Cloud, ...] = ("gcp", "aws", "azure")
SharingStrategy = Literal["time-sharing", "mps"]


@dataclass(frozen=True)
class GpuModel:
    """A GPU model, independent of any cloud."""

    name: str  # portable name used in config, e.g. "l4"
    description: str
    memory_gb: int
    # MIG partition size -> partitions per GPU (empty: no MIG). GKE's supported list.
    mig_partitions: Mapping[str, int] = field(default_factory=dict)
    # GKE MPS needs Volta or newer; time-sharing works on every model.
    sharing: tuple[SharingStrategy, ...] = ("time-sharing", "mps")


@dataclass(frozen=True)
class MachineType:
    """A machine shape that carries GPUs on one cloud."""

    cloud: Cloud
    name: str
    gpu: str  # GpuModel.name
    gpus: int  # GPUs per machine (GKE N1: the largest count attachable, see attach_counts)
    vcpus: int
    memory_gib: float
    # GKE: accelerator `type` for guest_accelerators.
    gke_accelerator: str = ""
    # GKE N1: GPUs are attached, so the count is a choice: count -> max vCPUs it allows.
    attach_counts: Mapping[int, int] = field(default_factory=dict)
    # GKE A3 High 1g/2g/4g are only sold as Spot or Flex-start.
    spot_only: bool = False
    # AKS: the size supports MIG (`gpu_instance_profile`).
    mig_capable: bool = False


_A100_40_MIG = {"1g.5gb": 7, "2g.10gb": 3, "3g.20gb": 2, "7g.40gb": 1}
_A100_80_MIG = {"1g.10gb": 7, "2g.20gb": 3, "3g.40gb": 2, "7g.80gb": 1}
_H100_MIG = {**_A100_80_MIG, "1g.20gb": 4}
_H200_MIG = {
    "1g.18gb": 7,
    "1g.35gb": 4,
    "2g.35gb": 3,
    "3g.71gb": 2,
    "4g.71gb": 1,
    "7g.141gb": 1,
}
_B200_MIG = {
    "1g.23gb": 7,
    "1g.45gb": 4,
    "2g.45gb": 3,
    "3g.90gb": 2,
    "4g.90gb": 1,
    "7g.180gb": 1,
}

GPU_MODELS: Mapping[str, GpuModel] = {
    m.name: m
    for m in (
        GpuModel("t4", "NVIDIA T4 16 GB", 16),
        GpuModel("p4", "NVIDIA P4 8 GB", 8, sharing=("time-sharing",)),
        GpuModel("p100", "NVIDIA P100 16 GB", 16, sharing=("time-sharing",)),
        GpuModel("v100", "NVIDIA V100 16 GB", 16),
        GpuModel("l4", "NVIDIA L4 24 GB", 24),
        GpuModel("a10g", "NVIDIA A10G 24 GB", 24),
        GpuModel("a10", "NVIDIA A10 24 GB", 24),
        GpuModel("l40s", "NVIDIA L40S 48 GB", 48),
        GpuModel("a100-40gb", "NVIDIA A100 40 GB", 40, mig_partitions=_A100_40_MIG),
        GpuModel("a100-80gb", "NVIDIA A100 80 GB", 80, mig_partitions=_A100_80_MIG),
        GpuModel("h100-80gb", "NVIDIA H100 80 GB", 80, mig_partitions=_H100_MIG),
        GpuModel("h100-nvl", "NVIDIA H100 NVL 94 GB", 94),
        GpuModel("h200-141gb", "NVIDIA H200 141 GB", 141, mig_partitions=_H200_MIG),
        GpuModel("b200", "NVIDIA B200 180 GB", 180, mig_partitions=_B200_MIG),
        GpuModel("rtx-pro-6000", "NVIDIA RTX PRO 6000 96 GB", 96),
    )
}


def _n1_types(gpu: str, accelerator: str, attach: Mapping[int, int]) -> list[MachineType]:
    """N1 machines take 1..N attached GPUs; the vCPU count limits how few GPUs may be attached."""
    shapes: list[tuple[str, int, float]] = []
    for vcpus in (1, 2, 4, 8, 16, 32, 64, 96):
        shapes.append((f"n1-standard-{vcpus}", vcpus, vcpus * 3.75))
    for vcpus in (2, 4, 8, 16, 32, 64, 96):
        shapes.append((f"n1-highmem-{vcpus}", vcpus, vcpus * 6.5))
        shapes.append((f"n1-highcpu-{vcpus}", vcpus, vcpus * 0.9))
    types = []
    for name, vcpus, memory in shapes:
        allowed = {count: limit for count, limit in attach.items() if vcpus <= limit}
        if allowed:
            types.append(
                MachineType(
                    "gcp",
                    name,
                    gpu,
                    max(allowed),
                    vcpus,
                    memory,
                    gke_accelerator=accelerator,
                    attach_counts=allowed,
                )
            )
    return types


def _fixed(
    cloud: Cloud,
    gpu: str,
    shapes: Iterable[tuple[str, int, int, float]],
    **extra: str | bool,
) -> list[MachineType]:
    """Machine types whose GPU count is part of the shape: (name, gpus, vcpus, memory GiB)."""
    return [
        MachineType(cloud, name, gpu, gpus, vcpus, memory, **extra)  # type: ignore[arg-type]
        for name, gpus, vcpus, memory in shapes
    ]


def _aws_g_family(family: str, gpu: str, memory_per_vcpu: int) -> list[MachineType]:
    """g5/g6/g6e: 1 GPU from xlarge to 16xlarge, 4 on 12xlarge and 24xlarge, 8 on 48xlarge."""
    sizes = [("xlarge", 1, 4), ("2xlarge", 1, 8), ("4xlarge", 1, 16), ("8xlarge", 1, 32)]
    sizes += [("16xlarge", 1, 64), ("12xlarge", 4, 48), ("24xlarge", 4, 96), ("48xlarge", 8, 192)]
    return _fixed(
        "aws",
        gpu,
        [(f"{family}.{size}", gpus, vcpus, vcpus * memory_per_vcpu) for size, gpus, vcpus in sizes],
    )


_MACHINE_TYPES: list[MachineType] = [
    # --- GKE ---------------------------------------------------------------------------------
    # N1 with attached GPUs: GPU count -> max vCPUs (cloud.google.com/compute/docs/gpus).
    *_n1_types("t4", "nvidia-tesla-t4", {1: 48, 2: 48, 4: 96}),
    *_n1_types("p4", "nvidia-tesla-p4", {1: 24, 2: 48, 4: 96}),
    *_n1_types("p100", "nvidia-tesla-p100", {1: 16, 2: 32, 4: 96}),
    *_n1_types("v100", "nvidia-tesla-v100", {1: 12, 2: 24, 4: 48, 8: 96}),
    *_fixed(
        "gcp",
        "l4",
        [
            ("g2-standard-4", 1, 4, 16),
            ("g2-standard-8", 1, 8, 32),
            ("g2-standard-12", 1, 12, 48),
            ("g2-standard-16", 1, 16, 64),
            ("g2-standard-24", 2, 24, 96),
            ("g2-standard-32", 1, 32, 128),
            ("g2-standard-48", 4, 48, 192),
            ("g2-standard-96", 8, 96, 384),
        ],
        gke_accelerator="nvidia-l4",
    ),
    *_fixed(
        "gcp",
        "a100-40gb",
        [
            ("a2-highgpu-1g", 1, 12, 85),
            ("a2-highgpu-2g", 2, 24, 170),
            ("a2-highgpu-4g", 4, 48, 340),
            ("a2-highgpu-8g", 8, 96, 680),
            ("a2-megagpu-16g", 16, 96, 1360),
        ],
        gke_accelerator="nvidia-tesla-a100",
    ),
    *_fixed(
        "gcp",
        "a100-80gb",
        [
            ("a2-ultragpu-1g", 1, 12, 170),
            ("a2-ultragpu-2g", 2, 24, 340),
            ("a2-ultragpu-4g", 4, 48, 680),
            ("a2-ultragpu-8g", 8, 96, 1360),
        ],
        gke_accelerator="nvidia-a100-80gb",
    ),
    *_fixed(
        "gcp",
        "h100-80gb",
        [
            ("a3-highgpu-1g", 1, 26, 234),
            ("a3-highgpu-2g", 2, 52, 468),
            ("a3-highgpu-4g", 4, 104, 936),
        ],
        gke_accelerator="nvidia-h100-80gb",
        spot_only=True,
    ),
    *_fixed(
        "gcp", "h100-80gb", [("a3-highgpu-8g", 8, 208, 1872)], gke_accelerator="nvidia-h100-80gb"
    ),
    *_fixed(
        "gcp",
        "h100-80gb",
        [("a3-megagpu-8g", 8, 208, 1872)],
        gke_accelerator="nvidia-h100-mega-80gb",
    ),
    *_fixed(
        "gcp",
        "h200-141gb",
        [("a3-ultragpu-8g", 8, 224, 2952)],
        gke_accelerator="nvidia-h200-141gb",
    ),
    *_fixed("gcp", "b200", [("a4-highgpu-8g", 8, 224, 3968)], gke_accelerator="nvidia-b200"),
    *_fixed(
        "gcp",
        "rtx-pro-6000",
        [
            ("g4-standard-48", 1, 48, 180),
            ("g4-standard-96", 2, 96, 360),
            ("g4-standard-192", 4, 192, 720),
            ("g4-standard-384", 8, 384, 1440),
        ],
        gke_accelerator="nvidia-rtx-pro-6000",
    ),
    # --- EKS ---------------------------------------------------------------------------------
    *_fixed(
        "aws",
        "t4",
        [
            ("g4dn.xlarge", 1, 4, 16),
            ("g4dn.2xlarge", 1, 8, 32),
            ("g4dn.4xlarge", 1, 16, 64),
            ("g4dn.8xlarge", 1, 32, 128),
            ("g4dn.16xlarge", 1, 64, 256),
            ("g4dn.12xlarge", 4, 48, 192),
            ("g4dn.metal", 8, 96, 384),
        ],
    ),
    *_aws_g_family("g5", "a10g", 4),
    *_aws_g_family("g6", "l4", 4),
    *_aws_g_family("g6e", "l40s", 8),
    *_fixed("aws", "a100-40gb", [("p4d.24xlarge", 8, 96, 1152)]),
    *_fixed("aws", "a100-80gb", [("p4de.24xlarge", 8, 96, 1152)]),
    *_fixed("aws", "h100-80gb", [("p5.48xlarge", 8, 192, 2048), ("p5.4xlarge", 1, 16, 256)]),
    *_fixed("aws", "h200-141gb", [("p5e.48xlarge", 8, 192, 2048), ("p5en.48xlarge", 8, 192, 2048)]),
    # --- AKS ---------------------------------------------------------------------------------
    *_fixed(
        "azure",
        "t4",
        [
            ("Standard_NC4as_T4_v3", 1, 4, 28),
            ("Standard_NC8as_T4_v3", 1, 8, 56),
            ("Standard_NC16as_T4_v3", 1, 16, 110),
            ("Standard_NC64as_T4_v3", 4, 64, 440),
        ],
    ),
    *_fixed(
        "azure",
        "a100-80gb",
        [
            ("Standard_NC24ads_A100_v4", 1, 24, 220),
            ("Standard_NC48ads_A100_v4", 2, 48, 440),
            ("Standard_NC96ads_A100_v4", 4, 96, 880),
            ("Standard_ND96amsr_A100_v4", 8, 96, 1900),
        ],
        mig_capable=True,
    ),
    # AKS's MIG page lists ND96asr_v4 among the MIG sizes (learn.microsoft.com/azure/aks/gpu-multi-instance).
    *_fixed("azure", "a100-40gb", [("Standard_ND96asr_v4", 8, 96, 900)], mig_capable=True),
    *_fixed("azure", "h100-80gb", [("Standard_ND96isr_H100_v5", 8, 96, 1900)], mig_capable=True),
    *_fixed(
        "azure",
        "h100-nvl",
        [("Standard_NC40ads_H100_v5", 1, 40, 320), ("Standard_NC80adis_H100_v5", 2, 80, 640)],
    ),
    *_fixed("azure", "a10", [("Standard_NV36ads_A10_v5", 1, 36, 440)]),
]

# Keyed by (cloud, GPU model, machine type): on GKE one N1 shape can carry several GPU models.
MACHINE_TYPES: Mapping[tuple[Cloud, str, str], MachineType] = {
    (m.cloud, m.gpu, m.name): m for m in _MACHINE_TYPES
}

# A pool that names only an accelerator gets the smallest sensible machine on its cloud.
DEFAULT_MACHINE_TYPES: Mapping[tuple[Cloud, str], str] = {
    ("gcp", "t4"): "n1-standard-4",
    ("gcp", "p4"): "n1-standard-4",
    ("gcp", "p100"): "n1-standard-4",
    ("gcp", "v100"): "n1-standard-8",
    ("gcp", "l4"): "g2-standard-8",
    ("gcp", "a100-40gb"): "a2-highgpu-1g",
    ("gcp", "a100-80gb"): "a2-ultragpu-1g",
    ("gcp", "h100-80gb"): "a3-highgpu-8g",
    ("gcp", "h200-141gb"): "a3-ultragpu-8g",
    ("gcp", "b200"): "a4-highgpu-8g",
    ("gcp", "rtx-pro-6000"): "g4-standard-48",
    ("aws", "t4"): "g4dn.xlarge",
    ("aws", "a10g"): "g5.xlarge",
    ("aws", "l4"): "g6.xlarge",
    ("aws", "l40s"): "g6e.xlarge",
    ("aws", "a100-40gb"): "p4d.24xlarge",
    ("aws", "a100-80gb"): "p4de.24xlarge",
    ("aws", "h100-80gb"): "p5.48xlarge",
    ("aws", "h200-141gb"): "p5e.48xlarge",
    ("azure", "t4"): "Standard_NC4as_T4_v3",
    ("azure", "a100-80gb"): "Standard_NC24ads_A100_v4",
    ("azure", "a100-40gb"): "Standard_ND96asr_v4",
    ("azure", "h100-80gb"): "Standard_ND96isr_H100_v5",
    ("azure", "h100-nvl"): "Standard_NC40ads_H100_v5",
    ("azure", "a10"): "Standard_NV36ads_A10_v5",
}

# AKS `gpu_instance_profile` values and the MIG slice count ("<n>g") each selects.
AKS_MIG_PROFILES: Mapping[str, str] = {
    "1g": "MIG1g",
    "2g": "MIG2g",
    "3g": "MIG3g",
    "4g": "MIG4g",
    "7g": "MIG7g",
}

# GKE GPU sharing: max_shared_clients_per_gpu must be > 0; 48 is the documented ceiling.
MAX_SHARED_CLIENTS_PER_GPU = 48


def machine_types_for(cloud: Cloud, gpu: str) -> list[MachineType]:
    """Every machine type on `cloud` that carries `gpu`, in catalog order."""
    return [m for m in _MACHINE_TYPES if m.cloud == cloud and m.gpu == gpu]


def carriers_of(cloud: Cloud, machine_type: str) -> list[str]:
    """GPU models a machine type can carry on `cloud` (empty: not a GPU machine we know)."""
    return [m.gpu for m in _MACHINE_TYPES if m.cloud == cloud and m.name == machine_type]


def models_on(cloud: Cloud) -> list[str]:
    """Portable GPU model names offered on `cloud`, sorted."""
    return sorted({m.gpu for m in _MACHINE_TYPES if m.cloud == cloud})
