"""GPU health from DCGM on every cluster: the one policy of which NVIDIA XID errors mean "drain
this node", and the Prometheus alerting rules gpufleet renders from it (stack output
`gpuHealthAlertRules`, docs/gpu-health.md).

The metrics. `DCGM_EXP_XID_ERRORS_COUNT{xid="N"}` counts every XID N a GPU reported within the
last window (`--xid-count-window-size`, default 5 minutes), read from DCGM's history with
`GetValuesSince` (NVIDIA/dcgm-exporter 4.5.3-4.8.2 internal/pkg/collector/xid_collector.go,
expcollector.go, pkg/cmd/app.go). It is off in the default lists (etc/default-counters.csv:40
commented out), so gpufleet's standalone exporter gets the chart's default list plus it
(components/kubernetes/dcgm.py, dcgm_default_metrics.json). The gauge `DCGM_FI_DEV_XID_ERRORS`
holds only the last XID, so a later application XID (45, 43, 13 follow a fatal XID within
seconds) hides a fatal one between scrapes: it is read only where the count is off, under the
GPU Operator, whose exporter reads its image's list (image 4.6.0-4.8.3, not read): `plan` warns.
A GPU that falls off the bus (XID 79) stops being exported (DCGM returns blank values, which the
exporter skips): the lost-GPU rule notices a node still exporting some GPUs but not one it did.
Series carry the node as `Hostname` (rendermetrics/render_metrics.go).

The policy: an XID drains the node when NVIDIA's XID catalog
(docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html) puts its immediate action beyond
restarting the application, and a cloud that acts on XIDs takes the node out for it: GKE's
device plugin sets its `XidCriticalError` node condition for it (GoogleCloudPlatform/
container-engine-accelerators pkg/gpu/nvidia/health_check/health_checker.go at 992db81) or EKS's
node monitoring agent sets AcceleratedHardwareReady False for it (aws/eks-node-monitoring-agent
monitors/nvidia/dcgm/dcgm_policies.go at v1.7.0, `WellKnownXidCodes`, whose comment records each
XID's catalog bucket: `catalog_action` below). 109 stays out though EKS acts on it: NVIDIA's
device plugin keeps it, with 13, 31, 43, 45 and 68, as an application error
(NVIDIA/k8s-device-plugin#1340). 94 (contained ECC error: the catalog restarts the application)
and 92 (high single-bit ECC rate, corrected) stay out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import yaml

ALERT_RULES_OUTPUT: Final = "gpuHealthAlertRules"
XID_COUNT_METRIC: Final = "DCGM_EXP_XID_ERRORS_COUNT"
# Its line in the exporter's metrics list (field, Prometheus type, help), as the exporter's own
# commented-out line has it (etc/default-counters.csv:40 at 4.5.3-4.8.2).
XID_COUNT_LINE: Final = f"{XID_COUNT_METRIC}, counter, reported XIDs during last window"
XID_METRIC: Final = "DCGM_FI_DEV_XID_ERRORS"
ROW_REMAP_FAILURE_METRIC: Final = "DCGM_FI_DEV_ROW_REMAP_FAILURE"
# A per-GPU gauge in the default lists whose series vanishing marks a lost GPU.
PRESENCE_METRIC: Final = "DCGM_FI_DEV_GPU_TEMP"
# Longer than the exporter's default XID window (5 minutes) plus a slow scrape (60 s).
XID_LOOKBACK: Final = "10m"
LOST_GPU_LOOKBACK: Final = "15m"
# The metrics the rules read: where the count is exported, and where only the default list is.
ALERT_METRICS: Final = (XID_COUNT_METRIC, ROW_REMAP_FAILURE_METRIC, PRESENCE_METRIC)
DEFAULT_LIST_ALERT_METRICS: Final = (XID_METRIC, ROW_REMAP_FAILURE_METRIC, PRESENCE_METRIC)
# The chart versions whose metrics lists were read for the metrics above: a new pin must be read
# again (tests/test_gpu_health.py fails until this says it was).
METRICS_LISTS_READ: Final = {"dcgm-exporter": "4.8.2"}


@dataclass(frozen=True)
class DrainXid:
    """One XID that means "drain this node", with why and who acts on it."""

    xid: int
    meaning: str
    # NVIDIA's catalog immediate action, as eks-node-monitoring-agent v1.7.0 records it; None
    # where that source does not list the XID (the catalog's row was not read).
    catalog_action: str | None
    gke_critical: bool  # in GKE's device plugin XidCriticalError set
    eks_unhealthy: bool  # sets AcceleratedHardwareReady False in EKS's node monitoring agent


def _eks(xid: int, meaning: str, action: str, gke: bool = False) -> DrainXid:
    return DrainXid(xid, meaning, action, gke_critical=gke, eks_unhealthy=True)


DRAIN_XIDS: Final = (
    _eks(46, "GPU stopped processing", "RESET_GPU"),
    _eks(48, "double-bit ECC error", "WORKFLOW_XID_48", gke=True),
    _eks(54, "auxiliary power not connected", "CHECK_MECHANICALS"),
    _eks(62, "internal micro-controller halt", "RESET_GPU"),
    # The catalog says IGNORE; EC2 replaces the instance and GKE marks it critical.
    _eks(63, "row remapping or page retirement pending", "IGNORE", gke=True),
    _eks(64, "row remapping or page retirement failed", "RESET_GPU", gke=True),
    _eks(74, "NVLink error", "WORKFLOW_NVLINK_ERR"),
    _eks(79, "GPU has fallen off the bus", "RESTART_BM", gke=True),
    _eks(95, "uncontained ECC error", "RESET_GPU"),
    _eks(110, "security fault error", "RESET_GPU"),
    _eks(119, "GSP RPC timeout", "RESET_GPU", gke=True),
    _eks(120, "GSP error", "RESET_GPU", gke=True),
    # GKE alone acts on 123; its catalog row was not read: drained as GKE does.
    DrainXid(123, "in GKE's critical set (catalog row not read)", None, True, False),
    _eks(136, "link training failed", "RESET_GPU"),
    _eks(140, "unrecovered ECC error", "RESET_GPU", gke=True),
    _eks(142, "NVENC3 error", "CONTACT_SUPPORT"),
    _eks(143, "GPU initialization error", "RESET_GPU"),
    _eks(151, "key rotation error", "RESTART_VM"),
    _eks(155, "NVLink SW defined error", "RESET_GPU"),
    _eks(156, "resource retirement event", "RESET_GPU"),
    _eks(158, "GPU fatal timeout", "RESET_GPU"),
)
# XIDs the policy leaves to the application, named so a reader sees they were weighed.
APPLICATION_XIDS: Final = (13, 31, 43, 45, 68, 92, 94, 109)


def xid_counts_exported(software_mode: str) -> bool:
    """Whether gpufleet's exporter in this GPU software mode exports `XID_COUNT_METRIC`: the
    standalone chart's does (gpufleet sets its list); the GPU Operator's reads its own."""
    return software_mode != "gpu-operator"


def config_warnings(dcgm_exporter: bool, software_mode: str) -> list[str]:
    if not dcgm_exporter or xid_counts_exported(software_mode):
        return []
    return [
        "gpuSoftware.monitoring.dcgmExporter: the GPU Operator's exporter reads its image's "
        f"metrics list, without {XID_COUNT_METRIC}: the GpuXidDrainNode rule reads the "
        f"last-XID gauge {XID_METRIC} and can miss a fatal XID a later one overwrites "
        "between scrapes (docs/gpu-health.md)"
    ]


def xid_regex() -> str:
    return "|".join(str(row.xid) for row in DRAIN_XIDS)


def drain_expression(xid_counts: bool = True) -> str:
    """PromQL true for a GPU that reported a drain-policy XID: any in the window where the
    exporter counts them, else its last XID."""
    if xid_counts:
        return f'max_over_time({XID_COUNT_METRIC}{{xid=~"{xid_regex()}"}}[{XID_LOOKBACK}]) > 0'
    return " or ".join(f"{XID_METRIC} == {row.xid}" for row in DRAIN_XIDS)


def lost_gpu_expression() -> str:
    """PromQL for a GPU a node exported in the last 15 minutes and no longer does, while the
    node still exports other GPUs (so a node the autoscaler removed, or an exporter restart,
    does not fire; a node's only GPU lost is caught by XID 79, not by this rule). Grouped by
    node and GPU because pod labels come and go with the jobs."""
    seen = f"max by (Hostname, UUID, gpu) (max_over_time({PRESENCE_METRIC}[{LOST_GPU_LOOKBACK}]))"
    return (
        f"({seen} unless on (Hostname, UUID) {PRESENCE_METRIC}) and on (Hostname) {PRESENCE_METRIC}"
    )


def _xid_rule(xid_counts: bool) -> dict[str, Any]:
    if xid_counts:
        summary = "XID {{ $labels.xid }}"
        description = (
            "Counted over the exporter's XID window, so a later XID does not hide it; "
            "check the node's kernel log (dmesg | grep Xid)."
        )
    else:
        summary = "XID {{ $value }}"
        description = (
            "The gauge holds the last XID only: a later application XID between scrapes "
            "hides a fatal one, so this alert can miss it entirely; check the node's kernel "
            "log (dmesg | grep Xid)."
        )
    return {
        "alert": "GpuXidDrainNode",
        "expr": drain_expression(xid_counts),
        "labels": {"severity": "critical", "gpufleet_action": "drain"},
        "annotations": {
            "summary": "Node {{ $labels.Hostname }}: GPU {{ $labels.gpu }} ({{ $labels.UUID }}) "
            f"reported {summary}: cordon and drain the node, then reboot or replace it",
            "description": description,
        },
    }


def alert_rules(xid_counts: bool = True) -> dict[str, Any]:
    """The Prometheus rule file (groups of alerting rules) for the drain policy."""
    drain = {"severity": "critical", "gpufleet_action": "drain"}
    return {
        "groups": [
            {
                "name": "gpufleet-gpu-health",
                "rules": [
                    _xid_rule(xid_counts),
                    {
                        "alert": "GpuRowRemapFailure",
                        "expr": f"{ROW_REMAP_FAILURE_METRIC} > 0",
                        "labels": dict(drain),
                        "annotations": {
                            "summary": "Node {{ $labels.Hostname }}: GPU {{ $labels.gpu }} "
                            "({{ $labels.UUID }}) failed to remap a memory row: drain the "
                            "node and replace it",
                        },
                    },
                    {
                        "alert": "GpuLost",
                        "expr": lost_gpu_expression(),
                        # One missed scrape is not a lost GPU (review fix-5 F5-7).
                        "for": "5m",
                        "labels": dict(drain),
                        "annotations": {
                            "summary": "Node {{ $labels.Hostname }}: GPU {{ $labels.gpu }} "
                            "({{ $labels.UUID }}) stopped reporting while the node's other "
                            "GPUs still do (fallen off the bus?): drain the node and reboot "
                            "or replace it",
                        },
                    },
                ],
            }
        ]
    }


def alert_rules_yaml(xid_counts: bool = True) -> str:
    """The rule file as Prometheus reads it (`rule_files`)."""
    return yaml.safe_dump(alert_rules(xid_counts), sort_keys=False, width=100)
