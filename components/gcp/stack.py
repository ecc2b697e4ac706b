"""GKE: the cluster and one node pool component per GPU pool."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi

from components.gcp.adopted import AdoptedGkeCluster, AdoptedGkeClusterArgs
from components.gcp.cluster import GkeCluster, GkeClusterArgs
from components.gcp.compute_class import GkeComputeClassPool, GkeComputeClassPoolArgs
from components.gcp.driver_installer import GkeDriverInstaller, GkeDriverInstallerArgs
from components.gcp.gpu_pool import GkeGpuNodePool, GkeGpuNodePoolArgs
from components.gcp.gpudirect import GkeGpuDirect, GkeGpuDirectArgs
from components.gcp.model.capacity import NodePoolCapacity, node_pool_capacity
from components.gcp.model.cloud import GCP, gke_driver
from components.gcp.model.cluster_needs import kueue_ports, node_account_roles, project_services
from components.gcp.model.compute_class import ORDERS as class_orders
from components.gcp.model.compute_class import compute_class
from components.gcp.model.config import GcpPoolOptions, cluster_options, pool_options
from components.gcp.model.fabric import fabric_groups, fabric_pools, node_pool_fabric
from components.gcp.model.image_start import node_pool_image_start
from components.gcp.model.node_pool_names import gpufleet_node_pools
from components.kubernetes.cluster import ClusterHandle
from components.model.pools import PoolSpec
from components.model.schema import StackConfig


def build_cluster(config: StackConfig, system_pool: PoolSpec | None) -> ClusterHandle:
    if GCP.adopted(config.cluster):
        return _adopt_cluster(config)
    assert system_pool is not None
    cluster = GkeCluster(
        config.cluster.name,
        GkeClusterArgs(
            config=config.cluster,
            system_pool=system_pool,
            kueue_ports=kueue_ports(
                config.gpu_pools, [entry.pool for entry in config.queues.pools]
            ),
            project_services=project_services(config.gpu_pools),
            node_account_roles=node_account_roles(config.gpu_pools),
            multi_networking=bool(fabric_groups(config)),
        ),
    )
    gke = cluster.cluster
    return ClusterHandle.of(
        cluster,
        name=gke.name,
        exports={
            "clusterEndpoint": cluster.server,
            # Empty with the DNS endpoint: its certificate is publicly trusted.
            "clusterCaCertificate": cluster.certificate_authority,
            # Workload Identity's issuer: the cluster's own URL (GKE docs, Workload Identity).
            "oidcIssuerUrl": pulumi.Output.concat("https://container.googleapis.com/v1/", gke.id),
            "nodeIdentity": cluster.node_service_account,
        },
    )


def _adopt_cluster(config: StackConfig) -> ClusterHandle:
    """A cluster that exists: looked up, with gpufleet's node identity and provider only."""
    cluster = AdoptedGkeCluster(
        config.cluster.name,
        AdoptedGkeClusterArgs(
            config=config.cluster,
            node_pools=gpufleet_node_pools(list(enumerate(config.gpu_pools))),
            fabric_pools=tuple(fabric_pools(config)),
            kueue_ports=kueue_ports(
                config.gpu_pools, [entry.pool for entry in config.queues.pools]
            ),
            node_account_roles=node_account_roles(config.gpu_pools),
        ),
    )
    facts = cluster.facts
    project = cluster_options(config.cluster).project
    return ClusterHandle.of(
        cluster,
        name=facts.name,
        exports={
            "clusterEndpoint": cluster.server,
            "clusterCaCertificate": cluster.certificate_authority,
            "oidcIssuerUrl": "https://container.googleapis.com/v1/projects/"
            f"{project}/locations/{facts.location}/clusters/{facts.name}",
            "nodeIdentity": cluster.node_service_account,
        },
    )


def build_gpu_pools(
    config: StackConfig, pools: Sequence[PoolSpec], cluster: ClusterHandle
) -> list[pulumi.Resource]:
    gke = cluster.component
    if isinstance(gke, GkeCluster):
        cluster_name: pulumi.Input[str] = gke.cluster.name
        location = config.cluster.region or ""
        # Pools depend on the system pool so GKE never makes a GPU pool the cluster's first,
        # and on the project APIs they use.
        after: list[pulumi.Resource] = [gke.system_node_pool, *gke.pool_needs]
    else:
        assert isinstance(gke, AdoptedGkeCluster)
        cluster_name = gke.facts.name
        # A zonal cluster's pools are in its zone (GKE's node pool location is the cluster's).
        location = gke.facts.location
        # Nodes start only once their service account's roles exist.
        after = list(gke.node_roles)
    configured = {p.name: p for p in config.gpu_pools}
    options = {name: pool_options(pool) for name, pool in configured.items()}
    gpudirect = _gpudirect(config, cluster)
    if gpudirect is not None:
        after = [*after, *gpudirect.subnets]
    built: list[pulumi.Resource] = []
    for pool in pools:
        configured_pool = configured[pool.name]
        node_args = GkeGpuNodePoolArgs(
            pool=pool,
            driver=gke_driver(config.gpu_software_mode, configured_pool),
            capacity=_capacity(pool, options[pool.name]),
            cluster_name=cluster_name,
            location=location,
            service_account=gke.node_service_account,
            provider=gke.gcp_provider,
            image_start=node_pool_image_start(configured_pool),
            fabric=node_pool_fabric(config, configured_pool),
        )
        opts = pulumi.ResourceOptions(depends_on=after)
        name = f"{config.cluster.name}-{pool.name}"
        if pool.capacity in class_orders:
            built.append(_compute_class_pool(name, node_args, options[pool.name], cluster, opts))
        else:
            built.append(GkeGpuNodePool(name, node_args, opts=opts))
    if gpudirect is not None:
        built.append(gpudirect)
    if isinstance(gke, GkeCluster):
        # What Kueue waits for with the pools (its firewall rule).
        built += gke.pool_needs
    if pools and config.gpu_software_mode == "gpu-operator":
        # The pools' driver is not GKE's and the operator's does not run on COS.
        built.append(
            GkeDriverInstaller(
                f"{config.cluster.name}-driver-installer",
                GkeDriverInstallerArgs(
                    k8s_provider=cluster.k8s_provider,
                    pool_names=tuple(pool.name for pool in pools),
                ),
            )
        )
    return built


def _compute_class_pool(
    name: str,
    node_args: GkeGpuNodePoolArgs,
    options: GcpPoolOptions,
    cluster: ClusterHandle,
    opts: pulumi.ResourceOptions,
) -> GkeComputeClassPool:
    """A pool over several capacities: a ComputeClass over a node pool per capacity."""
    pool = node_args.pool
    reservation = options.reservation.name if options.reservation else None
    return GkeComputeClassPool(
        name,
        GkeComputeClassPoolArgs(
            pool=pool,
            compute_class=compute_class(
                pool.name,
                pool.capacity,
                pool.min_nodes,
                reservation,
                options.max_run_duration_seconds,
            ),
            driver=node_args.driver,
            image_start=node_args.image_start,
            cluster_name=node_args.cluster_name,
            location=node_args.location,
            service_account=node_args.service_account,
            provider=node_args.provider,
            k8s_provider=cluster.k8s_provider,
        ),
        opts=opts,
    )


def _capacity(pool: PoolSpec, options: GcpPoolOptions) -> NodePoolCapacity:
    """What the node pool sends for the pool's (checked) capacity order."""
    reservation = options.reservation.name if options.reservation else None
    return node_pool_capacity(pool.capacity, reservation, options.max_run_duration_seconds)


def _gpudirect(config: StackConfig, cluster: ClusterHandle) -> GkeGpuDirect | None:
    """The fabric pools' extra networks, Network objects and NCCL plugin installers."""
    groups = fabric_groups(config)
    if not groups:
        return None
    gke = cluster.component
    assert isinstance(gke, (GkeCluster, AdoptedGkeCluster))
    return GkeGpuDirect(
        f"{config.cluster.name}-gpudirect",
        GkeGpuDirectArgs(
            groups=groups,
            project=cluster_options(config.cluster).project or "",
            provider=gke.gcp_provider,
            k8s_provider=cluster.k8s_provider,
        ),
    )
