"""How Azure changes gpufleet's AKS resources: which input changes replace them, which AKS
refuses, and what a replacement takes down. Data for `diff`, handed over in
`resources.RESOURCES` (and the system pool's fixed properties for `deployed.py`); what the tables
mean and where their facts come from is said in `components/model/catalog/replacements.py` and
`rejections.py`.
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
        # pulumi-azure-native: the URL path parameters and forceNewMap["ContainerService"]
        # ["ManagedCluster"] (networkProfile child by child since PR 4771, before which any
        # networkProfile change replaced the cluster).
        "azure-native:containerservice:ManagedCluster": (
            "diskEncryptionSetID",
            "dnsPrefix",
            "fqdnSubdomain",
            "linuxProfile",
            "location",
            "networkProfile.dnsServiceIP",
            "networkProfile.networkDataplane",
            "networkProfile.networkMode",
            "networkProfile.networkPlugin",
            "networkProfile.networkPluginMode",
            "networkProfile.networkPolicy",
            "networkProfile.outboundType",
            "networkProfile.podCidr",
            "networkProfile.serviceCidr",
            "networkProfile.serviceCidrs",
            "nodeResourceGroup",
            "resourceGroupName",
            "resourceName",
            "windowsProfile",
        ),
        # Two kinds of entry, both meaning "this pool cannot be changed in place":
        # 1. pulumi-azure-native replaces by itself: the URL path parameters and
        #    forceNewMap["ContainerService"]["AgentPool"] (vmSize, gpuInstanceProfile,
        #    networkProfile.nodePublicIPTags; PR 3655 citing the AKS docs "You can't change the
        #    VM size of a node pool after you create it" and "You can't change the applied GPU
        #    instance profile after node pool creation").
        # 2. The AKS API fixes them at creation but azure-native would send an in-place PUT that
        #    AKS rejects (PropertyChangeNotAllowed); the AgentPool component must declare
        #    ``replace_on_changes`` for them so Pulumi replaces the pool instead of failing.
        #    Evidence: FACTS (spot settings and GPU driver fixed at creation) and
        #    terraform-provider-azurerm kubernetes_cluster_node_pool_resource.go, which marks
        #    priority, eviction_policy, spot_max_price, gpu_driver, os_type, host_group_id,
        #    capacity_reservation_group_id, proximity_placement_group_id and
        #    node_public_ip_prefix_id ForceNew, and can only change os_disk_size_gb,
        #    os_disk_type, zones, vnet_subnet_id, pod_subnet_id and max_pods by cycling the
        #    pool through ``temporary_name_for_rotation``.
        "azure-native:containerservice:AgentPool": (
            # 1. provider-forced
            "agentPoolName",
            "gpuInstanceProfile",
            "networkProfile.nodePublicIPTags",
            "resourceGroupName",
            "resourceName",
            "vmSize",
            # 2. fixed at creation by AKS
            "availabilityZones",
            "capacityReservationGroupID",
            "gpuProfile",
            "hostGroupID",
            "maxPods",
            "nodePublicIPPrefixID",
            "osDiskSizeGB",
            "osDiskType",
            "osType",
            "podSubnetID",
            "proximityPlacementGroupID",
            "scaleSetEvictionPolicy",
            "scaleSetPriority",
            "spotMaxPrice",
            "vnetSubnetID",
        ),
        # pulumi-azure-native: the URL path parameters (scope, roleAssignmentName) and
        # forceNewMap["Authorization"]["RoleAssignment"] = principalId, scope (PR 1010, issue
        # 771: ARM answers an update of either RoleAssignmentUpdateNotPermitted, "Tenant ID,
        # application ID, principal ID, and scope are not allowed to be updated").
        "azure-native:authorization:RoleAssignment": (
            "principalId",
            "roleAssignmentName",
            "scope",
        ),
        # pulumi-azure-native: the URL path parameters of a deployment at resource group scope.
        "azure-native:resources:Deployment": ("deploymentName", "resourceGroupName"),
    }
)

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

# Node auto-provisioning on and off (MicrosoftDocs/azure-aks-docs articles/aks/
# use-node-auto-provisioning.md, commit fb060ab: enabled in place with `az aks update
# --node-provisioning-mode Auto`; disabled only once no NAP node remains and every NodePool has
# limits.cpu 0). Auto mode refuses autoscaling agent pools (pulumi-azure-native 3.29
# NodeProvisioningMode.AUTO), and Pulumi updates the cluster before it deletes the old pools.
_NAP_OFF = (
    "AKS turns node auto-provisioning off only when no node of its NodePools remains and every "
    "NodePool has spec.limits.cpu 0 (aks/use-node-auto-provisioning, Disable node "
    "auto-provisioning)"
)
NAP_SWITCH_INSTEAD: Final = (
    "two `up`s: first remove the GPU pools from gpuPools (agent pools: AKS cordons and drains "
    "their nodes as it deletes each pool; NodePools: AKS's Karpenter drains theirs), wait until "
    "no such node is left (`kubectl get nodes -l karpenter.sh/nodepool` for NodePools); then "
    "set cluster.azure.provisioner and add the pools back; or, with no gap in capacity, create "
    "the new provisioner's cluster in a new stack, move the workloads there, then destroy this one"
)
UNSAFE_TOGETHER: Final[Mapping[str, tuple[UnsafeTogether, ...]]] = MappingProxyType(
    {
        "azure-native:containerservice:ManagedCluster": (
            UnsafeTogether(
                "nodeProvisioningProfile.mode",
                "Auto",
                "gpufleet:azure:GpuAgentPool",
                "AKS refuses Auto mode while the cluster has autoscaling agent pools "
                "(pulumi-azure-native 3.29 NodeProvisioningMode.AUTO: 'autoscaling Node Pools "
                "cannot be'; aks/migrate-from-autoscaler-to-node-auto-provisioning: both only "
                "behind a preview flag), and Pulumi updates the cluster before it deletes the GPU "
                "agent pools this `up` removes, whose nodes and pods then go",
                NAP_SWITCH_INSTEAD,
            ),
        ),
    }
)
UNSAFE_MOVES: Final[tuple[UnsafeMove, ...]] = (
    UnsafeMove(
        ("gpufleet:azure:NapGpuPool",),
        ("gpufleet:azure:GpuAgentPool",),
        "moving GPU pools from node auto-provisioning's NodePools back to agent pools",
        f"gpufleet refuses it in one `up`: {_NAP_OFF}, and this `up` deletes the NodePools "
        "while Karpenter is still draining their nodes",
        NAP_SWITCH_INSTEAD,
    ),
)

# A NAP pool's AKSNodeClass (components/azure/nap_pools.py): its subnet. The CRD takes the
# edit, but AKS's Karpenter then sees every node of the class as drifted and provisions no node
# for it until vnetSubnetID is set back (learn.microsoft.com/azure/aks/node-autoprovision-
# networking, Subnet drift behavior: "changing vnetSubnetID from one valid subnet to another
# isn't a supported operation"; read 2026-11-28 via its ja-jp and docs.azure.cn copies).
NODE_CLASS_TYPE: Final = "kubernetes:karpenter.azure.com/v1beta1:AKSNodeClass"
_NODE_CLASS_REFUSALS: Final[tuple[Refusal, ...]] = (
    Refusal(
        "spec.vnetSubnetID",
        "AKS node auto-provisioning does not support moving an AKSNodeClass to another subnet: "
        "Karpenter detects the subnet drift and provisions no node for the pool until "
        "vnetSubnetID is reverted (aks/node-autoprovision-networking, Subnet drift behavior; "
        "only a malformed or unreachable subnet ID may be corrected)",
        "keep cluster.azure.vnetSubnetId as the NodePools were created; to move the GPU nodes "
        "to another subnet, take two `up`s: remove the GPU pools from gpuPools (Karpenter "
        "drains their nodes), then set the new subnet and add them back",
    ),
)

REFUSED_IN_PLACE: Final[Mapping[str, tuple[Refusal, ...]]] = MappingProxyType(
    {
        "azure-native:containerservice:AgentPool": _AKS_POOL_REFUSALS,
        NODE_CLASS_TYPE: _NODE_CLASS_REFUSALS,
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
    }
)

# The input that holds a resource's fixed (not auto-generated) cloud name.
NAME_INPUTS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "azure-native:containerservice:AgentPool": "agentPoolName",
        "azure-native:containerservice:ManagedCluster": "resourceName",
    }
)

# What a replacement takes down, for the verdict line (default: the resource itself).
DOWNTIME: Final[Mapping[str, str]] = MappingProxyType(
    {
        "azure-native:containerservice:AgentPool": "every node of this pool and the pods on it",
        "azure-native:containerservice:ManagedCluster": (
            "the whole cluster and every workload on it"
        ),
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

SAME_NAME_INSTEAD: Final[Mapping[str, str]] = MappingProxyType(
    {"azure-native:containerservice:ManagedCluster": REBUILD_CLUSTER}
)
