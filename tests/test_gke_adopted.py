"""Adopting GKE clusters the third review found unsaid (review gke-3.md R3-3, R3-4): an
endpoint gpufleet's Kubernetes provider likely cannot reach, and zonal clusters."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.tooling.engine import plan_stack
from components.tooling.mockcloud.world import World
from components.tooling.stacks import load_stack

STACK = "gcp-existing"
POOL = "gcp:container/nodePool:NodePool"
FIX = "gcloud container clusters update platform-prod --location us-central1 --enable-dns-access"


def _plan(world: World, **cluster: Any) -> Any:
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    raw["cluster"].update(cluster)
    return plan_stack(load_stack(STACK), {"gpufleet:cluster": raw["cluster"]}, world)


def test_a_private_only_endpoint_is_said_with_the_owners_fix() -> None:
    """DNS endpoint closed to external traffic and the IP endpoint private: every Kubernetes
    resource fails at `up` unless pulumi runs in the VPC, which gpufleet cannot tell."""
    plan = _plan(World("1.35.2", gke_dns_external=False, gke_private_endpoint=True))
    (warning,) = [w for w in plan.warnings if "DNS-based endpoint admits no traffic" in w]
    assert "is the control plane's private address (10.128.0.2" in warning
    assert "pulumi must run inside the cluster's VPC" in warning
    assert "not checked" in warning and warning.endswith(FIX)
    assert plan.outputs["clusterEndpoint"] == "https://10.128.0.2"


def test_an_endpoint_behind_authorized_networks_names_them() -> None:
    world = World("1.35.2", gke_dns_external=False, gke_authorized_networks=("198.51.100.0/24",))
    (warning,) = [w for w in _plan(world).warnings if "DNS-based endpoint admits no traffic" in w]
    assert "admits only the cluster's master authorized networks (198.51.100.0/24)" in warning
    assert warning.endswith(FIX)


@pytest.mark.parametrize(
    "world",
    [World("1.35.2"), World("1.35.2", gke_dns_external=False)],
    ids=["dns-endpoint", "open-ip-endpoint"],
)
def test_a_reachable_endpoint_is_not_warned(world: World) -> None:
    assert not [w for w in _plan(world).warnings if "DNS-based endpoint" in w]
