"""Adopting GKE clusters the third review found unsaid (review gke-3.md R3-3, R3-4): an
endpoint gpufleet's Kubernetes provider likely cannot reach, and zonal clusters."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from components.mock_world import World
from components.model.config import parse_config
from components.model.problems import ConfigError
from components.tooling.commands import BadInput
from components.tooling.engine import plan_stack
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


def test_a_zonal_cluster_is_adopted_in_its_zone_and_its_pools_go_there() -> None:
    """A zonal cluster is found only at its zone (GKE looks clusters up by exact location), and
    its node pools take that location; before `cluster.existing.location`, the region lookup
    failed with no hint (review gke-3.md R3-4)."""
    zonal = World("1.35.2", gke_zone="us-central1-a")
    with pytest.raises(BadInput) as caught:
        _plan(zonal)
    message = str(caught.value)
    assert "no cluster platform-prod could be read in us-central1 of project" in message
    assert "set cluster.existing.location to its zone, such as us-central1-a" in message
    plan = _plan(zonal, existing={"location": "us-central1-a"})
    pools = plan.of_type(POOL)
    assert len(pools) == 2 and {pool.inputs["location"] for pool in pools} == {"us-central1-a"}
    assert plan.outputs["oidcIssuerUrl"].endswith("/locations/us-central1-a/clusters/platform-prod")
    regional = _plan(World("1.35.2"))
    assert {pool.inputs["location"] for pool in regional.of_type(POOL)} == {"us-central1"}
    # The reverse: a regional cluster looked up in a zone (review gke-4 N5).
    with pytest.raises(BadInput) as caught:
        _plan(World("1.35.2"), existing={"location": "us-central1-a"})
    assert "leave cluster.existing.location out to look it up in us-central1" in str(caught.value)


@pytest.mark.parametrize("location", ["us-central1", "us-central1-f"])
def test_the_location_is_the_region_or_one_of_its_zones(location: str) -> None:
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    raw["cluster"]["existing"] = {"location": location}
    parse_config(raw)


@pytest.mark.parametrize("location", ["us-east1-b", "us-central1-", "europe-west4"])
def test_a_location_outside_the_region_is_refused(location: str) -> None:
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    raw["cluster"]["existing"] = {"location": location}
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    (problem,) = caught.value.problems
    assert problem.path == "cluster.existing.location"
    assert "must be a zone of cluster.region us-central1" in str(problem)


def test_the_location_is_gkes_alone() -> None:
    raw = copy.deepcopy(dict(load_stack("aws-existing").gpufleet))
    raw["cluster"]["existing"] = {"location": "us-east-1a"}
    with pytest.raises(
        ConfigError, match=re.escape("cluster.existing.location: does not apply to cloud aws")
    ):
        parse_config(raw)
