"""What an in-place change of an EKS node group, auto scaling group, Karpenter or Auto Mode pool
does to its running nodes, and what a control plane's minor bump does to the nodes that do not
follow it by themselves (the types and effects: components/model/catalog/node_effects.py)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from components.model.catalog.node_effects import NodeEffect, RemovalEffect, SplitFromRoll

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
        "running nodes stay: EKS gets the whole scaling config, and `pulumi up` sends the "
        "group's live desired size (the autoscaler's, read while planning, not the one in "
        "Pulumi's state), raised to a new minimum or lowered to a new maximum; EKS then starts "
        "or stops only the nodes that takes",
        "terraform-provider-aws internal/service/eks/node_group.go (commit 012e0a32) "
        "resourceNodeGroupUpdate and expandNodegroupScalingConfig (the whole scaling_config, "
        "desired_size included, on any change of it); gpufleet components/aws/live_groups.py",
    ),
    NodeEffect(
        "scalingConfig.minSize",
        "starts",
        "EKS starts nodes now when the group runs fewer than the new minimum: `pulumi up` sends "
        "the group's live desired size raised to it; each node is billed from its start and "
        "kept while idle (the autoscaler never goes below the minimum)",
        "EKS API reference, UpdateNodegroupConfig (scalingConfig.desiredSize: the group's size "
        "now); terraform-provider-aws internal/service/eks/node_group.go (commit 012e0a32) "
        "expandNodegroupScalingConfig; gpufleet components/aws/model/groups.py scaling_to_send "
        "(the live desired size clamped to the new bounds)",
        when="raised",
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
        "placementGroup",
        "new-nodes",
        "the group launches new instances into the new placement group (or none); running "
        "instances stay where they are until terminated (gpufleet starts no instance refresh), "
        "so a pool whose `interconnect` just changed runs nodes of both kinds until then",
        "Amazon EC2 Auto Scaling API reference, UpdateAutoScalingGroup (PlacementGroup, applied "
        "to instances launched from then on); terraform-provider-aws autoscaling group.go "
        "(placement_group updates in place)",
    ),
    NodeEffect(
        "tags",
        "new-nodes",
        "tags propagated at launch reach only the instances launched from now on",
        "Amazon EC2 Auto Scaling user guide, 'Tag Auto Scaling groups and instances'",
    ),
    NodeEffect(
        "capacityReservationSpecification",
        "new-nodes",
        "running instances stay where they run (in the reservation or on-demand); instances "
        "launched from now on follow the group's new Capacity Reservation preference and "
        "targets (a pool moving between reserved and [reserved, on-demand] also gets a new "
        "launch template version, which likewise reaches new instances only)",
        "Amazon EC2 Auto Scaling user guide, use-ec2-capacity-reservations ('add a Capacity "
        "Reservation preference to your Auto Scaling group when you create it or when you "
        "update an existing group') and 'Change the launch template for an Auto Scaling group'",
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
        "running instances stay; the autoscaler may remove instances down to the new minimum",
        "Amazon EC2 Auto Scaling user guide, 'Set capacity limits'",
    ),
    NodeEffect(
        "minSize",
        "starts",
        "when the group runs fewer instances than the new minimum, Auto Scaling raises its "
        "desired capacity to it (gpufleet sends none) and launches them now, each billed from "
        "its start and kept while idle",
        "Amazon EC2 Auto Scaling API reference, UpdateAutoScalingGroup ('If you specify a new "
        "value for MinSize without specifying a value for DesiredCapacity, and the new MinSize "
        "is larger than the current size of the group, this sets the group's DesiredCapacity to "
        "the new MinSize value')",
        when="raised",
    ),
    NodeEffect(
        "maxSize",
        "none",
        "running instances stay; the autoscaler works within the new bounds",
        "Amazon EC2 Auto Scaling user guide, 'Set capacity limits'",
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
_NETWORK_DRIFT_SOURCE = (
    "aws/karpenter-provider-aws v1.14.1 pkg/apis/v1/ec2nodeclass.go (the selector terms are "
    '`hash:"ignore"`, outside the NodeClassDrift hash) and pkg/cloudprovider/drift.go '
    "(isSubnetDrifted, areSecurityGroupsDrifted: the node's against the resolved status)"
)
_STATIC_DRIFT_SOURCE = (
    "aws/karpenter-provider-aws v1.14.1 pkg/apis/v1/ec2nodeclass.go (userData and "
    'blockDeviceMappings are in the NodeClassDrift hash: no `hash:"ignore"`); Karpenter '
    "v1.14 docs, concepts/disruption (Drift; budgets with reasons: [Drifted])"
)
# Karpenter's own EC2NodeClass: a node drifts on what the terms resolve to, not on the terms.
# (Auto Mode's NodeClass keeps the generic entry: AWS documents no such rule for it.)
_EC2_NODE_CLASS: Final[tuple[NodeEffect, ...]] = (
    *_KARPENTER_NODE_CLASS,
    NodeEffect(
        "spec.userData",
        "new-nodes",
        "the running nodes keep the user data they booted with (fast image pull, issue 34, is "
        "read at boot) and are marked drifted, but gpufleet's Drifted budget is 0: they stay "
        "until they are empty; nodes launched from now on boot with the new user data",
        _STATIC_DRIFT_SOURCE,
    ),
    NodeEffect(
        "spec.blockDeviceMappings",
        "new-nodes",
        "running nodes keep their volumes (a data volume snapshot applies at launch) and are "
        "marked drifted, but gpufleet's Drifted budget is 0: they stay until they are empty; "
        "nodes launched from now on get the new volumes",
        _STATIC_DRIFT_SOURCE,
    ),
    NodeEffect(
        "spec.networkInterfaces",
        "new-nodes",
        "EFA interfaces are set at launch: running nodes keep theirs (none, when the fabric was "
        "just turned on) and are marked drifted, but gpufleet's Drifted budget is 0: they stay "
        "until they are empty; nodes launched from now on get the new interfaces",
        _STATIC_DRIFT_SOURCE + "; EC2 user guide, create-efa (EFA attached at launch only)",
    ),
    NodeEffect(
        "spec.placementGroupSelector",
        "new-nodes",
        "running nodes stay where they were launched (outside the placement group, when the "
        "fabric was just turned on) and are marked drifted (PlacementGroupDrift), but gpufleet's "
        "Drifted budget is 0: they stay until they are empty; new nodes launch into the group",
        "aws/karpenter-provider-aws v1.14.1 pkg/cloudprovider/drift.go (isPlacementGroupDrifted)",
    ),
    NodeEffect(
        "spec.subnetSelectorTerms",
        "new-nodes",
        "a node is marked drifted only if its subnet is not among those the new terms select "
        "(the same subnets by id instead of by tag drift nothing), and gpufleet's Drifted "
        "budget is 0: such a node keeps running until it is empty; new nodes launch into the "
        "subnets now selected",
        _NETWORK_DRIFT_SOURCE,
    ),
    NodeEffect(
        "spec.securityGroupSelectorTerms",
        "new-nodes",
        "a node is marked drifted only if its security groups differ from the set the new "
        "terms select (the same groups by id instead of by tag drift nothing), and gpufleet's "
        "Drifted budget is 0: such a node keeps running until it is empty; new nodes get the "
        "groups now selected",
        _NETWORK_DRIFT_SOURCE,
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
        "aws:eks/nodeGroup:NodeGroup": _EKS_NODE_GROUP,
        "aws:autoscaling/group:Group": _ASG,
        "kubernetes:karpenter.sh/v1:NodePool": _KARPENTER_NODE_POOL,
        "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": _EC2_NODE_CLASS,
        "kubernetes:eks.amazonaws.com/v1:NodeClass": _KARPENTER_NODE_CLASS,
    }
)

# --- Removing a node-carrying resource (a pool, a zone, a provisioner) ---------------------------

# (review eks-3.md R3-8: `diff` listed such removals with nothing about the nodes.)
REMOVAL_EFFECTS: Final[Mapping[str, RemovalEffect]] = MappingProxyType(
    {
        "aws:autoscaling/group:Group": RemovalEffect(
            "terminated with the group, undrained: Pulumi deletes what depends on a group "
            "first, its termination lifecycle hook (and the termination handler too when this "
            "was the last self-managed pool), so nothing holds an instance for the handler's "
            "drain and pods get only the kubelet's graceful shutdown (150 s); drain the nodes "
            "first (`kubectl drain`) or run this `up` when no job runs on them",
            "Pulumi deletes dependents before what they depend on (the hook's "
            "autoscalingGroupName); terraform-provider-aws internal/service/autoscaling/group.go "
            "drainGroup (capacity 0, waits for the instances to go, then deletes); gpufleet "
            "components/aws/user_data.py (shutdownGracePeriod 150s)",
        ),
        "aws:eks/nodeGroup:NodeGroup": RemovalEffect(
            "EKS scales the group to zero and sends each node a drain before terminating it, "
            "but waits only a few minutes for its pods before the instance goes: a training "
            "job that does not checkpoint within minutes is lost; drain the nodes first "
            "(`kubectl drain`) or run this `up` when no job runs on them",
            "EKS user guide, delete-managed-node-group ('If the Pods haven't drained after a "
            "few minutes, Amazon EKS lets Auto Scaling continue the termination')",
        ),
    }
)

# A managed group's bounds sent in the `up` that rolls it: the live desired size is read while
# planning and sent after the roll (terraform-provider-aws does the version update first, then
# UpdateNodegroupConfig), which may be 30 minutes and more later (review eks-3.md R3-7).
SPLIT_FROM_ROLL: Final[Mapping[str, SplitFromRoll]] = MappingProxyType(
    {
        "aws:eks/nodeGroup:NodeGroup": SplitFromRoll(
            ("scalingConfig.minSize", "scalingConfig.maxSize"),
            "this `up` rolls the group and changes its bounds: EKS gets the size read while "
            "planning only after the roll, which can take 30 minutes and more, and by then the "
            "autoscaler may have added nodes that it then scales back in (draining them, busy or "
            "not); split it into two `up`s, the bounds first, then the change that rolls",
            "terraform-provider-aws internal/service/eks/node_group.go resourceNodeGroupUpdate "
            "('Do any version update first', then UpdateNodegroupConfig); gpufleet "
            "components/aws/live_groups.py",
        ),
    }
)
