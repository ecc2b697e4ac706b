"""NVIDIA's GPU Operator (`gpu-operator` chart) with per-cloud presets (FACTS.md, GPU Operator).

The operator places its operands (driver, toolkit, device plugin, GFD, DCGM exporter, MIG
manager, validator) itself: NFD's worker labels nodes with an NVIDIA PCI device, the operator
turns that into `nvidia.com/gpu.deploy.<operand>=true` labels, and each operand DaemonSet selects
on those and tolerates `daemonsets.tolerations`. So the operator reaches every GPU pool when
NFD's worker and the operands tolerate every GPU-pool taint, and never a CPU pool (no GPU there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.kubernetes import plugin_config, targeting
from components.kubernetes.helm import pinned_release
from components.model.catalog import charts
from components.model.pools import PoolSpec
from components.model.registry import software_platform
from components.model.schema import StackConfig

PIN = charts.GPU_OPERATOR
RELEASE_NAME = "gpu-operator"
PLUGIN_CONFIG_NAME = "gpufleet-device-plugin-config"
# The chart's own default tolerations (values.yaml), kept alongside the pools' taints.
DAEMONSET_TOLERATIONS = ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)
NFD_WORKER_TOLERATIONS = (
    {
        "key": "node-role.kubernetes.io/control-plane",
        "operator": "Equal",
        "value": "",
        "effect": "NoSchedule",
    },
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
)


def values(config: StackConfig, pools: Sequence[PoolSpec]) -> dict[str, Any]:
    """Our values for the chart: the cloud preset, tolerations, sharing, MIG and monitoring."""
    monitoring = config.gpu_software.monitoring
    result: dict[str, Any] = {
        "daemonsets": {"tolerations": targeting.tolerations(pools, DAEMONSET_TOLERATIONS)},
        # NFD's worker only on gpufleet's GPU pools: the operator deploys its operands only on
        # nodes whose GPU NFD labelled (feature.node.kubernetes.io/pci-10de.present;
        # gpu-operator v26.7.0 controllers/state_manager.go gpuNodeLabels), so on a cluster
        # someone else runs it never installs drivers or plugins on the owner's GPU nodes.
        "node-feature-discovery": {
            "worker": {
                "tolerations": targeting.tolerations(pools, NFD_WORKER_TOLERATIONS),
                "affinity": targeting.node_affinity(pools),
            }
        },
        "mig": {"strategy": "single"},
        "dcgmExporter": {
            "enabled": monitoring.dcgm_exporter,
            # The chart enables it by default; it needs the Prometheus Operator's CRDs.
            "serviceMonitor": {"enabled": monitoring.service_monitor},
        },
    }
    for key, value in software_platform(config).gpu_operator_preset(config).items():
        result[key] = {**result.get(key, {}), **value}
    entries = plugin_config.config_entries(pools, default_mig_strategy="single")
    if entries:
        result["devicePlugin"] = {
            "config": {
                "create": True,
                "name": PLUGIN_CONFIG_NAME,
                "default": plugin_config.DEFAULT_ENTRY,
                "data": entries,
            }
        }
    return result


def adopted_cluster_notice(cluster_name: str) -> str:
    """What gpufleet cannot check offline on a cluster it adopts: another NFD already there."""
    return (
        f"cluster {cluster_name}: the GPU Operator serves the GPU nodes Node Feature Discovery "
        "labelled; gpufleet runs NFD's worker on its own pools only, but an NFD the cluster runs "
        "already (its own, or another GPU Operator's) labels the owner's GPU nodes too, and the "
        "operator would install its driver, toolkit and device plugin there: not checked. On "
        "such a cluster, label the nodes gpufleet did not create nvidia.com/gpu.deploy.operands="
        "false, or choose another gpuSoftware.mode"
    )


def release(
    name: str,
    config: StackConfig,
    pools: Sequence[PoolSpec],
    namespace: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
) -> k8s.helm.v3.Release:
    """The operator as a real Helm release (its chart relies on hooks a client render drops)."""
    # CRDs, NFD and the operator Deployment come up before Helm reports success.
    return pinned_release(
        name, PIN, RELEASE_NAME, namespace, values(config, pools), opts, timeout=900
    )
