"""What gpufleet needs of an AKS cluster it adopts (`cluster.existing`), as rules on looked-up facts.

- Versions: an agent pool created without `orchestratorVersion` runs the control plane's
  (AKS API, AgentPool.orchestratorVersion: "the control plane version if unspecified"), and AKS
  refuses a pool newer than the control plane; the stack's `kubernetesVersion` must name it.
- The node subnet: every pool of a cluster on a custom VNet joins a subnet of that VNet; by
  default the GPU pools take the first System pool's (`cluster.azure.vnetSubnetId` overrides).
- Scale to zero: the cluster-wide autoscaler profile is the owner's. With
  `skip-nodes-with-local-storage: true` a GPU node whose pods use emptyDir is never removed
  (learn.microsoft.com/azure/aks/cluster-autoscaler, "Cluster autoscaler profile settings").
- Upgrades: AKS starts automatic upgrades inside the planned-maintenance window
  `aksManagedAutoUpgradeSchedule`, or at any time without one (learn.microsoft.com/azure/aks/
  planned-maintenance). The node OS channel has its own window, `aksManagedNodeOSUpgradeSchedule`:
  `NodeImage` reimages the nodes weekly and `SecurityPatch` patches them, "following maintenance
  windows and surge settings" (auto-upgrade-node-os-image); Standard clusters get `NodeImage`
  by default since API 2023-06-01.
- Capacity reservation groups: AKS places a pool in one only for a cluster whose control plane
  has a user-assigned identity with Contributor on the group's resource group
  (use-capacity-reservation-groups); the identity is read, the grant is the owner's.
- The network: gpufleet's GPU pools, their allocatable and `fit` assume Azure CNI Overlay, the
  network gpufleet creates, where a new pool runs up to 250 pods and pods take no VNet address
  (concepts-network-ip-address-planning, "Maximum pods per node": Overlay 250, Pod subnet 110,
  Azure CNI (Legacy) 30, Kubenet 110; a new pool gets the network's default, whatever the
  existing pools run). On a pod-subnet cluster every pool needs a pod subnet, which gpufleet's
  pools do not set; kubenet retires on 2028-03-31 (concepts-network-cni-overview). Those
  clusters are refused, rather than given pools whose allocatable gpufleet would get wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from components.azure.model import nap
from components.azure.model.deployed import FixedAtCreation
from components.azure.model.kinds import auto_provisioning
from components.azure.model.limits import MAX_POOLS_PER_CLUSTER
from components.model.adoption import version_problem
from components.model.problems import Problem
from components.model.schema import ClusterConfig


@dataclass(frozen=True)
class AksClusterFacts:
    """What gpufleet reads of the looked-up cluster (`containerservice.get_managed_cluster`)."""

    name: str
    kubernetes_version: str
    # Entra ID with Azure RBAC: the provider signs in through kubelogin.
    entra_id: bool
    # The first System pool's subnet (None: AKS's own VNet).
    system_subnet_id: str | None
    oidc_issuer_url: str
    kubelet_object_id: str
    skips_nodes_with_local_storage: bool
    auto_upgrade_channel: str | None
    has_auto_upgrade_window: bool
    # networkProfile.networkPlugin / networkPluginMode; the system pool's pod subnet.
    network_plugin: str | None = "azure"
    network_plugin_mode: str | None = "overlay"
    pod_subnet_id: str | None = None
    # autoUpgradeProfile.nodeOSUpgradeChannel and its aksManagedNodeOSUpgradeSchedule window.
    node_os_channel: str | None = None
    has_node_os_window: bool = True
    # The agent pools that exist (gpufleet's from an earlier `up` among them).
    pools: Mapping[str, FixedAtCreation] = field(default_factory=dict)
    # The control plane's user-assigned identity (None: system-assigned).
    control_plane_identity_id: str | None = None
    # nodeProvisioningProfile.mode: Auto when AKS runs node auto-provisioning (None: Manual).
    node_provisioning_mode: str | None = None


# Pods per node AKS gives a new pool, by network (concepts-network-ip-address-planning).
NEW_POOL_MAX_PODS = {"overlay": 250, "pod subnet": 110, "node subnet": 30, "kubenet": 110}
# Node OS channels that replace or patch the nodes on AKS's schedule (auto-upgrade-node-os-image).
NODE_OS_CHANNELS_THAT_TOUCH_NODES = frozenset({"NodeImage", "SecurityPatch"})


def network_of(facts: AksClusterFacts) -> str:
    """The cluster's pod network, in the terms of AKS's max-pods table (`byo cni`: the
    owner's own CNI, networkPlugin `none`, aks/use-byo-cni)."""
    if facts.network_plugin == "kubenet":
        return "kubenet"
    if facts.network_plugin == "none":
        return "byo cni"
    if (facts.network_plugin_mode or "").lower() == "overlay":
        return "overlay"
    return "pod subnet" if facts.pod_subnet_id else "node subnet"


def adoption_problems(
    facts: AksClusterFacts,
    cluster: ClusterConfig,
    uses_reservation_groups: bool = False,
    gpu_pools: Sequence[str] = (),
) -> list[Problem]:
    problems = provisioning_problems(facts, cluster)
    # The owner's pools and gpufleet's (some may exist from an earlier `up`) in one cluster;
    # node auto-provisioning's NodePools are no agent pools.
    if auto_provisioning(cluster):
        gpu_pools = ()
    total = len(set(facts.pools) | set(gpu_pools))
    if total > MAX_POOLS_PER_CLUSTER:
        problems.append(
            Problem(
                "gpuPools",
                f"cluster {facts.name} has {len(facts.pools)} pools, and with gpufleet's it "
                f"would have {total}: AKS holds at most {MAX_POOLS_PER_CLUSTER} in a cluster "
                "(aks/quotas-skus-regions); add fewer GPU pools, or ask its owner to remove some",
                f"{len(gpu_pools)} pools",
            )
        )
    if uses_reservation_groups and facts.control_plane_identity_id is None:
        problems.append(
            Problem(
                "cluster.existing",
                f"cluster {facts.name} runs its control plane as a system-assigned identity, "
                "and AKS places pools in a capacity reservation group only for a user-assigned "
                "one (aks/use-capacity-reservation-groups); ask its owner to move it to a "
                "user-assigned identity with Contributor on the group's resource group (az aks "
                "update --enable-managed-identity --assign-identity), or leave reserved out of "
                "the pools' capacity",
                "SystemAssigned",
            )
        )
    version = version_problem(facts.name, cluster.kubernetes_version, facts.kubernetes_version)
    if version is not None:
        problems.append(version)
    network = network_of(facts)
    if network == "byo cni":
        problems.append(
            Problem(
                "cluster.existing",
                f"cluster {facts.name} runs a CNI of its own (networkPlugin none, AKS's "
                "bring-your-own CNI): what a new pool's pods get (addresses, pods per node) is "
                "that CNI's, which gpufleet does not know, while gpufleet's GPU pools, "
                f"allocatable and fit assume Azure CNI Overlay ({NEW_POOL_MAX_PODS['overlay']} "
                "pods per node); adopt a cluster on Azure CNI Overlay",
                network,
            )
        )
    elif network != "overlay":
        why = {
            "kubenet": "kubenet (retiring on 2028-03-31)",
            "pod subnet": "Azure CNI with a pod subnet, which every new pool needs and "
            "gpufleet's pools do not set",
            "node subnet": "Azure CNI on the node subnet, where every pod takes a VNet address",
        }[network]
        problems.append(
            Problem(
                "cluster.existing",
                f"cluster {facts.name} uses {why}: a new pool there runs at most "
                f"{NEW_POOL_MAX_PODS[network]} pods, while gpufleet's GPU pools, allocatable "
                f"and fit assume Azure CNI Overlay ({NEW_POOL_MAX_PODS['overlay']}); adopt a "
                "cluster on Azure CNI Overlay (`az aks update --network-plugin-mode overlay` "
                "migrates one)",
                network,
            )
        )
    return problems


def provisioning_problems(facts: AksClusterFacts, cluster: ClusterConfig) -> list[Problem]:
    """gpufleet reads an adopted cluster's node provisioning mode and never changes it: the GPU
    pools must be of the kind the cluster runs."""
    runs_nap = (facts.node_provisioning_mode or "Manual") == nap.PROVISIONING_MODE
    wants_nap = auto_provisioning(cluster)
    if runs_nap == wants_nap:
        return []
    if wants_nap:
        why = (
            f"cluster {facts.name} does not run node auto-provisioning (nodeProvisioningProfile "
            "mode Manual), and gpufleet never changes an adopted cluster; ask its owner to "
            "enable it (az aks update --node-provisioning-mode Auto), or leave "
            "cluster.azure.provisioner out for agent pools"
        )
    else:
        why = (
            f"cluster {facts.name} runs node auto-provisioning (nodeProvisioningProfile mode "
            "Auto), where AKS creates no autoscaling agent pool (pulumi-azure-native 3.29 "
            "NodeProvisioningMode.AUTO); set cluster.azure.provisioner: node-auto-provisioning "
            "for NodePools instead"
        )
    return [
        Problem(
            "cluster.azure.provisioner",
            why,
            "node-auto-provisioning" if wants_nap else "cluster-autoscaler",
        )
    ]


def adoption_warnings(facts: AksClusterFacts, uses_reservation_groups: bool = False) -> list[str]:
    # AKS does not fence the instance metadata service from pods by default (EKS's hop limit
    # and GKE's metadata server do; review security-1 SEC-16): on the owner's cluster its
    # kubelet identity is shared with the ML code gpufleet's GPU nodes run.
    warnings = [
        f"cluster {facts.name}: gpufleet's GPU nodes run with the cluster's kubelet identity "
        f"(object id {facts.kubelet_object_id}), like every node of it, and any pod there can "
        "read its token from the instance metadata service (IMDS, 169.254.169.254) unless the "
        "cluster restricts it; what that identity may do (AcrPull on the owner's registries, or "
        "more) is not checked: ask the owner to keep it to AcrPull, or to block pods' access to "
        "the metadata service (AKS IMDS restriction, or a network policy denying "
        "169.254.169.254 to workloads)"
    ]
    if uses_reservation_groups and facts.control_plane_identity_id is not None:
        warnings.append(
            f"cluster {facts.name}: its control plane's identity needs Contributor on the "
            "resource group of each capacity reservation group the pools use "
            "(aks/use-capacity-reservation-groups); that grant is its owner's to make, and "
            "not checked"
        )
    if facts.skips_nodes_with_local_storage:
        warnings.append(
            f"cluster {facts.name}'s autoscaler profile skips nodes with local storage: a GPU "
            "node whose pods use emptyDir is never scaled down; ask its owner to set "
            "skip-nodes-with-local-storage false"
        )
    upgrades = facts.auto_upgrade_channel not in (None, "none")
    if upgrades and not facts.has_auto_upgrade_window:
        warnings.append(
            f"cluster {facts.name} upgrades automatically ({facts.auto_upgrade_channel}) with no "
            "aksManagedAutoUpgradeSchedule window: AKS may drain the GPU nodes (and their "
            "training jobs) at any hour; ask its owner to set one"
        )
    if facts.node_os_channel in NODE_OS_CHANNELS_THAT_TOUCH_NODES and not facts.has_node_os_window:
        warnings.append(
            f"cluster {facts.name} updates node images ({facts.node_os_channel}) with no "
            "aksManagedNodeOSUpgradeSchedule window: AKS may drain and reimage the GPU nodes "
            "(and their training jobs) at any hour, weekly; ask its owner to set one"
        )
    return warnings
