"""Stack outputs other tools wire in: endpoint, CA, OIDC issuer, node identity, per cloud."""

from __future__ import annotations

import base64
import json
import re

import pytest

from components.tooling.stacks import load_stack
from tests.conftest import every_stack, plan_of

# Every stack whose cluster is GKE, EKS or AKS (created or adopted), by its config, not its name.
MANAGED = [s for s in every_stack() if load_stack(s).gpufleet["cloud"] != "existing"]
WIRING = ("clusterEndpoint", "clusterCaCertificate", "oidcIssuerUrl", "nodeIdentity")


@pytest.mark.every_stack
@pytest.mark.parametrize("stack", MANAGED)
def test_every_managed_cluster_exports_what_other_tools_wire_in(stack: str) -> None:
    outputs = plan_of(stack).outputs
    for key in WIRING:
        assert isinstance(outputs.get(key), str), (key, outputs.get(key))
    assert outputs["clusterEndpoint"].startswith("https://")
    assert outputs["oidcIssuerUrl"].startswith("https://") and outputs["nodeIdentity"]
    if outputs["clusterEndpoint"].endswith(".gke.goog"):
        # GKE's DNS-based endpoint presents a publicly trusted certificate.
        assert outputs["clusterCaCertificate"] == ""
    else:
        ca = base64.b64decode(outputs["clusterCaCertificate"])
        assert ca.startswith(b"-----BEGIN CERTIFICATE")


@pytest.mark.every_stack
@pytest.mark.parametrize("stack", [s for s in MANAGED if load_stack(s).gpufleet["cloud"] == "aws"])
def test_eks_exports_the_oidc_provider_for_irsa(stack: str) -> None:
    outputs = plan_of(stack).outputs
    assert outputs["oidcProviderArn"].startswith("arn:aws:iam::")
    assert outputs["oidcProviderArn"].endswith(outputs["oidcIssuerUrl"].removeprefix("https://"))
    assert outputs["nodeIdentity"].startswith("arn:aws:iam::")


def test_gke_exports_the_workload_identity_issuer_of_its_cluster() -> None:
    outputs = plan_of("gcp-dev").outputs
    assert outputs["oidcIssuerUrl"] == (
        "https://container.googleapis.com/v1/projects/mock-project/locations/us-central1/"
        "clusters/gpufleet-dev"
    )
    assert outputs["nodeIdentity"].endswith(".iam.gserviceaccount.com")


def test_an_existing_cluster_exports_no_made_up_wiring() -> None:
    outputs = plan_of("existing-dev").outputs
    assert not set(WIRING) & set(outputs)


def test_gke_reaches_its_control_plane_through_the_iam_authorised_dns_endpoint() -> None:
    plan = plan_of("gcp-a100-mig")  # authorises only 10.0.0.0/8 on the IP endpoints
    (cluster,) = [r for r in plan.resources if r.type == "gcp:container/cluster:Cluster"]
    endpoints = cluster.inputs["controlPlaneEndpointsConfig"]["dnsEndpointConfig"]
    assert endpoints["allowExternalTraffic"] is True
    assert plan.outputs["clusterEndpoint"].endswith(".gke.goog")
    ip = plan_of(
        "gcp-dev",
        {
            "gpufleet:cluster": {
                **_gcp_dev_cluster(),
                "gcp": {**_gcp_dev_cluster()["gcp"], "controlPlaneAccess": "ip"},
            }
        },
    )
    assert ip.outputs["clusterEndpoint"] == "https://203.0.113.10"


def _gcp_dev_cluster() -> dict[str, object]:
    from components.tooling.stacks import load_stack

    cluster: dict[str, object] = load_stack("gcp-dev").gpufleet["cluster"]
    return cluster


# Where a plan names a region, as each cloud writes it: AWS regions in ARNs and hostnames, GCP
# locations in resource ids and DNS endpoints, Azure locations in AKS hostnames.
REGION_MENTIONS = {
    "aws": re.compile(r"\b([a-z]{2}(?:-gov)?-[a-z]+-\d)\b"),
    "gcp": re.compile(r"locations/([a-z0-9-]+)/|\.([a-z0-9-]+)\.gke\.goog"),
    "azure": re.compile(r"\.([a-z0-9]+)\.azmk8s\.io|https://([a-z0-9]+)\.oic\.prod-aks"),
}


@pytest.mark.every_stack
@pytest.mark.parametrize("stack", MANAGED)
def test_mock_outputs_follow_the_stacks_region(stack: str) -> None:
    """Endpoints, ARNs and ids in the plan (and so in snapshots and PR diffs) carry the stack's
    region, as the cloud's would: a us-west-2 stack never shows a us-east-1 endpoint."""
    cluster = load_stack(stack).gpufleet["cluster"]
    cloud = load_stack(stack).gpufleet["cloud"]
    # The cost object may name another region on purpose: a labelled estimate at the price
    # table's stand-in region's list price (docs/cost.md).
    document = {k: v for k, v in plan_of(stack).to_json().items() if k != "cost"}
    text = json.dumps(document)
    mentioned = {
        next(group for group in match.groups() if group)
        for match in REGION_MENTIONS[cloud].finditer(text)
    }
    region = cluster["region"]
    zones = set(cluster.get("zones") or [])
    assert mentioned, f"{stack}: the plan names no region at all"
    assert mentioned <= {region, *zones}, (stack, region, mentioned)
    endpoint = plan_of(stack).outputs["clusterEndpoint"]
    if cloud != "gcp" or endpoint.endswith(".gke.goog"):
        assert region in endpoint, endpoint
