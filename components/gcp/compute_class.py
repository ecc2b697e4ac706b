"""A GKE GPU pool over several capacities: one node pool per capacity (each the GPU node pool
gpufleet makes for that capacity alone, labelled and tainted for the class) and the custom
ComputeClass that names them in the pool's order (components/gcp/model/compute_class.py)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.gcp.gpu_pool import GkeGpuNodePool, GkeGpuNodePoolArgs
from components.gcp.model.compute_class import API_VERSION, KIND, GkeComputeClass
from components.gcp.model.image_start import NodePoolImageStart
from components.model.pools import PoolSpec


@dataclass(frozen=True)
class GkeComputeClassPoolArgs:
    pool: PoolSpec
    compute_class: GkeComputeClass
    driver: str
    image_start: NodePoolImageStart
    cluster_name: pulumi.Input[str]
    location: str
    service_account: pulumi.Input[str]
    provider: gcp.Provider
    k8s_provider: k8s.Provider


class GkeComputeClassPool(pulumi.ComponentResource):
    node_pools: list[GkeGpuNodePool]
    compute_class: k8s.apiextensions.CustomResource

    def __init__(
        self, name: str, args: GkeComputeClassPoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:gcp:ComputeClassPool", name, None, opts)
        pool = args.pool
        self.node_pools = [
            GkeGpuNodePool(
                f"{name}-{priority.capacity}",
                GkeGpuNodePoolArgs(
                    # The pool as one node pool of this capacity (name, Spot, minimum).
                    pool=dataclasses.replace(
                        pool,
                        name=priority.node_pool,
                        spot=priority.spot,
                        capacity=(priority.capacity,),
                        min_nodes=priority.min_nodes,
                    ),
                    driver=args.driver,
                    capacity=priority.settings,
                    image_start=args.image_start,
                    cluster_name=args.cluster_name,
                    location=args.location,
                    service_account=args.service_account,
                    provider=args.provider,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            for priority in args.compute_class.priorities
        ]
        self.compute_class = k8s.apiextensions.CustomResource(
            f"{name}-class",
            api_version=API_VERSION,
            kind=KIND,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=args.compute_class.name),
            spec=args.compute_class.spec(),
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=args.k8s_provider,
                # The class names its node pools: they exist first.
                depends_on=[p.node_pool for p in self.node_pools],
            ),
        )
        self.register_outputs(
            {
                "name": args.compute_class.name,
                "nodePools": [p.node_pool.name for p in self.node_pools],
            }
        )
