"""GKE outputs the program reads: the cluster's endpoint and CA certificate."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

FAKE_CA = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nMOCK\n-----END CERTIFICATE-----\n"
).decode()


def _cluster(name: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "endpoint": "203.0.113.10",
        "masterAuth": {"clusterCaCertificate": FAKE_CA},
        "selfLink": f"https://container.googleapis.com/v1/projects/mock/locations/x/clusters/{name}",
    }


RESOURCES = {"gcp:container/cluster:Cluster": _cluster}
CALLS: dict[str, Any] = {}
