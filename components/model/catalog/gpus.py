"""The GPU catalog: portable GPU models, and the shape of a cloud's machine-type rows.

Each cloud keeps its own rows in `components/<cloud>/model/catalog.py` as a `MachineCatalog`.
Facts come from ../shared/reference/FACTS.md (GKE, EKS and AKS sections), which cites the clouds'
GPU documentation. vCPU and memory figures are the clouds' published machine shapes; the
scheduler simulation (`fit`) and the EKS mixed-instance check use them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

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

    cloud: str
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
    # The oldest Kubernetes minor whose nodes the cloud offers on this machine ("": any).
    min_kubernetes: str = ""
    # Capacity is scarce: the autoscaler should take it in whichever zone has it.
    scarce: bool = False
    # On demand only from a reservation (else Spot or Flex-start).
    reservation_only: bool = False


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


# GPU sharing: max_shared_clients_per_gpu must be > 0; 48 is GKE's documented ceiling.
MAX_SHARED_CLIENTS_PER_GPU = 48


def fixed(
    cloud: str,
    gpu: str,
    shapes: Iterable[tuple[str, int, int, float]],
    *,
    gke_accelerator: str = "",
    spot_only: bool = False,
    mig_capable: bool = False,
    min_kubernetes: str = "",
    scarce: bool = False,
    reservation_only: bool = False,
) -> list[MachineType]:
    """Machine types whose GPU count is part of the shape: (name, gpus, vcpus, memory GiB)."""
    return [
        MachineType(
            cloud,
            name,
            gpu,
            gpus,
            vcpus,
            memory,
            gke_accelerator=gke_accelerator,
            spot_only=spot_only,
            mig_capable=mig_capable,
            min_kubernetes=min_kubernetes,
            scarce=scarce,
            reservation_only=reservation_only,
        )
        for name, gpus, vcpus, memory in shapes
    ]


@dataclass(frozen=True)
class MachineCatalog:
    """One cloud's GPU machine types, and the one a pool gets when it names only a GPU model."""

    rows: tuple[MachineType, ...]
    defaults: Mapping[str, str]

    def machine(self, gpu: str, name: str) -> MachineType | None:
        return next((m for m in self.rows if m.gpu == gpu and m.name == name), None)

    def machines_for(self, gpu: str) -> list[MachineType]:
        """Every machine type that carries `gpu`, in catalog order."""
        return [m for m in self.rows if m.gpu == gpu]

    def carriers_of(self, name: str) -> list[str]:
        """GPU models a machine type can carry (empty: not a GPU machine we know)."""
        return [m.gpu for m in self.rows if m.name == name]

    def models(self) -> list[str]:
        """Portable GPU model names offered, sorted."""
        return sorted({m.gpu for m in self.rows})
