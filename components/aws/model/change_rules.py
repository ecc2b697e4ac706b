"""How AWS changes gpufleet's EKS resources: which input changes replace them, which EKS refuses,
and what a replacement takes down. Data for `diff`, handed over in `resources.RESOURCES`; what the
tables mean and where their facts come from is said in `components/model/catalog/replacements.py`
and `rejections.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from components.model.catalog.rejections import (
    REBUILD_CLUSTER,
    Refusal,
    UnsafeMove,
    UnsafeTogether,
)

REPLACEMENT_PATHS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        # terraform-provider-aws internal/service/eks/cluster.go. Not listed because they are
        # conditional there: removing ``encryptionConfig`` (irreversible) and changing an
        # already-set ``computeConfig.nodeRoleArn`` also force a new cluster. ``region``: the
        # provider 6.x per-resource region, "Changing the value of region will force resource
        # replacement" (website/docs/guides/enhanced-region-support).
        "aws:eks/cluster:Cluster": (
            "accessConfig.bootstrapClusterCreatorAdminPermissions",
            "bootstrapSelfManagedAddons",
            "kubernetesNetworkConfig.ipFamily",
            "kubernetesNetworkConfig.serviceIpv4Cidr",
            "name",
            "outpostConfig.controlPlaneInstanceType",
            "outpostConfig.controlPlanePlacement.groupName",
            "region",
            "remoteNetworkConfig",
            "roleArn",
        ),
        # terraform-provider-aws internal/service/eks/node_group.go.
        "aws:eks/nodeGroup:NodeGroup": (
            "amiType",
            "capacityType",
            "clusterName",
            "diskSize",
            "instanceTypes",
            "launchTemplate.id",
            "launchTemplate.name",
            "nodeGroupName",
            "nodeGroupNamePrefix",
            "nodeRoleArn",
            "region",
            "remoteAccess",
            "subnetIds",
        ),
        # terraform-provider-aws internal/service/autoscaling/group.go. Launch template,
        # mixed instances policy, subnets, sizes and tags all update in place.
        "aws:autoscaling/group:Group": (
            "initialLifecycleHooks",
            "name",
            "namePrefix",
            "region",
        ),
        # terraform-provider-aws internal/service/ec2/ec2_launch_template.go: every other change
        # writes a new template version in place.
        "aws:ec2/launchTemplate:LaunchTemplate": ("name", "namePrefix", "region"),
        # internal/service/eks/addon.go: the add-on and its cluster; a version is an update.
        "aws:eks/addon:Addon": ("addonName", "clusterName", "region"),
        # internal/service/sqs/queue.go: a replaced interruption queue loses the messages in it
        # (the drains of nodes about to go); retention, encryption and the inline policy are
        # SetQueueAttributes updates. queue_policy.go: `queue_url` alone; the policy document
        # is an update (the same SetQueueAttributes call).
        "aws:sqs/queue:Queue": ("fifoQueue", "name", "namePrefix", "region"),
        "aws:sqs/queuePolicy:QueuePolicy": ("queueUrl", "region"),
        # A fabric pool's placement group and EFA security group (components/aws/fabric_network.py).
        # EC2 has CreatePlacementGroup and DeletePlacementGroup and no call that modifies one
        # (EC2 API reference, "Placement groups" actions): any change but tags replaces it, and
        # a group with instances in it cannot be deleted (DeletePlacementGroup: "you must
        # terminate all instances in the placement group before you can delete it").
        "aws:ec2/placementGroup:PlacementGroup": (
            "name",
            "partitionCount",
            "region",
            "spreadLevel",
            "strategy",
        ),
        # EC2 cannot rename a security group, change its description or move it to another VPC
        # (no such API: CreateSecurityGroup takes them, ModifySecurityGroupRules edits rules).
        "aws:ec2/securityGroup:SecurityGroup": (
            "description",
            "name",
            "namePrefix",
            "region",
            "vpcId",
        ),
        # A rule belongs to its group; its other fields change through ModifySecurityGroupRules.
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": (
            "region",
            "securityGroupId",
        ),
        "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": (
            "region",
            "securityGroupId",
        ),
    }
)

# EKS upgrades a cluster in place one minor at a time and never back: "Once you upgrade a
# cluster, you can't downgrade to a previous version" (EKS user guide, "Update existing cluster
# to new Kubernetes version", docs.aws.amazon.com/eks/latest/userguide/update-cluster.html);
# "Control plane version upgrades must be done for one minor version at a time ... Upgrades of
# more than one Kubernetes version are not supported" (eksctl docs, cluster-upgrade.html). The
# provider sends `version` through UpdateClusterVersion, in place, so EKS answers at `up`.
_EKS_VERSION_REFUSALS: Final[tuple[Refusal, ...]] = (
    Refusal(
        "version",
        "EKS: once you upgrade a cluster, you can't downgrade it (EKS user guide, Update "
        "existing cluster to new Kubernetes version)",
        "keep the minor the cluster runs in `cluster.kubernetesVersion`; an older minor needs a "
        "new cluster (a new stack) and the workloads moved over",
        trigger="minor-decrease",
    ),
    Refusal(
        "version",
        "EKS upgrades a control plane one Kubernetes minor at a time; skipping minors is not "
        "supported (EKS user guide, Update existing cluster to new Kubernetes version; eksctl "
        "docs, Cluster upgrades)",
        "raise `cluster.kubernetesVersion` by one minor, run `pulumi up` (control plane, then "
        "every node group), then the next minor in another change",
        trigger="minor-skip",
    ),
)

# Moving a stack between gpufleet's Karpenter and EKS Auto Mode (`cluster.aws.provisioner`) in
# one `up` (review eks-3.md N17). Both use `karpenter.sh/v1` NodePools, and gpufleet keeps each
# pool's name, so the pools are updated in place to Auto Mode's node class, which the NodePool
# CRD refuses (x-kubernetes-validations "nodeClassRef.group is immutable", "nodeClassRef.kind is
# immutable": karpenter.sh_nodepools.yaml of the Karpenter 1.13 chart). And the same `up` removes
# gpufleet's Karpenter (controller, CRD release, EC2NodeClasses, interruption queue) while Auto
# Mode is only being turned on: Karpenter's nodes, and the pods on them, go with it.
PROVISIONER_SWITCH_INSTEAD: Final = (
    "gpufleet has no staged move to or from Auto Mode on one cluster: create the new "
    "provisioner's cluster in a new stack, move the workloads there, then destroy this one; or, "
    "only when nothing runs on the pools' nodes (every GPU pool empty), give each pool a new "
    "name in the same change (an existing NodePool keeps its node class kind) and run `pulumi "
    "up` knowing this refusal: the old provisioner's nodes go with it"
)
_AUTO_MODE_WITH_REMOVAL = (
    "gpufleet refuses to turn on EKS Auto Mode in the `up` that removes its {what}: their nodes "
    "and the pods on them would go while Auto Mode is only being enabled"
)
UNSAFE_TOGETHER: Final[Mapping[str, tuple[UnsafeTogether, ...]]] = MappingProxyType(
    {
        "aws:eks/cluster:Cluster": (
            UnsafeTogether(
                "computeConfig.enabled",
                True,
                "gpufleet:aws:Karpenter",
                _AUTO_MODE_WITH_REMOVAL.format(what="Karpenter (controller, CRDs, node classes)"),
                PROVISIONER_SWITCH_INSTEAD,
            ),
            UnsafeTogether(
                "computeConfig.enabled",
                True,
                "gpufleet:aws:ClusterAutoscaler",
                _AUTO_MODE_WITH_REMOVAL.format(what="cluster autoscaler and GPU node groups"),
                PROVISIONER_SWITCH_INSTEAD,
            ),
        ),
    }
)


# The cluster autoscaler's groups to NodePools (Karpenter or Auto Mode) in one `up` (review
# eks-3.md R3-8): Pulumi creates the NodePools first and deletes the groups last, terminating
# every node of them in that `up`, the self-managed ones without the termination handler's drain
# (components/aws/model/node_effects.py REMOVAL_EFFECTS). The way back is not refused: deleting
# a NodePool makes the running Karpenter drain its nodes, and Pulumi waits for its node class.
UNSAFE_MOVES: Final[tuple[UnsafeMove, ...]] = (
    UnsafeMove(
        ("gpufleet:aws:SelfManagedGpuPool", "gpufleet:aws:ManagedGpuPool"),
        ("gpufleet:aws:KarpenterGpuPool",),
        "moving GPU pools from the cluster autoscaler's node groups to NodePools",
        "gpufleet refuses it in one `up`, as it refuses the move to Auto Mode: Pulumi creates "
        "the NodePools first and deletes the node groups last, and with them every node they "
        "run and the pods on them, the self-managed groups' without the termination handler's "
        "drain",
        "two `up`s: first drain the pools' nodes (`kubectl drain`, or wait until no job runs) "
        "and remove those pools from gpuPools; then set cluster.aws.provisioner and add them "
        "back; or, with no gap in capacity, create the new provisioner's cluster in a new "
        "stack, move the workloads there, then destroy this one",
    ),
    UnsafeMove(
        ("gpufleet:aws:KarpenterGpuPool",),
        ("gpufleet:aws:SelfManagedGpuPool", "gpufleet:aws:ManagedGpuPool"),
        "moving GPU pools from NodePools back to the cluster autoscaler's node groups",
        "gpufleet refuses it in one `up`: the same `up` uninstalls Karpenter, whose termination "
        "finalizers on the NodeClaims then either hold the `up` for the drain or leave the GPU "
        "instances running and billed with no controller to remove them (Karpenter v1, "
        "NodePool deletion; review eks-4 N-3)",
        "two `up`s: first remove those pools from gpuPools while Karpenter still runs (it "
        "drains and terminates their nodes); then set cluster.aws.provisioner and add them back",
    ),
)

# Turning `interconnect: fabric` off on a group pool (review eks-6 E6-1): the launch template
# loses its EFA interfaces (components/aws/fabric_network.py), and the same `up` deletes the
# pool's cluster placement groups and EFA security group. The running instances stay in those
# groups and keep their interfaces (gpufleet starts no instance refresh; a managed group's roll
# may not be done), and EC2 refuses both deletes while they do: "Before you can delete a
# placement group, it must contain no instances" (EC2 user guide, delete-placement-group), and
# DeleteSecurityGroup fails with DependencyViolation while a network interface uses the group
# (EC2 API reference, DeleteSecurityGroup). Pulumi would stop the `up` half-applied. Keeping the
# groups while the pool exists would leave them behind for good once the fabric is off (Pulumi
# has no "delete later"), so gpufleet refuses the change unless the pool is empty.
_FABRIC_OFF_REFUSAL: Final = Refusal(
    "networkInterfaces",
    "refused unless the pool's groups are at 0 nodes: turning the fabric off deletes the "
    "pool's cluster placement group and EFA security group in the same `up`, and EC2 refuses "
    "both while the pool's instances are in them ('Before you can delete a placement group, it "
    "must contain no instances', EC2 user guide, delete-placement-group; DeleteSecurityGroup "
    "fails with DependencyViolation while an interface uses the group), so `pulumi up` would "
    "stop half-applied",
    "wait until the pool is empty (its jobs done and the autoscaler has scaled it in), or "
    "drain its nodes and scale its groups to 0 (minNodes: 0; aws autoscaling "
    "set-desired-capacity / aws eks update-nodegroup-config --scaling-config desiredSize=0), "
    "then turn the fabric off and run `pulumi up`; or remove the pool from gpuPools (its "
    "groups go first, then the placement and security groups)",
    trigger="removed",
)

# The same on a Karpenter pool: its EC2NodeClass loses the interfaces, and the placement and EFA
# security groups go in the same `up` while the drifted nodes (Drifted budget 0) still use them.
_KARPENTER_FABRIC_OFF_REFUSAL: Final = Refusal(
    "spec.networkInterfaces",
    "refused unless the pool is at 0 nodes: turning the fabric off deletes the pool's cluster "
    "placement group and EFA security group in the same `up`, and EC2 refuses both while the "
    "pool's instances are in them (EC2 user guide, delete-placement-group; DeleteSecurityGroup, "
    "DependencyViolation); gpufleet's NodePool never drains drifted nodes, so they are there",
    "wait until the pool is empty (Karpenter consolidates idle nodes), or drain its nodes "
    "(kubectl delete nodeclaims -l karpenter.sh/nodepool=<pool>), then turn the fabric off "
    "and run `pulumi up`; or remove the pool from gpuPools",
    trigger="removed",
)

# A Karpenter fabric pool moved to another zone (or placement group): the NodeClass selects the
# new group, the old one is deleted in the same `up`, and the running nodes (drifted, kept by the
# Drifted budget of 0) are still in it (review fix8-eks F8E-1).
_KARPENTER_PLACEMENT_MOVE_REFUSAL: Final = Refusal(
    "spec.placementGroupSelector",
    "refused unless the pool is at 0 nodes: moving a fabric pool to another zone selects a new "
    "cluster placement group and deletes the old one in the same `up`, and EC2 refuses that "
    "while the pool's running nodes are in it (EC2 user guide, delete-placement-group: 'it must "
    "contain no instances'); gpufleet's NodePool never drains drifted nodes, so they are there",
    "wait until the pool is empty, or drain its nodes (kubectl delete nodeclaims -l "
    "karpenter.sh/nodepool=<pool>), then move it and run `pulumi up`; or add a new fabric pool "
    "in the other zone and remove this one once it is empty",
    trigger="replaced",
)

REFUSED_IN_PLACE: Final[Mapping[str, tuple[Refusal, ...]]] = MappingProxyType(
    {
        "aws:eks/cluster:Cluster": _EKS_VERSION_REFUSALS,
        "aws:ec2/launchTemplate:LaunchTemplate": (_FABRIC_OFF_REFUSAL,),
        "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": (
            _KARPENTER_FABRIC_OFF_REFUSAL,
            _KARPENTER_PLACEMENT_MOVE_REFUSAL,
        ),
        "aws:eks/nodeGroup:NodeGroup": (
            # No refusal of a raised minimum: gpufleet sends the live desired size, raised
            # to the new minimum (components/aws/model/groups.py, scaling_to_send).
            *(
                Refusal(
                    path,
                    "refused unless the group is at 0 nodes: EKS updates a Capacity Block "
                    "group's nodes only when its desired size is 0 (EKS user guide, "
                    "capacity-blocks-mng: 'When upgrading managed node groups with Capacity "
                    "Blocks, make sure that the desired size of the node group is set to 0')",
                    "wait until the group is empty (its jobs done and the autoscaler has scaled "
                    "it in), or scale it to 0 yourself (aws eks update-nodegroup-config "
                    "--scaling-config desiredSize=0), then run `pulumi up`",
                    when={"capacityType": "CAPACITY_BLOCK"},
                )
                for path in ("launchTemplate.version", "releaseVersion", "version")
            ),
        ),
    }
)

# The input that holds a resource's fixed (not auto-generated) cloud name.
NAME_INPUTS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "aws:eks/nodeGroup:NodeGroup": "nodeGroupName",
        "aws:eks/cluster:Cluster": "name",
        "aws:autoscaling/group:Group": "name",
        "aws:ec2/launchTemplate:LaunchTemplate": "name",
    }
)

# What a replacement takes down, for the verdict line (default: the resource itself).
DOWNTIME: Final[Mapping[str, str]] = MappingProxyType(
    {
        "aws:eks/nodeGroup:NodeGroup": "every node of this group and the pods on it",
        "aws:eks/cluster:Cluster": "the whole cluster and every workload on it",
        "aws:autoscaling/group:Group": "every instance of this group and the pods on it",
    }
)

# A replacement Pulumi creates before it deletes the old resource (no deleteBeforeReplace, a
# name the provider makes from a prefix): nothing is down, so instead of DOWNTIME the verdict
# says what happens (review eks-3.md R3-10: the EKS system group).
CREATE_FIRST: Final[Mapping[str, str]] = MappingProxyType(
    {
        "aws:eks/nodeGroup:NodeGroup": (
            "Pulumi creates the new group before it deletes the old one (a name from a prefix, "
            "no deleteBeforeReplace): EKS then drains the old group's nodes as it deletes it, "
            "waiting a few minutes per node, and their pods move to the new group's nodes "
            "(EKS user guide, delete-managed-node-group)"
        ),
    }
)

# What to do instead of the NodePool CRD's refusal of another node class (components/model/
# karpenter_day_two.py) on EKS, where the move is between Karpenter and Auto Mode.
REFUSAL_INSTEAD: Final[Mapping[str, str]] = MappingProxyType(
    {"kubernetes:karpenter.sh/v1:NodePool": PROVISIONER_SWITCH_INSTEAD}
)

SAME_NAME_INSTEAD: Final[Mapping[str, str]] = MappingProxyType(
    {"aws:eks/cluster:Cluster": REBUILD_CLUSTER}
)
