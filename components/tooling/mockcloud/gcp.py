"""GKE outputs the program reads: the cluster's id, endpoint and CA, service account emails."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

# The provider's project when a resource names none (stacks set cluster.gcp.project).
PROJECT = "mock-project"
FAKE_CA = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nMOCK\n-----END CERTIFICATE-----\n"
).decode()


def _cluster(name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    cluster_id = (
        f"projects/{inputs.get('project', PROJECT)}/locations/{inputs.get('location', 'x')}/"
        f"clusters/{inputs.get('name', name)}"
    )
    return {
        "__id": cluster_id,
        "id": cluster_id,
        "endpoint": "203.0.113.10",
        "controlPlaneEndpointsConfig": {
            "dnsEndpointConfig": {
                **(inputs.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig", {}),
                "endpoint": f"gke-0123456789abcdef0123456789abcdef-{PROJECT}.x.gke.goog",
            }
        },
        "masterAuth": {"clusterCaCertificate": FAKE_CA},
        "selfLink": f"https://container.googleapis.com/v1/projects/mock/locations/x/clusters/{name}",
    }


def _service_account(name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    project = inputs.get("project") or PROJECT
    email = f"{inputs.get('accountId', name)}@{project}.iam.gserviceaccount.com"
    return {"email": email, "member": f"serviceAccount:{email}", "project": project}


RESOURCES = {
    "gcp:container/cluster:Cluster": _cluster,
    "gcp:serviceaccount/account:Account": _service_account,
}
CALLS: dict[str, Any] = {}
