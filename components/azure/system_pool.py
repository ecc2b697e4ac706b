"""The AKS system pool: created inline with the cluster, then kept through the agent pool API.

Why two resources for one pool (the facts, checked 2026-11 against the sources named):

* AKS creates a cluster only with a System pool in `agentPoolProfiles` (MustDefineAtLeastOneSystemPool;
  the SDK's ManagedCluster docstring: "When creating a managed cluster you must define at least
  one agent pool inline"), and an update of the cluster is a full PUT that carries
  `agentPoolProfiles` too. So the cluster always sends the system pool's profile: gpufleet sends
  the *current* one (no `ignoreChanges`: a creation-time profile would come back on every
  cluster update), without `count` once the cluster exists (AKS keeps the node count the
  autoscaler chose when it is left out: kubernetes-sigs/cluster-api-provider-azure PR 1991, where a PUT without count "didn't
  change it"; the Azure Verified Module for AKS sends none for autoscaled pools, and only AKS
  Automatic needs one at creation: Azure/terraform-azurerm-avm-res-containerservice-managedcluster
  PR 197, validated live) and without `orchestratorVersion`.
* Through the cluster API every pool's `orchestratorVersion` must be "all specified or all
  unspecified"; pools defined as separate resources count as unspecified, so a cluster PUT that
  names the system pool's version is refused (NotAllAgentPoolOrchestratorVersionSpecifiedAndUnchanged:
  Azure/ARO-HCP PR 662, Azure/AKS issue 4765). With every version unspecified the cluster PUT
  moves the control plane only, also under the `patch` auto-upgrade channel (ARO-HCP raised its
  clusters' minor that way with `upgradeChannel: patch`, and its pools stayed behind until an
  explicit `az aks upgrade`: ARO-HCP commits ff3546bc, a304bf3b). A pool's minor therefore moves
  only through the agent pool API ("For agent pool specific change, please use per agent pool
  operations").
* pulumi-azure-native cannot take over the existing system pool as an `AgentPool` resource: its
  Create refuses a resource that already exists ("cannot create already existing resource",
  provider crud CanCreate), and the `import` option needs the pool to exist when the preview
  runs, which it does not before the cluster is created (and then every input must match).
* An ARM deployment is an upsert: an `agentPools` child resource in a template updates the pool
  the cluster created (the Bicep pattern of Azure/AKS issue 3087: "deploy the initial system
  node pool ... and then also ... the system node using the resource
  Microsoft.ContainerService/managedClusters/agentPools. This worked as expected"). Deleting the
  deployment deletes only its record, never the pool.

So the system pool is the cluster's inline profile plus one `resources.Deployment` holding the
same profile with `orchestratorVersion`, applied after the cluster: a minor bump moves the
control plane (cluster), then the system pool (this deployment), then each GPU pool.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pulumi
from pulumi_azure_native import containerservice, resources

from components.azure.model.change_rules import SYSTEM_POOL_TEMPLATE_KEY
from components.model.pools import PoolSpec
from components.model.schema import SYSTEM_POOL_NAME

SYSTEM_OS_DISK_GB = 128
# The agent pool API version the deployment uses: the one pulumi-azure-native 3.29 uses for
# ManagedCluster and AgentPool (the SDK's docstrings: "Uses Azure REST API version 2025-09-01").
AGENT_POOL_API_VERSION = "2025-09-01"
# The template's symbolic name for the pool (languageVersion 2.0 keys resources by name, so
# `diff` can name a changed property and the refusals can point into it).
TEMPLATE_KEY = SYSTEM_POOL_TEMPLATE_KEY
# ARM deployment names are at most 64 characters (resource-name-rules, Microsoft.Resources/
# deployments): the cluster's name is kept whole up to 48 characters, as before.
DEPLOYMENT_NAME_MAX = 64
DEPLOYMENT_SUFFIX = "-system-pool"
DEPLOYMENT_NAME_KEPT = 48


def profile(
    system: PoolSpec, subnet_id: pulumi.Input[str], autoscaled: bool = True
) -> dict[str, Any]:
    """The system pool's properties as the AKS API names them, without version, and without
    count while the cluster autoscaler sizes it. Under node auto-provisioning (`autoscaled`
    False) AKS creates no autoscaling pool, so the pool is fixed at minNodes nodes
    (components/azure/model/nap.py).

    No `CriticalAddonsOnly` taint, although AKS recommends it for dedicated system pools: this
    is the cluster's only CPU pool, and the device plugin's and operator's controllers, NFD and
    users' CPU pods must run here (every other pool is a tainted GPU pool).
    """
    properties: dict[str, Any] = {
        "mode": "System",
        "vmSize": system.machine_types[0],
        "enableAutoScaling": autoscaled,
        "osType": "Linux",
        "osSKU": "Ubuntu",
        "osDiskSizeGB": SYSTEM_OS_DISK_GB,
        "osDiskType": "Managed",
        "type": "VirtualMachineScaleSets",
        "vnetSubnetID": subnet_id,
        "enableNodePublicIP": False,
        "nodeLabels": dict(system.declared_labels),
    }
    if autoscaled:
        properties |= {"minCount": system.min_nodes, "maxCount": system.max_nodes}
    else:
        properties["count"] = system.min_nodes
    if system.zones:
        properties["availabilityZones"] = list(system.zones)
    return properties


# At creation only the inline profile carries `count` (= minNodes): whether AKS creates an
# autoscaled System pool without one is disputed (it does: Azure/AKS issue 1627, the AVM PR
# above; it does not: azure-rest-api-specs PR 7746 "Required at Creation time", CAPZ issue 5947
# "agentPoolProfile.count was 0 ... The node is a system pool"; review aks-3 N6), so gpufleet
# sends it, as it does for a GPU pool's creation. Ignored until the cluster is seen to exist
# (in case it does after all), and never sent once it is.
NEW_CLUSTER_IGNORE_CHANGES = ["agentPoolProfiles[0].count"]


def inline_profile(
    system: PoolSpec, subnet_id: pulumi.Input[str], creating: bool, autoscaled: bool = True
) -> containerservice.ManagedClusterAgentPoolProfileArgs:
    """The cluster's `agentPoolProfiles[0]`: the same profile (the SDK's own field names), with
    the creation count when the cluster is being created (always, for a fixed-size pool)."""
    p = profile(system, subnet_id, autoscaled)
    return containerservice.ManagedClusterAgentPoolProfileArgs(
        name=SYSTEM_POOL_NAME,
        count=system.min_nodes if creating or not autoscaled else None,
        mode=p["mode"],
        vm_size=p["vmSize"],
        enable_auto_scaling=p["enableAutoScaling"],
        min_count=p.get("minCount"),
        max_count=p.get("maxCount"),
        availability_zones=p.get("availabilityZones"),
        os_type=p["osType"],
        os_sku=p["osSKU"],
        os_disk_size_gb=p["osDiskSizeGB"],
        os_disk_type=p["osDiskType"],
        type=p["type"],
        vnet_subnet_id=p["vnetSubnetID"],
        enable_node_public_ip=p["enableNodePublicIP"],
        node_labels=p["nodeLabels"],
    )


def deployment_name(cluster_name: str) -> str:
    """The ARM deployment's name: at most 64 characters (cluster names are at most 63), and
    unique per cluster in its resource group, where ARM keeps one deployment per name: a name
    longer than DEPLOYMENT_NAME_KEPT is cut with a hash of the whole (two clusters sharing their
    first 48 characters shared one deployment, each `up` overwriting the other's record: review
    aks-3 N-9)."""
    if len(cluster_name) <= DEPLOYMENT_NAME_KEPT:
        return f"{cluster_name}{DEPLOYMENT_SUFFIX}"
    digest = hashlib.sha256(cluster_name.encode()).hexdigest()[:8]
    return f"{cluster_name[: DEPLOYMENT_NAME_KEPT - 9]}-{digest}{DEPLOYMENT_SUFFIX}"


def template(
    cluster_name: str,
    system: PoolSpec,
    subnet_id: pulumi.Input[str],
    kubernetes_version: str,
    autoscaled: bool = True,
) -> dict[str, Any]:
    """An ARM template that PUTs the system pool through the agent pool API."""
    return {
        "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
        "languageVersion": "2.0",
        "contentVersion": "1.0.0.0",
        "resources": {
            TEMPLATE_KEY: {
                "type": "Microsoft.ContainerService/managedClusters/agentPools",
                "apiVersion": AGENT_POOL_API_VERSION,
                "name": f"{cluster_name}/{SYSTEM_POOL_NAME}",
                "properties": {
                    **profile(system, subnet_id, autoscaled),
                    # The cluster's minor: AKS upgrades the pool to it, one node at a time with
                    # its default surge; the same minor again is no upgrade ("Updating the agent
                    # pool with the same <major.minor> ... will not trigger an upgrade": SDK).
                    "orchestratorVersion": kubernetes_version,
                },
            }
        },
    }


def system_pool_deployment(
    name: str,
    cluster_name: str,
    resource_group_name: pulumi.Input[str],
    system: PoolSpec,
    subnet_id: pulumi.Input[str],
    kubernetes_version: str,
    opts: pulumi.ResourceOptions,
    autoscaled: bool = True,
) -> resources.Deployment:
    return resources.Deployment(
        f"{name}-system-pool",
        deployment_name=deployment_name(cluster_name),
        resource_group_name=resource_group_name,
        properties=resources.DeploymentPropertiesArgs(
            # Incremental: the template's one resource is updated; nothing else in the group.
            mode=resources.DeploymentMode.INCREMENTAL,
            template=template(cluster_name, system, subnet_id, kubernetes_version, autoscaled),
        ),
        opts=opts,
    )
