"""Which input changes make a provider *replace* a resource instead of updating it in place.

Pure data plus one lookup. ``components.tooling.diff`` uses it to warn, before ``pulumi up``, that a
change deletes and recreates a resource. For a GPU node pool that means every node, and every
pod on it, goes away; for a cluster it means everything.

Paths are dotted camelCase, written the way Pulumi sends the inputs (the keys of ``inputs`` in
the ``python -m components plan --json`` document). A table path matches a changed property
when the changed property equals it or lies under it: ``nodeConfig.guestAccelerators`` matches
a change of ``nodeConfig.guestAccelerators`` and of anything inside it. Paths never reach into
lists; a list is one value at its path.

Where the facts come from (checked 2026 against the sources named per type; re-check them on a
provider major upgrade, since providers move fields between "replace" and "update in place"):

* pulumi-gcp and pulumi-aws are Terraform bridges, so a replacement is a ``ForceNew`` field in
  terraform-provider-google (schema in GoogleCloudPlatform/magic-modules,
  ``mmv1/third_party/terraform/services/container/``) or terraform-provider-aws
  (``internal/service/...``). A ForceNew flag on a *block* only fires when the block is added
  or removed, so blocks whose children are updatable are listed child by child.
* pulumi-azure-native replaces on a changed URL path parameter (the resource ID changes) and on
  the per-resource list in ``provider/pkg/gen/replacement.go`` (``forceNewMap``).
* pulumi-kubernetes replaces on ``metadata.name``/``metadata.namespace`` of every object and on
  the per-kind list in ``provider/pkg/provider/forcenew.go``; Helm releases on ``name`` and
  ``namespace`` (``helm_release.go``, ``forceNewFields``).

Deliberately *absent* (they update in place, so a warning would be noise):

* GKE node pool ``nodeConfig.machineType``/``diskSizeGb``/``diskType`` (updatable since
  terraform-provider-google 5.10, magic-modules PR 9575: GKE rolls the nodes through a
  surge/blue-green upgrade, the pool stays), ``nodeConfig.taints``/``labels``/``tags``,
  ``nodeLocations``, ``autoscaling``, ``version``.
* EKS cluster ``vpcConfig.subnetIds``/``securityGroupIds`` (updatable since
  terraform-provider-aws 5.25.0, issue 34090), EKS node group ``labels``/``taints``/
  ``scalingConfig``/``launchTemplate.version``.
* AKS agent pool ``nodeTaints``/``nodeLabels``/``count``/``minCount``/``maxCount``: the AKS API
  updates them in place (learn.microsoft.com/azure/aks/use-node-taints: node taints "can only be
  added, updated, or removed completely using the AKS API"; azurerm's node pool has no ForceNew
  on ``node_taints``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

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


# The Kubernetes object identity: pulumi-kubernetes ``metadataForceNewProperties``.
_K8S_METADATA: Final[tuple[str, ...]] = ("metadata.name", "metadata.namespace")

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
        # resourcemanager/resource_google_project_service.go: `service` and `project` ForceNew
        # (image streaming's API; never disabled on delete, so a replacement is harmless).
        "gcp:projects/service:Service": ("project", "service"),
        # resourcemanager/resource_google_service_account.go: `account_id` and `project`.
        "gcp:serviceaccount/account:Account": ("accountId", "project"),
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
        # pulumi-kubernetes helm_release.go: ``forceNewFields := []string{".name", ".namespace"}``.
        "kubernetes:helm.sh/v3:Release": ("name", "namespace"),
        # pulumi-kubernetes forcenew.go, per kind (plus the metadata identity of every object).
        "kubernetes:batch/v1:Job": (*_K8S_METADATA, "spec.selector", "spec.template"),
        "kubernetes:apps/v1:Deployment": (*_K8S_METADATA, "spec.selector"),
        "kubernetes:apps/v1:StatefulSet": (
            *_K8S_METADATA,
            "spec.podManagementPolicy",
            "spec.revisionHistoryLimit",
            "spec.selector",
            "spec.serviceName",
            "spec.volumeClaimTemplates",
        ),
        "kubernetes:core/v1:ConfigMap": (*_K8S_METADATA, "binaryData", "data"),
        "kubernetes:core/v1:Secret": (*_K8S_METADATA, "data", "stringData", "type"),
        "kubernetes:core/v1:Service": (*_K8S_METADATA, "spec.clusterIP", "spec.type"),
        "kubernetes:storage.k8s.io/v1:StorageClass": (*_K8S_METADATA, "parameters", "provisioner"),
    }
)

# Pulumi types that are not Kubernetes objects although their token starts with "kubernetes:":
# component resources (Chart, ConfigFile, ...) and Helm releases, which have no ``metadata``.
_K8S_NON_OBJECT_PREFIXES: Final[tuple[str, ...]] = (
    "kubernetes:helm.sh/",
    "kubernetes:kustomize",
    "kubernetes:yaml",
)


def replacement_paths(type_token: str) -> tuple[str, ...]:
    """Return the input paths whose change replaces a resource of ``type_token``.

    Unknown types return ``()`` (no warning) rather than guessing, except Kubernetes objects
    not in the table, which pulumi-kubernetes always replaces when their name or namespace
    changes.
    """
    paths = REPLACEMENT_PATHS.get(type_token)
    if paths is not None:
        return paths
    if type_token.startswith("kubernetes:") and not type_token.startswith(_K8S_NON_OBJECT_PREFIXES):
        return _K8S_METADATA
    return ()


def path_matches(table_path: str, changed_path: str) -> bool:
    """True when ``changed_path`` equals ``table_path`` or lies under it (dotted paths)."""
    return changed_path == table_path or changed_path.startswith(table_path + ".")
