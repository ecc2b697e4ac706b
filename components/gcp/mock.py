"""GKE outputs the program reads: the cluster's id, endpoint and CA, service account emails,
in the cluster's project and location (the stack's region)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from components.mock_world import CloudMock, NotFound, World

# The provider's project and location when a resource names none (stacks set both).
PROJECT = "mock-project"
REGION = "us-central1"
FAKE_CA = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nMOCK\n-----END CERTIFICATE-----\n"
).decode()
DNS_ENDPOINT_ID = "0123456789abcdef0123456789abcdef"
ADOPTED_DNS_ENDPOINT_ID = "fedcba9876543210fedcba9876543210"
# The adopted cluster's private nodes admit its control plane from this range.
ADOPTED_CONTROL_PLANE_CIDR = "172.16.32.0/28"
# The adopted cluster's control plane address inside its VPC (enablePrivateEndpoint).
PRIVATE_ENDPOINT = "10.128.0.2"
# A rotated control plane (World.endpoint_rotated): new IPs, DNS endpoints and CA.
ROTATED = (
    ("203.0.113.10", "198.51.100.10"),
    ("203.0.113.20", "198.51.100.20"),
    (DNS_ENDPOINT_ID, "00000000111111112222222233333333"),
    (ADOPTED_DNS_ENDPOINT_ID, "44444444555555556666666677777777"),
    (
        FAKE_CA,
        base64.b64encode(
            b"-----BEGIN CERTIFICATE-----\nROTATED\n-----END CERTIFICATE-----\n"
        ).decode(),
    ),
)


def _cluster(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    project = inputs.get("project") or PROJECT
    location = inputs.get("location") or world.region or REGION
    cluster_id = f"projects/{project}/locations/{location}/clusters/{inputs.get('name', name)}"
    return {
        "__id": cluster_id,
        "id": cluster_id,
        "endpoint": "203.0.113.10",
        "controlPlaneEndpointsConfig": {
            "dnsEndpointConfig": {
                **(inputs.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig", {}),
                "endpoint": f"gke-{DNS_ENDPOINT_ID}-{project}.{location}.gke.goog",
            }
        },
        "masterAuth": {"clusterCaCertificate": FAKE_CA},
        "selfLink": f"https://container.googleapis.com/v1/{cluster_id}",
    }


def _stack_project(inputs: Mapping[str, Any], world: World) -> str:
    """The project a resource is in: its own input, else its provider's (the stack's
    cluster.gcp.project), as terraform-provider-google's DefaultProviderProject picks it."""
    cluster = world.stack.get("cluster") or {}
    given = (cluster.get("gcp") or {}).get("project") if isinstance(cluster, Mapping) else None
    return str(inputs.get("project") or given or PROJECT)


def _network(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    # terraform-provider-google's id format: projects/{project}/global/networks/{name}. A new
    # project is a new network id, which the Cluster's ForceNew `network` sees (review gke-3.md
    # R3-7: the same id in every project hid the cluster's replacement on a project edit).
    network_id = (
        f"projects/{_stack_project(inputs, world)}/global/networks/{inputs.get('name', name)}"
    )
    return {"__id": network_id, "selfLink": f"https://www.googleapis.com/compute/v1/{network_id}"}


def _subnetwork(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    region = inputs.get("region") or world.region or REGION
    subnet_id = (
        f"projects/{_stack_project(inputs, world)}/regions/{region}/subnetworks/"
        f"{inputs.get('name', name)}"
    )
    return {"__id": subnet_id, "selfLink": f"https://www.googleapis.com/compute/v1/{subnet_id}"}


def _service_account(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    project = inputs.get("project") or PROJECT
    email = f"{inputs.get('accountId', name)}@{project}.iam.gserviceaccount.com"
    return {"email": email, "member": f"serviceAccount:{email}", "project": project}


RESOURCES = {
    "gcp:container/cluster:Cluster": _cluster,
    "gcp:serviceaccount/account:Account": _service_account,
    "gcp:compute/network:Network": _network,
    "gcp:compute/subnetwork:Subnetwork": _subnetwork,
}
CALLS: dict[str, Any] = {}


def _get_cluster(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    """A regional GKE cluster as `gcp.container.get_cluster` returns it (list-valued blocks)."""
    if not world.exists:
        raise NotFound(f"cluster {args.get('name') or args.get('resourceName')} not found")
    project = args.get("project") or PROJECT
    location = args.get("location") or world.region or REGION
    name = args.get("name", "cluster")
    expected = world.gke_zone or world.region or REGION
    if location != expected:
        # GKE looks a cluster up by its exact location: a zonal one is not in its region, and a
        # regional one is not in a zone.
        raise NotFound(
            f"googleapi: Error 404: Not found: projects/{project}/locations/{location}/clusters/{name}"
        )
    cluster_id = f"projects/{project}/locations/{location}/clusters/{name}"
    version = f"{world.kubernetes_version}-gke.1047000"
    window = {
        "startTime": "2026-01-03T02:00:00Z",
        "endTime": "2026-01-03T14:00:00Z",
        "recurrence": "FREQ=WEEKLY;BYDAY=SA",
    }
    return {
        "id": cluster_id,
        "name": name,
        "location": location,
        "project": project,
        "selfLink": f"https://container.googleapis.com/v1/{cluster_id}",
        "endpoint": PRIVATE_ENDPOINT if world.gke_private_endpoint else "203.0.113.20",
        "masterVersion": version,
        "nodeVersion": version,
        "minMasterVersion": "",
        # A zonal cluster's nodes are in its zone; a regional one's in three of its zones.
        "nodeLocations": [location]
        if world.gke_zone
        else [f"{location}-a", f"{location}-b", f"{location}-c"],
        "masterAuths": [{"clusterCaCertificate": FAKE_CA}],
        "controlPlaneEndpointsConfigs": [
            {
                "dnsEndpointConfigs": [
                    {
                        "allowExternalTraffic": world.gke_dns_external,
                        "endpoint": f"gke-{ADOPTED_DNS_ENDPOINT_ID}-{project}.{location}.gke.goog",
                    }
                ]
            }
        ],
        "workloadIdentityConfigs": (
            [{"workloadPool": f"{project}.svc.id.goog"}] if world.workload_identity else []
        ),
        "releaseChannels": [{"channel": "REGULAR"}],
        "network": "platform-vpc",
        "privateClusterConfigs": [
            {
                "enablePrivateNodes": True,
                "enablePrivateEndpoint": world.gke_private_endpoint,
                "masterIpv4CidrBlock": ADOPTED_CONTROL_PLANE_CIDR,
            }
        ],
        "masterAuthorizedNetworksConfigs": (
            []
            if world.gke_authorized_networks is None
            else [
                {
                    "cidrBlocks": [
                        {"cidrBlock": cidr, "displayName": f"range-{i}"}
                        for i, cidr in enumerate(world.gke_authorized_networks)
                    ],
                    "gcpPublicCidrsAccessEnabled": False,
                    "privateEndpointEnforcementEnabled": False,
                }
            ]
        ),
        "enableAutopilot": world.autopilot,
        "datapathProvider": world.gke_datapath_provider,
        "enableMultiNetworking": world.gke_multi_networking,
        "nodePools": [
            *({"name": pool, "nodeConfigs": [{"labels": {}}]} for pool in world.node_pools),
            *(
                {"name": pool, "nodeConfigs": [{"labels": {"gpufleet.io/pool": pool}}]}
                for pool in world.gpufleet_pools
            ),
        ],
        "maintenancePolicies": (
            [{"recurringWindows": [window], "dailyMaintenanceWindows": []}]
            if world.maintenance_window
            else []
        ),
    }


LOOKUPS: dict[str, Any] = {"gcp:container/getCluster:getCluster": _get_cluster}


MOCK = CloudMock(
    resources=RESOURCES,
    calls=CALLS,
    lookups=LOOKUPS,
    rotated=ROTATED,
)
