"""What AKS pods need to get InfiniBand devices, as data: NVIDIA's Network Operator (pinned
chart) and its `NicClusterPolicy` (the DOCA OFED driver and the SR-IOV device plugin giving
`rdma/ib`, limited to fabric pools), and how GPUDirect RDMA (`nvidia-peermem`) is loaded with
AKS's driver or the GPU Operator's.

Sources: Azure/aks-rdma-infiniband @700dabb4 (the AKS guide: `configs/`, `website/docs/`),
Mellanox/network-operator v26.4.0 = 12e6d54ae20300151ef386da832809d83a8ab63d
(`deployment/network-operator/values.yaml`, `api/v1alpha1/nicclusterpolicy_types.go`,
`example/crs/mellanox.com_v1alpha1_nicclusterpolicy_cr*.yaml`,
`manifests/state-ofed-driver/0050_ofed-driver-ds.yaml`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from components.azure.model.fabric import RDMA_GUIDE, RDMA_RESOURCE
from components.model.catalog.charts import ChartPin

NETWORK_OPERATOR = ChartPin(
    "network-operator", "26.4.0", "https://helm.ngc.nvidia.com/nvidia", "network-operator"
)
NETWORK_OPERATOR_SOURCE = (
    "Mellanox/network-operator v26.4.0 (12e6d54ae20300151ef386da832809d83a8ab63d) "
    "deployment/network-operator/Chart.yaml and values.yaml"
)
NAMESPACE = "network-operator"
# Its DaemonSets run privileged (the guide labels the namespace so).
NAMESPACE_LABELS: Final = {"pod-security.kubernetes.io/enforce": "privileged"}

# The Network Operator's OFED state renders the DOCA driver only on nodes NFD labelled with a
# Mellanox NIC and with its OS and kernel labels (v26.4.0 pkg/state/state_ofed.go
# `WithLabel(NodeLabelMlnxNIC, "true")`, pkg/nodeinfo/attributes.go, node_info.go), whatever the
# policy's node affinity. The chart's NodeFeatureRule makes that label (templates/
# nodefeaturerules.yaml, only with `nfd.deployNodeFeatureRules`; the AKS guide turns it off and
# applies its own rule, tests/setup-infra/network-operator-nfd.yaml, to the same effect).
MELLANOX_NIC_LABEL: Final = "feature.node.kubernetes.io/pci-15b3.present"
# The NFD worker's tolerations at the chart's default (values.yaml
# `node-feature-discovery.worker.tolerations`): Helm replaces a list, so ours repeat them.
NFD_WORKER_DEFAULT_TOLERATIONS: Final = (
    {"key": "node-role.kubernetes.io/master", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
)


def pool_affinity(fabric_pools: Sequence[str], pool_label: str) -> dict[str, Any]:
    """Required node affinity for the nodes of `fabric_pools` (by agent pool label)."""
    expression = {"key": pool_label, "operator": "In", "values": sorted(fabric_pools)}
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [expression]}]
        }
    }


def network_operator_values(
    fabric_pools: Sequence[str],
    pool_label: str,
    tolerations: Sequence[Mapping[str, str]],
    gpu_operator_nfd: bool,
) -> dict[str, Any]:
    """The chart's values. With the GPU Operator (`gpu_operator_nfd`), its NFD is the one NFD:
    its worker already runs on every GPU pool, tolerates their taints and labels PCI classes
    0200/0207 by vendor, which gives `pci-15b3.present` (gpu-operator values.yaml
    `node-feature-discovery.worker.config.sources.pci`), so this chart's NFD and rules stay off
    (two NFDs would label the same nodes; the AKS guide keeps one). Otherwise this chart's NFD
    with its NodeFeatureRules, so the fabric nodes get the Mellanox NIC label the OFED state
    needs; its worker only on the fabric pools (on a cluster another team runs, it labels no
    node of theirs) and tolerating every taint of those pools (AKS's GPU taint, the Spot taint,
    user taints), or it never runs there. Every key exists in the chart's values.yaml at v26.4.0
    (`node-feature-discovery` is its subchart)."""
    if gpu_operator_nfd:
        return {"nfd": {"enabled": False, "deployNodeFeatureRules": False}, "upgradeCRDs": True}
    worker_tolerations = list(NFD_WORKER_DEFAULT_TOLERATIONS)
    worker_tolerations += [dict(t) for t in tolerations if dict(t) not in worker_tolerations]
    return {
        "nfd": {"enabled": True, "deployNodeFeatureRules": True},
        "upgradeCRDs": True,
        "node-feature-discovery": {
            "worker": {
                "tolerations": worker_tolerations,
                "affinity": {"nodeAffinity": pool_affinity(fabric_pools, pool_label)},
            }
        },
    }


# Operand images of the same release (example/crs/mellanox.com_v1alpha1_nicclusterpolicy_cr.yaml
# and ..._cr-full.yaml at v26.4.0): the operator is tested with these.
_MELLANOX = "nvcr.io/nvidia/mellanox"
OFED_DRIVER_VERSION = "doca3.4.0-26.04-0.8.6.0-0"
DEVICE_PLUGIN_VERSION = "network-operator-v26.4.0"

# The SR-IOV device plugin's resource list: every Mellanox (15b3) InfiniBand device with its RDMA
# character devices mounted, advertised as rdma/ib (the guide's sriov.yaml).
_PREFIX, _NAME = RDMA_RESOURCE.split("/")
SRIOV_CONFIG: Final = {
    "resourceList": [
        {
            "resourcePrefix": _PREFIX,
            "resourceName": _NAME,
            "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"], "isRdma": True},
        }
    ]
}

# The DOCA driver's DaemonSet updates OnDelete (manifests/state-ofed-driver/0050_ofed-driver-ds
# .yaml): with autoUpgrade false (the CRD's default) a new driver version reaches only new nodes
# and nodes whose driver pod is deleted, so a bump never drains a node running a training job.
# The guide turns autoUpgrade on with a forced drain (5 minutes, one node at a time), which
# would evict running jobs outside any maintenance window.
OFED_UPGRADE_POLICY: Final = {"autoUpgrade": False}


def nic_cluster_policy(
    fabric_pools: Sequence[str], pool_label: str, tolerations: Sequence[Mapping[str, str]]
) -> dict[str, Any]:
    """The `NicClusterPolicy` (mellanox.com/v1alpha1, a cluster singleton named
    nic-cluster-policy) for the fabric pools only: their nodes by agent pool label, every taint
    of theirs tolerated (the OFED state drops a node whose taints the policy does not tolerate,
    state_ofed.go's taint filter), the DOCA OFED driver and the SR-IOV device plugin."""
    return {
        "apiVersion": "mellanox.com/v1alpha1",
        "kind": "NicClusterPolicy",
        "metadata": {"name": "nic-cluster-policy"},
        "spec": {
            "nodeAffinity": pool_affinity(fabric_pools, pool_label),
            "tolerations": [dict(t) for t in tolerations],
            "ofedDriver": {
                "repository": _MELLANOX,
                "image": "doca-driver",
                "version": OFED_DRIVER_VERSION,
                "upgradePolicy": OFED_UPGRADE_POLICY,
                "startupProbe": {"initialDelaySeconds": 10, "periodSeconds": 20},
                "livenessProbe": {"initialDelaySeconds": 30, "periodSeconds": 30},
                "readinessProbe": {"initialDelaySeconds": 10, "periodSeconds": 30},
            },
            "sriovDevicePlugin": {
                "repository": _MELLANOX,
                "image": "sriov-network-device-plugin",
                "version": DEVICE_PLUGIN_VERSION,
                "config": json.dumps(SRIOV_CONFIG, indent=2),
            },
        },
    }


# --- GPUDirect RDMA: nvidia-peermem ------------------------------------------------------------

# AKS's driver does not load nvidia-peermem; the guide's reloader DaemonSet does (modprobe in a
# privileged pod, re-checked by its probes). With the GPU Operator's own driver
# (operatorDriver: true, pools created without AKS's driver) the operator loads it when
# `driver.rdma.enabled` is true. `driver.rdma` does nothing where the operator installs no driver
# (AKS's driver: gpufleet uses the reloader there), and the two drivers never share a node.
PEERMEM_SOURCE = (
    f"{RDMA_GUIDE} website/docs/configurations/02-gpu-drivers.md (Option 1: AKS-managed driver "
    "and configs/nvidia-peermem-reloader/ds.yaml; Option 2: GPU Operator with driver.rdma.enabled)"
)
PEERMEM_IMAGE = "mcr.microsoft.com/mirror/docker/library/ubuntu:24.04"
PEERMEM_NAME = "nvidia-peermem-reloader"


def peermem_via(operator_driver: bool) -> str:
    """How nvidia-peermem gets loaded on a fabric pool's nodes."""
    if operator_driver:
        return "GPU Operator driver.rdma.enabled (the operator's driver container loads it)"
    return f"{PEERMEM_NAME} DaemonSet (AKS's driver does not load it)"


def gpu_operator_rdma() -> dict[str, Any]:
    """The GPU Operator values that load nvidia-peermem with its own driver; the DOCA driver
    comes from the Network Operator's container, not the host (`useHostMofed` false)."""
    return {"driver": {"rdma": {"enabled": True, "useHostMofed": False}}}


def peermem_daemonset(
    namespace: str,
    fabric_pools: Sequence[str],
    pool_label: str,
    tolerations: Sequence[Mapping[str, str]],
) -> dict[str, Any]:
    """The reloader DaemonSet on the fabric pools' nodes (AKS's driver), tolerating every taint
    of theirs."""
    probe = {"exec": {"command": ["/bin/bash", "-c", "modprobe nvidia-peermem"]}}
    labels = {"app.kubernetes.io/name": PEERMEM_NAME}
    return {
        "metadata": {"name": PEERMEM_NAME, "namespace": namespace, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    "tolerations": [dict(t) for t in tolerations],
                    "affinity": {"nodeAffinity": pool_affinity(fabric_pools, pool_label)},
                    "containers": [
                        {
                            "name": "reloader",
                            "image": PEERMEM_IMAGE,
                            "command": [
                                "/bin/bash",
                                "-c",
                                "apt-get update && apt-get install -y kmod && "
                                "modprobe nvidia-peermem && sleep infinity",
                            ],
                            "startupProbe": {
                                **probe,
                                "initialDelaySeconds": 10,
                                "periodSeconds": 10,
                                "failureThreshold": 120,
                                "timeoutSeconds": 10,
                            },
                            "livenessProbe": {
                                **probe,
                                "initialDelaySeconds": 30,
                                "periodSeconds": 30,
                                "timeoutSeconds": 10,
                            },
                            "securityContext": {"privileged": True},
                            "volumeMounts": [
                                {
                                    "name": "lib-modules",
                                    "mountPath": "/lib/modules",
                                    "readOnly": True,
                                }
                            ],
                        }
                    ],
                    "volumes": [
                        {
                            "name": "lib-modules",
                            "hostPath": {"path": "/lib/modules", "type": "Directory"},
                        }
                    ],
                },
            },
        },
    }
