"""The machine types a GKE system pool may use, with their shapes (review gke-2.md N14).

Compute Engine's general-purpose families, from its machine-type tables ("General-purpose
machine family for Compute Engine", cloud.google.com/compute/docs/general-purpose-machines):
a type is `<series>-<kind>-<vCPUs>`, its memory a fixed GiB per vCPU for the kind (standard 4,
highmem 8, highcpu 1), offered at the vCPU counts listed. Which series a region or zone offers
is not checked here. A system pool runs gpufleet's controllers and GKE's own; GPU and
accelerator-optimized machines are for GPU pools.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from components.model.problems import Problem

_GIB_PER_VCPU: Final[Mapping[str, int]] = MappingProxyType(
    {"standard": 4, "highmem": 8, "highcpu": 1}
)
# (series, kind) -> the vCPU counts Compute Engine offers.
SIZES: Final[Mapping[tuple[str, str], tuple[int, ...]]] = MappingProxyType(
    {
        ("e2", "standard"): (2, 4, 8, 16, 32),
        ("e2", "highmem"): (2, 4, 8, 16),
        ("e2", "highcpu"): (2, 4, 8, 16, 32),
        ("n2", "standard"): (2, 4, 8, 16, 32, 48, 64, 80, 96, 128),
        ("n2", "highmem"): (2, 4, 8, 16, 32, 48, 64, 80, 96, 128),
        ("n2", "highcpu"): (2, 4, 8, 16, 32, 48, 64, 80, 96),
        ("n2d", "standard"): (2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224),
        ("n4", "standard"): (2, 4, 8, 16, 32, 48, 64, 80),
        ("n4", "highmem"): (2, 4, 8, 16, 32, 48, 64, 80),
        ("n4", "highcpu"): (2, 4, 8, 16, 32, 48, 64, 80),
        ("c3", "standard"): (4, 8, 22, 44, 88, 176),
    }
)

SHAPES: Final[Mapping[str, tuple[int, float]]] = MappingProxyType(
    {
        f"{series}-{kind}-{vcpus}": (vcpus, float(vcpus * _GIB_PER_VCPU[kind]))
        for (series, kind), counts in SIZES.items()
        for vcpus in counts
    }
)


def families() -> str:
    """The table as a user reads it: `e2-standard-{2,4,8,16,32}, ...`."""
    return ", ".join(
        f"{series}-{kind}-{{{','.join(str(c) for c in counts)}}}"
        for (series, kind), counts in SIZES.items()
    )


# Real Compute Engine types outside the table, whose shape it does not give: shared-core E2
# (e2-micro, e2-small, e2-medium: fractions of a vCPU), custom types (`<series>-custom-<vCPUs>-
# <MiB>`) and local-SSD variants (`-lssd`). GKE takes them; gpufleet cannot size them.
_UNSIZED = re.compile(r"e2-(micro|small|medium)|[a-z0-9]+-custom-\d+-\d+(-ext)?|.+-lssd")


def problems(machine: str, path: str) -> list[Problem]:
    """A Compute Engine name that is neither in the table nor a real type it cannot size: a
    typo, a size the series does not offer, or a GPU machine (those are for GPU pools)."""
    if machine in SHAPES or _UNSIZED.fullmatch(machine):
        return []
    return [
        Problem(
            path,
            "not a general-purpose machine type gpufleet knows for a GKE system pool; "
            f"allowed: {families()}",
            machine,
        )
    ]


def warnings(machine: str | None, path: str) -> list[str]:
    """A real type the table cannot size (shared-core, custom, local SSD): GKE takes it, but
    the system pool's allocatable and price are not known here (review gke-2.md N14)."""
    if machine is None or not _UNSIZED.fullmatch(machine):
        return []
    return [
        f"{path}: {machine} is not in gpufleet's table of general-purpose types "
        f"({families()}): its CPU and memory are not checked, so `fit` cannot judge the CPU "
        "pool and `plan` cannot price it"
    ]
