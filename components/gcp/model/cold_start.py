"""GKE's cold-start figures and what a GKE pool's nodes do at start (docs/cold-start.md).

Sources, read 2026-11-28:
- ai-on-gke `best-practices/startup-latency.md` (GoogleCloudPlatform/ai-on-gke, Google-authored
  guidance): the driver install takes ~30 s; a 5.4 GB Triton image starts in 191 s end to end
  without image streaming, 30 s with it; a 300 GB pd-balanced boot disk writes 140 MB/s.
- cloud.google.com/kubernetes-engine/docs/how-to/data-container-image-preloading: a secondary
  boot disk is provisioned in parallel with the node, the image already on it.
- No first-party boot-to-Ready time for a GPU node (research notes 2026-11-28, section 8).
"""

from __future__ import annotations

from datetime import date

from components.gcp.model.config import pool_options
from components.model.cold_start import (
    CloudColdStart,
    ColdStartFigures,
    DriverPath,
    Figure,
    ImageStart,
    ImageStartFigure,
)
from components.model.schema import GpuPoolConfig, StackConfig

AI_ON_GKE = "ai-on-gke best-practices/startup-latency.md"

FIGURES = ColdStartFigures(
    as_of=date(2026, 11, 28),
    node_ready=Figure(
        60,
        300,
        "no first-party figure for a GPU node's create to Ready",
        estimate="1-5 min: a VM's boot and kubelet registration; 5 min is the anecdotal "
        "GPU node start (research notes 2026-11-28, section 8: unverified)",
    ),
    driver={
        # GKE installs its driver at boot; under gpu-operator Google's driver-installer
        # DaemonSet does (components/gcp/model/gpu_software.py), the same installer.
        "cloud-install": Figure(30, 30, f"{AI_ON_GKE}: driver installation takes ~30 s"),
    },
    image_start={
        "pull": ImageStartFigure(
            mb_per_second=Figure(
                28,
                140,
                f"{AI_ON_GKE}: a 5.4 GB image in 191 s end to end without streaming (low: "
                "5.4 GB / 191 s); a 300 GB pd-balanced disk writes 140 MB/s (high)",
            )
        ),
        "streaming": ImageStartFigure(
            seconds=Figure(
                30,
                30,
                f"{AI_ON_GKE}: a 5.4 GB Triton image starts in 30 s end to end with image "
                "streaming (191 s without)",
                estimate="one measured image; streaming fetches what the container reads, so "
                "the figure is not scaled by image size",
            )
        ),
        "preloaded": ImageStartFigure(
            seconds=Figure(
                0,
                30,
                "GKE data-container-image-preloading: the secondary boot disk is made in "
                "parallel with the node, the image on it",
                estimate="no published time; 0 s up to the streaming figure",
            )
        ),
    },
)


class GkeColdStart(CloudColdStart):
    figures = FIGURES

    def driver_path(self, config: StackConfig, pool: GpuPoolConfig) -> DriverPath:
        return "cloud-install"

    def image_start(self, config: StackConfig, pool: GpuPoolConfig) -> ImageStart:
        options = pool_options(pool)
        if options.secondary_boot_disk:
            return "preloaded"
        return "streaming" if options.image_streaming else "pull"

    def faster_image_start(self, config: StackConfig, pool: GpuPoolConfig) -> tuple[str, ...]:
        options = pool_options(pool)
        if options.secondary_boot_disk:
            return ()
        preload = (
            "gpuPools[].gcp.secondaryBootDisk preloads the images on a disk made with each "
            "node (docs/gke.md, fast image start; replaces the pool's nodes)",
        )
        if options.image_streaming:
            return preload
        return (
            "gpuPools[].gcp.imageStreaming: true streams images from Artifact Registry "
            "(about 30 s instead of a full pull; docs/gke.md lists its requirements)",
            *preload,
        )

    def notes(self, config: StackConfig, pool: GpuPoolConfig) -> tuple[str, ...]:
        if pool_options(pool).secondary_boot_disk:
            return (
                "only the images on the pool's secondary boot disk start preloaded; any other "
                "image streams or is pulled whole",
            )
        if not pool_options(pool).image_streaming:
            return ()
        return (
            "streaming applies to images in Artifact Registry only; GKE pulls any other "
            "image whole, without saying so (then the wait is the pull's)",
        )


COLD_START = GkeColdStart()
