"""EKS's cold-start figures and what an EKS pool's nodes do at start (docs/cold-start.md).

Sources, read 2026-11-28:
- AWS Machine Learning Blog, "Reducing container cold start times using SOCI index on DLAMI
  and DLC" (2026-06): a 15-20 GB image takes 4-6 min per instance on a standard pull.
- awslabs/amazon-eks-ami `nodeadm/doc/examples.md` (commit 81fec2e): SOCI parallel pull
  (FastImagePull) wants a root EBS volume of at least 600 MiB/s.
- docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html: the accelerated AL2023
  and Bottlerocket NVIDIA AMIs ship the driver (gpufleet's GPU Operator preset leaves it off:
  components/aws/model/cloud.py).
- Amazon EBS: a volume made from a snapshot loads its blocks from S3 on first read.
- No first-party boot-to-Ready time for a GPU node (research notes 2026-11-28, section 8).

A pool's image start is its kind's (`EksPoolKind.image_start`, components/aws/model/
image_start.py): SOCI parallel pull (`gpuPools[].aws.fastImagePull`) or a preloaded data volume
(`gpuPools[].aws.dataVolumeSnapshot`).
"""

from __future__ import annotations

from datetime import date

from components.aws.model.image_start import FAST_IMAGE_PULL_KEY, SNAPSHOT_KEY
from components.aws.model.kinds import pool_kind
from components.model.cold_start import (
    CloudColdStart,
    ColdStartFigures,
    DriverPath,
    Figure,
    ImageStart,
    ImageStartFigure,
)
from components.model.schema import GpuPoolConfig, StackConfig

SOCI_BLOG = (
    "AWS ML Blog 'Reducing container cold start times using SOCI index on DLAMI and DLC' "
    "(2026-06): a 15-20 GB image takes 4-6 min per instance on a standard pull"
)

FIGURES = ColdStartFigures(
    as_of=date(2026, 11, 28),
    node_ready=Figure(
        60,
        300,
        "no first-party figure for a GPU node's create to Ready",
        estimate="1-5 min: a VM's boot and kubelet registration; 5 min is the anecdotal "
        "GPU node start via Karpenter (research notes 2026-11-28, section 8: unverified)",
    ),
    driver={
        "in-image": Figure(
            0,
            0,
            "EKS accelerated AMIs (AL2023 NVIDIA, Bottlerocket NVIDIA) ship the driver "
            "(docs.aws.amazon.com/eks/latest/userguide/ml-eks-optimized-ami.html); it loads "
            "as the node boots",
        ),
    },
    image_start={
        "pull": ImageStartFigure(
            # 15 GB in 6 min (42 MB/s) to 20 GB in 4 min (83 MB/s).
            mb_per_second=Figure(42, 83, f"{SOCI_BLOG} (15 GB / 6 min to 20 GB / 4 min)")
        ),
        "parallel-pull": ImageStartFigure(
            mb_per_second=Figure(
                42,
                131,
                "amazon-eks-ami nodeadm/doc/examples.md: SOCI parallel pull is bound by the "
                "disk and may be slower below the 600 MiB/s it recommends; gpufleet's gp3 "
                "volumes keep gp3's baseline 125 MiB/s (131 MB/s)",
                estimate="no published end-to-end figure; low: a plain pull's slowest, high: "
                "the disk's write throughput, which no pull can pass (review eks-5 E5-2)",
            )
        ),
        "preloaded": ImageStartFigure(
            mb_per_second=Figure(
                42,
                131,
                "Amazon EBS: a volume made from a snapshot loads its blocks from S3 on first "
                "read, and a node starting from zero always gets a fresh volume",
                estimate="no published rate for a first read of a restored volume; taken as a "
                "plain pull's slowest up to the gp3 disk's throughput (review eks-5 E5-2)",
            )
        ),
    },
)


class EksColdStart(CloudColdStart):
    figures = FIGURES

    def driver_path(self, config: StackConfig, pool: GpuPoolConfig) -> DriverPath:
        return "in-image"

    def image_start(self, config: StackConfig, pool: GpuPoolConfig) -> ImageStart:
        start = pool_kind(config.cluster, pool).image_start(pool)
        if start.data_volume_snapshot:
            return "preloaded"
        return "parallel-pull" if start.fast_image_pull else "pull"

    def faster_image_start(self, config: StackConfig, pool: GpuPoolConfig) -> tuple[str, ...]:
        start = pool_kind(config.cluster, pool).image_start(pool)
        if start.family is None or start.data_volume_snapshot:
            return ()  # Auto Mode starts images its own way; a preloaded pool is the fastest
        # SOCI parallel pull is not offered: on gpufleet's 125 MiB/s gp3 disks it may be slower
        # (review eks-5 E5-2); the reason is in docs/eks.md and in the pool's note.
        if start.family != "bottlerocket":
            return ()
        return (
            f"gpuPools[].{SNAPSHOT_KEY} puts the images on the data volume before the pod "
            "starts (no registry pull; its blocks still load from S3 on first read; docs/eks.md "
            "says how to build the snapshot)",
        )

    def notes(self, config: StackConfig, pool: GpuPoolConfig) -> tuple[str, ...]:
        start = pool_kind(config.cluster, pool).image_start(pool)
        if start.family is None:
            return (f"fast image start: {start.reason}",)
        if not start.fast_image_pull and not start.data_volume_snapshot:
            return (f"SOCI parallel pull ({FAST_IMAGE_PULL_KEY}) is off: {start.reason}",)
        if start.data_volume_snapshot:
            return (
                "only the images on the data volume snapshot start preloaded, and its blocks "
                "load from S3 on first read; any other image is pulled",
            )
        return ()


COLD_START = EksColdStart()
