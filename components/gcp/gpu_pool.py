"""A GKE GPU node pool: accelerators from the catalog, GKE-managed driver, sharing/MIG, Spot, scale to zero."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.gcp.cluster import NODE_OAUTH_SCOPES
from components.gcp.model.capacity import NodePoolCapacity, ReservationAffinity
from components.gcp.model.fabric import NodePoolFabric
from components.gcp.model.gpu_health import pool_repair
from components.gcp.model.image_start import CACHE_MODE, NodePoolImageStart
from components.gcp.model.kinds.node_pools import gke_accelerator, location_policy
from components.model.pools import PoolSpec

# Kubernetes taint effects as the GKE API spells them.
GKE_TAINT_EFFECTS = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}
GKE_SHARING_STRATEGIES = {"time-sharing": "TIME_SHARING", "mps": "MPS"}


@dataclass(frozen=True)
class GkeGpuNodePoolArgs:
    pool: PoolSpec
    # The pool's gpu_driver_version (GKE-managed, or INSTALLATION_DISABLED for the operator).
    driver: str
    # How the nodes are obtained: flex-start, queued provisioning, a reservation affinity
    # (components/gcp/model/capacity.py; all ForceNew in terraform-provider-google).
    capacity: NodePoolCapacity
    # Image streaming and a preloaded image disk (components/gcp/model/image_start.py).
    image_start: NodePoolImageStart
    cluster_name: pulumi.Input[str]
    # The cluster's location: its region, or a zonal adopted cluster's zone.
    location: str
    service_account: pulumi.Input[str]
    provider: gcp.Provider
    # GPUDirect's extra NICs and compact placement (components/gcp/model/fabric.py; both
    # ForceNew: turning the fabric on or off replaces the pool).
    fabric: NodePoolFabric | None = None


class GkeGpuNodePool(pulumi.ComponentResource):
    node_pool: gcp.container.NodePool

    def __init__(
        self, name: str, args: GkeGpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:gcp:GpuNodePool", name, None, opts)
        pool = args.pool
        capacity = args.capacity
        image_start = args.image_start
        self.node_pool = gcp.container.NodePool(
            f"{name}-pool",
            # Explicit, so the node label cloud.google.com/gke-nodepool is the config name.
            name=pool.name,
            cluster=args.cluster_name,
            location=args.location,
            node_locations=list(pool.zones),
            initial_node_count=0,
            # The autoscaler owns the count: a refresh need not read every instance group for
            # it (review gke.md S3-2; saves API quota, faster previews).
            ignore_node_count_changes=True,
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                total_min_node_count=pool.min_nodes,
                total_max_node_count=pool.max_nodes,
                # ANY finds capacity in whichever zone has it: what Spot, flex-start, queued
                # and scarce GPUs need.
                location_policy=location_policy(pool),
            ),
            # Flex-start and queued pools go without auto-repair, as GKE creates them: a
            # repair would replace a node under its Job (capacity.py).
            management=gcp.container.NodePoolManagementArgs(
                auto_repair=pool_repair(capacity).auto_repair, auto_upgrade=True
            ),
            # Nodes only through ProvisioningRequests (Kueue's admission check asks for them).
            queued_provisioning=gcp.container.NodePoolQueuedProvisioningArgs(enabled=True)
            if capacity.queued
            else None,
            # Upgrade one node at a time in place: a surge node would be one more GPU VM, which
            # quota or stock often cannot give, stalling the upgrade (review gke.md S2-8).
            # Flex-start and queued pools get GKE's own short-lived upgrades instead.
            upgrade_settings=None
            if capacity.short_lived_upgrades
            else gcp.container.NodePoolUpgradeSettingsArgs(
                strategy="SURGE", max_surge=0, max_unavailable=1
            ),
            network_config=_network_config(args.fabric),
            placement_policy=gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT")
            if args.fabric and args.fabric.compact
            else None,
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=pool.machine_types[0],
                # The extra NICs are gVNICs (GKE's GPUDirect guides create such pools with it).
                gvnic=gcp.container.NodePoolNodeConfigGvnicArgs(enabled=True)
                if args.fabric
                else None,
                spot=pool.spot,
                flex_start=True if capacity.flex_start else None,
                max_run_duration=capacity.max_run_duration,
                disk_size_gb=pool.disk_size_gb,
                # No disk_type: GKE picks pd-balanced, or hyperdisk-balanced on the series that
                # have no Persistent Disk (A3 Ultra, A4, G4); a fixed pd-balanced fails there.
                service_account=args.service_account,
                oauth_scopes=NODE_OAUTH_SCOPES,
                guest_accelerators=[_accelerator(pool, args.driver)],
                reservation_affinity=_reservation(capacity.reservation),
                labels=dict(pool.declared_labels),
                # GKE adds the GPU taint only when a non-GPU pool already exists; declare it.
                taints=[
                    gcp.container.NodePoolNodeConfigTaintArgs(
                        key=t.key, value=t.value, effect=GKE_TAINT_EFFECTS[t.effect]
                    )
                    for t in pool.declared_taints
                ],
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
                    mode="GKE_METADATA"
                ),
                shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                    enable_integrity_monitoring=True
                ),
                # Containers start while their (often 10 GB) CUDA image streams in from
                # Artifact Registry (cloud.google.com/kubernetes-engine/docs/how-to/
                # image-streaming; cluster-toolkit gke-node-pool enable_gcfs).
                gcfs_config=gcp.container.NodePoolNodeConfigGcfsConfigArgs(
                    enabled=image_start.streaming
                ),
                # Each node gets a disk of this image as its container image cache (ForceNew:
                # a new image is a new pool, GKE docs data-container-image-preloading).
                secondary_boot_disks=[
                    gcp.container.NodePoolNodeConfigSecondaryBootDiskArgs(
                        disk_image=image_start.preloaded_disk, mode=CACHE_MODE
                    )
                ]
                if image_start.preloaded_disk
                else None,
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=args.provider,
                # The autoscaler owns the node count; `pulumi up` must never reset it. Image
                # streaming by default is for pools created from now on: a pool an earlier
                # gpufleet created keeps its setting (a change would roll its nodes) until the
                # stack sets gpuPools[].gcp.imageStreaming (or a preloaded disk, which needs it).
                ignore_changes=["initialNodeCount", "nodeCount"]
                + ([] if image_start.streaming_applied else ["nodeConfig.gcfsConfig"])
                # GKE sets SHORT_LIVED there; the provider cannot send it back.
                + (["upgradeSettings"] if capacity.short_lived_upgrades else []),
                # The name is the pool's node label (podScheduling selects on it), so a replaced
                # pool keeps it: the old pool must go first, or GKE answers 409 (exists).
                delete_before_replace=True,
            ),
        )
        self.register_outputs(
            {"name": self.node_pool.name, "instanceGroupUrls": self.node_pool.instance_group_urls}
        )


def _accelerator(
    pool: PoolSpec, driver: str
) -> gcp.container.NodePoolNodeConfigGuestAcceleratorArgs:
    sharing = None
    partition = None
    if pool.sharing_via == "cloud" and pool.sharing_strategy and pool.max_shared_clients_per_gpu:
        sharing = gcp.container.NodePoolNodeConfigGuestAcceleratorGpuSharingConfigArgs(
            gpu_sharing_strategy=GKE_SHARING_STRATEGIES[pool.sharing_strategy],
            max_shared_clients_per_gpu=pool.max_shared_clients_per_gpu,
        )
    if pool.sharing_via == "cloud" and pool.mig_partition_size:
        partition = pool.mig_partition_size
    return gcp.container.NodePoolNodeConfigGuestAcceleratorArgs(
        type=gke_accelerator(pool.accelerator, pool.machine_types[0]),
        count=pool.gpus_per_node,
        # Explicit: an unset driver version caused permanent diffs.
        gpu_driver_installation_config=gcp.container.NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfigArgs(
            gpu_driver_version=driver
        ),
        gpu_sharing_config=sharing,
        gpu_partition_size=partition,
    )


def _network_config(
    fabric: NodePoolFabric | None,
) -> gcp.container.NodePoolNetworkConfigArgs | None:
    if fabric is None:
        return None
    return gcp.container.NodePoolNetworkConfigArgs(
        additional_node_network_configs=[
            gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgs(
                network=network, subnetwork=subnet
            )
            for network, subnet in fabric.networks
        ]
    )


def _reservation(
    affinity: ReservationAffinity | None,
) -> gcp.container.NodePoolNodeConfigReservationAffinityArgs | None:
    if affinity is None:
        return None  # GKE's default, as pools created before `capacity` have it
    return gcp.container.NodePoolNodeConfigReservationAffinityArgs(
        consume_reservation_type=affinity.consume_reservation_type,
        key=affinity.key,
        values=list(affinity.values) or None,
    )
