"""AKS node auto-provisioning's GPU pools: per pool an AKSNodeClass and a `karpenter.sh/v1`
NodePool, both named after the pool, for AKS's managed Karpenter (which the cluster's
nodeProvisioningProfile runs; its CRDs come with it). The NodePool is the shared shape every
Karpenter provider builds (`components/model/karpenter_pool.py`); the node class is AKS's
(`components/azure/model/nap.py`)."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.azure.model import nap
from components.kubernetes.karpenter_pool import (
    KarpenterGpuPool,
    KarpenterGpuPoolArgs,
    NodeClassDocument,
)
from components.model import karpenter_pool
from components.model.pools import PoolSpec

NAP_GPU_POOL_TYPE = "gpufleet:azure:NapGpuPool"
NODE_POOL_OPTIONS = karpenter_pool.NodePoolOptions(
    node_class_ref={"group": nap.NODE_CLASS_GROUP, "kind": nap.NODE_CLASS_KIND, "name": ""}
)


def build_nap_pools(
    cluster_name: str,
    pools: Sequence[PoolSpec],
    *,
    driver: str,
    subnet_id: pulumi.Input[str] | None,
    tags: dict[str, str],
    k8s_provider: k8s.Provider,
    wait_for: Sequence[pulumi.Resource],
) -> list[pulumi.Resource]:
    """A NodePool and AKSNodeClass per pool, after what runs NAP (`wait_for`: the cluster
    gpufleet created in Auto mode; nothing on an adopted cluster, which runs it already)."""
    built: list[pulumi.Resource] = []
    for pool in pools:
        options = karpenter_pool.NodePoolOptions(
            node_class_ref={**NODE_POOL_OPTIONS.node_class_ref, "name": pool.name}
        )
        built.append(
            KarpenterGpuPool(
                NAP_GPU_POOL_TYPE,
                f"{cluster_name}-{pool.name}",
                KarpenterGpuPoolArgs(
                    pool=pool,
                    node_class=NodeClassDocument(
                        api_version=nap.NODE_CLASS_API_VERSION,
                        kind=nap.NODE_CLASS_KIND,
                        spec=nap.node_class_spec(pool.disk_size_gb, driver, tags)
                        | ({"vnetSubnetID": subnet_id} if subnet_id is not None else {}),
                    ),
                    node_pool=karpenter_pool.node_pool(
                        pool,
                        options,
                        capacity=karpenter_pool.capacity_types(pool.capacity, False),
                        largest=(pool.vcpus, pool.memory_gib),
                        consolidate_underutilized=False,
                    ),
                    wait_for=wait_for,
                    k8s_provider=k8s_provider,
                ),
            )
        )
    return built
