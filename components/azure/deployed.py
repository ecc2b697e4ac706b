"""The stack's own AKS cluster as it runs, read while the program plans (None before it exists).

Two things depend on it: which agent pools exist (an existing pool gets no `count`, so `pulumi
up` never sends a node count the autoscaler has since changed; components/azure/gpu_pool.py),
and the refusals AKS would answer to this change (components/azure/model/deployed.py).
"""

from __future__ import annotations

import re
from typing import Any

import pulumi
from pulumi_azure_native import containerservice
from pulumi_azure_native.provider import Provider as AzureProvider

from components.azure.model.deployed import (
    DeployedCluster,
    DeployedClusterError,
    FixedAtCreation,
    deployed_problems,
)
from components.model.pool_spec import PoolSpec
from components.model.schema import ClusterConfig

# ARM's answers for a cluster, or its resource group, that does not exist (yet): ResourceNotFound
# "... was not found", ResourceGroupNotFound "Resource group '...' could not be found".
_NOT_FOUND = re.compile(r"not ?found|could not be found", re.IGNORECASE)


def deployed_cluster(
    parent: pulumi.Resource,
    provider: AzureProvider,
    resource_group_name: str,
    cluster: ClusterConfig,
    system: PoolSpec | None = None,
) -> DeployedCluster | None:
    """The running cluster (None: not created yet); stops the program on a change AKS refuses
    (of the cluster, or of its resolved `system` pool)."""
    try:
        found = containerservice.get_managed_cluster(
            resource_group_name=resource_group_name,
            resource_name=cluster.name,
            opts=pulumi.InvokeOptions(parent=parent, provider=provider),
        )
    except Exception as error:  # the provider's message says why
        if _NOT_FOUND.search(str(error)):
            return None
        raise pulumi.RunError(
            f"cannot read AKS cluster {cluster.name} in resource group {resource_group_name} "
            f"(gpufleet reads it to send no stale node count and to refuse what AKS would): "
            f"{error}"
        ) from None
    deployed = deployed_of(found)
    problems = deployed_problems(deployed, cluster, system)
    if problems:
        raise pulumi.RunError(DeployedClusterError(cluster.name, problems).render())
    return deployed


def deployed_of(found: Any) -> DeployedCluster:
    aad = found.aad_profile
    return DeployedCluster(
        name=found.name,
        kubernetes_version=found.current_kubernetes_version or found.kubernetes_version or "",
        entra_id=bool(aad is not None and aad.managed),
        pools=pools_of(found.agent_pool_profiles),
        control_plane_identity_id=control_plane_identity_of(found.identity),
    )


def control_plane_identity_of(identity: Any) -> str | None:
    """The cluster's user-assigned control-plane identity, lowercased (None: system-assigned).
    The lookup returns `userAssignedIdentities` as a map keyed by the identities' ids."""
    if identity is None or getattr(identity, "type", None) != "UserAssigned":
        return None
    assigned = getattr(identity, "user_assigned_identities", None) or {}
    return next((str(key).lower() for key in assigned), None)


def pools_of(profiles: Any) -> dict[str, FixedAtCreation]:
    """Each agent pool of a looked-up cluster, by name, with what AKS fixed at its creation."""
    pools = {}
    for profile in profiles or ():
        gpu = getattr(profile, "gpu_profile", None)
        pools[profile.name] = FixedAtCreation(
            vm_size=str(getattr(profile, "vm_size", "") or ""),
            os_disk_size_gb=getattr(profile, "os_disk_size_gb", None),
            spot=getattr(profile, "scale_set_priority", None) == "Spot",
            zones=tuple(sorted(getattr(profile, "availability_zones", None) or ())),
            gpu_instance_profile=getattr(profile, "gpu_instance_profile", None),
            driver=getattr(gpu, "driver", None),
            capacity_reservation_group_id=_lower(
                getattr(profile, "capacity_reservation_group_id", None)
            ),
        )
    return pools


def _lower(value: str | None) -> str | None:
    return value.lower() if value else None
