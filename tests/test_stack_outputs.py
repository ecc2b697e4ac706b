"""Stack outputs other tools wire in: endpoint, CA, OIDC issuer, node identity, per cloud."""

from __future__ import annotations

import base64

import pytest

from components.tooling.stacks import shipped_stacks
from tests.conftest import plan_of

MANAGED = sorted(s for s in shipped_stacks() if not s.startswith("existing"))
WIRING = ("clusterEndpoint", "clusterCaCertificate", "oidcIssuerUrl", "nodeIdentity")


@pytest.mark.parametrize("stack", MANAGED)
def test_every_managed_cluster_exports_what_other_tools_wire_in(stack: str) -> None:
    outputs = plan_of(stack).outputs
    for key in WIRING:
        assert isinstance(outputs.get(key), str) and outputs[key], (key, outputs.get(key))
    assert outputs["clusterEndpoint"].startswith("https://")
    assert outputs["oidcIssuerUrl"].startswith("https://")
    assert base64.b64decode(outputs["clusterCaCertificate"]).startswith(b"-----BEGIN CERTIFICATE")


@pytest.mark.parametrize("stack", [s for s in MANAGED if s.startswith("aws")])
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
