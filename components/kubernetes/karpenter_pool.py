"""One GPU pool as Karpenter sees it: the provider's node class, a `karpenter.sh/v1` NodePool and,
for shared or MIG GPUs, a NodeOverlay, all named after the pool. Any Karpenter provider builds its
pools with it (EKS: gpufleet's Karpenter and EKS Auto Mode; AKS node auto-provisioning next);
the documents come ready from `components/model/karpenter_pool.py` and the cloud's node class.

The cloud passes its own component type token (EKS: `gpufleet:aws:KarpenterGpuPool`), so a
running stack's URNs stay what they were when this component lived in the AWS folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.model.karpenter_pool import NODE_OVERLAY_API_VERSION, NODE_POOL_API_VERSION
from components.model.pool_spec import PoolSpec


@dataclass(frozen=True)
class NodeClassDocument:
    """The node class a NodePool names (e.g. Karpenter's EC2NodeClass, Auto Mode's NodeClass)."""

    api_version: str
    kind: str
    spec: pulumi.Input[Mapping[str, Any]]


@dataclass(frozen=True)
class KarpenterGpuPoolArgs:
    pool: PoolSpec
    node_class: NodeClassDocument
    node_pool: Mapping[str, Any]
    # What brings the CRDs and lets the nodes join (the controller's release, access entries).
    wait_for: Sequence[pulumi.Resource]
    k8s_provider: k8s.Provider
    # The NodeOverlay that tells Karpenter a shared or MIG node's GPU count (None: the cloud's).
    node_overlay: Mapping[str, Any] | None = None


class KarpenterGpuPool(pulumi.ComponentResource):
    """One GPU pool as Karpenter sees it: a node class and a NodePool, both named after the
    pool, under the cloud's component type token (`type_token`)."""

    node_class: k8s.apiextensions.CustomResource
    node_pool: k8s.apiextensions.CustomResource
    node_overlay: k8s.apiextensions.CustomResource | None

    def __init__(
        self,
        type_token: str,
        name: str,
        args: KarpenterGpuPoolArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(type_token, name, None, opts)
        pool = args.pool
        child = pulumi.ResourceOptions(
            parent=self, provider=args.k8s_provider, depends_on=list(args.wait_for)
        )
        self.node_class = k8s.apiextensions.CustomResource(
            f"{name}-node-class",
            api_version=args.node_class.api_version,
            kind=args.node_class.kind,
            metadata={"name": pool.name},
            spec=args.node_class.spec,
            opts=child,
        )
        self.node_pool = k8s.apiextensions.CustomResource(
            f"{name}-node-pool",
            api_version=NODE_POOL_API_VERSION,
            kind="NodePool",
            metadata=dict(args.node_pool["metadata"]),
            spec=dict(args.node_pool["spec"]),
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=[self.node_class])
            ),
        )
        self.node_overlay = None
        if args.node_overlay is not None:
            self.node_overlay = k8s.apiextensions.CustomResource(
                f"{name}-node-overlay",
                api_version=NODE_OVERLAY_API_VERSION,
                kind="NodeOverlay",
                metadata=dict(args.node_overlay["metadata"]),
                spec=dict(args.node_overlay["spec"]),
                opts=child,
            )
        self.register_outputs({"nodePool": pool.name})
