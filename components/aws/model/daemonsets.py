"""EKS's own DaemonSet pods on a GPU node, where a source gives their requests.

The vpc-cni add-on (`aws.eks.Addon`, components/aws/addons.py) runs `aws-node` from the chart
EKS publishes: aws/eks-charts `stable/aws-vpc-cni/values.yaml` (chart 1.22.4, commit 5239609)
requests cpu 25m and no memory for the CNI container, and `resources: {}` for its init container
and the network policy agent. The kube-proxy add-on's DaemonSet requests cpu 100m and no memory
(eksctl-io/eksctl pkg/addons/default/testdata/sample-1.25.json, a dump of EKS's kube-proxy
DaemonSet; review eks-2.md N10). eks-pod-identity-agent and eks-node-monitoring-agent are not
counted: no source read here gives their requests (see components/model/daemonsets.py).
"""

from __future__ import annotations

from components.model.daemonsets import NodeDaemonSet

AWS_NODE = NodeDaemonSet(
    "kube-system/aws-node",
    25,
    0,
    "aws/eks-charts stable/aws-vpc-cni/values.yaml (1.22.4): resources.requests cpu 25m",
)


KUBE_PROXY = NodeDaemonSet(
    "kube-system/kube-proxy",
    100,
    0,
    "eksctl-io/eksctl pkg/addons/default/testdata/sample-1.25.json (EKS's kube-proxy "
    "DaemonSet): resources.requests cpu 100m",
)


def node_daemonsets() -> tuple[NodeDaemonSet, ...]:
    return (AWS_NODE, KUBE_PROXY)
