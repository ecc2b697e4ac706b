"""What GKE does about an unhealthy GPU node, as data with sources (docs/gke.md "GPU health").

GKE repairs nodes that its node auto-repair sees unhealthy; its GPU device plugin reports GPU
errors (XIDs) as a node condition and, for some, takes the GPU out of the node's allocatable.
Whether auto-repair acts on that condition is not documented: said so, never assumed.

Sources, read 2026-11-28:

- GKE docs, how-to/node-auto-repair: a node is repaired when it reports NotReady (or no status)
  for about 10 minutes, or its boot disk is out of space for about 30 minutes; a repair drains
  the node (up to 1 hour) and recreates it. The page lists no GPU or XID criterion.
- GoogleCloudPlatform/container-engine-accelerators @06e703e6
  pkg/gpu/nvidia/health_check/health_checker.go: node condition `XidCriticalError` (its reason a
  JSON set of the XIDs seen, its message the boot id) for XIDs 48, 63, 64, 79, 119, 120, 123,
  140 (the code's comment: that map is "for conditions setting and monitoring reason, will not
  trigger auto-repair"); the GPU goes Unhealthy (out of allocatable) for XID 48 and the XIDs
  configured on the plugin; the condition is removed once the node's boot id changes ("consider
  the node fixed through auto-repair", or a reboot).
- components/gcp/model/capacity.py: flex-start and queued pools are created without auto-repair,
  as GKE's how-tos create them (`--no-enable-autorepair`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from components.gcp.model.capacity import NodePoolCapacity

_REPAIR_DOCS = "cloud.google.com/kubernetes-engine/docs/how-to/node-auto-repair"
_DEVICE_PLUGIN = (
    "GoogleCloudPlatform/container-engine-accelerators @06e703e6 "
    "pkg/gpu/nvidia/health_check/health_checker.go"
)

# What GKE's node auto-repair acts on (minutes), as its page lists them.
AUTO_REPAIR_CRITERIA: Final[tuple[tuple[str, int], ...]] = (
    ("NotReady, or no status reported", 10),
    ("boot disk out of space", 30),
)
AUTO_REPAIR_SOURCE: Final[str] = _REPAIR_DOCS

# GKE's device plugin's node condition, and the XIDs that set it.
XID_CONDITION: Final[str] = "XidCriticalError"
CONDITION_XIDS: Final[tuple[int, ...]] = (48, 63, 64, 79, 119, 120, 123, 140)
# The XIDs that take a GPU out of the node's allocatable by default (double-bit ECC).
UNHEALTHY_GPU_XIDS: Final[tuple[int, ...]] = (48,)
XID_SOURCE: Final[str] = _DEVICE_PLUGIN
# Whether auto-repair replaces a node with the condition: GKE does not say.
REPAIRS_ON_XID_CONDITION: Final[str] = (
    "not documented: GKE's auto-repair page lists no GPU criterion, and the device plugin's "
    "source says its condition map 'will not trigger auto-repair'; a node with a bad GPU "
    "keeps its other GPUs schedulable until a NotReady repair, a reboot or its deletion"
)


@dataclass(frozen=True)
class PoolRepair:
    """Whether GKE auto-repairs a pool's nodes, and why (for `plan` to say)."""

    auto_repair: bool
    why: str
    source: str


def pool_repair(capacity: NodePoolCapacity) -> PoolRepair:
    """A GPU pool's repair setting and its reason."""
    if capacity.auto_repair:
        return PoolRepair(
            True,
            "GKE recreates a node NotReady for about 10 minutes (after draining it); GPU "
            f"errors ({XID_CONDITION}) alone: {REPAIRS_ON_XID_CONDITION.split(':')[0]}",
            f"{_REPAIR_DOCS}; {_DEVICE_PLUGIN}",
        )
    return PoolRepair(
        False,
        "flex-start and queued nodes are created without auto-repair, as GKE's how-tos make "
        "them: a repair would recreate a node under its running Job, and the VM runs only "
        "until its run time ends anyway",
        "components/gcp/model/capacity.py (GKE docs dws-flex-start-training, "
        "provisioningrequest: --no-enable-autorepair)",
    )
