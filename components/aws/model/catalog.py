"""EKS's GPU instance types (EC2 G and P families).

Sources: aws.amazon.com/ec2/instance-types (accelerated computing: GPUs, vCPUs, memory) and
../shared/reference/FACTS.md (EKS section).
"""

from __future__ import annotations

from components.model.catalog.gpus import MachineCatalog, MachineType, fixed
from components.model.cloud import NameRule


def _aws_g_family(family: str, gpu: str, memory_per_vcpu: int) -> list[MachineType]:
    """g5/g6/g6e: 1 GPU from xlarge to 16xlarge, 4 on 12xlarge and 24xlarge, 8 on 48xlarge."""
    sizes = [("xlarge", 1, 4), ("2xlarge", 1, 8), ("4xlarge", 1, 16), ("8xlarge", 1, 32)]
    sizes += [("16xlarge", 1, 64), ("12xlarge", 4, 48), ("24xlarge", 4, 96), ("48xlarge", 8, 192)]
    return fixed(
        "aws",
        gpu,
        [(f"{family}.{size}", gpus, vcpus, vcpus * memory_per_vcpu) for size, gpus, vcpus in sizes],
    )


_ROWS: list[MachineType] = [
    *fixed(
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
    *fixed("aws", "a100-40gb", [("p4d.24xlarge", 8, 96, 1152)]),
    *fixed("aws", "a100-80gb", [("p4de.24xlarge", 8, 96, 1152)]),
    *fixed("aws", "h100-80gb", [("p5.48xlarge", 8, 192, 2048), ("p5.4xlarge", 1, 16, 256)]),
    *fixed("aws", "h200-141gb", [("p5e.48xlarge", 8, 192, 2048), ("p5en.48xlarge", 8, 192, 2048)]),
    # p6-b200: 8 B200 (179 GiB each), 192 vCPU, 2 TiB (aws.amazon.com/ec2/instance-types/p6;
    # SkyPilot catalog v8 aws/vms.csv rows, commit 00148f2a).
    *fixed("aws", "b200", [("p6-b200.48xlarge", 8, 192, 2048)]),
]

CATALOG = MachineCatalog(
    rows=tuple(_ROWS),
    # A pool that names only an accelerator gets the smallest sensible instance type.
    defaults={
        "t4": "g4dn.xlarge",
        "a10g": "g5.xlarge",
        "l4": "g6.xlarge",
        "l40s": "g6e.xlarge",
        "a100-40gb": "p4d.24xlarge",
        "a100-80gb": "p4de.24xlarge",
        "h100-80gb": "p5.48xlarge",
        "h200-141gb": "p5e.48xlarge",
        "b200": "p6-b200.48xlarge",
    },
)

# EC2 instance types: family.size (m6i.large, m7i-flex.xlarge, c7i.metal-24xl). The system pool's
# instance type is checked against it.
MACHINE_NAMES = NameRule(
    r"[a-z][a-z0-9-]*\.(nano|micro|small|medium|large|[0-9]*xlarge|metal(-[0-9]+xl)?)",
    "an EC2 instance type such as m6i.large or m7i.xlarge",
)
