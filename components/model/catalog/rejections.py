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

# How a rule fires: any change of the value, or only a numeric increase.
Trigger = Literal["change", "increase"]


@dataclass(frozen=True)
class Refusal:
    """A property the cloud will not change in place on an existing resource."""

    path: str  # dotted camelCase input path, as in replacements.py
    reason: str  # what the cloud says or documents
    instead: str  # what the user can do
    trigger: Trigger = "change"
    # Only for a resource whose current inputs have these values (input path -> value).
    when: Mapping[str, str] = field(default_factory=dict)


_AKS_POOL_INSTEAD = (
    "gpufleet's GPU pools replace on this change (replaceOnChanges, delete first); for another "
    "agent pool, create a new pool under a new name and delete the old one"
)

REFUSED_IN_PLACE: Final[Mapping[str, tuple[Refusal, ...]]] = MappingProxyType(
    {
        "azure-native:containerservice:AgentPool": (
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
        ),
        "azure-native:containerservice:ManagedCluster": (
            Refusal(
                "agentPoolProfiles",
                "the Azure API does not allow agentPoolProfiles to be updated through the cluster "
                "(a whole-cluster PUT that sets every pool Scaling, or is refused), so gpufleet "
                "ignores them after creation and this change would not be applied",
                "the system pool is create-only: change it with `az aks nodepool update` (counts "
                "and autoscaling) or add a new system pool and delete the old one",
            ),
        ),
        "aws:eks/nodeGroup:NodeGroup": (
            Refusal(
                "scalingConfig.minSize",
                "refused unless the group's current desired size is already at least {new}: EKS "
                "refuses a minimum above it (InvalidParameterException: Minimum capacity N can't "
                "be greater than desired size M), and gpufleet leaves desiredSize to the "
                "autoscaler (a group the autoscaler grew to {new} or more takes the change)",
                "first raise the group's desired size to the new minimum (aws eks "
                "update-nodegroup-config --scaling-config desiredSize=N), then run `pulumi up`",
                trigger="increase",
            ),
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
    }
)


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
