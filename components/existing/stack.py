"""`cloud: existing`: a cluster gpufleet does not create, reached through a kubeconfig or context.

Nothing cloud-side is created. The GPU nodes already exist; `gpuPools` only describes them
(labels, taints, GPUs per node, accelerator) so that the GPU software, monitoring and samples
target them exactly. The Kubernetes provider takes the kubeconfig from the secret config key
`gpufleet:kubeconfig` (`pulumi config set --secret gpufleet:kubeconfig "$(cat kubeconfig)"`),
or, without it, the ambient kubeconfig ($KUBECONFIG or ~/.kube/config); `cluster.existing.context`
picks a context of either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.kubernetes.cluster import ClusterHandle, KubernetesProviders
from components.model.existing_cluster import cluster_options
from components.model.pools import PoolSpec
from components.model.schema import ClusterConfig, StackConfig

KUBECONFIG_KEY = "kubeconfig"


@dataclass(frozen=True)
class ExistingClusterArgs:
    config: ClusterConfig
    # The secret kubeconfig document, or None to use the ambient kubeconfig.
    kubeconfig: pulumi.Output[str] | None


class ExistingCluster(pulumi.ComponentResource):
    """The explicit Kubernetes provider for a cluster that exists already."""

    k8s_provider: k8s.Provider
    kubeconfig: pulumi.Output[str]

    def __init__(
        self, name: str, args: ExistingClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:kubernetes:ExistingCluster", name, None, opts)
        context = cluster_options(args.config).context
        self.k8s_providers = KubernetesProviders(
            f"{name}-k8s",
            kubeconfig=args.kubeconfig,
            context=context,
            # `cluster.name` is the cluster's identity: a changed kubeconfig (a new endpoint,
            # CA or context) updates the provider; only a new name replaces it and the GPU
            # software with it (pulumi-kubernetes DiffConfig; review gke-2.md N1).
            cluster_identifier=args.config.name,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.k8s_provider = self.k8s_providers.main
        # Exported as a secret; empty when the ambient kubeconfig is used (it stays the user's).
        self.kubeconfig = pulumi.Output.secret(args.kubeconfig or "")
        self.register_outputs({"context": context or ""})


def build_cluster(config: StackConfig, system_pool: PoolSpec | None) -> ClusterHandle:
    del system_pool  # an existing cluster's CPU nodes are not gpufleet's
    kubeconfig = pulumi.Config("gpufleet").get_secret(KUBECONFIG_KEY)
    cluster = ExistingCluster(
        config.cluster.name,
        ExistingClusterArgs(config=config.cluster, kubeconfig=kubeconfig),
    )
    return ClusterHandle.of(cluster, name=config.cluster.name)


def build_gpu_pools(
    config: StackConfig, pools: Sequence[PoolSpec], cluster: ClusterHandle
) -> list[pulumi.Resource]:
    """GPU pools of an existing cluster are descriptions only: nothing to create."""
    del config, pools, cluster
    return []
