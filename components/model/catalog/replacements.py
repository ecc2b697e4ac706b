"""Which input changes make a provider *replace* a resource instead of updating it in place.

Pure data. ``components.tooling.diff`` uses it to warn, before ``pulumi up``, that a
change deletes and recreates a resource. For a GPU node pool that means every node, and every
pod on it, goes away; for a cluster it means everything.

Paths are dotted camelCase, written the way Pulumi sends the inputs (the keys of ``inputs`` in
the ``python -m components plan --json`` document). A table path matches a changed property
when the changed property equals it or lies under it: ``nodeConfig.guestAccelerators`` matches
a change of ``nodeConfig.guestAccelerators`` and of anything inside it. Paths never reach into
lists; a list is one value at its path.

Each cloud keeps its table in its folder (``components/<cloud>/model/change_rules.py``,
``REPLACEMENT_PATHS``) and hands it over through ``Cloud.resource_knowledge``; the Kubernetes
table, shared by every cloud, is here. ``components.model.resource_index.replacement_paths``
looks a type up in all of them.

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

# The Kubernetes object identity: pulumi-kubernetes ``metadataForceNewProperties``.
_K8S_METADATA: Final[tuple[str, ...]] = ("metadata.name", "metadata.namespace")

KUBERNETES_REPLACEMENT_PATHS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
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


def unlisted_replacement_paths(type_token: str) -> tuple[str, ...]:
    """The input paths whose change replaces a resource of a type no table lists.

    ``()`` (no warning) rather than a guess, except for Kubernetes objects, which
    pulumi-kubernetes always replaces when their name or namespace changes.
    """
    if type_token.startswith("kubernetes:") and not type_token.startswith(_K8S_NON_OBJECT_PREFIXES):
        return _K8S_METADATA
    return ()


def path_matches(table_path: str, changed_path: str) -> bool:
    """True when ``changed_path`` equals ``table_path`` or lies under it (dotted paths)."""
    return changed_path == table_path or changed_path.startswith(table_path + ".")
