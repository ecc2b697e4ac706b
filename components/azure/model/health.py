"""Fast image start and GPU health on AKS GPU pools: what AKS offers, what gpufleet can turn on
through its pinned provider, and what `plan` says about the rest (issue 34).

Sources (Microsoft Learn, read 2026-11-28):
- aks/artifact-streaming and aks/artifact-streaming-overview: Artifact Streaming is an AKS
  preview ("AKS preview features are available on a self-service, opt-in basis"), turned on per
  agent pool (`az aks nodepool add/update --enable-artifact-streaming`, the agent pool's
  `artifactStreamingProfile.enabled`); it needs Azure CLI 2.87.0+, Kubernetes 1.25+, an ACR
  integrated with the cluster with streaming turned on for each image, and pulls by tag only;
  Linux AMD64 images only (no Windows, no ARM64). GPU VM sizes are not named either way.
- pulumi-azure-native 3.29.0 (the pinned SDK, `containerservice/agent_pool.py`): AgentPool uses
  REST API 2025-09-01 and has no `artifact_streaming_profile` input (nor has the
  ManagedCluster's agent pool profile). The property appears in preview API versions
  (2025-10-02-preview types; azure-mgmt-containerservice's 2026-02-02-preview API view);
  whether a newer stable API has it was not checked. gpufleet uses no preview API: one may
  change or disappear, and the feature itself is a preview.
- aks/node-auto-repair: on by default on AKS Standard and Automatic, no setting; it acts on a
  node that reports NotReady (or no status) for about 10 minutes, then reboots, reimages, and
  redeploys it in turn.
- aks/gpu-health-monitoring and aks/node-problem-detector: AKS's Node Problem Detector sets the
  GPU node conditions below, and only on the VM sizes its FAQ names ("On which Azure VM sizes":
  Standard_ND96asr_v4 and Standard_ND96isr_H100_v5; MicrosoftDocs/azure-aks-docs
  articles/aks/gpu-health-monitoring.md, ms.date 2025-08-15, review aks-5 H5-3), and not on
  pools created with `gpuProfile.driver` None (`--gpu-driver none`, gpufleet's
  `gpuSoftware.operatorDriver: true`); it does not remediate: auto-repair acts on NotReady only.
  Every other AKS GPU pool has no GPU signal but the DCGM exporter's (docs/gpu-health.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class FastImageStart:
    """Whether gpufleet turns image streaming on for an AKS GPU pool, and why not."""

    available: bool
    reason: str
    source: str


ARTIFACT_STREAMING: Final = FastImageStart(
    available=False,
    reason=(
        "Artifact Streaming is an AKS preview set by the agent pool's "
        "artifactStreamingProfile, which only preview APIs have; the pinned "
        "pulumi-azure-native 3.29.0 uses API 2025-09-01"
    ),
    source="learn.microsoft.com/azure/aks/artifact-streaming; pulumi-azure-native 3.29.0",
)

# Node conditions AKS's Node Problem Detector sets on GPU nodes (aks/node-problem-detector,
# "GPU only" rows; aks/gpu-health-monitoring). UnhealthyNvidiaDevicePlugin is set only on pools
# with AKS's managed GPU preview, which gpufleet does not use.
# The VM sizes whose GPUs Node Problem Detector checks (the FAQ above).
NPD_GPU_SIZES: Final = ("Standard_ND96asr_v4", "Standard_ND96isr_H100_v5")
NPD_GPU_CONDITIONS: Final = (
    "GPUMissing",
    "NVLinkStatusInactive",
    "XIDErrors",
    "IBLinkFlapping",
    "GPUClockThrottling",
)


@dataclass(frozen=True)
class AutoRepair:
    """AKS node auto-repair as documented: what it watches and what it does."""

    configurable: bool
    trigger: str
    actions: tuple[str, ...]
    acts_on_gpu_conditions: bool
    source: str


AUTO_REPAIR: Final = AutoRepair(
    configurable=False,
    trigger="node NotReady or without status for about 10 minutes",
    actions=("reboot", "reimage", "redeploy"),
    acts_on_gpu_conditions=False,
    source="learn.microsoft.com/azure/aks/node-auto-repair, aks/gpu-health-monitoring",
)


def fast_image_start_note() -> str:
    """What the cold-start estimate of an AKS GPU pool says: no image streaming, and why."""
    start = ARTIFACT_STREAMING
    return (
        f"no fast image start on AKS: {start.reason}; the first pod on a new node pulls its "
        f"whole image [{start.source}]"
    )


def unwatched_pools_warning(names: Sequence[str], dcgm_exporter: bool) -> list[str]:
    """One line for the GPU pools AKS does not check and no DCGM exporter watches (review aks-5
    H5-3): their only health signal would be NotReady."""
    if dcgm_exporter or not names:
        return []
    return [
        "gpuSoftware.monitoring.dcgmExporter: off, so GPU pools "
        f"{', '.join(names)} have no GPU health signal: AKS's Node Problem Detector checks "
        f"GPUs only on {' and '.join(NPD_GPU_SIZES)} where AKS installs the driver, and "
        "auto-repair acts on NotReady only; set gpuSoftware.monitoring.dcgmExporter: true for "
        "gpufleet's XID alerts (docs/gpu-health.md)"
    ]
