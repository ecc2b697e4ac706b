"""AKS's own DaemonSet pods on every node (GPU and system pools), besides gpufleet's charts.

Which pods: the kube-system DaemonSets AKS runs on a node of a cluster like gpufleet's (Azure
CNI Overlay, the Azure Disk and Azure Files CSI drivers on by default), as AKS's own docs list
them on a node (learn.microsoft.com/azure/aks/privileged-identity-management, the kube-system
pods: azure-ip-masq-agent, cloud-node-manager, csi-azuredisk-node, csi-azurefile-node,
kube-proxy) plus the CNI's azure-cns (aks-component-versioning: "azure-cns" among the add-on
pods on customer nodes).

Their requests, where a source read here gives them (AKS deploys the same components from the
upstream charts it publishes):
- csi-azuredisk-node: kubernetes-sigs/azuredisk-csi-driver charts/latest/azuredisk-csi-driver/
  values.yaml (commit 013114e5), linux.resources: livenessProbe, nodeDriverRegistrar and
  azuredisk each request cpu 10m, memory 20Mi;
- csi-azurefile-node: kubernetes-sigs/azurefile-csi-driver charts/latest/azurefile-csi-driver/
  values.yaml (commit 0309d8e6), linux.resources: the same three containers, 10m/20Mi each;
- cloud-node-manager: kubernetes-sigs/cloud-provider-azure helm/cloud-provider-azure/
  values.yaml (commit 20e2c995), cloudNodeManager.containerResourceManagement: 50m, 50Mi.
kube-proxy, azure-cns and azure-ip-masq-agent: no source read here gives their requests (the
published azure-cns and ip-masq-agent-v2 manifests set none), so only their pod slot is
counted, and the consumers keep a margin for the rest (components/model/daemonsets.py).
"""

from __future__ import annotations

from components.model.allocatable import MIB
from components.model.daemonsets import NodeDaemonSet

_NO_REQUESTS = "on every AKS node (AKS docs); no source read here gives its requests: pod slot only"

AKS_NODE_DAEMONSETS: tuple[NodeDaemonSet, ...] = (
    NodeDaemonSet(
        "kube-system/csi-azuredisk-node",
        30,
        60 * MIB,
        "kubernetes-sigs/azuredisk-csi-driver values.yaml (013114e5): 3 containers x 10m/20Mi",
    ),
    NodeDaemonSet(
        "kube-system/csi-azurefile-node",
        30,
        60 * MIB,
        "kubernetes-sigs/azurefile-csi-driver values.yaml (0309d8e6): 3 containers x 10m/20Mi",
    ),
    NodeDaemonSet(
        "kube-system/cloud-node-manager",
        50,
        50 * MIB,
        "kubernetes-sigs/cloud-provider-azure helm values.yaml (20e2c995): requests 50m, 50Mi",
    ),
    NodeDaemonSet("kube-system/kube-proxy", 0, 0, _NO_REQUESTS),
    NodeDaemonSet("kube-system/azure-cns", 0, 0, _NO_REQUESTS),
    NodeDaemonSet("kube-system/azure-ip-masq-agent", 0, 0, _NO_REQUESTS),
)


def node_daemonsets() -> tuple[NodeDaemonSet, ...]:
    return AKS_NODE_DAEMONSETS
