"""An AKS cluster with Azure CNI overlay, workload identity, its System pool and a Kubernetes provider.

The System pool is the only pool inline in the `ManagedCluster` (and kept through the agent
pool API: components/azure/system_pool.py); GPU pools are separate `AgentPool` resources
(components/azure/gpu_pool.py), so a GPU pool change never touches the cluster resource.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import authorization, containerservice, managedidentity, resources
from pulumi_azure_native.provider import Provider as AzureProvider

from components.azure import credentials, network, system_pool
from components.azure.deployed import deployed_cluster
from components.azure.managed_cluster import managed_cluster
from components.azure.model import kinds
from components.azure.model.config import cluster_options
from components.azure.model.deployed import DeployedCluster
from components.azure.model.reservations import IDENTITY_ID, IDENTITY_KEY, grant_scopes
from components.azure.rbac import wait_for_propagation
from components.azure.reservation_groups import check_reservation_groups
from components.kubernetes.cluster import KubernetesProviders
from components.model.pools import PoolSpec
from components.model.schema import ClusterConfig, GpuPoolConfig, MaintenanceConfig

# Built-in role definition ids (the same in every tenant).
NETWORK_CONTRIBUTOR = "4d97b98b-1d4f-4787-a291-c67834d212e7"
AKS_RBAC_CLUSTER_ADMIN = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"
# What AKS asks for on the resource group that holds a capacity reservation group
# (learn.microsoft.com/azure/aks/use-capacity-reservation-groups, Prerequisites).
CONTRIBUTOR = "b24988ac-6180-42a0-ab88-20f7382dd24c"
# AKS's two planned-maintenance configurations (their names are fixed by AKS).
MAINTENANCE_CONFIGURATIONS = {
    "auto-upgrade": "aksManagedAutoUpgradeSchedule",
    "node-os": "aksManagedNodeOSUpgradeSchedule",
}


@dataclass(frozen=True)
class AksClusterArgs:
    config: ClusterConfig
    system_pool: PoolSpec
    # The stack's GPU pools as configured: the capacity reservation groups they name are
    # checked before anything is created, and the control plane's identity gets Contributor on
    # each group's resource group.
    gpu_pools: tuple[GpuPoolConfig, ...] = ()


class AksCluster(pulumi.ComponentResource):
    """The resource group, node subnet, cluster, role assignments and Kubernetes provider."""

    azure_provider: AzureProvider
    cluster: containerservice.ManagedCluster
    # The cluster as it runs (None before the first `up` creates it).
    deployed: DeployedCluster | None
    # The system pool through the agent pool API: the GPU pools' operations come after it.
    system_pool: resources.Deployment
    # The control plane's grants on the reservation groups' resource groups, by the resource
    # group's id in lower case (the pools that use a group come after them, and a pool created
    # into a group waits until its grant has propagated).
    reservation_grants: dict[str, authorization.RoleAssignment]
    resource_group_name: pulumi.Input[str]
    subnet_id: pulumi.Input[str]
    oidc_issuer_url: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    k8s_provider: k8s.Provider

    def __init__(
        self, name: str, args: AksClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:azure:Cluster", name, None, opts)
        cfg = args.config
        aks = cluster_options(cfg)
        location = cfg.region or ""
        tags = {"managed-by": "gpufleet", "gpufleet-cluster": cfg.name}
        self.azure_provider = AzureProvider(
            f"{name}-azure",
            location=location,
            subscription_id=aks.subscription_id,
            opts=pulumi.ResourceOptions(parent=self),
        )
        child = pulumi.ResourceOptions(parent=self, provider=self.azure_provider)
        protected = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(protect=cfg.protect))
        principal = self._read_what_exists(args)
        self.resource_group_name = network.resource_group(
            name, cfg.name, location, aks, tags, protected
        )
        self.subnet_id = network.node_subnet(
            name, cfg.name, location, self.resource_group_name, aks, tags, child
        )
        self.cluster = managed_cluster(
            name,
            cfg,
            self.resource_group_name,
            self.subnet_id,
            args.system_pool,
            tags,
            # Whether this `up` creates the cluster (the system pool's count is sent only then).
            creating=self.deployed is None,
            protected=protected,
        )
        self.system_pool = system_pool.system_pool_deployment(
            name,
            cfg.name,
            self.resource_group_name,
            args.system_pool,
            self.subnet_id,
            cfg.kubernetes_version,
            pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.cluster])),
            autoscaled=not kinds.auto_provisioning(cfg),
        )
        self.oidc_issuer_url = self.cluster.oidc_issuer_profile.apply(
            lambda profile: profile.issuer_url if profile else ""
        )
        self.reservation_grants = {}
        admin_grant = (
            self._role_assignments(name, args, principal, child) if aks.role_assignments else []
        )
        self._maintenance_windows(name, cfg.maintenance, child)
        self._kubernetes_access(name, cfg, admin_grant)
        self.register_outputs(
            {
                "clusterName": self.cluster.name,
                "fqdn": self.cluster.fqdn,
                "oidcIssuerUrl": self.oidc_issuer_url,
                "kubeconfig": self.kubeconfig,
            }
        )

    def _read_what_exists(self, args: AksClusterArgs) -> str | None:
        """What is read to refuse or to grant, before anything is created: the cluster as it
        runs, the reservation groups the pools name, and the principal of the control plane's
        user-assigned identity (for its grants; None without one or without grants)."""
        cfg = args.config
        aks = cluster_options(cfg)
        self.deployed = deployed_cluster(
            self,
            self.azure_provider,
            network.resource_group_name_of(cfg.name, aks),
            cfg,
            args.system_pool,
        )
        check_reservation_groups(cfg, args.gpu_pools, self, self.azure_provider)
        identity_id = aks.control_plane_identity_id
        return (
            _identity_principal(identity_id, self, self.azure_provider)
            if identity_id and aks.role_assignments
            else None
        )

    def _role_assignments(
        self,
        name: str,
        args: AksClusterArgs,
        principal: str | None,
        child: pulumi.ResourceOptions,
    ) -> list[authorization.RoleAssignment]:
        """Network Contributor on the subnet for the cluster (and Contributor on the resource
        groups of the reservation groups its pools use); Cluster Admin for the deployer.

        Returns the deployer's grant (the Kubernetes provider waits for it), if any.
        """
        client = authorization.get_client_config_output(
            opts=pulumi.InvokeOutputOptions(parent=self, provider=self.azure_provider)
        )

        def role(definition: str) -> pulumi.Output[str]:
            return client.subscription_id.apply(
                lambda subscription: (
                    f"/subscriptions/{subscription}/providers/"
                    f"Microsoft.Authorization/roleDefinitions/{definition}"
                )
            )

        # The cluster identity manages load balancers and node NICs in the node subnet. A
        # user-assigned identity's principal is known before the cluster; a system-assigned one
        # exists only with it.
        control_plane: pulumi.Input[str] = principal or self.cluster.identity.apply(
            lambda identity: identity.principal_id if identity else ""
        )
        options = cluster_options(args.config)
        # Grants that exist already are not made again: ARM refuses a second one (grants.py).
        made_elsewhere = options.grants_made_elsewhere
        # Kept in Azure when they leave the stack: ARM holds one assignment per principal, role
        # and scope, so handing one over (grantsMadeElsewhere) must not revoke the only grant
        # the running cluster uses (review aks-4.md A4-3). docs/aks.md says how to remove them.
        kept = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(retain_on_delete=True))
        if "subnet" not in made_elsewhere:
            authorization.RoleAssignment(
                f"{name}-subnet-network-contributor",
                principal_id=control_plane,
                principal_type="ServicePrincipal",
                role_definition_id=role(NETWORK_CONTRIBUTOR),
                scope=self.subnet_id,
                opts=kept,
            )
        # AKS places a pool's VMs in a reservation group as the control plane's identity.
        self.reservation_grants = {
            scope.lower(): authorization.RoleAssignment(
                f"{name}-reservations-{scope.rsplit('/', 1)[-1].lower()}",
                principal_id=control_plane,
                principal_type="ServicePrincipal",
                role_definition_id=role(CONTRIBUTOR),
                scope=scope,
                opts=kept,
            )
            for scope in grant_scopes(args.gpu_pools)
            if "reservation-groups" not in made_elsewhere
        }
        if options.authentication != "entra-id":
            return []
        # Unset, the grant goes to whoever runs the first `up` and stays theirs (no churn when
        # a teammate or CI runs later: give those identities an admin group, or pin the grantee
        # with deployerObjectId); principalType is sent only when configured, since ARM works
        # it out for an existing principal and refuses a wrong one (UnmatchedPrincipalType).
        ignored = [] if options.deployer_object_id else ["principalId"]
        if options.deployer_principal_type is None:
            ignored.append("principalType")
        return [
            authorization.RoleAssignment(
                f"{name}-deployer-cluster-admin",
                principal_id=options.deployer_object_id or client.object_id,
                # The SDK turns None into "User"; an output of None is sent as nothing.
                principal_type=options.deployer_principal_type or pulumi.Output.from_input(None),
                role_definition_id=role(AKS_RBAC_CLUSTER_ADMIN),
                scope=self.cluster.id,
                opts=pulumi.ResourceOptions.merge(
                    child, pulumi.ResourceOptions(ignore_changes=ignored)
                ),
            )
        ]

    def _maintenance_windows(
        self, name: str, window: MaintenanceConfig, child: pulumi.ResourceOptions
    ) -> None:
        """AKS's patch and node-image upgrades start only inside the weekly window: without it
        the NodeImage channel reimages GPU nodes at any hour (review aks.md P5)."""
        for suffix, config_name in MAINTENANCE_CONFIGURATIONS.items():
            containerservice.MaintenanceConfiguration(
                f"{name}-maintenance-{suffix}",
                resource_group_name=self.resource_group_name,
                resource_name_=self.cluster.name,
                config_name=config_name,
                maintenance_window=containerservice.MaintenanceWindowArgs(
                    schedule=containerservice.ScheduleArgs(
                        weekly=containerservice.WeeklyScheduleArgs(
                            day_of_week=window.day, interval_weeks=1
                        )
                    ),
                    duration_hours=window.duration_hours,
                    start_time=window.start_time,
                    utc_offset="+00:00",
                ),
                opts=child,
            )

    def _kubernetes_access(
        self,
        name: str,
        cfg: ClusterConfig,
        admin_grant: list[authorization.RoleAssignment],
    ) -> None:
        """The API server, its CA, the kubeconfig and the Kubernetes providers (after the
        deployer's grant, when Azure RBAC needs one)."""
        aks = cluster_options(cfg)
        access = user_access(
            self,
            self.azure_provider,
            self.resource_group_name,
            # The output (not the config name) so the call waits for the cluster to exist.
            self.cluster.name,
            cfg.name,
            kubelogin_mode=aks.kubelogin_mode if aks.authentication == "entra-id" else None,
        )
        self.server, self.certificate_authority = access.server, access.certificate_authority
        # The Kubernetes provider uses the API only once Azure RBAC knows the deployer's grant.
        self.kubeconfig = wait_for_propagation(access.kubeconfig, admin_grant)
        self.k8s_providers = KubernetesProviders(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # The cluster (its ARM id), not its API server or CA: a new endpoint or CA updates the
            # provider instead of replacing everything it manages (review gke-2.md N1).
            cluster_identifier=self.cluster.id,
            # With Azure RBAC the deployer may use the API only once its role is granted.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.cluster, *admin_grant]),
        )
        self.k8s_provider = self.k8s_providers.main


def _identity_principal(identity_id: str, parent: pulumi.Resource, provider: AzureProvider) -> str:
    """The principal id of the control plane's user-assigned identity; stops the program when
    the identity cannot be read (the cluster could not use it either)."""
    found = IDENTITY_ID.fullmatch(identity_id)
    assert found is not None  # the config checks refuse any other value
    try:
        identity = managedidentity.get_user_assigned_identity(
            resource_group_name=found["group"],
            resource_name=found["name"],
            opts=pulumi.InvokeOptions(parent=parent, provider=provider),
        )
    except Exception as error:  # the provider's message says why (not found, no access)
        raise pulumi.RunError(
            f"{IDENTITY_KEY}: cannot read identity {found['name']} in resource group "
            f"{found['group']} ({error}); create it (az identity create) or fix the id "
            f"(got {identity_id!r})"
        ) from None
    return identity.principal_id


@dataclass(frozen=True)
class UserAccess:
    server: pulumi.Output[str]
    certificate_authority: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]


def user_access(
    parent: pulumi.Resource,
    provider: AzureProvider,
    resource_group_name: pulumi.Input[str],
    resource_name: pulumi.Input[str],
    cluster_name: str,
    kubelogin_mode: str | None,
) -> UserAccess:
    """The cluster's API server and the Kubernetes provider's kubeconfig from its user
    credentials: kubelogin with `kubelogin_mode` on an Entra ID cluster (None: AKS's static
    client certificate)."""
    user_credentials = containerservice.list_managed_cluster_user_credentials_output(
        resource_group_name=resource_group_name,
        resource_name=resource_name,
        format="exec" if kubelogin_mode else None,
        opts=pulumi.InvokeOutputOptions(parent=parent, provider=provider),
    )
    document = user_credentials.kubeconfigs.apply(
        lambda kubeconfigs: credentials.decode(kubeconfigs[0].value)
    )
    endpoint = document.apply(credentials.server_and_ca)
    if kubelogin_mode:
        mode = kubelogin_mode
        document = document.apply(
            lambda text: credentials.kubelogin_kubeconfig(text, cluster_name, mode)
        )
    return UserAccess(
        server=endpoint.apply(lambda parts: parts[0]),
        certificate_authority=endpoint.apply(lambda parts: parts[1]),
        kubeconfig=pulumi.Output.secret(document),
    )
