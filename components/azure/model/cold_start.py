"""AKS's cold-start figures and what an AKS pool's nodes do at start (docs/cold-start.md).

Sources, read 2026-11-28:
- learn.microsoft.com articles/aks/aks-managed-gpu-nodes.md: AKS installs the NVIDIA driver at
  node provisioning; articles/aks/node-auto-provisioning.md: AKS Automatic's SLA, 99.9% of
  qualifying pod readiness operations within 5 min (the only AKS start-up figure published).
- NVIDIA/gpu-operator issues #413 and #707 (an NVIDIA maintainer): with driver containers the
  driver and toolkit take about 3-4 min, 3-5 min after a reboot.
- No Azure figure for image pull throughput: the EKS figure is used (the same containerd pull
  onto a cloud disk), said as an estimate. AKS Artifact Streaming is not in the API version
  gpufleet deploys with (research notes 2026-11-28, section 7) and has no figure here.
"""

from __future__ import annotations

from datetime import date

from components.azure.model import health
from components.azure.model.config import software_options
from components.model.cold_start import (
    CloudColdStart,
    ColdStartFigures,
    DriverPath,
    Figure,
    ImageStartFigure,
)
from components.model.schema import GpuPoolConfig, StackConfig

FIGURES = ColdStartFigures(
    as_of=date(2026, 11, 28),
    node_ready=Figure(
        60,
        300,
        "articles/aks/node-auto-provisioning.md: AKS Automatic readies 99.9% of qualifying "
        "pods within 5 min",
        estimate="no per-VM figure; 1 min: a VM's boot and kubelet registration, 5 min: the "
        "Automatic SLA's bound",
    ),
    driver={
        "cloud-install": Figure(
            30,
            180,
            "articles/aks/aks-managed-gpu-nodes.md: AKS installs the driver at node provisioning",
            estimate="no published time; from GKE's ~30 s installer to the 3 min of NVIDIA's "
            "driver container",
        ),
        "gpu-operator": Figure(
            180,
            300,
            "NVIDIA/gpu-operator issues #413 and #707 (NVIDIA maintainer): driver containers "
            "take about 3-4 min, 3-5 min after a reboot",
        ),
    },
    image_start={
        "pull": ImageStartFigure(
            mb_per_second=Figure(
                42,
                83,
                "AWS ML Blog (2026-06): a 15-20 GB image takes 4-6 min per instance on a "
                "standard pull",
                estimate="no Azure figure; the same containerd pull onto a cloud disk",
            )
        ),
    },
)


class AksColdStart(CloudColdStart):
    figures = FIGURES

    def driver_path(self, config: StackConfig, pool: GpuPoolConfig) -> DriverPath:
        # operatorDriver: pools get gpuProfile.driver None and the operator installs it.
        own = software_options(config.gpu_software).operator_driver
        return (
            "gpu-operator"
            if own and config.gpu_software_mode == "gpu-operator"
            else "cloud-install"
        )

    def notes(self, config: StackConfig, pool: GpuPoolConfig) -> tuple[str, ...]:
        # Said with the estimate, not as a warning: no stack can act on it but by a warm node.
        return (health.fast_image_start_note(),)


COLD_START = AksColdStart()
