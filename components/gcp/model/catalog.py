"""GKE's GPU machine types: guest accelerators on N1, and the accelerator-optimized series.

Sources: cloud.google.com/compute/docs/gpus (GPU models, machine shapes, N1 attach limits) and
../shared/reference/FACTS.md (GKE section).
"""

from __future__ import annotations

from collections.abc import Mapping

from components.model.catalog.gpus import MachineCatalog, MachineType, fixed
from components.model.cloud import NameRule


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


_ROWS: list[MachineType] = [
    # N1 with attached GPUs: GPU count -> max vCPUs (cloud.google.com/compute/docs/gpus).
    *_n1_types("t4", "nvidia-tesla-t4", {1: 48, 2: 48, 4: 96}),
    *_n1_types("p4", "nvidia-tesla-p4", {1: 24, 2: 48, 4: 96}),
    *_n1_types("p100", "nvidia-tesla-p100", {1: 16, 2: 32, 4: 96}),
    *_n1_types("v100", "nvidia-tesla-v100", {1: 12, 2: 24, 4: 48, 8: 96}),
    *fixed(
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
    *fixed(
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
        scarce=True,
    ),
    *fixed(
        "gcp",
        "a100-80gb",
        [
            ("a2-ultragpu-1g", 1, 12, 170),
            ("a2-ultragpu-2g", 2, 24, 340),
            ("a2-ultragpu-4g", 4, 48, 680),
            ("a2-ultragpu-8g", 8, 96, 1360),
        ],
        gke_accelerator="nvidia-a100-80gb",
        scarce=True,
    ),
    *fixed(
        "gcp",
        "h100-80gb",
        [
            ("a3-highgpu-1g", 1, 26, 234),
            ("a3-highgpu-2g", 2, 52, 468),
            ("a3-highgpu-4g", 4, 104, 936),
        ],
        gke_accelerator="nvidia-h100-80gb",
        spot_only=True,
        scarce=True,
    ),
    *fixed(
        "gcp",
        "h100-80gb",
        [("a3-highgpu-8g", 8, 208, 1872)],
        gke_accelerator="nvidia-h100-80gb",
        scarce=True,
    ),
    *fixed(
        "gcp",
        "h100-80gb",
        [("a3-megagpu-8g", 8, 208, 1872)],
        gke_accelerator="nvidia-h100-mega-80gb",
        scarce=True,
    ),
    # A3 Ultra and A4: on demand only from a reservation, else Spot or Flex-start (FACTS.md GKE
    # table; cloud.google.com/compute/docs/accelerator-optimized-machines, consumption options).
    *fixed(
        "gcp",
        "h200-141gb",
        [("a3-ultragpu-8g", 8, 224, 2952)],
        gke_accelerator="nvidia-h200-141gb",
        scarce=True,
        reservation_only=True,
    ),
    *fixed(
        "gcp",
        "b200",
        [("a4-highgpu-8g", 8, 224, 3968)],
        gke_accelerator="nvidia-b200",
        scarce=True,
        reservation_only=True,
    ),
    *fixed(
        "gcp",
        "rtx-pro-6000",
        [
            ("g4-standard-48", 1, 48, 180),
            ("g4-standard-96", 2, 96, 360),
            ("g4-standard-192", 4, 192, 720),
            ("g4-standard-384", 8, 384, 1440),
        ],
        gke_accelerator="nvidia-rtx-pro-6000",
        # G4 nodes need GKE 1.34 or later (FACTS.md, GKE GPU table).
        min_kubernetes="1.34",
    ),
]

CATALOG = MachineCatalog(
    rows=tuple(_ROWS),
    # A pool that names only an accelerator gets the smallest sensible machine.
    defaults={
        "t4": "n1-standard-4",
        "p4": "n1-standard-4",
        "p100": "n1-standard-4",
        "v100": "n1-standard-8",
        "l4": "g2-standard-8",
        "a100-40gb": "a2-highgpu-1g",
        "a100-80gb": "a2-ultragpu-1g",
        "h100-80gb": "a3-highgpu-8g",
        "h200-141gb": "a3-ultragpu-8g",
        "b200": "a4-highgpu-8g",
        "rtx-pro-6000": "g4-standard-48",
    },
)

# Compute Engine machine types: series-type-vCPUs, shared-core and custom types (e2-standard-4,
# e2-medium, n2-custom-4-16384). The system pool's machine type is checked against it.
MACHINE_NAMES = NameRule(
    r"[a-z][a-z0-9]*(-[a-z0-9]+)+",
    "a Compute Engine machine type such as e2-standard-4 or n2-highmem-8",
)
