"""AKS's GPU VM sizes, and the MIG instance profiles AKS can build.

Sources: learn.microsoft.com/azure/virtual-machines/sizes (GPU sizes),
learn.microsoft.com/azure/aks/gpu-multi-instance (MIG sizes and profiles) and
../shared/reference/FACTS.md (AKS section).
"""

from __future__ import annotations

from collections.abc import Mapping

from components.model.catalog.gpus import MachineCatalog, MachineType, fixed
from components.model.cloud import NameRule

_ROWS: list[MachineType] = [
    *fixed(
        "azure",
        "t4",
        [
            ("Standard_NC4as_T4_v3", 1, 4, 28),
            ("Standard_NC8as_T4_v3", 1, 8, 56),
            ("Standard_NC16as_T4_v3", 1, 16, 110),
            ("Standard_NC64as_T4_v3", 4, 64, 440),
        ],
    ),
    *fixed(
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
    *fixed("azure", "a100-40gb", [("Standard_ND96asr_v4", 8, 96, 900)], mig_capable=True),
    *fixed("azure", "h100-80gb", [("Standard_ND96isr_H100_v5", 8, 96, 1900)], mig_capable=True),
    # ND H200 v5: 96 vCPUs, 1850 GiB, 8 H200 141 GB (learn.microsoft.com/azure/virtual-machines/
    # sizes/gpu-accelerated/nd-h200-v5-series); MIG-capable on AKS (gpu-multi-instance).
    *fixed("azure", "h200-141gb", [("Standard_ND96isr_H200_v5", 8, 96, 1850)], mig_capable=True),
    *fixed(
        "azure",
        "h100-nvl",
        [("Standard_NC40ads_H100_v5", 1, 40, 320), ("Standard_NC80adis_H100_v5", 2, 80, 640)],
    ),
    *fixed("azure", "a10", [("Standard_NV36ads_A10_v5", 1, 36, 440)]),
]

CATALOG = MachineCatalog(
    rows=tuple(_ROWS),
    # A pool that names only an accelerator gets the smallest sensible VM size.
    defaults={
        "t4": "Standard_NC4as_T4_v3",
        "a100-80gb": "Standard_NC24ads_A100_v4",
        "a100-40gb": "Standard_ND96asr_v4",
        "h100-80gb": "Standard_ND96isr_H100_v5",
        "h200-141gb": "Standard_ND96isr_H200_v5",
        "h100-nvl": "Standard_NC40ads_H100_v5",
        "a10": "Standard_NV36ads_A10_v5",
    },
)

# AKS `gpu_instance_profile` values and the MIG slice count ("<n>g") each selects.
AKS_MIG_PROFILES: Mapping[str, str] = {
    "1g": "MIG1g",
    "2g": "MIG2g",
    "3g": "MIG3g",
    "4g": "MIG4g",
    "7g": "MIG7g",
}

# The partitions AKS builds, per GPU model, and how many per GPU: AgentBaker's mig-partition.sh
# creates GPU instance profile 19 x7 for MIG1g, 14 x3 for MIG2g, 9 x2 for MIG3g, 5 x1 for MIG4g
# and 0 x1 for MIG7g (review aks.md P2), so on an H100 MIG1g is 1g.10gb and 1g.20gb cannot be
# had. NVIDIA's MIG user guide names what those profiles are on each GPU (the 4g profile is
# 4g.20gb on an A100 40GB, 4g.40gb on an A100 80GB or H100, 4g.71gb on an H200; learn.microsoft
# .com/azure/aks/gpu-multi-instance lists MIG 4g.20gb for Standard_ND96asr_v4 and MIG on "A100,
# H100, and H200 series GPU VM sizes"; review aks-2.md A-N4).
AKS_MIG_SIZES: Mapping[str, Mapping[str, int]] = {
    "a100-40gb": {"1g.5gb": 7, "2g.10gb": 3, "3g.20gb": 2, "4g.20gb": 1, "7g.40gb": 1},
    "a100-80gb": {"1g.10gb": 7, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1},
    "h100-80gb": {"1g.10gb": 7, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1},
    "h200-141gb": {"1g.18gb": 7, "2g.35gb": 3, "3g.71gb": 2, "4g.71gb": 1, "7g.141gb": 1},
}

# Sizes whose GPUs are virtualised and need the licensed GRID driver, which AKS installs and the
# GPU Operator's datacenter driver is not (AgentBaker's GPU SKU table: Nvidia510GridDriver;
# review aks.md P4).
GRID_DRIVER_SIZES: frozenset[str] = frozenset({"Standard_NV36ads_A10_v5"})

# Azure VM sizes as AKS takes them: Standard_<family><vCPUs><features>_<version>. The system
# pool's VM size is checked against it.
MACHINE_NAMES = NameRule(
    r"Standard_[A-Z][A-Za-z0-9_-]*", "an Azure VM size such as Standard_D4s_v5"
)
