"""InfiniBand for AKS fabric pools: NVIDIA's Network Operator (pinned chart), its
`NicClusterPolicy` limited to the fabric pools (DOCA OFED driver, SR-IOV device plugin giving
`rdma/ib`), and, on AKS's GPU driver, the DaemonSet that loads `nvidia-peermem` for GPUDirect
RDMA. What each object holds is `components/azure/model/rdma.py`; this maps it onto resources.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.azure.model import rdma
from components.kubernetes.helm import pinned_release
from components.kubernetes.namespaces import namespace_manifest


@dataclass(frozen=True)
class AksInfinibandArgs:
    # The agent pools with `interconnect: fabric` (their names, which AKS puts in the pool label).
    fabric_pools: tuple[str, ...]
    pool_label: str
    # A toleration for every taint of every fabric pool (GPU, Spot, user taints).
    tolerations: tuple[dict[str, str], ...]
    # The GPU Operator installs the driver (and loads nvidia-peermem itself, driver.rdma).
    operator_driver: bool
    # The GPU Operator runs (its NFD labels the fabric nodes; the Network Operator's stays off).
    gpu_operator: bool
    provider: k8s.Provider
    # The pools, so the operator's DaemonSets find their nodes' label once AKS made them.
    after: Sequence[pulumi.Resource] = ()


class AksInfiniband(pulumi.ComponentResource):
    """The Network Operator and its policy for the cluster's InfiniBand pools."""

    def __init__(
        self, name: str, args: AksInfinibandArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:azure:Infiniband", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        manifest = namespace_manifest(rdma.NAMESPACE, "privileged")
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=manifest["metadata"],
            opts=child,
        )
        release = pinned_release(
            f"{name}-network-operator",
            rdma.NETWORK_OPERATOR,
            "network-operator",
            namespace.metadata.name,
            rdma.network_operator_values(
                args.fabric_pools, args.pool_label, args.tolerations, args.gpu_operator
            ),
            pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[namespace])),
        )
        policy = rdma.nic_cluster_policy(args.fabric_pools, args.pool_label, args.tolerations)
        # The CRD comes with the chart: the policy follows the release.
        self.policy = k8s.apiextensions.CustomResource(
            f"{name}-nic-cluster-policy",
            api_version=policy["apiVersion"],
            kind=policy["kind"],
            metadata=policy["metadata"],
            spec=policy["spec"],
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=[release, *args.after])
            ),
        )
        self.peermem: k8s.apps.v1.DaemonSet | None = None
        if not args.operator_driver:
            daemonset = rdma.peermem_daemonset(
                rdma.NAMESPACE, args.fabric_pools, args.pool_label, args.tolerations
            )
            self.peermem = k8s.apps.v1.DaemonSet(
                f"{name}-peermem",
                metadata=daemonset["metadata"],
                spec=daemonset["spec"],
                opts=pulumi.ResourceOptions.merge(
                    child, pulumi.ResourceOptions(depends_on=[namespace])
                ),
            )
        self.register_outputs({})
