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

The keys for parallel pull and a preloaded data volume (`gpuPools[].aws.fastImagePull`,
`gpuPools[].aws.dataVolumeSnapshot`) come with issue 34 item 1: `image_start` reads them when
they exist, and every pool pulls until then.
"""

from __future__ import annotations

from datetime import date

from components.model.cold_start import (
    CloudColdStart,
    ColdStartFigures,
    DriverPath,
    Figure,
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
                83,
                629,
                "amazon-eks-ami nodeadm/doc/examples.md: SOCI parallel pull wants root EBS "
                ">= 600 MiB/s (629 MB/s)",
                estimate="no published end-to-end figure; low: the plain pull's best, high: "
                "the disk throughput AWS recommends for it",
            )
        ),
        "preloaded": ImageStartFigure(
            seconds=Figure(
                0,
                360,
                "Amazon EBS: a volume from a snapshot loads its blocks from S3 on first read",
                estimate="no published time; 0 s once the blocks are read, up to a plain "
                "pull's 6 min on the first read",
            )
        ),
    },
)


class EksColdStart(CloudColdStart):
    figures = FIGURES

    def driver_path(self, config: StackConfig, pool: GpuPoolConfig) -> DriverPath:
        return "in-image"


COLD_START = EksColdStart()
