"""The samples stage: each GPU pool's sample CUDA workloads as Kubernetes resources.

The manifests themselves come from `sample_manifests` (pure, shared with the `samples` command).
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.kubernetes.cluster import ClusterHandle
from components.kubernetes.sample_manifests import (
    ACTIVE_DEADLINE_SECONDS,
    NAMESPACE,
    is_shared,
    manifests,
    namespace_level,
)
from components.model.pools import PoolSpec
from components.model.schema import StackConfig

# `pulumi up` waits as long as a sample may live (its active deadline).
AWAIT_TIMEOUT = f"{ACTIVE_DEADLINE_SECONDS // 60}m"


class Samples(pulumi.ComponentResource):
    """The sample manifests as Kubernetes resources on the cluster's explicit provider.

    `pulumi up` waits for each Job to complete and the sharing Deployment to become ready, so a
    pool that cannot run CUDA fails the update instead of passing silently.
    """

    def __init__(
        self,
        name: str,
        pools: Sequence[PoolSpec],
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpufleet:kubernetes:Samples", name, None, opts)
        documents = manifests(pools)
        ns = k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata=documents[0]["metadata"],
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        workload_opts = pulumi.ResourceOptions(
            parent=self,
            provider=provider,
            depends_on=[ns, *depends_on],
            # Fixed names: the old object must go before its replacement can be created.
            delete_before_replace=True,
            custom_timeouts=pulumi.CustomTimeouts(create=AWAIT_TIMEOUT, update=AWAIT_TIMEOUT),
        )
        for manifest in documents[1:]:
            resource_name = f"{name}-{manifest['metadata']['name']}"
            if manifest["kind"] == "Job":
                k8s.batch.v1.Job(
                    resource_name,
                    metadata=manifest["metadata"],
                    spec=manifest["spec"],
                    opts=workload_opts,
                )
            else:
                k8s.apps.v1.Deployment(
                    resource_name,
                    metadata=manifest["metadata"],
                    spec=manifest["spec"],
                    opts=workload_opts,
                )
        self.register_outputs({"namespace": NAMESPACE})


def build(
    config: StackConfig,
    pools: Sequence[PoolSpec],
    cluster: ClusterHandle,
    software: pulumi.Resource | None,
    gpu_pools: Sequence[pulumi.Resource] = (),
) -> pulumi.Resource:
    """The program's samples stage (only called when `samples.enabled`).

    The samples wait for the GPU software and the GPU pools: on GKE cloud-managed there is no
    software release, and a Job created before its pool exists would only sit pending.
    """
    shared = [p.name for p in pools if p.kind == "gpu" and is_shared(p)]
    if shared:
        pulumi.log.warn(
            f"samples: the sharing Deployments keep one node of {', '.join(shared)} running "
            "while samples.enabled is true; disable samples to let those pools scale to zero"
        )
    level = namespace_level(pools)
    if level != "restricted":
        mps = [p.name for p in pools if p.kind == "gpu" and p.sharing_strategy == "mps"]
        pulumi.log.warn(
            f"samples: namespace {NAMESPACE} enforces Pod Security {level}, not restricted: the "
            f"samples of MPS pool(s) {', '.join(mps)} run as root"
            + (" and share the host's IPC namespace (GKE's MPS)" if level == "privileged" else "")
        )
    return Samples(
        f"{config.cluster.name}-samples",
        pools,
        cluster.k8s_provider,
        depends_on=[*gpu_pools, *([software] if software is not None else [])],
    )
