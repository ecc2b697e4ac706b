"""AKS's own config keys: `cluster.azure` and `gpuPools[].azure`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from components.model.problems import Problem
from components.model.schema import (
    CloudSoftwareKeys,
    ClusterConfig,
    ConfigModel,
    GpuPoolConfig,
    GpuSoftwareConfig,
    SoftwareMode,
    section,
)


class AksSoftwareOptions(CloudSoftwareKeys):
    """AKS's own key of `gpuSoftware`, written `gpuSoftware.operatorDriver`."""

    # With the GPU Operator: let the operator install the driver (pools get driver None).
    operator_driver: bool = False

    def misplaced(self, cloud: str, mode: SoftwareMode) -> list[Problem]:
        if self.operator_driver and (cloud, mode) != ("azure", "gpu-operator"):
            return [
                Problem(
                    "gpuSoftware.operatorDriver",
                    "only applies to azure with mode gpu-operator",
                    self.operator_driver,
                )
            ]
        return []


def software_options(software: GpuSoftwareConfig) -> AksSoftwareOptions:
    """AKS's keys of `gpuSoftware` (their defaults when unset)."""
    if not isinstance(software, AksSoftwareOptions):
        raise TypeError(f"{type(software).__name__} lacks AKS's gpuSoftware keys")
    return software


class AzurePoolOptions(ConfigModel):
    # The capacity reservation group the pool's VMs are placed in (`capacity: [reserved,
    # on-demand]`, or `reserved`): its full ARM id. Fixed when AKS creates the pool.
    capacity_reservation_group_id: str | None = None
    # How many VMs of the pool's size the group reserves for this pool, where you know it:
    # `fit` names it as the pool's cap, `plan` prices the unused ones, and `capacity: reserved`
    # alone needs maxNodes within it.
    reserved_nodes: int | None = Field(default=None, ge=1)


class AzureClusterOptions(ConfigModel):
    # What makes the GPU nodes: agent pools the cluster autoscaler scales from zero (one VM size
    # each), or AKS node auto-provisioning (AKS's managed Karpenter: the cluster's
    # nodeProvisioningProfile in Auto mode, a NodePool and an AKSNodeClass per GPU pool, Spot
    # then on-demand in one pool). Agent pools by default: every running stack keeps them.
    provisioner: Literal["cluster-autoscaler", "node-auto-provisioning"] = "cluster-autoscaler"
    # The subscription every resource goes to; unset: ARM_SUBSCRIPTION_ID or the az CLI default.
    subscription_id: str | None = None
    # An existing resource group / node subnet (full resource id); otherwise gpufleet creates them.
    resource_group_name: str | None = None
    vnet_subnet_id: str | None = None
    vnet_cidr: str = "10.224.0.0/12"
    subnet_cidr: str = "10.224.0.0/16"
    # Azure CNI overlay: pods get IPs from pod_cidr, outside the VNet (fixed at creation).
    pod_cidr: str = "10.244.0.0/16"
    service_cidr: str = "10.0.0.0/16"
    dns_service_ip: str = "10.0.0.10"
    autoscaler_expander: Literal["least-waste", "most-pods", "priority", "random"] = "least-waste"
    scale_down_unneeded_time: str = "10m"
    scale_down_delay_after_add: str = "10m"
    # Free has no uptime SLA; production stacks use Standard.
    sku_tier: Literal["Free", "Standard", "Premium"] = "Free"
    # Source ranges allowed to reach the API server: required (AKS's default admits anyone).
    api_server_authorized_cidrs: list[str] | None = None
    # entra-id: Entra ID sign-in, Azure RBAC, local accounts disabled (short-lived tokens via
    # kubelogin). local-accounts: AKS's static client certificate (no Entra ID needed).
    authentication: Literal["entra-id", "local-accounts"] = "entra-id"
    # local-accounts in a production stack on purpose: the policy pack then accepts it (plan
    # warns either way; components/azure/model/cluster_checks.py).
    allow_local_accounts: bool = False
    # How kubelogin signs in for the Kubernetes provider (entra-id): the az CLI login, a workload
    # identity / service principal / managed identity from the environment, or azd.
    kubelogin_mode: Literal["azurecli", "workloadidentity", "spn", "msi", "azd"] = "azurecli"
    # Entra ID groups granted cluster-admin (entra-id).
    admin_group_object_ids: list[str] = Field(default_factory=list)
    # The principal that gets AKS RBAC Cluster Admin so gpufleet's Kubernetes provider can work
    # (entra-id): unset, whoever runs the first `up`, kept theirs afterwards (other identities
    # that run `up` belong in adminGroupObjectIds); set it to the CI identity's object id to
    # hand the grant over (it is replaced once).
    deployer_object_id: str | None = None
    # Its Entra ID type, sent only when set: ARM works it out for an existing principal and
    # refuses a wrong one (UnmatchedPrincipalType), so gpufleet guesses none.
    deployer_principal_type: Literal["User", "ServicePrincipal", "Group"] | None = None
    # Create the role assignments AKS needs: Network Contributor on the node subnet for the
    # cluster identity and AKS RBAC Cluster Admin for the deploying principal (entra-id). Needs
    # Owner or User Access Administrator; set false when an administrator creates them.
    role_assignments: bool = True
    # Control-plane grants that exist already (made by an administrator, by AKS's prerequisite
    # steps or by another stack): gpufleet creates the others only, since ARM refuses a second
    # assignment of a role to a principal at a scope (model/grants.py).
    grants_made_elsewhere: list[Literal["subnet", "reservation-groups"]] = Field(
        default_factory=list
    )
    # A user-assigned managed identity for the control plane (its full ARM id), which AKS needs
    # to place pools in a capacity reservation group (a system-assigned one does not work);
    # unset: AKS's system-assigned identity. Fixed at creation (gpufleet does not move a running
    # cluster to another identity).
    control_plane_identity_id: str | None = None


def cluster_options(cluster: ClusterConfig) -> AzureClusterOptions:
    return section(cluster, "azure", AzureClusterOptions)


def pool_options(pool: GpuPoolConfig) -> AzurePoolOptions:
    return section(pool, "azure", AzurePoolOptions)
