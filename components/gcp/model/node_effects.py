"""What an in-place change of a GKE node pool does to its running nodes (the types and effects:
components/model/catalog/node_effects.py)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from components.model.catalog.node_effects import NodeEffect, RemovalEffect

# --- GKE --------------------------------------------------------------------------------------
# Not here: nodeConfig.secondaryBootDisks (a preloaded image disk). GKE sets it only when a pool
# is created, so a change replaces the pool (change_rules.py: ForceNew and its note), and `diff`
# says "replace" with every node of the pool going, not an in-place roll.
# Update paths: terraform-provider-google @e03b7622 google/services/container/node_config.go
# nodePoolNodeConfigUpdate (each a NodePools.Update call; the node pool is kept) and
# resource_container_node_pool.go (autoscaling, management, upgrade settings, locations, version).

_GKE_RECREATE_SOURCE = (
    "GKE docs, how-to/node-pools 'Change a node pool's machine attributes' (machine type, disk "
    "type and size: GKE recreates the nodes with the pool's upgrade strategy); "
    "terraform-provider-google 5.10 made them updatable (magic-modules PR 9575; node_config.go "
    "UpdateNodePool with MachineType, DiskSizeGb, DiskType)"
)
# The system pool sends no upgradeSettings: GKE's default surge applies to it (GKE docs,
# concepts/node-pool-upgrade-strategies: maxSurge 1, maxUnavailable 0; review gke-3.md R3-6).
_GKE_RECREATES = (
    "GKE recreates every node of the pool with the pool's upgrade strategy (gpufleet's GPU "
    "pools: surge 0, one node unavailable at a time; the system pool: GKE's default, one extra "
    "node at a time and none unavailable), draining each one first; pods are evicted "
    "(PodDisruptionBudgets are respected for up to an hour per node)"
)
_GKE_NODE_POOL: Final[tuple[NodeEffect, ...]] = (
    NodeEffect("nodeConfig.machineType", "rolls", _GKE_RECREATES, _GKE_RECREATE_SOURCE),
    NodeEffect("nodeConfig.diskSizeGb", "rolls", _GKE_RECREATES, _GKE_RECREATE_SOURCE),
    NodeEffect("nodeConfig.diskType", "rolls", _GKE_RECREATES, _GKE_RECREATE_SOURCE),
    NodeEffect("nodeConfig.imageType", "rolls", _GKE_RECREATES, _GKE_RECREATE_SOURCE),
    NodeEffect(
        "version",
        "rolls",
        "GKE upgrades every node of the pool to the new version with the pool's upgrade "
        "strategy, draining each one first",
        "GKE docs, concepts/node-pool-upgrade-strategies (surge upgrades)",
    ),
    NodeEffect(
        "nodeConfig.labels",
        "in-place",
        "GKE applies the new Kubernetes labels to the running nodes without recreating them",
        "GKE docs, how-to/creating-managing-labels ('use the GKE API to edit Kubernetes labels "
        "on your nodes ... with a cluster update') and how-to/update-existing-nodepools; "
        "node_config.go updates `labels` through NodePools.Update",
    ),
    NodeEffect(
        'nodeConfig.labels["nvidia.com/mig.config"]',
        "rolls",
        "the GPU Operator's MIG manager stops the GPU pods of every running node of the pool, "
        "re-partitions its GPUs and reboots it (WITH_REBOOT=true on GKE), under the pods "
        "running there",
        "NVIDIA cloud-native-docs @52dcb7b8 gpu-operator/gpu-operator-mig.rst (a changed "
        "nvidia.com/mig.config label: 'MIG Manager first stops all GPU pods', reboots with "
        "WITH_REBOOT) and google-gke.rst (WITH_REBOOT on GKE); GKE applies the pool's label to "
        "its running nodes (labels entry above)",
    ),
    NodeEffect(
        "nodeConfig.gcfsConfig",
        "rolls",
        "GKE recreates every node of the pool with the pool's upgrade strategy to turn image "
        "streaming on or off (medium confidence: GKE's list of node-pool changes that recreate "
        "nodes was not read first-hand; the conservative reading), draining each one first",
        "node_config.go updates `gcfs_config` through NodePools.Update (ForceNew removed in "
        "terraform-provider-google #19365, magic-modules #11553); GKE docs how-to/image-streaming "
        "('Enable Image streaming on node pools') and concepts/managing-clusters (node-level "
        "configuration changes recreate nodes)",
    ),
    NodeEffect(
        "ignoreNodeCountChanges",
        "none",
        "running nodes stay; the provider only stops reading the instance groups' node count",
        "terraform-provider-google resource_container_node_pool.go ignore_node_count_changes "
        "(a provider-side setting: no GKE API call)",
    ),
    NodeEffect(
        "nodeConfig.taints",
        "in-place",
        "GKE applies the new taints to the running nodes without recreating them; pods already "
        "running stay (NoSchedule does not evict)",
        "GKE docs, how-to/update-existing-nodepools (node taints are updated without node "
        "recreation)",
    ),
    NodeEffect(
        "nodeConfig.resourceLabels",
        "in-place",
        "GKE sets the new Compute Engine labels on the running VMs; nothing restarts",
        "GKE docs, how-to/update-existing-nodepools",
    ),
    NodeEffect(
        "nodeLocations",
        "in-place",
        "a zone added gets nodes only as the autoscaler adds them; the nodes of a zone taken "
        "out are drained and deleted",
        "GKE docs, how-to/node-pools 'Change the zones of a node pool'",
    ),
    NodeEffect(
        "autoscaling",
        "none",
        "running nodes stay; the autoscaler works within the new bounds from now on",
        "GKE docs, concepts/cluster-autoscaler",
    ),
    NodeEffect(
        "autoscaling.totalMinNodeCount",
        "none",
        "no node starts for it: GKE's autoscaler uses the minimum only when it scales down, so "
        "a pool running fewer nodes stays below it until pods need more; once it has grown it "
        "keeps at least the minimum running, and billed, while idle",
        "GKE docs, how-to/cluster-autoscaler 'Node pool size mismatching' ('the autoscaler uses "
        "the minimum number of nodes parameter only when it needs to determine a scaling down', "
        "as quoted in terraform-google-modules/terraform-google-kubernetes-engine issue 1517); "
        "kubernetes/autoscaler issue 2288 (GKE: below the minimum, nothing happens until a node "
        "is needed) and cluster-autoscaler FAQ 'My cluster is below minimum' (the minimum is "
        "enforced only with --enforce-node-group-min-size); terraform-provider-google sends the "
        "autoscaling bounds alone, no resize (issue 2901)",
        when="raised",
    ),
    NodeEffect(
        "management",
        "none",
        "running nodes stay; the setting applies to later repairs and upgrades",
        "GKE docs, how-to/node-auto-upgrades",
    ),
    NodeEffect(
        "upgradeSettings",
        "none",
        "running nodes stay; the setting applies to the next upgrade",
        "GKE docs, concepts/node-pool-upgrade-strategies",
    ),
)

# The control plane's version input, and when a minor bump reaches the pools' nodes (review
# gke-3.md R3-9): the GPU and system pools send no version of their own and follow by
# auto-upgrade. Keyed by the node pool type, present in every plan of a cluster gpufleet creates.
CONTROL_PLANE_VERSION: Final[Mapping[str, str]] = MappingProxyType(
    {"gcp:container/cluster:Cluster": "minMasterVersion"}
)
VERSION_BUMP_EFFECTS: Final[Mapping[str, NodeEffect]] = MappingProxyType(
    {
        "gcp:container/nodePool:NodePool": NodeEffect(
            "minMasterVersion",
            "none",
            "not restarted by this `up`: GKE upgrades the control plane at once (an upgrade you "
            "start is not held to the maintenance window; nothing is sent if the release channel "
            "already moved it there), and each pool's nodes later, by auto-upgrade inside the "
            "maintenance window, with the pool's upgrade strategy (GPU jobs are drained then); a "
            "minor the release channel does not offer yet is refused and the `up` fails",
            "terraform-provider-google resource_container_cluster.go (min_master_version: "
            "UpdateClusterRequest DesiredMasterVersion, only when the running master is older); "
            "GKE docs, how-to/upgrading-a-cluster (manual upgrades ignore maintenance windows) "
            "and concepts/cluster-upgrades (node pools auto-upgrade after the control plane, "
            "within maintenance windows)",
        ),
    }
)


# A custom ComputeClass (components/gcp/model/compute_class.py): GKE reads it when it creates a
# node, never to change one that runs.
COMPUTE_CLASS: Final[str] = "kubernetes:cloud.google.com/v1:ComputeClass"
_CLASS_SOURCE = (
    "GKE docs concepts/about-custom-compute-classes (changes to a ComputeClass apply to nodes "
    "created afterwards; existing nodes keep their configuration; active migration is a "
    "voluntary disruption that honours PodDisruptionBudgets)"
)
CLASS_EFFECTS: Final[tuple[NodeEffect, ...]] = (
    NodeEffect(
        "spec",
        "new-nodes",
        "running nodes stay where they are; GKE follows the new priorities for the nodes it "
        "creates from now on (with activeMigration.optimizeRulePriority, it later moves pods "
        "to a higher priority's node as a voluntary, PodDisruptionBudget-honouring eviction)",
        _CLASS_SOURCE,
    ),
)

# Removing a GKE node pool (a pool switched to a compute class: its one node pool goes, the
# class's node pools come; or a class's priority dropped from its capacity list).
REMOVAL_EFFECTS: Final[Mapping[str, RemovalEffect]] = MappingProxyType(
    {
        "gcp:container/nodePool:NodePool": RemovalEffect(
            "GKE drains every node of the pool and deletes it: its pods are evicted (running "
            "jobs end) and start again only where another pool has room, the class's new node "
            "pools once they scale up; run this `up` when no job runs on the pool",
            "GKE docs how-to/node-pools 'Delete a node pool' (deleting a node pool drains and "
            "deletes its nodes); terraform-provider-google resource_container_node_pool.go "
            "(delete: NodePools.Delete)",
        ),
        COMPUTE_CLASS: RemovalEffect(
            "running nodes stay; pods that select the class stay pending once their nodes go, "
            "as no class gives them new ones",
            _CLASS_SOURCE,
        ),
    }
)

NODE_EFFECTS: Final[Mapping[str, tuple[NodeEffect, ...]]] = MappingProxyType(
    {"gcp:container/nodePool:NodePool": _GKE_NODE_POOL, COMPUTE_CLASS: CLASS_EFFECTS}
)
