"""What an in-place change of a node property does to the nodes already running: data for `diff`.

`replacements.py` says when the provider recreates a resource, `rejections.py` when the cloud
refuses a change. An update the provider makes in place can still reach the running nodes: a new
launch template version on an EKS managed node group drains and replaces every node of the
group, while the same change on a self-managed auto scaling group only shapes the instances it
launches next. A reviewer must know which, before `pulumi up` runs during a training job.

Per resource type that carries nodes, each entry names an input path (a Pulumi property path:
``nodeConfig.machineType``, ``nodeConfig.labels["nvidia.com/mig.config"]``; a change at or under
it matches, the most specific entry wins) and one of four effects:

* ``rolls``: the cloud drains and replaces, or reboots, every running node of the pool (`diff`
  marks the resource ``~ ROLLS``).
* ``new-nodes``: running nodes keep the old value; only nodes created from now on get the new
  one, so the pool is mixed until the old nodes are scaled down or replaced.
* ``in-place``: the cloud applies the change to the running nodes; nothing restarts.
* ``none``: the running nodes are not touched (autoscaling bounds, settings of later upgrades).

A changed input of such a type that no entry covers is reported as "not known", never passed
over in silence. Options (``protect``, ``ignoreChanges``) never reach nodes and are not matched.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

Effect = Literal["rolls", "new-nodes", "in-place", "none"]

EFFECTS: Final[tuple[Effect, ...]] = ("rolls", "new-nodes", "in-place", "none")


@dataclass(frozen=True)
class NodeEffect:
    """What changing ``path`` in place does to the running nodes, and where that comes from."""

    path: str
    effect: Effect
    says: str  # one sentence about the running nodes, read after "running nodes: "
    source: str


# --- GKE --------------------------------------------------------------------------------------

_GKE_RECREATE_SOURCE = (
    "GKE docs, how-to/node-pools 'Change a node pool's machine attributes' (machine type, disk "
    "type and size: GKE recreates the nodes with the pool's upgrade strategy); "
    "terraform-provider-google 5.10 made them updatable (magic-modules PR 9575)"
)
_GKE_RECREATES = (
    "GKE recreates every node of the pool with the pool's upgrade strategy (gpufleet's GPU "
    "pools: surge 0, one node unavailable at a time), draining each one first; pods are evicted "
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
        "GKE docs, how-to/update-existing-nodepools (node labels are updated without node "
        "recreation)",
    ),
    NodeEffect(
        'nodeConfig.labels["nvidia.com/mig.config"]',
        "rolls",
        "the GPU Operator's MIG manager re-partitions the GPUs of every running node of the "
        "pool and reboots it (WITH_REBOOT=true on GKE), under the pods running there",
        "NVIDIA cloud-native-docs gpu-operator/google-gke.rst and gpu-operator/gpu-operator-mig"
        ".rst (the mig-manager applies nvidia.com/mig.config on a running node); GKE applies "
        "the pool's label to its running nodes (how-to/update-existing-nodepools)",
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

# --- EKS --------------------------------------------------------------------------------------

_EKS_ROLLS = (
    "EKS replaces every node of the group: it launches new nodes, then cordons and drains the "
    "old ones (it waits up to 15 minutes for PodDisruptionBudgets, then fails the update "
    "unless it is forced)"
)
_EKS_ROLL_SOURCE = (
    "EKS user guide, managed-node-update-behavior (UpdateNodegroupVersion: setup, scale up, "
    "upgrade and scale down phases); terraform-provider-aws internal/service/eks/node_group.go "
    "resourceNodeGroupUpdate ('Do any version update first': UpdateNodegroupVersion on a "
    "launch_template, release_version or version change)"
)
_EKS_NODE_GROUP: Final[tuple[NodeEffect, ...]] = (
    NodeEffect("launchTemplate", "rolls", _EKS_ROLLS, _EKS_ROLL_SOURCE),
    NodeEffect("releaseVersion", "rolls", _EKS_ROLLS, _EKS_ROLL_SOURCE),
    NodeEffect("version", "rolls", _EKS_ROLLS, _EKS_ROLL_SOURCE),
    NodeEffect(
        "labels",
        "in-place",
        "EKS updates the Kubernetes labels of the running nodes; nothing restarts",
        "EKS API reference, UpdateNodegroupConfig (labels added or removed on the node group)",
    ),
    NodeEffect(
        "taints",
        "in-place",
        "EKS updates the taints of the running nodes; pods already running stay (NoSchedule "
        "does not evict)",
        "EKS API reference, UpdateNodegroupConfig (taints added or removed on the node group)",
    ),
    NodeEffect(
        "scalingConfig",
        "none",
        "running nodes stay; the group's bounds change (EKS refuses a minimum above the "
        "current desired size)",
        "EKS API reference, UpdateNodegroupConfig",
    ),
    NodeEffect(
        "updateConfig",
        "none",
        "running nodes stay; the setting applies to the next node update",
        "EKS API reference, UpdateNodegroupConfig",
    ),
    NodeEffect(
        "nodeRepairConfig",
        "none",
        "running nodes stay; EKS starts (or stops) rebooting or replacing the group's nodes "
        "that turn unhealthy",
        "EKS user guide, node-health (node auto repair); terraform-provider-aws node_group.go "
        "(node_repair_config through UpdateNodegroupConfig)",
    ),
    NodeEffect(
        "tags",
        "none",
        "the tags are the node group's own; EKS does not copy them to the nodes or the group",
        "EKS user guide, managed-node-groups (node group tags do not propagate)",
    ),
)

_ASG_NEW_NODES = (
    "the group launches new instances from the new launch template or instance types; running "
    "instances keep theirs until they are terminated (scale-in, a Spot reclaim or a manual "
    "instance refresh: gpufleet starts none)"
)
_ASG_SOURCE = (
    "Amazon EC2 Auto Scaling user guide, 'Change the launch template for an Auto Scaling group' "
    "(existing instances are not affected) and 'Instance refresh'"
)
_ASG: Final[tuple[NodeEffect, ...]] = (
    NodeEffect("launchTemplate", "new-nodes", _ASG_NEW_NODES, _ASG_SOURCE),
    NodeEffect("mixedInstancesPolicy", "new-nodes", _ASG_NEW_NODES, _ASG_SOURCE),
    NodeEffect(
        "tags",
        "new-nodes",
        "tags propagated at launch reach only the instances launched from now on",
        "Amazon EC2 Auto Scaling user guide, 'Tag Auto Scaling groups and instances'",
    ),
    NodeEffect(
        "capacityRebalance",
        "in-place",
        "from now on (when on) the group launches a replacement for a running Spot instance "
        "that gets a rebalance recommendation, then drains and terminates the old one",
        "Amazon EC2 Auto Scaling user guide, 'Capacity Rebalancing'",
    ),
    NodeEffect(
        "minSize",
        "none",
        "running instances stay; a raised minimum launches instances to reach it",
        "Amazon EC2 Auto Scaling user guide, 'Set capacity limits'",
    ),
    NodeEffect(
        "maxSize",
        "none",
        "running instances stay; the autoscaler works within the new bounds",
        "Amazon EC2 Auto Scaling user guide, 'Set capacity limits'",
    ),
)

# --- AKS --------------------------------------------------------------------------------------

_AKS_AGENT_POOL: Final[tuple[NodeEffect, ...]] = (
    NodeEffect(
        "orchestratorVersion",
        "rolls",
        "AKS upgrades every node of the pool with the pool's upgradeSettings: each node is "
        "cordoned, drained (PodDisruptionBudgets respected up to drainTimeoutInMinutes) and "
        "reimaged on the new version",
        "Microsoft Learn, aks/upgrade-aks-node-pools-rolling and aks/upgrade-cluster",
    ),
    NodeEffect(
        "nodeLabels",
        "in-place",
        "AKS updates the labels of the running nodes; nothing restarts",
        "Microsoft Learn, aks/use-labels ('Updating labels on existing node pools')",
    ),
    NodeEffect(
        "nodeTaints",
        "in-place",
        "AKS updates the taints of the running nodes; pods already running stay (NoSchedule "
        "does not evict)",
        "Microsoft Learn, aks/use-node-taints ('Update a node pool's taints')",
    ),
    NodeEffect(
        "minCount",
        "none",
        "running nodes stay; the autoscaler works within the new bounds",
        "Microsoft Learn, aks/cluster-autoscaler",
    ),
    NodeEffect(
        "maxCount",
        "none",
        "running nodes stay; the autoscaler works within the new bounds",
        "Microsoft Learn, aks/cluster-autoscaler",
    ),
    NodeEffect(
        "upgradeSettings",
        "none",
        "running nodes stay; the settings apply to the next upgrade",
        "Microsoft Learn, aks/upgrade-aks-node-pools-rolling",
    ),
    NodeEffect(
        "tags",
        "none",
        "the pool's Azure tags change; the nodes' Kubernetes objects are untouched",
        "Microsoft Learn, aks/use-tags",
    ),
)

# --- Karpenter and EKS Auto Mode ----------------------------------------------------------------

_KARPENTER_DRIFT = (
    "Karpenter marks the running nodes drifted, but gpufleet's disruption budget for Drifted is "
    "0: they keep the old settings until they are empty and consolidated (under EKS Auto Mode, "
    "at most until they expire, within 21 days); nodes launched from now on come up as edited"
)
_KARPENTER_SOURCE = (
    "Karpenter v1.14 docs, concepts/disruption (Drift; budgets with reasons: [Drifted])"
)
_KARPENTER_NODE_POOL: Final[tuple[NodeEffect, ...]] = (
    NodeEffect("spec.template", "new-nodes", _KARPENTER_DRIFT, _KARPENTER_SOURCE),
    NodeEffect(
        "spec.limits",
        "none",
        "running nodes stay; Karpenter launches no node past the new limits",
        "Karpenter v1.14 docs, concepts/nodepools (limits)",
    ),
    NodeEffect(
        "spec.disruption",
        "none",
        "running nodes stay; the budgets apply to later disruptions",
        "Karpenter v1.14 docs, concepts/disruption",
    ),
)
_KARPENTER_NODE_CLASS: Final[tuple[NodeEffect, ...]] = (
    NodeEffect("spec", "new-nodes", _KARPENTER_DRIFT, _KARPENTER_SOURCE),
    NodeEffect(
        "spec.capacityReservationSelectorTerms",
        "new-nodes",
        "a node in a reservation the node class no longer selects is marked drifted "
        "(CapacityReservationDrift), but gpufleet's Drifted budget is 0: it keeps running, in "
        "that reservation, until it is empty; new nodes launch into the reservations now "
        "selected",
        "aws/karpenter-provider-aws v1.14.1 pkg/cloudprovider/drift.go "
        "(isCapacityReservationDrifted); Karpenter v1.14 docs, concepts/disruption (budgets "
        "with reasons: [Drifted])",
    ),
)
_KARPENTER_NODE_OVERLAY: Final[tuple[NodeEffect, ...]] = (
    NodeEffect(
        "spec",
        "none",
        "running nodes stay (an overlay changes only Karpenter's simulation, never a node's "
        "real resources); Karpenter plans new nodes and consolidation with the new values",
        "Karpenter v1.14 docs, concepts/nodeoverlays ('Actual vs. Simulated'; 'Integration "
        "with Consolidation': no drift or forced replacement)",
    ),
)

# --- A control plane's minor bump, by the provisioner whose nodes do not follow it by themselves

# The control plane's input whose change moves the cluster's Kubernetes minor.
CONTROL_PLANE_VERSION: Final[Mapping[str, str]] = MappingProxyType(
    {"aws:eks/cluster:Cluster": "version"}
)
# What that bump does to the running nodes of the pools present in the plan, keyed by the type
# that marks the provisioner (its node class). Managed node groups and self-managed groups need
# no entry: their own version, release or launch template changes with the minor, and says so.
VERSION_BUMP_EFFECTS: Final[Mapping[str, NodeEffect]] = MappingProxyType(
    {
        "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": NodeEffect(
            "version",
            "new-nodes",
            "Karpenter launches new nodes with the new minor's image (its AMI alias resolves per "
            "minor), but the running ones only drift, and gpufleet's Drifted budget is 0: they "
            "keep their old kubelet until they are empty. The API server accepts kubelets up to "
            "three minors older; drain long-running nodes before the third bump",
            "Karpenter v1.14 docs, concepts/disruption (Drift) and concepts/nodeclasses "
            "(amiSelectorTerms alias); Kubernetes version skew policy (kubelet up to three "
            "minors older than kube-apiserver)",
        ),
        "kubernetes:eks.amazonaws.com/v1:NodeClass": NodeEffect(
            "version",
            "rolls",
            "EKS Auto Mode replaces every node with one of the new minor after the control plane "
            "upgrade, respecting PodDisruptionBudgets: running GPU jobs are drained",
            "EKS user guide, automode/auto-upgrade ('After you initiate a control plane upgrade, "
            "EKS Auto Mode begins replacing nodes in your cluster')",
        ),
    }
)

NODE_EFFECTS: Final[Mapping[str, tuple[NodeEffect, ...]]] = MappingProxyType(
    {
        "gcp:container/nodePool:NodePool": _GKE_NODE_POOL,
        "aws:eks/nodeGroup:NodeGroup": _EKS_NODE_GROUP,
        "aws:autoscaling/group:Group": _ASG,
        "azure-native:containerservice:AgentPool": _AKS_AGENT_POOL,
        "kubernetes:karpenter.sh/v1:NodePool": _KARPENTER_NODE_POOL,
        "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": _KARPENTER_NODE_CLASS,
        "kubernetes:eks.amazonaws.com/v1:NodeClass": _KARPENTER_NODE_CLASS,
        "kubernetes:karpenter.sh/v1alpha1:NodeOverlay": _KARPENTER_NODE_OVERLAY,
    }
)


def node_effects(type_token: str) -> tuple[NodeEffect, ...] | None:
    """The node effects of a type that carries nodes; None for a type that carries none."""
    return NODE_EFFECTS.get(type_token)
