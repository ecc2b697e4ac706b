"""What a new user hits in their first hour (issue 31 item 6): messages that name the key to
change, one error for one mistake, and the GPUs each cloud sells."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.model.config import ConfigError, parse_config
from components.model.pools import resolve_pools
from components.tooling.stacks import load_stack


def problems_of(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as error:
        parse_config(raw)
    return [str(problem) for problem in error.value.problems]


def raw_of(stack: str) -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(stack).gpufleet))


def _h200_pool(cloud_zones: list[str], region: str, raw: dict[str, Any]) -> dict[str, Any]:
    raw["cluster"]["region"] = region
    raw["cluster"]["zones"] = cloud_zones
    raw["gpuPools"] = [
        {"name": "h200", "accelerator": "h200-141gb", "minNodes": 0, "maxNodes": 3, "spot": True}
    ]
    return raw


def test_a_gpu_in_fewer_zones_than_the_cluster_names_the_pools_zones_on_gke() -> None:
    """GKE sells H200 (A3 Ultra) in one zone of us-central1: a pool that takes the cluster's three
    zones is told to list its own, on gpuPools[0].zones (the cluster's zones are right for its
    system pool)."""
    raw = _h200_pool(
        ["us-central1-a", "us-central1-b", "us-central1-c"], "us-central1", raw_of("gcp-dev")
    )
    assert problems_of(raw) == [
        "gpuPools[0].zones: not set, so the pool takes cluster.zones (us-central1-a, "
        "us-central1-b, us-central1-c); nvidia-h200-141gb is not offered in us-central1-a, "
        "us-central1-c; in us-central1 it is in us-central1-b (Compute Engine's accelerator zones "
        "as of 2026-11-24); give the pool its own zones: [us-central1-b]"
    ]
    raw["gpuPools"][0]["zones"] = ["us-central1-b"]
    parse_config(raw)  # the fix it names is enough
    raw["gpuPools"][0]["zones"] = ["us-central1-a", "us-central1-b"]
    (problem,) = problems_of(raw)
    assert problem.startswith(
        "gpuPools[0].zones: nvidia-h200-141gb is not offered in us-central1-a"
    )
    assert problem.endswith("(got ['us-central1-a', 'us-central1-b'])")


def test_a_gpu_in_fewer_zones_than_the_cluster_names_the_pools_zones_on_eks() -> None:
    raw = _h200_pool(["us-west-2a", "us-west-2b", "us-west-2c"], "us-west-2", raw_of("aws-dev"))
    del raw["gpuPools"][0]["spot"]
    (problem,) = problems_of(raw)
    assert problem.startswith(
        "gpuPools[0].zones: not set, so the pool takes cluster.zones (us-west-2a, us-west-2b, "
        "us-west-2c); p5e.48xlarge is offered in 1 zone(s) of us-west-2 (usw2-az3), fewer than "
        "the 3 listed"
    )
    assert "list at most 1 zone(s) for the pool" in problem


TYPOS = [
    ("aws-dev", "us-east-1", "us-easst-1"),
    ("aws-training", "us-west-2", "us-wset-2"),
    ("aws-reserved", "us-east-1", "us-east-7"),
    ("gcp-dev", "us-central1", "us-centrl1"),
    ("gcp-flex-start", "us-central1", "us-centra1"),
    ("azure-reserved", "eastus2", "estus2"),
]


@pytest.mark.parametrize(("stack", "region", "typo"), TYPOS)
def test_a_mistyped_region_is_one_error(stack: str, region: str, typo: str) -> None:
    """Zones, reservations and offerings follow the region: judged against a region gpufleet
    does not know, each would be an error derived from the typo."""
    raw = raw_of(stack)
    assert raw["cluster"]["region"] == region
    raw["cluster"]["region"] = typo
    (problem,) = problems_of(raw)
    assert problem.startswith("cluster.region: not a")
    assert f"did you mean {region}" in problem or f", {region}" in problem


def test_a_known_region_still_judges_every_zone() -> None:
    raw = raw_of("aws-reserved")
    raw["cluster"]["zones"][0] = "us-west-2a"
    raw["gpuPools"][0]["aws"]["capacityReservations"][0]["zone"] = "us-west-2a"
    problems = problems_of(raw)
    assert any(p.startswith("cluster.zones[0]: zone outside region us-east-1") for p in problems)
    assert any(
        p.startswith(
            "gpuPools[0].aws.capacityReservations[0].zone: must be a zone of cluster.region"
        )
        for p in problems
    )


def test_b200_is_offered_on_aws_as_p6_b200() -> None:
    raw = raw_of("aws-dev")
    raw["cluster"]["region"] = "us-west-2"
    raw["cluster"]["zones"] = ["us-west-2a", "us-west-2b"]
    raw["gpuPools"] = [
        {"name": "b200", "accelerator": "b200", "maxNodes": 2, "zones": ["us-west-2a"]}
    ]
    (pool,) = resolve_pools(parse_config(raw))
    assert pool.machine_types == ("p6-b200.48xlarge",)
    assert (pool.gpus_per_node, pool.vcpus, pool.memory_gib) == (8, 192, 2048)
    # 198 pods by the VPC CNI's ENI table (a managed group's cap is 250 above 30 vCPUs), less
    # the node's 3 DaemonSet pods.
    assert pool.allocatable_per_node["pods"] == "195"
    # Sold in us-east-1, us-east-2 and us-west-2 (SkyPilot's catalog), not in eu-west-1.
    raw["cluster"]["region"] = "eu-west-1"
    raw["cluster"]["zones"] = ["eu-west-1a", "eu-west-1b"]
    raw["gpuPools"][0]["zones"] = ["eu-west-1a"]
    (problem,) = problems_of(raw)
    assert problem.startswith("gpuPools[0].accelerator: p6-b200.48xlarge (the default for b200)")
