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
  planned-maintenance).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from components.azure.model.deployed import FixedAtCreation
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
    # The agent pools that exist (gpufleet's from an earlier `up` among them).
    pools: Mapping[str, FixedAtCreation] = field(default_factory=dict)


def adoption_problems(facts: AksClusterFacts, cluster: ClusterConfig) -> list[Problem]:
    version = version_problem(facts.name, cluster.kubernetes_version, facts.kubernetes_version)
    return [version] if version is not None else []


def adoption_warnings(facts: AksClusterFacts) -> list[str]:
    warnings = []
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
    return warnings
