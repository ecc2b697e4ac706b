"""A new AKS stack from a few choices (`python -m components new NAME --cloud azure`)."""

from __future__ import annotations

from typing import Any

from components.azure.model.catalog import CATALOG
from components.model.managed_cloud import ManagedCloud
from components.model.starter import (
    DEFAULT_KUBERNETES_VERSION,
    PLACEHOLDER_CIDR,
    Starter,
    StarterChoices,
    StarterError,
    gpu_pool,
    stack_config,
    unused,
)

READS = frozenset(
    {
        "region",
        "gpu",
        "spot",
        "max_nodes",
        "zones",
        "kubernetes_version",
        "existing_cluster",
        "resource_group",
        "subscription",
        "api_cidrs",
    }
)
DEFAULT_REGION = "eastus2"
DEFAULT_GPU = "t4"
DEFAULT_ZONES = ("1", "2")


def starter(choices: StarterChoices, cloud: ManagedCloud) -> Starter:
    problems = unused(choices, READS, "azure")
    region = choices.region or DEFAULT_REGION
    gpu = choices.gpu or DEFAULT_GPU
    machine = CATALOG.defaults.get(gpu)
    notes = []
    if machine is None:
        problems.append(
            f"--gpu: {gpu} is not offered on azure; offered: {', '.join(CATALOG.models())}"
        )
    if choices.existing_cluster and not choices.resource_group:
        problems.append(
            "--resource-group: required with --existing-cluster on azure: the resource group "
            'the cluster is in (`az aks list --query "[].{name:name, group:resourceGroup}"`)'
        )
    if choices.existing_cluster and choices.api_cidrs:
        problems.append(
            "--api-cidr: who reaches an existing cluster's API server is its owner's setting"
        )
    if problems:
        raise StarterError(problems)
    zones = list(choices.zones or DEFAULT_ZONES)
    if not choices.zones:
        notes.append(
            f"zones {', '.join(zones)}: check that {machine} is offered there "
            f"(`az vm list-skus --location {region} --size {machine} --output table`)"
        )
    cluster: dict[str, Any] = {
        "name": choices.existing_cluster or choices.name,
        "kubernetesVersion": choices.kubernetes_version or DEFAULT_KUBERNETES_VERSION,
        "region": region,
        "zones": zones,
    }
    azure: dict[str, Any] = {}
    if choices.subscription:
        azure["subscriptionId"] = choices.subscription
    if choices.resource_group:
        azure["resourceGroupName"] = choices.resource_group
    if choices.existing_cluster:
        cluster["azure"] = azure
        cluster["existing"] = {}
        if not choices.subscription:
            notes.append(
                f"no subscription: {choices.existing_cluster} is looked up in "
                "ARM_SUBSCRIPTION_ID's subscription, else the az CLI's default (`az account "
                "show`); if it is in another, give --subscription"
            )
    else:
        cluster["systemPool"] = {
            "machineType": cloud.default_system_machine,
            "minNodes": 1,
            "maxNodes": 3,
        }
        azure["apiServerAuthorizedCidrs"] = list(choices.api_cidrs) or [PLACEHOLDER_CIDR]
        cluster["azure"] = azure
    pool = gpu_pool(choices, gpu, cloud.pool_name_rule.accepts, machineType=machine)
    config = stack_config("azure", cluster, [pool])
    # AKS checks GPUs on two VM sizes only: the DCGM exporter gives every pool gpufleet's XID
    # alerts (docs/gpu-health.md; review aks-5 H5-3).
    config["gpuSoftware"]["monitoring"] = {"dcgmExporter": True}
    return Starter(config, tuple(notes))
