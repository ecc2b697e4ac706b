"""How Google Cloud changes gpufleet's GKE resources: which input changes replace them, what a
replacement takes down, and which provider input moves the resources it manages. Data for
`diff`, handed over in `resources.RESOURCES`; what the tables mean and where their facts come
from is said in `components/model/catalog/replacements.py`, `rejections.py` and
`provider_changes.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from components.model.catalog.rejections import REBUILD_CLUSTER, Refusal, ReplacementNote

# ForceNew children of terraform-provider-google's shared ``schemaNodeConfig`` (node_config.go),
# relative to ``nodeConfig``. The same block sits on the node pool and, for the default pool, on
# the cluster, where a match recreates the whole cluster. Accelerator settings (type, count,
# driver version, MIG partition size, sharing) all live inside ``guestAccelerators``.
_GKE_NODE_CONFIG_FORCE_NEW: Final[tuple[str, ...]] = (
    "advancedMachineFeatures.enableNestedVirtualization",
    "advancedMachineFeatures.threadsPerCore",
    "bootDiskKmsKey",
    "confidentialNodes.confidentialInstanceType",
    "enableConfidentialStorage",
    "ephemeralStorageConfig",
    "ephemeralStorageLocalSsdConfig",
    "flexStart",
    "guestAccelerators",
    "hostMaintenancePolicy",
    "localNvmeSsdBlockConfig",
    "localSsdCount",
    "localSsdEncryptionMode",
    "maxRunDuration",
    "metadata",
    "minCpuPlatform",
    "nodeGroup",
    "oauthScopes",
    "preemptible",
    "reservationAffinity",
    "sandboxConfig",
    "secondaryBootDisks",
    "serviceAccount",
    "shieldedInstanceConfig",
    "soleTenantConfig.nodeAffinities",
    "spot",
)


def _under(prefix: str, paths: tuple[str, ...]) -> tuple[str, ...]:
    """Prefix each relative path with ``prefix.`` (keeps the shared node-config list in one place)."""
    return tuple(f"{prefix}.{path}" for path in paths)


REPLACEMENT_PATHS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        # terraform-provider-google resource_container_node_pool.go (schemaNodePool + the
        # resource's own project/cluster/location) and node_config.go.
        "gcp:container/nodePool:NodePool": (
            "cluster",
            "initialNodeCount",
            "location",
            "maxPodsPerNode",
            "name",
            "namePrefix",
            "networkConfig.additionalNodeNetworkConfigs",
            "networkConfig.additionalPodNetworkConfigs",
            "networkConfig.createPodRange",
            "networkConfig.podCidrOverprovisionConfig",
            "networkConfig.podIpv4CidrBlock",
            "networkConfig.podRange",
            "placementPolicy.policyName",
            # placement_policy.type is ForceNew too (resource_container_node_pool.go
            # @e03b7622 L559-616): turning GPUDirect's compact placement on replaces the pool.
            "placementPolicy.type",
            "project",
            "queuedProvisioning",
            *_under("nodeConfig", _GKE_NODE_CONFIG_FORCE_NEW),
        ),
        # terraform-provider-google resource_container_cluster.go. ``nodeConfig`` is the default
        # pool's; ``nodePools`` (inline pools) is ForceNew as a whole.
        "gcp:container/cluster:Cluster": (
            "clusterIpv4Cidr",
            "datapathProvider",
            "defaultMaxPodsPerNode",
            "description",
            "enableAutopilot",
            "enableKubernetesAlpha",
            "enableTpu",
            "initialNodeCount",
            "ipAllocationPolicy.clusterIpv4CidrBlock",
            "ipAllocationPolicy.clusterSecondaryRangeName",
            "ipAllocationPolicy.podCidrOverprovisionConfig",
            "ipAllocationPolicy.servicesIpv4CidrBlock",
            "ipAllocationPolicy.servicesSecondaryRangeName",
            "location",
            "name",
            "network",
            "networkingMode",
            "nodePools",
            "privateClusterConfig.enablePrivateNodes",
            "privateClusterConfig.masterIpv4CidrBlock",
            "privateClusterConfig.privateEndpointSubnetwork",
            "project",
            "subnetwork",
            *_under("nodeConfig", _GKE_NODE_CONFIG_FORCE_NEW),
        ),
        # terraform-provider-google @e03b7622 resourcemanager/iam_project.go (`project`
        # ForceNew) and tpgiamresource/resource_iam_member.go (`role`, `member`, `condition`
        # ForceNew): a grant is never edited, only replaced (review gke-2.md N6).
        "gcp:projects/iAMMember:IAMMember": ("condition", "member", "project", "role"),
        # A Kubernetes object's name is its identity: pulumi-kubernetes replaces it on a new
        # `metadata.name` (its Diff: the name is the object's identity). A class is
        # named after its pool, so a renamed pool is a new class.
        "kubernetes:cloud.google.com/v1:ComputeClass": ("metadata.name",),
        # resourcemanager/resource_google_project_service.go: `service` and `project` ForceNew
        # (image streaming's API; never disabled on delete, so a replacement is harmless).
        "gcp:projects/service:Service": ("project", "service"),
        # resourcemanager/resource_google_service_account.go: `account_id` and `project`.
        "gcp:serviceaccount/account:Account": ("accountId", "project"),
    }
)

# The input that holds a resource's fixed (not auto-generated) cloud name.
# terraform-provider-google @e03b7622 resource_compute_subnetwork.go L62-80, L384-385:
# `customdiff.ForceNewIfChange("ip_cidr_range", IsShrinkageIpCidr)`: a subnet's range only grows
# in place (the new range contains the old); any other new range recreates the subnet.
REPLACED_UNLESS_WIDENED: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {"gcp:compute/subnetwork:Subnetwork": ("ipCidrRange",)}
)

NAME_INPUTS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "gcp:container/nodePool:NodePool": "name",
        "gcp:container/cluster:Cluster": "name",
        # gpufleet names its GPUDirect subnets (components/gcp/gpudirect.py): a replacement
        # created first meets the old one's name.
        "gcp:compute/subnetwork:Subnetwork": "name",
    }
)

# What a replacement takes down, for the verdict line (default: the resource itself).
DOWNTIME: Final[Mapping[str, str]] = MappingProxyType(
    {
        "gcp:container/nodePool:NodePool": "every node of this pool and the pods on it",
        "gcp:container/cluster:Cluster": "the whole cluster and every workload on it",
    }
)

SAME_NAME_INSTEAD: Final[Mapping[str, str]] = MappingProxyType(
    {"gcp:container/cluster:Cluster": REBUILD_CLUSTER}
)

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
            # Said when a preloaded disk is added or removed; a new image of the same mode is
            # the same ForceNew replacement (nodeConfig.secondaryBootDisks above).
            ReplacementNote(
                "nodeConfig.secondaryBootDisks",
                "mode",
                "CONTAINER_IMAGE_CACHE",
                "a preloaded image disk (gpuPools[].gcp.secondaryBootDisk) is set when a node "
                "pool is created: adding, changing or removing it makes GKE a new pool, so this "
                "pool is deleted and recreated with every node on it; run it when no GPU job "
                "runs, or add the disk to a new pool and move the jobs over",
                "GKE docs how-to/data-container-image-preloading (changing the disk image needs "
                "a new node pool); terraform-provider-google node_config.go "
                "secondary_boot_disks ForceNew (components/gcp/model/image_start.py)",
            ),
        ),
    }
)

# Provider inputs whose change recreates the resources of the listed types that the provider
# manages (the resources name no value of their own for it).
_TPG_DEFAULT_PROJECT_SOURCE = (
    "terraform-provider-google tpgresource.DefaultProviderProject in the CustomizeDiff of "
    "resource_compute_network.go, resource_compute_subnetwork.go, resource_compute_router.go, "
    "resource_compute_router_nat.go, resource_container_node_pool.go and "
    "resource_google_service_account.go; `project` is ForceNew in each"
)
MOVES_MANAGED_RESOURCES: Final[Mapping[str, Mapping[str, tuple[str, ...]]]] = MappingProxyType(
    {
        "pulumi:providers:gcp": {
            "project": (
                "gcp:compute/network:Network",
                "gcp:compute/subnetwork:Subnetwork",
                "gcp:compute/router:Router",
                "gcp:compute/routerNat:RouterNat",
                "gcp:container/nodePool:NodePool",
                "gcp:serviceaccount/account:Account",
            ),
        },
    }
)
MOVES_SOURCE: Final[Mapping[str, str]] = MappingProxyType(
    {"pulumi:providers:gcp": _TPG_DEFAULT_PROJECT_SOURCE}
)
# Said on the provider whose input moves its resources.
MOVES_NOTE: Final[Mapping[str, str]] = MappingProxyType(
    {
        "pulumi:providers:gcp": (
            "a new project moves the stack: the resources of this provider are recreated in the "
            "new project (those listed as replaced), and a cluster gpufleet created follows "
            "when its new network replaces it; GPU workloads stop meanwhile. For a project "
            "move, a new stack in the new project, with the workloads moved over, is the way"
        ),
    }
)

# What goes down when the provider's resources are replaced with it (the verdict line).
MANAGED_DOWNTIME: Final[Mapping[str, str]] = MappingProxyType(
    {
        "pulumi:providers:gcp": (
            "the provider's project changed: the resource is recreated in the new project"
        ),
    }
)

# GPUDirect's cluster settings (components/gcp/model/fabric.py), set only on a cluster created
# with fabric pools: Dataplane V2 is chosen at creation (terraform-provider-google
# resource_container_cluster.go @e03b7622 L2438-2483: `datapath_provider` ForceNew), and
# multi-networking requires it (GKE docs setup-multinetwork-support-for-pods, Requirements).
# gpufleet ignores both on a running cluster (components/gcp/cluster.py), so adding the first
# fabric pool never recreates it; `diff` says the change is not applied, and what to do. Only
# off -> on is refused: on -> off (the last fabric pool removed) sends nothing, the cluster
# keeps both, and `diff` shows no change (review rev-gke6 G6-4). Not checked: a cluster that
# had a fabric pool once still has both, so re-adding one there would work; the plans do not
# show it, and the refusal says so.
_FABRIC_INSTEAD = (
    "a GKE cluster gets Dataplane V2 and multi-networking only when it is created: create the "
    "fabric pool in a new stack whose cluster starts with it (gpuPools[].interconnect: fabric "
    "from the first `up`) and move the training jobs over, or keep interconnect: none here. "
    "Not checked: if this cluster was created with a fabric pool (it keeps Dataplane V2 and "
    "multi-networking after the pool goes), the change works; the plans cannot show that"
)
_FABRIC_SOURCE = (
    "terraform-provider-google resource_container_cluster.go @e03b7622 (datapath_provider "
    "ForceNew); docs.cloud.google.com/kubernetes-engine/docs/how-to/"
    "setup-multinetwork-support-for-pods (multi-networking requires Dataplane V2)"
)
REFUSED_IN_PLACE: Final[Mapping[str, tuple[Refusal, ...]]] = MappingProxyType(
    {
        "gcp:container/cluster:Cluster": (
            Refusal(
                "datapathProvider",
                "Dataplane V2, which GPUDirect's multi-networking needs, is set when the "
                f"cluster is created; gpufleet never recreates a running cluster for it "
                f"({_FABRIC_SOURCE})",
                _FABRIC_INSTEAD,
                trigger="added",
            ),
            Refusal(
                "enableMultiNetworking",
                "multi-networking needs Dataplane V2, which is set when the cluster is "
                f"created ({_FABRIC_SOURCE})",
                _FABRIC_INSTEAD,
                trigger="added",
            ),
        ),
    }
)
