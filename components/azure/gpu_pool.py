"""An AKS GPU agent pool: a separate `AgentPool` (never inline), User mode, scale to zero, Spot, MIG."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import pulumi
from pulumi_azure_native import authorization, containerservice
from pulumi_azure_native.provider import Provider as AzureProvider

from components.azure.model.catalog import CATALOG
from components.azure.model.config import software_options
from components.azure.model.deployed import FixedAtCreation
from components.azure.model.fabric import autoscaler_resource_tags
from components.azure.model.gpu_software import gpu_instance_profile
from components.azure.model.kinds.agent_pools import SPOT_KEY
from components.azure.model.pool_capacity import AksPoolCapacity
from components.azure.model.rbac import RESERVATION_GRANT_PROPAGATION
from components.azure.model.reservations import group_id
from components.azure.rbac import wait_for_propagation
from components.model.pools import PoolSpec, Taint
from components.model.schema import StackConfig

GpuDriver = Literal["Install", "None"]
# The node count is the cluster autoscaler's. AKS needs one to create a pool (the pool starts
# at minNodes); on a pool that exists gpufleet sends none, and AKS keeps the count the
# autoscaler chose (a PUT without count "didn't change it": kubernetes-sigs/cluster-api-provider-
# azure PR 1991), so no update ever sends a stale count or one below minCount (review aks.md D4).
# Until the pool exists the creation count is ignored, in case the pool does exist after all.
NEW_POOL_IGNORE_CHANGES = ["count"]
# Properties AKS fixes at creation (review aks.md F2: the provider's forceNew list, and AKS's
# docs for Spot priority and price, the GPU driver, the OS disk type and the zones; the capacity
# reservation group: components/azure/model/reservations.py).
POOL_REPLACE_ON_CHANGES = [
    "capacityReservationGroupID",
    "vmSize",
    "gpuInstanceProfile",
    "gpuProfile",
    "osDiskSizeGB",
    "osDiskType",
    "scaleSetPriority",
    "scaleSetEvictionPolicy",
    "spotMaxPrice",
    "availabilityZones",
    "vnetSubnetID",
    "maxPods",
]
# How AKS upgrades a GPU pool (a Kubernetes minor from `pulumi up`, or the weekly node image
# inside the maintenance window): in place, one node at a time, with no surge node, since a
# surge needs one more GPU VM of quota per pool and GPU quota is usually exactly maxNodes
# (learn.microsoft.com/azure/aks/upgrade-aks-node-pools-rolling: "Max unavailable doesn't create
# surge nodes"; "maxUnavailable ... 0, AKS requires maxSurge to be greater than 0", so one of
# them is set). Each node is cordoned and drained; PodDisruptionBudgets are honoured for up to
# DRAIN_TIMEOUT_MINUTES. A node a PDB keeps from draining (a training job protected by one) is
# left as it is: `Schedule` marks it schedulable again, not upgraded, and the operation ends
# Failed, to be retried in the next window or `up` (API 2025-09-01, UndrainableNodeBehavior:
# "AKS will mark the blocked nodes schedulable, but the blocked nodes are not upgraded").
# `Cordon` would need surge nodes to replace blocked ones ("A surge node will be retained for
# each blocked node"; without one the upgrade is Canceled): review aks-2.md A-P1.
MAX_SURGE = "0"
MAX_UNAVAILABLE = "1"
DRAIN_TIMEOUT_MINUTES = 60
UNDRAINABLE_NODE_BEHAVIOR = "Schedule"


def gpu_driver(config: StackConfig) -> GpuDriver:
    """`None` when the GPU Operator installs its own driver; AKS installs it otherwise."""
    if (
        config.gpu_software_mode == "gpu-operator"
        and software_options(config.gpu_software).operator_driver
    ):
        return "None"
    return "Install"


def node_labels(pool: PoolSpec) -> dict[str, str]:
    """The pool's labels as AKS reports them back (it adds the Spot label to Spot pools).

    Declaring AKS's own Spot label and taint keeps the pool's inputs equal to what AKS reports,
    so a refresh shows no drift.
    """
    labels = dict(pool.declared_labels)
    if pool.spot:
        labels[SPOT_KEY] = "spot"
    return labels


def node_taints(pool: PoolSpec) -> list[str]:
    """`sku=gpu:NoSchedule`, the configured taints and, on Spot pools, AKS's Spot taint."""
    taints = list(pool.declared_taints)
    if pool.spot:
        taints.append(Taint(SPOT_KEY, "spot", "NoSchedule"))
    # AKS's syntax, key=value:Effect (config requires a value on azure).
    return [str(t) for t in taints]


def mig_profile(pool: PoolSpec) -> str | None:
    """The AKS `gpuInstanceProfile`, only on VM sizes that support MIG."""
    profile = gpu_instance_profile(pool.mig_partition_size)
    if profile is None:
        return None
    machine = CATALOG.machine(pool.accelerator, pool.machine_types[0])
    if machine is None or not machine.mig_capable:
        raise ValueError(f"pool {pool.name}: {pool.machine_types[0]} does not support MIG on AKS")
    return profile


def fixed_at_creation(
    pool: PoolSpec, driver: GpuDriver, reservation_group: str | None = None
) -> FixedAtCreation:
    """What the pool's agent pool fixes at creation, as the AKS API reports it back."""
    return FixedAtCreation(
        vm_size=pool.machine_types[0],
        os_disk_size_gb=pool.disk_size_gb,
        spot=pool.spot,
        zones=tuple(sorted(pool.zones)),
        gpu_instance_profile=mig_profile(pool),
        driver=driver,
        capacity_reservation_group_id=reservation_group.lower() if reservation_group else None,
    )


@dataclass(frozen=True)
class AksGpuAgentPoolArgs:
    pool: PoolSpec
    resource_group_name: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    # The node subnet (None: the cluster's AKS-managed VNet, on an adopted cluster without one).
    subnet_id: pulumi.Input[str] | None
    driver: GpuDriver
    provider: AzureProvider
    tags: dict[str, str]
    # The cluster's minor: the pool runs it (a bump upgrades the pool after the control plane).
    kubernetes_version: str
    # Spot or regular VMs, and the reservation group (components/azure/model/pool_capacity.py).
    capacity: AksPoolCapacity
    # The pool exists and is kept (components.azure.model.deployed.kept): no `count` is sent.
    exists: bool = False
    # The control plane's new grant on the reservation group's resource group, which a pool
    # AKS creates waits for (AKS checks it then; components/azure/model/rbac.py).
    reservation_grant: authorization.RoleAssignment | None = None
    # AKS runs one agent pool operation at a time; pools are created one after another.
    after: Sequence[pulumi.Resource] = field(default_factory=tuple)


class AksGpuAgentPool(pulumi.ComponentResource):
    agent_pool: containerservice.AgentPool

    def __init__(
        self, name: str, args: AksGpuAgentPoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:azure:GpuAgentPool", name, None, opts)
        pool = args.pool
        self.agent_pool = containerservice.AgentPool(
            f"{name}-pool",
            # The config name, so the node label kubernetes.azure.com/agentpool matches it.
            agent_pool_name=pool.name,
            resource_group_name=args.resource_group_name,
            resource_name_=args.cluster_name,
            mode="User",
            vm_size=pool.machine_types[0],
            capacity_reservation_group_id=_reservation_group(args),
            os_type="Linux",
            os_sku="Ubuntu",
            type="VirtualMachineScaleSets",
            vnet_subnet_id=args.subnet_id,
            enable_node_public_ip=False,
            enable_auto_scaling=True,
            min_count=pool.min_nodes,
            max_count=pool.max_nodes,
            count=None if args.exists else pool.min_nodes,
            # Set, not ignored: a minor bump upgrades the pool; the same minor again does not
            # (SDK: "Updating the agent pool with the same <major.minor> once it has been
            # created ... will not trigger an upgrade", so AKS's patch channel keeps patches).
            orchestrator_version=args.kubernetes_version,
            availability_zones=list(pool.zones) or None,
            node_labels=node_labels(pool),
            node_taints=node_taints(pool),
            scale_set_priority=args.capacity.scale_set_priority,
            scale_set_eviction_policy=args.capacity.eviction_policy,
            spot_max_price=args.capacity.spot_max_price,
            os_disk_size_gb=pool.disk_size_gb,
            os_disk_type="Managed",
            gpu_instance_profile=mig_profile(pool),
            gpu_profile=containerservice.GPUProfileArgs(driver=args.driver),
            upgrade_settings=containerservice.AgentPoolUpgradeSettingsArgs(
                max_surge=MAX_SURGE,
                max_unavailable=MAX_UNAVAILABLE,
                drain_timeout_in_minutes=DRAIN_TIMEOUT_MINUTES,
                undrainable_node_behavior=UNDRAINABLE_NODE_BEHAVIOR,
            ),
            # The fabric's rdma/ib at zero nodes, or its pods never scale the pool up.
            tags={
                **args.tags,
                **autoscaler_resource_tags(pool.autoscaler_resources, pool.gpu_resource),
            },
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=args.provider,
                ignore_changes=[] if args.exists else NEW_POOL_IGNORE_CHANGES,
                depends_on=list(args.after),
                # AKS rejects in-place changes of these: the pool is replaced instead, and
                # since its name is the node label pods select on, the old one goes first.
                replace_on_changes=POOL_REPLACE_ON_CHANGES,
                delete_before_replace=True,
            ),
        )
        self.register_outputs({"name": self.agent_pool.name, "id": self.agent_pool.id})


def _reservation_group(args: AksGpuAgentPoolArgs) -> pulumi.Input[str] | None:
    """The pool's reservation group; once granted, when the pool must wait for a grant."""
    group = args.capacity.reservation_group
    parts = group_id(group)
    if group is None or parts is None or args.reservation_grant is None:
        return group
    return wait_for_propagation(
        group,
        [args.reservation_grant],
        RESERVATION_GRANT_PROPAGATION,
        f"the control plane's Contributor grant on resource group {parts.resource_group}",
    )
