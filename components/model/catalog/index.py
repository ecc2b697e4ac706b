"""Every cloud's GPU catalog as one index, for checks and tests that span clouds.

Keys carry the cloud: on GKE one N1 shape carries several GPU models, and a machine name means
nothing without its cloud.
"""

from __future__ import annotations

from collections.abc import Mapping

from components.model.catalog.gpus import GPU_MODELS, MachineType
from components.model.registry import CLOUDS

__all__ = [
    "DEFAULT_MACHINE_TYPES",
    "GPU_MODELS",
    "MACHINE_TYPES",
    "machine_types_for",
]

MACHINE_TYPES: Mapping[tuple[str, str, str], MachineType] = {
    (name, machine.gpu, machine.name): machine
    for name, cloud in CLOUDS.items()
    for machine in cloud.catalog.rows
}
DEFAULT_MACHINE_TYPES: Mapping[tuple[str, str], str] = {
    (name, gpu): machine
    for name, cloud in CLOUDS.items()
    for gpu, machine in cloud.catalog.defaults.items()
}


def machine_types_for(cloud: str, gpu: str) -> list[MachineType]:
    """Every machine type on `cloud` that carries `gpu`, in catalog order."""
    return CLOUDS[cloud].catalog.machines_for(gpu)
