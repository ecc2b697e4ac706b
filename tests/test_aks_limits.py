"""Every AKS limit gpufleet checks, at its exact edge: the limit passes, one over is refused.

The limits and their sources live with what they limit: pool names (components/azure/model/
cloud.py), cluster names and the node resource group (cluster_checks.py), pools and nodes
(limits.py), the system pool's deployment name (components/azure/system_pool.py), the DNS
prefix (components/azure/cluster.py), a reserved pool's bounds (reservations.py). A mutation
that moves a bound by one (`<=` for `<`) fails here, not only in a snapshot.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.azure.managed_cluster import dns_prefix
from components.azure.model.adopted import AksClusterFacts, adoption_problems
from components.azure.model.deployed import FixedAtCreation
from components.azure.model.limits import (
    MAX_NODES_PER_CLUSTER,
    MAX_NODES_PER_POOL,
    MAX_POOLS_PER_CLUSTER,
)
from components.azure.system_pool import DEPLOYMENT_NAME_MAX, deployment_name
from components.mock_world import World
from components.model.config import ConfigError, StackConfig, parse_config
from components.tooling.commands import BadInput
from components.tooling.engine import plan_stack
from components.tooling.stacks import load_stack
from tests.conftest import PINNED_TODAY


def raw_of(stack: str = "azure-dev") -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(stack).gpufleet))


def refused(raw: dict[str, Any]) -> list[str]:
    """Every problem's text, or [] when the config is valid."""
    try:
        parse_config(raw, PINNED_TODAY)
    except ConfigError as error:
        return [str(p) for p in error.problems]
    return []


def parsed(raw: dict[str, Any]) -> StackConfig:
    return parse_config(raw, PINNED_TODAY)


def with_pool(raw: dict[str, Any], **change: Any) -> dict[str, Any]:
    raw["gpuPools"] = [dict(raw["gpuPools"][0], **change)]
    return raw


# --------------------------------------------------------------------------- names


def test_a_pool_name_of_12_characters_passes_and_13_is_refused() -> None:
    assert refused(with_pool(raw_of(), name="a" + "1" * 11)) == []
    (problem,) = refused(with_pool(raw_of(), name="a" + "1" * 12))
    assert problem.startswith("gpuPools[0].name: not a valid pool name (AKS: 1-12 lowercase")


@pytest.mark.parametrize(("length", "ok"), [(63, True), (64, False)])
def test_a_cluster_name_of_63_characters_passes_and_64_is_refused(length: int, ok: bool) -> None:
    raw = raw_of()
    # A short resource group and region keep the node resource group within its 80.
    raw["cluster"] = dict(raw["cluster"], name="g" * length, region="eastus")
    raw["cluster"]["azure"] = dict(raw["cluster"]["azure"], resourceGroupName="r")
    problems = refused(raw)
    assert (problems == []) is ok, problems
    if not ok:
        assert [p for p in problems if p.startswith("cluster.name: not a valid cluster name")]


@pytest.mark.parametrize(("length", "ok"), [(80, True), (81, False)])
def test_a_node_resource_group_of_80_characters_passes_and_81_is_refused(
    length: int, ok: bool
) -> None:
    raw = raw_of()
    # MC_<rg>_<cluster>_<region>: MC_ + 20 + _ + name + _ + eastus2 = 32 + len(name).
    name = "c" * (length - 32)
    raw["cluster"] = dict(raw["cluster"], name=name, region="eastus2")
    raw["cluster"]["azure"] = dict(raw["cluster"]["azure"], resourceGroupName="r" * 20)
    assert len(f"MC_{'r' * 20}_{name}_eastus2") == length
    problems = refused(raw)
    assert (problems == []) is ok, problems
    if not ok:
        (problem,) = problems
        assert f"{length} characters long, and AKS refuses more than 80" in problem


def test_the_dns_prefix_keeps_54_characters_and_cuts_the_55th() -> None:
    assert dns_prefix("d" * 54) == "d" * 54
    assert dns_prefix("d" * 55) == "d" * 54
    assert dns_prefix("gpu-fleet_research-team-01") == "gpu-fleet-research-team-01"


def test_the_system_pool_deployment_name_fits_64_and_differs_for_every_cluster() -> None:
    """ARM keeps one deployment per name in a resource group: two clusters whose names share
    their first 48 characters shared one (review aks-3 N-9)."""
    assert deployment_name("c" * 48) == "c" * 48 + "-system-pool"  # kept whole, as before
    assert deployment_name("c" * 49) != "c" * 49 + "-system-pool"
    for length in range(1, 64):
        assert len(deployment_name("c" * length)) <= DEPLOYMENT_NAME_MAX, length
    shared = "c" * 48
    assert deployment_name(shared + "-a") != deployment_name(shared + "-b")


# --------------------------------------------------------------------------- pools and nodes


def test_a_pool_of_1000_nodes_passes_and_1001_is_refused() -> None:
    assert MAX_NODES_PER_POOL == 1000
    assert refused(with_pool(raw_of(), maxNodes=1000)) == []
    (problem,) = refused(with_pool(raw_of(), maxNodes=1001))
    assert problem.startswith("gpuPools[0].maxNodes: AKS holds at most 1000 nodes in a pool")
    raw = raw_of()
    raw["cluster"] = dict(raw["cluster"], systemPool={"maxNodes": 1000})
    assert refused(raw) == []
    raw["cluster"] = dict(raw["cluster"], systemPool={"maxNodes": 1001})
    (problem,) = refused(raw)
    assert problem.startswith("cluster.systemPool.maxNodes: AKS holds at most 1000 nodes")


def test_99_gpu_pools_and_the_system_pool_pass_and_100_are_refused() -> None:
    assert MAX_POOLS_PER_CLUSTER == 100
    raw = raw_of()
    pool = raw["gpuPools"][0]
    raw["gpuPools"] = [dict(pool, name=f"t{i}") for i in range(99)]
    assert refused(raw) == []
    raw["gpuPools"].append(dict(pool, name="t99"))
    (problem,) = refused(raw)
    assert problem.startswith(
        "gpuPools: 100 GPU pools and the system pool make 101 pools, and AKS holds at most 100"
    )


def _facts(pools: int) -> AksClusterFacts:
    fixed = FixedAtCreation("Standard_D4s_v5", 128, False, (), None, None, None)
    return AksClusterFacts(
        name="platform-prod",
        kubernetes_version="1.35.3",
        entra_id=True,
        system_subnet_id=None,
        oidc_issuer_url="",
        kubelet_object_id="",
        skips_nodes_with_local_storage=False,
        auto_upgrade_channel="patch",
        has_auto_upgrade_window=True,
        pools={f"p{i}": fixed for i in range(pools)},
    )


def test_an_adopted_clusters_own_pools_count_towards_its_100() -> None:
    cluster = parsed(raw_of("azure-existing")).cluster
    gpu = ["t4", "t4spot"]
    assert not adoption_problems(_facts(98), cluster, gpu_pools=gpu)
    (problem,) = adoption_problems(_facts(99), cluster, gpu_pools=gpu)
    assert "has 99 pools, and with gpufleet's it would have 101" in str(problem)
    # gpufleet's own pools from an earlier `up` are counted once.
    facts = _facts(98)
    facts = AksClusterFacts(**{**facts.__dict__, "pools": {**facts.pools, "t4": facts.pools["p0"]}})
    assert not adoption_problems(facts, cluster, gpu_pools=gpu)


def test_the_program_counts_the_adopted_clusters_pools() -> None:
    """The running cluster's pools are read while the program plans; 99 of the owner's and
    azure-existing's 2 make 101, refused before anything is created."""
    system = {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5"}
    owners = tuple({**system, "name": f"owner{i}", "mode": "User"} for i in range(98))
    world = World("1.35.3", agent_pools=(system, *owners))
    with pytest.raises(BadInput, match="has 99 pools, and with gpufleet's it would have 101"):
        plan_stack(load_stack("azure-existing"), world=world)


def test_pools_of_5000_nodes_in_all_pass_silently_and_5001_are_said() -> None:
    assert MAX_NODES_PER_CLUSTER == 5000
    raw = raw_of()
    pool = raw["gpuPools"][0]
    system = raw["cluster"].get("systemPool", {}).get("maxNodes", 3)
    sizes = [1000, 1000, 1000, 1000, 1000 - system]
    raw["gpuPools"] = [dict(pool, name=f"t{i}", maxNodes=n) for i, n in enumerate(sizes)]
    assert not [w for w in parsed(raw).warnings if "5000" in w]
    raw["gpuPools"][-1]["maxNodes"] += 1
    (warning,) = [w for w in parsed(raw).warnings if "5000" in w]
    assert "add up to 5001 nodes, and AKS runs at most 5000 in a cluster" in warning


# --------------------------------------------------------------------------- a reserved pool


def test_a_reserved_pool_may_reach_its_reserved_nodes_and_not_one_more() -> None:
    raw = raw_of("azure-reserved")
    raw["gpuPools"][0].update(capacity="reserved", maxNodes=2)  # reservedNodes: 2
    assert refused(raw) == []
    raw["gpuPools"][0]["maxNodes"] = 3
    (problem,) = refused(raw)
    assert "maxNodes 3 is more than azure.reservedNodes 2" in problem
