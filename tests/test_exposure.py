"""`plan` says what a risky opt-in exposes (review security-1 SEC-4): an API endpoint open to the
whole internet on EKS, AKS or GKE, and AKS local accounts; and an allowance with nothing to allow.
The policy pack's production refusal of the same is tested in tests/test_policy_security.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.model.config import parse_config
from components.tooling.cli import main
from components.tooling.stacks import load_stack, shipped_stacks

RANGE_KEYS = {
    "aws-dev": ("aws", "publicEndpointCidrs", "EKS"),
    "azure-dev": ("azure", "apiServerAuthorizedCidrs", "AKS"),
    "gcp-dev": ("gcp", "masterAuthorizedCidrs", "GKE"),
}


def warnings(stack: str, **cluster: Any) -> list[str]:
    """The config warnings of `stack` with keys of `cluster.<cloud>` (or of `cluster`) set."""
    raw = copy.deepcopy(load_stack(stack).gpufleet)
    for key, value in cluster.items():
        if key in ("aws", "azure", "gcp"):
            raw["cluster"].setdefault(key, {}).update(value)
        else:
            raw["cluster"][key] = value
    return list(parse_config(raw).warnings)


def exposure(found: list[str]) -> list[str]:
    return [w for w in found if "whole internet" in w or "allow" in w or "local-accounts" in w]


@pytest.mark.parametrize("stack", sorted(RANGE_KEYS))
@pytest.mark.parametrize(
    ("cidrs", "opened"),
    [
        (["203.0.113.0/24"], None),
        (["0.0.0.0/1"], None),  # one under the edge: half of the addresses
        (["0.0.0.0/0"], "0.0.0.0/0 opens"),
        (["0.0.0.0/1", "128.0.0.0/1"], "0.0.0.0/0 opens"),
    ],
)
def test_an_api_range_open_to_the_whole_internet_is_said_with_what_it_exposes(
    stack: str, cidrs: list[str], opened: str | None
) -> None:
    cloud, key, api = RANGE_KEYS[stack]
    found = exposure(warnings(stack, **{cloud: {key: cidrs}}))
    if opened is None:
        assert found == []
        return
    (warning,) = found
    assert warning.startswith(f"cluster.{cloud}.{key}: {opened} the {api} API server")
    assert "stolen or leaked credentials" in warning
    assert "the policy pack refuses it unless cluster.allowPublicApiEndpoint: true" in warning
    allowed = exposure(warnings(stack, allowPublicApiEndpoint=True, **{cloud: {key: cidrs}}))
    assert len(allowed) == 1 and "cluster.allowPublicApiEndpoint: true accepts it" in allowed[0]


def test_aks_takes_ipv6_ranges_too() -> None:
    (warning,) = exposure(
        warnings("azure-dev", azure={"apiServerAuthorizedCidrs": ["0.0.0.0/0", "::/0"]})
    )
    assert "0.0.0.0/0 and ::/0 open the AKS API server" in warning


def test_aks_local_accounts_are_said_with_what_they_expose() -> None:
    (warning,) = exposure(warnings("azure-dev", azure={"authentication": "local-accounts"}))
    assert warning.startswith("cluster.azure.authentication: local-accounts: AKS issues a static")
    assert "every checkpoint of the stack's state" in warning and "az aks rotate-certs" in warning
    assert "unless cluster.azure.allowLocalAccounts: true" in warning
    allowed = warnings(
        "azure-dev", azure={"authentication": "local-accounts", "allowLocalAccounts": True}
    )
    assert "cluster.azure.allowLocalAccounts: true accepts it" in exposure(allowed)[0]
    # Entra ID says nothing; an allowance without local accounts is said.
    assert exposure(warnings("azure-dev")) == []
    (unused,) = exposure(warnings("azure-dev", azure={"allowLocalAccounts": True}))
    assert unused.startswith("cluster.azure.allowLocalAccounts: true, but this stack does not")


@pytest.mark.parametrize(
    "stack", ["aws-dev", "azure-dev", "gcp-dev", "gcp-existing", "existing-dev"]
)
def test_an_allowance_with_nothing_open_is_said(stack: str) -> None:
    (warning,) = exposure(warnings(stack, allowPublicApiEndpoint=True))
    assert warning.startswith("cluster.allowPublicApiEndpoint: true, but")
    assert "remove it" in warning


def test_an_adopted_clusters_endpoint_is_its_owners() -> None:
    """gpufleet sets no endpoint on a cluster it adopts: nothing to warn about there."""
    assert exposure(warnings("aws-existing")) == []
    assert exposure(warnings("azure-existing")) == []


@pytest.mark.parametrize("stack", shipped_stacks())
def test_no_example_opens_anything(stack: str) -> None:
    assert exposure(list(parse_config(load_stack(stack).gpufleet).warnings)) == []


def test_plan_prints_the_warning_and_still_plans(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A deliberate choice is warned about, not refused: exit 0 (the pack refuses production)."""
    text = load_stack("aws-dev").path.read_text()
    assert "publicEndpointCidrs: [203.0.113.0/24]" in text
    path = tmp_path / "Pulumi.open.yaml"
    path.write_text(
        text.replace("publicEndpointCidrs: [203.0.113.0/24]", "publicEndpointCidrs: [0.0.0.0/0]")
    )
    assert main(["plan", str(path)]) == 0
    assert "warning: cluster.aws.publicEndpointCidrs: 0.0.0.0/0 opens the EKS API server" in (
        capsys.readouterr().err
    )


def test_gpu_nodes_on_an_adopted_aks_cluster_name_the_kubelet_identity_pods_can_reach() -> None:
    """Review security-1 SEC-16: AKS does not fence IMDS from pods by default. The program
    says it once, naming the identity it read (plan and preview print it)."""
    from tests.conftest import plan_of

    (warning,) = [w for w in plan_of("azure-existing").warnings if "kubelet identity" in w]
    assert "169.254.169.254" in warning and "not checked" in warning and "object id" in warning
    assert not [w for w in plan_of("azure-dev").warnings if "kubelet identity" in w]


def test_the_reservation_grant_says_it_is_contributor_on_the_whole_group() -> None:
    """Review security-1 SEC-8: the grant outlives the stack and reaches all of the group."""
    (warning,) = [w for w in warnings("azure-reserved") if "Contributor on the whole group" in w]
    assert "after the stack is gone too" in warning
    assert "change or delete anything in gpu-reservations" in warning
    assert warning.endswith("keep only capacity reservation groups in it")
