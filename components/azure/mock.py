"""AKS outputs the program reads: ids, the cluster identity and OIDC issuer, and kubeconfigs,
in the stack's location (`World.region`).

Resource ids follow Azure's `/subscriptions/<id>/resourceGroups/<rg>/providers/...` shape so the
recorded inputs that carry them (subnet ids, role assignment scopes) look like the real ones.
The user-credentials call answers like AKS: a base64 kubeconfig, with a kubelogin exec user
when asked for `format: exec` (Entra ID clusters) and a client certificate otherwise.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import yaml

from components.azure.model import kinds
from components.azure.model.catalog import CATALOG
from components.mock_world import CloudMock, NotFound, World

SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
TENANT = "11111111-1111-1111-1111-111111111111"
DEPLOYER_OBJECT_ID = "22222222-2222-2222-2222-222222222222"
CLUSTER_PRINCIPAL_ID = "33333333-3333-3333-3333-333333333333"
KUBELET_CLIENT_ID = "44444444-4444-4444-4444-444444444444"
KUBELET_OBJECT_ID = "55555555-5555-5555-5555-555555555555"
# A user-assigned control-plane identity's principal and client ids.
IDENTITY_PRINCIPAL_ID = "66666666-6666-6666-6666-666666666666"
IDENTITY_CLIENT_ID = "77777777-7777-7777-7777-777777777777"
# The AKS Entra ID server application, as AKS writes it into exec kubeconfigs.
AKS_SERVER_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"
FAKE_CA = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMOCK AKS CA\n-----END CERTIFICATE-----\n")
# A rotated control plane (World.endpoint_rotated): another API server host and CA.
ROTATED = (
    ("-mock.hcp.", "-rotated.hcp."),
    (
        FAKE_CA.decode(),
        base64.b64encode(
            b"-----BEGIN CERTIFICATE-----\nROTATED\n-----END CERTIFICATE-----\n"
        ).decode(),
    ),
)
FAKE_CLIENT = base64.b64encode(b"MOCK CLIENT CERT OR KEY")
# The location when the world names none (a stack always does: cluster.region is required).
LOCATION = "eastus2"


def _location(world: World) -> str:
    return world.region or LOCATION


def _rg_id(rg: Any) -> str:
    return f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{rg}"


def _resource_group(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    rg = inputs.get("resourceGroupName", name)
    return {"__id": _rg_id(rg), "name": rg}


def _virtual_network(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    vnet = inputs.get("virtualNetworkName", name)
    net_id = f"{_rg_id(inputs.get('resourceGroupName'))}/providers/Microsoft.Network/virtualNetworks/{vnet}"
    return {"__id": net_id, "id": net_id, "name": vnet}


def _subnet(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    subnet = inputs.get("subnetName", name)
    subnet_id = (
        f"{_rg_id(inputs.get('resourceGroupName'))}/providers/Microsoft.Network/virtualNetworks/"
        f"{inputs.get('virtualNetworkName')}/subnets/{subnet}"
    )
    return {"__id": subnet_id, "id": subnet_id, "name": subnet}


def _identity(identity_id: str | None) -> dict[str, Any]:
    """A cluster's `identity` as ARM reports it: user-assigned (keyed by the identity's id) or
    system-assigned."""
    if identity_id:
        return {
            "type": "UserAssigned",
            "userAssignedIdentities": {
                identity_id: {"principalId": IDENTITY_PRINCIPAL_ID, "clientId": IDENTITY_CLIENT_ID}
            },
        }
    return {"type": "SystemAssigned", "principalId": CLUSTER_PRINCIPAL_ID, "tenantId": TENANT}


def _managed_cluster(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    cluster = inputs.get("resourceName", name)
    rg = inputs.get("resourceGroupName")
    location = inputs.get("location") or _location(world)
    cluster_id = f"{_rg_id(rg)}/providers/Microsoft.ContainerService/managedClusters/{cluster}"
    return {
        "__id": cluster_id,
        "id": cluster_id,
        "name": cluster,
        "fqdn": f"{inputs.get('dnsPrefix', cluster)}-mock.hcp.{location}.azmk8s.io",
        "nodeResourceGroup": f"MC_{rg}_{cluster}_{location}",
        "identity": _identity(
            next(iter((inputs.get("identity") or {}).get("userAssignedIdentities") or []), None)
        ),
        "identityProfile": {
            "kubeletidentity": {
                "clientId": KUBELET_CLIENT_ID,
                "objectId": KUBELET_OBJECT_ID,
                "resourceId": f"{_rg_id(f'MC_{rg}_{cluster}_{location}')}/providers/"
                f"Microsoft.ManagedIdentity/userAssignedIdentities/{cluster}-agentpool",
            }
        },
        "oidcIssuerProfile": {
            "enabled": True,
            "issuerURL": f"https://{location}.oic.prod-aks.azure.com/{TENANT}/mock/",
        },
    }


def _agent_pool(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    pool = inputs.get("agentPoolName", name)
    pool_id = (
        f"{_rg_id(inputs.get('resourceGroupName'))}/providers/Microsoft.ContainerService/"
        f"managedClusters/{inputs.get('resourceName')}/agentPools/{pool}"
    )
    return {"__id": pool_id, "id": pool_id, "name": pool}


def _role_assignment(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    assignment_id = (
        f"{inputs.get('scope')}/providers/Microsoft.Authorization/roleAssignments/{name}"
    )
    created = {"createdOn": world.grants_created_on} if world.grants_created_on else {}
    return {"__id": assignment_id, "id": assignment_id, **created}


def _user_credentials(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    cluster = str(args.get("resourceName", "cluster"))
    server = f"https://{cluster}-mock.hcp.{_location(world)}.azmk8s.io:443"
    user: dict[str, Any]
    if args.get("format") == "exec":
        user = {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": "kubelogin",
                "args": [
                    "get-token",
                    "--login",
                    "devicecode",
                    "--server-id",
                    AKS_SERVER_ID,
                    "--client-id",
                    "80faf920-1908-4b52-b5ef-a8e7bedfc67a",
                    "--tenant-id",
                    TENANT,
                    "--environment",
                    "AzurePublicCloud",
                ],
                "interactiveMode": "IfAvailable",
                "provideClusterInfo": False,
            }
        }
    else:
        user = {
            "client-certificate-data": FAKE_CLIENT.decode(),
            "client-key-data": FAKE_CLIENT.decode(),
            "token": "mock-static-token",
        }
    user_name = f"clusterUser_{args.get('resourceGroupName')}_{cluster}"
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster,
                "cluster": {"server": server, "certificate-authority-data": FAKE_CA.decode()},
            }
        ],
        "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": user_name}}],
        "current-context": cluster,
        "users": [{"name": user_name, "user": user}],
    }
    encoded = base64.b64encode(yaml.safe_dump(document).encode()).decode()
    return {"kubeconfigs": [{"name": "clusterUser", "value": encoded}]}


def _client_config(args: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "clientId": "44444444-4444-4444-4444-444444444444",
        "objectId": DEPLOYER_OBJECT_ID,
        "subscriptionId": SUBSCRIPTION,
        "tenantId": TENANT,
    }


RESOURCES = {
    "azure-native:resources:ResourceGroup": _resource_group,
    "azure-native:network:VirtualNetwork": _virtual_network,
    "azure-native:network:Subnet": _subnet,
    "azure-native:containerservice:ManagedCluster": _managed_cluster,
    "azure-native:containerservice:AgentPool": _agent_pool,
    "azure-native:authorization:RoleAssignment": _role_assignment,
}
CALLS = {
    "azure-native:authorization:getClientConfig": _client_config,
}


def _get_managed_cluster(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    """An AKS cluster (Entra ID, Azure CNI Overlay on a custom VNet unless the world says
    otherwise), as `get_managed_cluster` returns it."""
    if not world.exists:
        raise NotFound(f"cluster {args.get('name') or args.get('resourceName')} not found")
    rg, cluster = args.get("resourceGroupName"), str(args.get("resourceName", "cluster"))
    location = _location(world)
    subnet_id = (
        f"{_rg_id(rg)}/providers/Microsoft.Network/virtualNetworks/{cluster}-vnet/subnets/nodes"
    )
    system: dict[str, Any] = {
        "name": "system",
        "mode": "System",
        "vmSize": "Standard_D4s_v5",
        "vnetSubnetID": subnet_id,
        "maxPods": 250 if world.network_plugin_mode == "overlay" else 110,
    }
    if world.pod_subnet:
        system["podSubnetID"] = subnet_id.replace("/subnets/nodes", "/subnets/pods")
    pools = [dict(p) for p in world.agent_pools] if world.agent_pools is not None else [system]
    for pool in pools:
        pool.setdefault("orchestratorVersion", world.kubernetes_version)
        pool.setdefault("currentOrchestratorVersion", world.kubernetes_version)
        pool.setdefault("count", pool.get("minCount", 1))
    network: dict[str, Any] = {"networkPlugin": world.network_plugin}
    if world.network_plugin_mode:
        network["networkPluginMode"] = world.network_plugin_mode
    azure = (world.stack.get("cluster") or {}).get("azure") or {}
    identity_id = world.control_plane_identity_id or azure.get("controlPlaneIdentityId")
    return {
        **_managed_cluster(cluster, {"resourceName": cluster, "resourceGroupName": rg}, world),
        "identity": _identity(identity_id),
        "location": location,
        "kubernetesVersion": world.kubernetes_version,
        "currentKubernetesVersion": world.kubernetes_version,
        **(
            {"aadProfile": {"managed": True, "enableAzureRBAC": True, "tenantID": TENANT}}
            if world.entra_id
            else {}
        ),
        "disableLocalAccounts": world.entra_id,
        "enableRBAC": True,
        "agentPoolProfiles": pools,
        "networkProfile": network,
        "autoScalerProfile": {"skip-nodes-with-local-storage": "false"},
        # The cluster runs what the stack's provisioner expects (a mismatch is the pure check's
        # test: tests/test_aks_node_auto_provisioning.py).
        "nodeProvisioningProfile": {"mode": kinds.provisioning_mode(azure.get("provisioner"))},
        "autoUpgradeProfile": {
            "upgradeChannel": "patch",
            "nodeOSUpgradeChannel": world.node_os_channel,
        },
    }


def _get_maintenance_configuration(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    if not world.maintenance_window:
        raise NotFound(f"maintenance configuration {args.get('configName')} not found")
    return {
        "name": args.get("configName"),
        "maintenanceWindow": {"durationHours": 12, "startTime": "02:00", "utcOffset": "+00:00"},
    }


def _get_virtual_network(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    name = args.get("virtualNetworkName")
    net_id = f"{_rg_id(args.get('resourceGroupName'))}/providers/Microsoft.Network/virtualNetworks/{name}"
    return {
        "id": net_id,
        "name": name,
        "addressSpace": {"addressPrefixes": list(world.vnet_address_space)},
    }


def _described_groups(stack: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The capacity reservation groups the stack's pools name, each reserving every pool's VM
    size in each of its zones (or the region), `reservedNodes` (else `maxNodes`) VMs each."""
    cluster = stack.get("cluster") or {}
    region = cluster.get("region") or "eastus2"
    groups: dict[str, dict[str, Any]] = {}
    for pool in stack.get("gpuPools") or []:
        options = pool.get("azure") or {}
        parts = str(options.get("capacityReservationGroupId") or "").split("/")
        if len(parts) < 9:
            continue
        group = groups.setdefault(
            f"{parts[4]}/{parts[8]}".lower(),
            {"location": region, "zones": [], "reservations": []},
        )
        size = pool.get("machineType") or CATALOG.defaults.get(pool.get("accelerator", ""), "")
        zones = [str(zone) for zone in pool.get("zones") or cluster.get("zones") or []]
        group["zones"] = sorted({*group["zones"], *zones})
        count = options.get("reservedNodes") or pool.get("maxNodes", 2)
        places: list[str | None] = [*zones] or [None]
        for where in places:
            group["reservations"].append(
                {
                    "name": f"{size}-{where or 'regional'}".lower(),
                    "vmSize": size,
                    "zones": [where] if where else [],
                    "capacity": count,
                }
            )
    return groups


def _group(args: Mapping[str, Any], world: World) -> tuple[str, Mapping[str, Any]]:
    groups = (
        world.capacity_reservation_groups
        if world.capacity_reservation_groups is not None
        else _described_groups(world.stack)
    )
    rg, name = args.get("resourceGroupName"), args.get("capacityReservationGroupName")
    found = groups.get(f"{rg}/{name}".lower())
    if found is None:
        raise NotFound(f"capacity reservation group {name} in {rg} was not found")
    return f"{_rg_id(rg)}/providers/Microsoft.Compute/capacityReservationGroups/{name}", found


def _get_capacity_reservation_group(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    group_id, group = _group(args, world)
    return {
        "id": group_id,
        "name": args.get("capacityReservationGroupName"),
        "location": group["location"],
        "zones": list(group["zones"]),
        "capacityReservations": [
            {"id": f"{group_id}/capacityReservations/{member['name']}"}
            for member in group["reservations"]
        ],
    }


def _get_capacity_reservation(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    group_id, group = _group(args, world)
    name = args.get("capacityReservationName")
    for member in group["reservations"]:
        if member["name"] == name:
            return {
                "id": f"{group_id}/capacityReservations/{name}",
                "name": name,
                "location": group["location"],
                "sku": {"name": member["vmSize"], "capacity": member["capacity"]},
                "zones": list(member["zones"]),
            }
    raise NotFound(f"capacity reservation {name} was not found")


def _get_user_assigned_identity(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    name = args.get("resourceName")
    identity_id = (
        f"{_rg_id(args.get('resourceGroupName'))}/providers/Microsoft.ManagedIdentity/"
        f"userAssignedIdentities/{name}"
    )
    return {
        "id": identity_id,
        "name": name,
        "principalId": IDENTITY_PRINCIPAL_ID,
        "clientId": IDENTITY_CLIENT_ID,
        "tenantId": TENANT,
    }


LOOKUPS: dict[str, Any] = {
    "azure-native:containerservice:listManagedClusterUserCredentials": _user_credentials,
    "azure-native:containerservice:getManagedCluster": _get_managed_cluster,
    "azure-native:network:getVirtualNetwork": _get_virtual_network,
    "azure-native:containerservice:getMaintenanceConfiguration": _get_maintenance_configuration,
    "azure-native:compute:getCapacityReservationGroup": _get_capacity_reservation_group,
    "azure-native:compute:getCapacityReservation": _get_capacity_reservation,
    "azure-native:managedidentity:getUserAssignedIdentity": _get_user_assigned_identity,
}


MOCK = CloudMock(
    resources=RESOURCES,
    calls=CALLS,
    lookups=LOOKUPS,
    rotated=ROTATED,
)
