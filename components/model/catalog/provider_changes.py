"""What a change of an explicit provider does to the provider and to the resources it manages:
data for `diff`.

A resource managed by an explicit provider is replaced when that provider is replaced, whatever
its own inputs say (the engine's "replace because the provider changed"). Two providers
gpufleet uses decide this from their own inputs:

* **pulumi-kubernetes** (``DiffConfig``, provider/pkg/provider/provider.go, pulumi-kubernetes
  4.16+, pinned 4.34.2): with ``clusterIdentifier`` set to the same value before and after, the
  provider is never replaced (every other change is an update); set before and after to
  different values, it is replaced. Added, removed or absent, the old rule applies: the
  provider is replaced when the kubeconfig's *active cluster* changes (the ``clusters[]`` entry
  of the current context: server, CA data, ...; provider/pkg/provider/util.go
  ``getActiveClusterFromConfig``), and always when ``renderYamlToDirectory`` changes.
  Adding ``clusterIdentifier`` alone therefore replaces nothing. Replacing the provider
  replaces every Helm release, namespace and object it manages (pulumi/pulumi-kubernetes#4019,
  closed as intended behaviour). The plan masks the kubeconfig as a secret, so the engine
  records its active cluster as ``kubeconfigActiveCluster`` (server and a sha256 of the
  entry) for this rule.
* **pulumi-gcp** (a bridge of terraform-provider-google): most resources take their project
  from the provider when they name none, and TPG's ``tpgresource.DefaultProviderProject``
  customize-diff (google/tpgresource/utils.go) sets ``project`` to the provider's new project
  in the plan, where it is ForceNew: those resources are recreated in the new project. The
  cluster resource has no such customize-diff (resource_container_cluster.go): it keeps its
  old project until another change (a new network) replaces it.

What a cloud's provider does (the second kind) is kept in the cloud's folder
(``components/<cloud>/model/change_rules.py``: ``MOVES_MANAGED_RESOURCES``, ``MOVES_SOURCE``,
``MOVES_NOTE``, ``MANAGED_DOWNTIME``); the Kubernetes provider's rule is here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

KUBERNETES_PROVIDER: Final = "pulumi:providers:kubernetes"
CLUSTER_IDENTIFIER: Final = "clusterIdentifier"
# The engine's name for the kubeconfig's active cluster in a plan (components/tooling/engine.py).
ACTIVE_CLUSTER: Final = "kubeconfigActiveCluster"
# pulumi-kubernetes replaces on these whatever the active cluster (without a same identifier).
KUBERNETES_ALWAYS_REPLACES: Final[tuple[str, ...]] = ("renderYamlToDirectory",)

# What goes down when a provider's resources are replaced with it (the verdict line).
MANAGED_DOWNTIME: Final[Mapping[str, str]] = MappingProxyType(
    {
        KUBERNETES_PROVIDER: (
            "its Kubernetes provider is replaced, and with it every Helm release, namespace and "
            "object it manages, against the same cluster: the GPU software is uninstalled and "
            "installed again, and a release created before the old one is deleted meets its "
            "name still in use (`cannot re-use a name that is still in use`)"
        ),
    }
)
