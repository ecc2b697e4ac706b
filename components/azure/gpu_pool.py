"""An AKS GPU agent pool: a separate `AgentPool` (never inline), User mode, scale to zero, Spot, MIG."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import pulumi
from pulumi_azure_native import containerservice
from pulumi_azure_native.provider import Provider as AzureProvider

from components.azure.model.catalog import CATALOG
from components.azure.model.cloud import SPOT_KEY, gpu_instance_profile
from components.model.pools import PoolSpec, Taint
from components.model.schema import StackConfig

GpuDriver = Literal["Install", "None"]
# Owned by the cluster autoscaler (count) and AKS's patch auto-upgrade (orchestratorVersion):
# `pulumi up` must never set them back.
POOL_IGNORE_CHANGES = ["count", "orchestratorVersion"]
# Properties AKS fixes at creation (review aks.md F2: the provider's forceNew list, and AKS's
# docs for Spot priority and price, the GPU driver, the OS disk type and the zones).
POOL_REPLACE_ON_CHANGES = [
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
# How long AKS waits for a GPU node's pods to leave before the node counts as undrainable.
DRAIN_TIMEOUT_MINUTES = 60


def gpu_driver(config: StackConfig) -> GpuDriver:
    """`None` when the GPU Operator installs its own driver; AKS installs it otherwise."""
    if config.gpu_software_mode == "gpu-operator" and config.gpu_software.operator_driver:
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
            os_type="Linux",
            os_sku="Ubuntu",
            type="VirtualMachineScaleSets",
            vnet_subnet_id=args.subnet_id,
            enable_node_public_ip=False,
            enable_auto_scaling=True,
            min_count=pool.min_nodes,
            max_count=pool.max_nodes,
            # Required at creation; the autoscaler owns it afterwards (ignored below).
            count=pool.min_nodes,
            availability_zones=list(pool.zones) or None,
            node_labels=node_labels(pool),
            node_taints=node_taints(pool),
            scale_set_priority="Spot" if pool.spot else "Regular",
            scale_set_eviction_policy="Delete" if pool.spot else None,
            # -1: pay up to the on-demand price, so capacity, not price, decides eviction.
            spot_max_price=-1 if pool.spot else None,
            os_disk_size_gb=pool.disk_size_gb,
            os_disk_type="Managed",
            gpu_instance_profile=mig_profile(pool),
            gpu_profile=containerservice.GPUProfileArgs(driver=args.driver),
            # Upgrade in place one node at a time: AKS's default surge (10 %) adds a GPU VM per
            # upgrade, which needs spare GPU quota; undrainable nodes (a PDB protecting a
            # training job) are cordoned, not force-drained (review aks.md P5).
            upgrade_settings=containerservice.AgentPoolUpgradeSettingsArgs(
                max_surge="0",
                max_unavailable="1",
                drain_timeout_in_minutes=DRAIN_TIMEOUT_MINUTES,
                undrainable_node_behavior="Cordon",
            ),
            tags=args.tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=args.provider,
                ignore_changes=POOL_IGNORE_CHANGES,
                depends_on=list(args.after),
                # AKS rejects in-place changes of these: the pool is replaced instead, and
                # since its name is the node label pods select on, the old one goes first.
                replace_on_changes=POOL_REPLACE_ON_CHANGES,
                delete_before_replace=True,
            ),
        )
        self.register_outputs({"name": self.agent_pool.name, "id": self.agent_pool.id})
