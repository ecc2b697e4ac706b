"""Changes a cloud refuses, and what each replacement takes down: data for the `diff` verdicts.

`replacements.py` says when Pulumi deletes and recreates a resource. This module adds the two
other things a reviewer must know before `pulumi up`:

* **Refused in place.** Some properties a provider would update in place are fixed by the cloud
  at creation, so the update fails at `up` (the stack is stuck until the config is changed
  back). A resource that replaces on such a path (`replaceOnChanges`) is not refused: it is
  replaced. Where gpufleet ignores such a property after creation (`ignoreChanges`), the change
  is not applied at all; the diff still shows it, as refused.
* **A replacement under the same name.** Pulumi creates the replacement first unless the
  resource has `deleteBeforeReplace`. Where the name is fixed (not auto-named), the cloud finds
  the old one still there and refuses: GKE answers 409 `nodePools/<name> already exists`,
  pulumi-azure-native says `cannot create already existing resource`, EKS
  `ResourceInUseException`.

Sources: reviews/aks.md F2 (Microsoft Learn spot-node-pool, aks-managed-gpu-nodes,
gpu-multi-instance, reliability-availability-zones-configure; azure-native provider.go Create),
reviews/gke.md S1-1 (pulumi/pulumi#1620, hashicorp/terraform-provider-google#13052), reviews/eks.md
S1-1 (terraform-aws-modules/terraform-aws-eks issues 3683, 3521, 944, 748).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal

# How a rule fires: any change of the value; only a numeric increase; a Kubernetes minor
# ("1.35") that goes down, or up by more than one; a value that was set and is now absent.
Trigger = Literal["change", "increase", "minor-decrease", "minor-skip", "removed"]


@dataclass(frozen=True)
class Refusal:
    """A property the cloud will not change in place on an existing resource."""

    path: str  # camelCase input path, as in replacements.py (`[0]` indexes a list)
    reason: str  # what the cloud says or documents
    instead: str  # what the user can do
    trigger: Trigger = "change"
    # Only for a resource whose current inputs have these values (input path -> value).
    when: Mapping[str, str] = field(default_factory=dict)


_AKS_POOL_INSTEAD = (
    "gpufleet's GPU pools replace on this change (replaceOnChanges, delete first); for another "
    "agent pool, create a new pool under a new name and delete the old one"
)

_AKS_DOWNGRADE = (
    "AKS: you can't downgrade the control plane or a node pool Kubernetes version "
    "(learn.microsoft.com/azure/aks/upgrade-node-pools, Validation rules for upgrades)"
)
_AKS_DOWNGRADE_INSTEAD = (
    "keep the minor the cluster runs; an older minor needs a new cluster (a new stack) and the "
    "workloads moved over"
)
# What AKS fixes at creation on the system pool (the same facts as the GPU pools', below) and
# the API AKS refuses to resize it through ("Updating VM size is not supported for virtual
# machine scale set agentpools": azure-cli acs agentpool decorator, update_auto_scaler_properties).
# What AKS fixes when it creates the system pool, with why (also refused by the program on the
# running cluster: components/azure/model/deployed.py).
AKS_SYSTEM_POOL_FIXED: Final[tuple[tuple[str, str], ...]] = (
    ("vmSize", "AKS cannot resize a scale-set agent pool's VMs"),
    ("availabilityZones", "AKS cannot change an existing pool's zones"),
    ("osDiskSizeGB", "AKS fixes a pool's OS disk at creation"),
    ("osDiskType", "AKS: osDiskType may not be changed after creation"),
    ("vnetSubnetID", "AKS fixes a pool's subnet at creation"),
    ("maxPods", "AKS fixes a pool's maxPods at creation"),
)
AKS_SYSTEM_POOL_INSTEAD = (
    "keep `cluster.systemPool` as created (machineType, zones); to move the system pool, add a "
    "second System-mode pool with `az aks nodepool add --mode System`, then delete the old one "
    "(AKS keeps at least one System pool); a cluster built anew is a new stack"
)
# Where the system pool's properties sit in its ARM deployment (components/azure/system_pool.py:
# a languageVersion 2.0 template keys its resources by symbolic name).
SYSTEM_POOL_TEMPLATE_KEY: Final = "systemPool"
SYSTEM_POOL_TEMPLATE_PATH: Final = (
    f"properties.template.resources.{SYSTEM_POOL_TEMPLATE_KEY}.properties"
)
_AKS_VERSION_REFUSALS: Final[tuple[Refusal, ...]] = (
    Refusal("kubernetesVersion", _AKS_DOWNGRADE, _AKS_DOWNGRADE_INSTEAD, trigger="minor-decrease"),
    Refusal(
        "kubernetesVersion",
        "AKS: a non-LTS cluster can't skip Kubernetes minor versions; upgrades go one minor at "
        "a time (learn.microsoft.com/azure/aks/upgrade-aks-control-plane, Kubernetes version "
        "upgrade rules; supported-kubernetes-versions, Can I skip multiple AKS versions)",
        "raise `cluster.kubernetesVersion` by one minor, run `pulumi up` (control plane, then "
        "every pool), then the next minor in another change",
        trigger="minor-skip",
    ),
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

_AKS_POOL_REFUSALS: Final[tuple[Refusal, ...]] = (
    Refusal("vmSize", "AKS cannot resize an agent pool's VMs", _AKS_POOL_INSTEAD),
    Refusal(
        "gpuInstanceProfile",
        "AKS fixes a pool's MIG profile at creation",
        _AKS_POOL_INSTEAD,
    ),
    Refusal(
        "gpuProfile",
        "AKS fixes gpuProfile.driver at creation",
        _AKS_POOL_INSTEAD,
    ),
    Refusal(
        "scaleSetPriority",
        "AKS: you can't change ScaleSetPriority or SpotMaxPrice after creation",
        _AKS_POOL_INSTEAD,
    ),
    Refusal(
        "spotMaxPrice",
        "AKS: you can't change ScaleSetPriority or SpotMaxPrice after creation",
        _AKS_POOL_INSTEAD,
    ),
    Refusal(
        "osDiskType",
        "AKS: osDiskType may not be changed after creation",
        _AKS_POOL_INSTEAD,
    ),
    Refusal(
        "availabilityZones",
        "AKS cannot change an existing pool's zones",
        _AKS_POOL_INSTEAD,
    ),
    Refusal(
        "capacityReservationGroupID",
        "AKS fixes a pool's capacity reservation group at creation in API 2025-09-01 "
        "(associating one with an existing pool is an aks-preview feature: learn.microsoft.com/"
        "azure/aks/use-capacity-reservation-groups; terraform-provider-azurerm "
        "capacity_reservation_group_id ForceNew)",
        _AKS_POOL_INSTEAD,
    ),
    Refusal(
        "orchestratorVersion",
        _AKS_DOWNGRADE,
        _AKS_DOWNGRADE_INSTEAD,
        trigger="minor-decrease",
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
_NODE_CLASS_IMMUTABLE = (
    "the NodePool CRD refuses another node class kind or group on an existing NodePool "
    "(x-kubernetes-validations: nodeClassRef.{field} is immutable; Karpenter's "
    "karpenter.sh_nodepools.yaml)"
)


@dataclass(frozen=True)
class UnsafeTogether:
    """A change the cloud accepts, refused because the same `up` removes what runs the
    workloads the change is meant to take over."""

    path: str  # input path of the changed resource
    value: object  # the value the change sets
    removed_type: str  # a resource type the same plan removes
    reason: str
    instead: str


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


def unsafe_together(type_token: str) -> tuple[UnsafeTogether, ...]:
    return UNSAFE_TOGETHER.get(type_token, ())


@dataclass(frozen=True)
class UnsafeMove:
    """A plan that removes one kind of pool and adds another in the same `up`, refused as a
    whole: the old pools' nodes go before anything runs the workloads elsewhere."""

    removed_types: tuple[str, ...]  # any of these removed...
    added_types: tuple[str, ...]  # ...while any of these is added
    what: str  # names the move, after "!! REJECTED "
    reason: str
    instead: str


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


def unsafe_moves(removed: set[str], added: set[str]) -> list[str]:
    """Why gpufleet refuses a plan that removes and adds these component types together."""
    return [
        f"{move.what}: {move.reason}; instead: {move.instead}"
        for move in UNSAFE_MOVES
        if removed & set(move.removed_types) and added & set(move.added_types)
    ]


REFUSED_IN_PLACE: Final[Mapping[str, tuple[Refusal, ...]]] = MappingProxyType(
    {
        "azure-native:containerservice:AgentPool": _AKS_POOL_REFUSALS,
        "azure-native:containerservice:ManagedCluster": (
            *_AKS_VERSION_REFUSALS,
            Refusal(
                "aadProfile",
                "AKS: Microsoft Entra integration can't be disabled after it's enabled on a "
                "cluster (learn.microsoft.com/azure/aks/entra-id-control-plane-authentication, "
                "Limitations)",
                "keep `cluster.azure.authentication: entra-id`; a cluster with local accounts "
                "only is a new cluster (a new stack)",
                trigger="removed",
            ),
            Refusal(
                "identity",
                "gpufleet keeps a running cluster's control-plane identity: AKS moves a cluster "
                "to another one only when a node image update is available (learn.microsoft.com/"
                "azure/aks/user-assigned-managed-identity, Update cluster considerations) and "
                "its control plane keeps the old identity for hours (managed-identity-overview), "
                "while the grants gpufleet makes for it move at once",
                "keep `cluster.azure.controlPlaneIdentityId` as the cluster was created; pools in "
                "a capacity reservation group need a cluster created with one (a new stack)",
            ),
            # The inline system pool is sent with every cluster update (AKS requires
            # agentPoolProfiles on the PUT); what AKS fixes at creation cannot change there.
            *(
                Refusal(f"agentPoolProfiles[0].{field}", reason, AKS_SYSTEM_POOL_INSTEAD)
                for field, reason in AKS_SYSTEM_POOL_FIXED
            ),
        ),
        # gpufleet's system pool through the agent pool API (components/azure/system_pool.py).
        "azure-native:resources:Deployment": (
            Refusal(
                f"{SYSTEM_POOL_TEMPLATE_PATH}.orchestratorVersion",
                _AKS_DOWNGRADE,
                _AKS_DOWNGRADE_INSTEAD,
                trigger="minor-decrease",
            ),
            *(
                Refusal(f"{SYSTEM_POOL_TEMPLATE_PATH}.{field}", reason, AKS_SYSTEM_POOL_INSTEAD)
                for field, reason in AKS_SYSTEM_POOL_FIXED
            ),
        ),
        "aws:eks/cluster:Cluster": _EKS_VERSION_REFUSALS,
        "kubernetes:karpenter.sh/v1:NodePool": tuple(
            Refusal(
                f"spec.template.spec.nodeClassRef.{field}",
                _NODE_CLASS_IMMUTABLE.format(field=field),
                PROVISIONER_SWITCH_INSTEAD,
            )
            for field in ("group", "kind")
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
        "gcp:container/nodePool:NodePool": "name",
        "gcp:container/cluster:Cluster": "name",
        "azure-native:containerservice:AgentPool": "agentPoolName",
        "azure-native:containerservice:ManagedCluster": "resourceName",
        "aws:eks/nodeGroup:NodeGroup": "nodeGroupName",
        "aws:eks/cluster:Cluster": "name",
        "aws:autoscaling/group:Group": "name",
        "aws:ec2/launchTemplate:LaunchTemplate": "name",
    }
)

# What a replacement takes down, for the verdict line (default: the resource itself).
DOWNTIME: Final[Mapping[str, str]] = MappingProxyType(
    {
        "gcp:container/nodePool:NodePool": "every node of this pool and the pods on it",
        "gcp:container/cluster:Cluster": "the whole cluster and every workload on it",
        "azure-native:containerservice:AgentPool": "every node of this pool and the pods on it",
        "azure-native:containerservice:ManagedCluster": (
            "the whole cluster and every workload on it"
        ),
        "aws:eks/nodeGroup:NodeGroup": "every node of this group and the pods on it",
        "aws:eks/cluster:Cluster": "the whole cluster and every workload on it",
        "aws:autoscaling/group:Group": "every instance of this group and the pods on it",
        "pulumi:providers:kubernetes": "every Kubernetes resource it manages, replaced with it",
        # gpufleet's grants are auto-named and have no deleteBeforeReplace: Pulumi creates the
        # new assignment, then deletes the old one (review aks-3 N-4).
        "azure-native:authorization:RoleAssignment": (
            "nothing: the new grant is made first, then the old one is deleted (a grant kept on "
            "delete, retainOnDelete, stays in Azure), so no access is lost meanwhile"
        ),
        # gpufleet's only deployment holds the system pool (components/azure/system_pool.py).
        "azure-native:resources:Deployment": (
            "nothing: a deployment is ARM's record of a template; the new one PUTs the system "
            "pool again as its template says, and deleting the old record deletes no pool"
        ),
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


def created_first(type_token: str, name_given: bool, delete_first: bool) -> str:
    """What a replacement created before the old resource goes means ("": not such a one)."""
    return "" if name_given or delete_first else CREATE_FIRST.get(type_token, "")


# What to do instead of a same-name replacement, where "delete it first" would be the wrong
# advice: a cluster replaced delete-first takes every workload with it.
_REBUILD_CLUSTER = (
    "revert the change that forces the replacement; if the cluster really must be rebuilt, "
    "create it in a new stack and move the workloads over"
)
SAME_NAME_INSTEAD: Final[Mapping[str, str]] = MappingProxyType(
    {
        "gcp:container/cluster:Cluster": _REBUILD_CLUSTER,
        "azure-native:containerservice:ManagedCluster": _REBUILD_CLUSTER,
        "aws:eks/cluster:Cluster": _REBUILD_CLUSTER,
    }
)


def refusals(type_token: str) -> tuple[Refusal, ...]:
    return REFUSED_IN_PLACE.get(type_token, ())


def name_input(type_token: str) -> str | None:
    return NAME_INPUTS.get(type_token)


def downtime(type_token: str) -> str:
    return DOWNTIME.get(type_token, "this resource while it is recreated")


@dataclass(frozen=True)
class ReplacementNote:
    """What a reviewer must know about one kind of replacement beyond what goes down: said when
    the value at ``inner`` of the first item of the list at ``path`` changes to or from
    ``marker``."""

    path: str
    inner: str
    marker: str
    says: str
    source: str


REPLACEMENT_NOTES: Final[Mapping[str, tuple[ReplacementNote, ...]]] = MappingProxyType(
    {
        "gcp:container/nodePool:NodePool": (
            ReplacementNote(
                "nodeConfig.guestAccelerators",
                "gpuDriverInstallationConfig.gpuDriverVersion",
                "INSTALLATION_DISABLED",
                "the pool's driver moves between GKE and the GPU Operator "
                "(`gpuSoftware.mode`): every such GPU pool is deleted and recreated in the same "
                "`up` that installs or removes the operator and Google's driver installer, so "
                "no GPU pod runs on them until their new nodes come up with the new software; "
                "run it when no GPU job runs",
                "gpufleet's GKE preset (components/gcp/model/cloud.py gke_driver): "
                "INSTALLATION_DISABLED on gpu-operator pools; gpu_driver_version is ForceNew "
                "(terraform-provider-google node_config.go guest_accelerator)",
            ),
        ),
    }
)


def replacement_notes(type_token: str) -> tuple[ReplacementNote, ...]:
    return REPLACEMENT_NOTES.get(type_token, ())
