"""GPU health from DCGM on every cluster: the one policy of which NVIDIA XID errors mean "drain
this node", and the Prometheus alerting rules gpufleet renders from it (stack output
`gpuHealthAlertRules`, docs/gpu-health.md).

The metrics: dcgm-exporter's default metrics list exports `DCGM_FI_DEV_XID_ERRORS` (a gauge: the
value of the last XID the GPU reported) and `DCGM_FI_DEV_ROW_REMAP_FAILURE` (a gauge: whether
row remapping failed). Both are on in the pinned standalone chart's list (dcgm-exporter 4.8.2,
NVIDIA/dcgm-exporter tag 4.5.3-4.8.2 `deployment/templates/metrics-configmap.yaml`, used while
`customMetrics` is unset and `arguments` reads `/etc/dcgm-exporter/default-counters.csv`) and in
that tag's image list (`etc/default-counters.csv`). The GPU Operator v26.7.0's exporter reads its
image's own list (image 4.6.0-4.8.3, newer than any tag read): not checked. gpufleet sets
neither `customMetrics`, `arguments` nor the operator's `dcgmExporter.config`, so the lists
stay the charts'.

The policy: an XID drains the node when NVIDIA's XID catalog
(docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html) puts its immediate action beyond
restarting the application (reset the GPU, reboot, the XID 48 or NVLink workflows) and a
cloud that acts on XIDs takes the node out for it: GKE's device plugin sets its `XidCriticalError` node condition
for it (GoogleCloudPlatform/container-engine-accelerators
pkg/gpu/nvidia/health_check/health_checker.go at 992db81) or EKS's node monitoring agent sets
AcceleratedHardwareReady False for it (aws/eks-node-monitoring-agent
monitors/nvidia/dcgm/dcgm_policies.go at 51af549, v1.7.0). XID 94 (contained ECC error) and 92
(high single-bit ECC rate) stay out: the catalog restarts the application for 94, and 92 is
corrected; NVIDIA's device plugin keeps 13, 31, 43, 45, 68 and 109 as application errors
(NVIDIA/k8s-device-plugin#1340).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import yaml

ALERT_RULES_OUTPUT: Final = "gpuHealthAlertRules"
XID_METRIC: Final = "DCGM_FI_DEV_XID_ERRORS"
ROW_REMAP_FAILURE_METRIC: Final = "DCGM_FI_DEV_ROW_REMAP_FAILURE"
# The metrics the rules read, which the pinned charts' default lists must export.
ALERT_METRICS: Final = (XID_METRIC, ROW_REMAP_FAILURE_METRIC)
# The chart versions whose default metrics lists were read for ALERT_METRICS (above): a new pin
# must be read again (tests/test_gpu_health.py fails until this says it was).
METRICS_LISTS_READ: Final = {"dcgm-exporter": "4.8.2"}


@dataclass(frozen=True)
class DrainXid:
    """One XID that means "drain this node", with why and who acts on it."""

    xid: int
    meaning: str
    gke_critical: bool  # in GKE's device plugin XidCriticalError set
    eks_unhealthy: bool  # sets AcceleratedHardwareReady False in EKS's node monitoring agent


DRAIN_XIDS: Final = (
    DrainXid(48, "double-bit ECC error", gke_critical=True, eks_unhealthy=True),
    DrainXid(63, "row remapping or page retirement pending", gke_critical=True, eks_unhealthy=True),
    DrainXid(64, "row remapping or page retirement failed", gke_critical=True, eks_unhealthy=True),
    DrainXid(74, "NVLink error", gke_critical=False, eks_unhealthy=True),
    DrainXid(79, "GPU has fallen off the bus", gke_critical=True, eks_unhealthy=True),
    DrainXid(95, "uncontained ECC error", gke_critical=False, eks_unhealthy=True),
    DrainXid(119, "GSP RPC timeout", gke_critical=True, eks_unhealthy=True),
    DrainXid(120, "GSP error", gke_critical=True, eks_unhealthy=True),
    DrainXid(140, "unrecovered ECC error", gke_critical=True, eks_unhealthy=True),
)
# XIDs the policy leaves to the application, named so a reader sees they were weighed.
APPLICATION_XIDS: Final = (13, 31, 43, 45, 68, 92, 94, 109)


def drain_expression() -> str:
    """PromQL true for a GPU whose last XID is in the drain policy."""
    return " or ".join(f"{XID_METRIC} == {row.xid}" for row in DRAIN_XIDS)


def alert_rules() -> dict[str, Any]:
    """The Prometheus rule file (groups of alerting rules) for the drain policy."""
    drain = {"severity": "critical", "gpufleet_action": "drain"}
    return {
        "groups": [
            {
                "name": "gpufleet-gpu-health",
                "rules": [
                    {
                        "alert": "GpuXidDrainNode",
                        "expr": drain_expression(),
                        "labels": dict(drain),
                        "annotations": {
                            "summary": "GPU {{ $labels.gpu }} ({{ $labels.UUID }}) reported "
                            "XID {{ $value }}: cordon and drain its node, then reboot or "
                            "replace it",
                            "description": "The gauge holds the last XID only: a later "
                            "application XID ends this alert while the GPU is still bad; "
                            "check the node's kernel log (dmesg | grep Xid).",
                        },
                    },
                    {
                        "alert": "GpuRowRemapFailure",
                        "expr": f"{ROW_REMAP_FAILURE_METRIC} > 0",
                        "labels": dict(drain),
                        "annotations": {
                            "summary": "GPU {{ $labels.gpu }} ({{ $labels.UUID }}) failed to "
                            "remap a memory row: drain its node and replace it",
                        },
                    },
                ],
            }
        ]
    }


def alert_rules_yaml() -> str:
    """The rule file as Prometheus reads it (`rule_files`)."""
    return yaml.safe_dump(alert_rules(), sort_keys=False, width=100)
