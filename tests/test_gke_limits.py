"""Every GKE limit gpufleet checks, at its exact edge: the limit passes, one over is refused
(or said, for the cluster-wide node counts GKE accepts and the autoscaler stops at). Offline
config checks, no plans, except the names a 40-character cluster and pool give every GCP and
Kueue object (one plan)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from components.gcp.model import node_limits
from components.model.config import parse_config
from components.model.problems import ConfigError
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

Raw = dict[str, Any]
Edit = Callable[[Raw], None]


def _checked(stack: str, edit: Edit) -> tuple[list[str], tuple[str, ...]]:
    """(problems, warnings) of the stack's config after `edit`."""
    raw = copy.deepcopy(dict(load_stack(stack).gpufleet))
    edit(raw)
    try:
        config = parse_config(raw)
    except ConfigError as error:
        return [str(problem) for problem in error.problems], ()
    return [], config.warnings


def _path_refused(stack: str, edit: Edit, path: str) -> bool:
    return any(problem.startswith(f"{path}:") for problem in _checked(stack, edit)[0])


def _set(*keys: str | int, value: Any) -> Edit:
    def edit(raw: Raw) -> None:
        target: Any = raw
        for key in keys[:-1]:
            target = target[key] if isinstance(key, int) else target.setdefault(key, {})
        target[keys[-1]] = value

    return edit


def _pool_named(name: str, value: Any) -> Edit:
    return _set("gpuPools", 0, "name", value=value)


# (case, stack, path of the problem, edit at the limit, edit one over it)
EDGES: list[tuple[str, str, str, Edit, Edit]] = [
    # GKE names: 1-40 of a-z 0-9 -, starting with a letter (cluster and node pool).
    (
        "cluster-name-40",
        "gcp-dev",
        "cluster.name",
        _set("cluster", "name", value="g" * 40),
        _set("cluster", "name", value="g" * 41),
    ),
    (
        "pool-name-40",
        "gcp-dev",
        "gpuPools[0].name",
        _pool_named("l4", "p" * 40),
        _pool_named("l4", "p" * 41),
    ),
    # Project ids: 6-30 characters.
    (
        "project-id-30",
        "gcp-dev",
        "cluster.gcp.project",
        _set("cluster", "gcp", "project", value="p" * 30),
        _set("cluster", "gcp", "project", value="p" * 31),
    ),
    (
        "project-id-6",
        "gcp-dev",
        "cluster.gcp.project",
        _set("cluster", "gcp", "project", value="p" * 6),
        _set("cluster", "gcp", "project", value="p" * 5),
    ),
    # A service account id: 6-30 characters.
    (
        "account-id-30",
        "gcp-dev",
        "cluster.gcp.nodeServiceAccount",
        _set(
            "cluster",
            "gcp",
            "nodeServiceAccount",
            value=f"{'n' * 30}@prj-123.iam.gserviceaccount.com",
        ),
        _set(
            "cluster",
            "gcp",
            "nodeServiceAccount",
            value=f"{'n' * 31}@prj-123.iam.gserviceaccount.com",
        ),
    ),
    # Secondary range names: RFC 1035 labels, 1-63 characters.
    (
        "range-name-63",
        "gcp-dev",
        "cluster.gcp.podsRangeName",
        _set("cluster", "gcp", "podsRangeName", value="r" * 63),
        _set("cluster", "gcp", "podsRangeName", value="r" * 64),
    ),
    # A weekly window of 12 hours gives GKE its 48 hours in any 32 days.
    (
        "maintenance-12h",
        "gcp-dev",
        "cluster.maintenance.durationHours",
        _set("cluster", "maintenance", "durationHours", value=12),
        _set("cluster", "maintenance", "durationHours", value=11),
    ),
    # The control plane's private range is a /28, neither larger nor smaller.
    (
        "master-cidr-28-not-27",
        "gcp-dev",
        "cluster.gcp.masterCidr",
        _set("cluster", "gcp", "masterCidr", value="172.16.0.0/28"),
        _set("cluster", "gcp", "masterCidr", value="172.16.0.0/27"),
    ),
    (
        "master-cidr-28-not-29",
        "gcp-dev",
        "cluster.gcp.masterCidr",
        _set("cluster", "gcp", "masterCidr", value="172.16.0.0/28"),
        _set("cluster", "gcp", "masterCidr", value="172.16.0.0/29"),
    ),
    # GKE shares a GPU among 2-48 clients.
    (
        "shared-clients-2",
        "gcp-dev",
        "gpuPools[0].sharing.maxSharedClientsPerGpu",
        _set("gpuPools", 0, "sharing", "maxSharedClientsPerGpu", value=2),
        _set("gpuPools", 0, "sharing", "maxSharedClientsPerGpu", value=1),
    ),
    (
        "shared-clients-48",
        "gcp-dev",
        "gpuPools[0].sharing.maxSharedClientsPerGpu",
        _set("gpuPools", 0, "sharing", "maxSharedClientsPerGpu", value=48),
        _set("gpuPools", 0, "sharing", "maxSharedClientsPerGpu", value=49),
    ),
    # A flex-start node runs 1 s to 7 days.
    (
        "max-run-7-days",
        "gcp-flex-start",
        "gpuPools[1].gcp.maxRunDurationSeconds",
        _set("gpuPools", 1, "gcp", "maxRunDurationSeconds", value=604800),
        _set("gpuPools", 1, "gcp", "maxRunDurationSeconds", value=604801),
    ),
    (
        "max-run-1-second",
        "gcp-flex-start",
        "gpuPools[1].gcp.maxRunDurationSeconds",
        _set("gpuPools", 1, "gcp", "maxRunDurationSeconds", value=1),
        _set("gpuPools", 1, "gcp", "maxRunDurationSeconds", value=0),
    ),
    # A reservation holds at least one VM.
    (
        "reservation-count-1",
        "gcp-flex-start",
        "gpuPools[0].gcp.reservation.count",
        _set("gpuPools", 0, "gcp", "reservation", "count", value=1),
        _set("gpuPools", 0, "gcp", "reservation", "count", value=0),
    ),
    # Reservation names: 1-63 characters.
    (
        "reservation-name-63",
        "gcp-flex-start",
        "gpuPools[0].gcp.reservation.name",
        _set("gpuPools", 0, "gcp", "reservation", "name", value="r" * 63),
        _set("gpuPools", 0, "gcp", "reservation", "name", value="r" * 64),
    ),
    # 1,000 nodes per node pool per zone: l4-spot has two zones.
    (
        "pool-nodes-per-zone",
        "gcp-dev",
        "gpuPools[0].maxNodes",
        _set("gpuPools", 0, "maxNodes", value=2000),
        _set("gpuPools", 0, "maxNodes", value=2001),
    ),
    # The system pool too, over cluster.zones (three).
    (
        "system-nodes-per-zone",
        "gcp-dev",
        "cluster.systemPool.maxNodes",
        _set("cluster", "systemPool", "maxNodes", value=3000),
        _set("cluster", "systemPool", "maxNodes", value=3001),
    ),
]


@pytest.mark.parametrize(
    ("stack", "path", "at", "over"), [e[1:] for e in EDGES], ids=[e[0] for e in EDGES]
)
def test_each_gke_limit_passes_at_its_edge_and_is_refused_one_over(
    stack: str, path: str, at: Edit, over: Edit
) -> None:
    assert not _path_refused(stack, at, path), _checked(stack, at)[0]
    assert _path_refused(stack, over, path), _checked(stack, over)[0]


def test_a_pool_without_zones_of_its_own_is_held_to_the_clusters() -> None:
    def inherit(max_nodes: int) -> Edit:
        def edit(raw: Raw) -> None:
            del raw["gpuPools"][1]["zones"]  # t4 takes cluster.zones: three
            raw["gpuPools"][1]["maxNodes"] = max_nodes

        return edit

    assert not _path_refused("gcp-dev", inherit(3000), "gpuPools[1].maxNodes")
    (problem,) = [p for p in _checked("gcp-dev", inherit(3001))[0] if "maxNodes" in p]
    assert "GKE runs at most 1,000 nodes per node pool per zone" in problem
    assert "3 zone(s) hold at most 3,000" in problem


def _bounded(gpu_nodes: int) -> Edit:
    """gcp-dev with T4 pools of four zones each (at most 4,000 nodes a pool) bounded to
    `gpu_nodes` GPU nodes in all; the system pool adds its 3."""

    def edit(raw: Raw) -> None:
        base = raw["gpuPools"][1]
        base["zones"] = [f"us-central1-{zone}" for zone in "abcf"]
        pools: list[Raw] = []
        left = gpu_nodes
        while left > 0:
            bound = min(left, 4 * node_limits.NODES_PER_POOL_ZONE)
            pools.append({**copy.deepcopy(base), "name": f"t4-{len(pools)}", "maxNodes": bound})
            left -= bound
        raw["gpuPools"] = pools

    return edit


@pytest.mark.parametrize(
    ("total", "says"),
    [
        (node_limits.NODES_BEFORE_QUOTA_LIFT, None),
        (node_limits.NODES_BEFORE_QUOTA_LIFT + 1, "needs GKE's cluster size quota lifted"),
        (node_limits.NODES_PER_CLUSTER, "needs GKE's cluster size quota lifted"),
        (node_limits.NODES_PER_CLUSTER + 1, "more than the 15,000 nodes GKE runs in a cluster"),
    ],
)
def test_the_clusters_node_count_is_said_past_gkes_quota_and_its_cap(
    total: int, says: str | None
) -> None:
    problems, warnings = _checked("gcp-dev", _bounded(total - 3))
    assert problems == []
    found = [w for w in warnings if w.startswith("gpuPools[].maxNodes:")]
    if says is None:
        assert found == []
    else:
        (warning,) = found
        assert says in warning
        assert f"may grow to {total:,} nodes" in warning


def test_names_at_their_limits_fit_every_object_gpufleet_names() -> None:
    """A 40-character cluster and a 40-character queued pool: every GCP name gpufleet sets is
    within its limit (networks, routers, NAT, firewall rules: 63; a service account id: 30;
    a node pool: 40), and Kueue's objects are DNS labels (63)."""
    raw = copy.deepcopy(dict(load_stack("gcp-flex-start").gpufleet))
    cluster = {**raw["cluster"], "name": "c" * 40}
    pools = raw["gpuPools"]
    (queued,) = [pool for pool in pools if pool.get("capacity") == "queued"]
    queued["name"] = "q" * 40
    plan = plan_of("gcp-flex-start", {"gpufleet:cluster": cluster, "gpufleet:gpuPools": pools})
    limits = {
        "gcp:compute/network:Network": 63,
        "gcp:compute/subnetwork:Subnetwork": 63,
        "gcp:compute/router:Router": 63,
        "gcp:compute/routerNat:RouterNat": 63,
        "gcp:compute/firewall:Firewall": 63,
        "gcp:container/cluster:Cluster": 40,
        "gcp:container/nodePool:NodePool": 40,
    }
    for kind, limit in limits.items():
        for resource in plan.of_type(kind):
            assert len(resource.inputs["name"]) <= limit, (kind, resource.inputs["name"])
    (account,) = plan.of_type("gcp:serviceaccount/account:Account")
    assert len(account.inputs["accountId"]) <= 30
    kueue = [r for r in plan.resources if r.type.startswith("kubernetes:kueue.x-k8s.io")]
    assert kueue
    # A LocalQueue's name is a label value on every Job (kueue.x-k8s.io/queue-name): 63.
    for resource in kueue:
        name = resource.inputs["metadata"]["name"]
        assert len(name) <= 63, (resource.type, name)
    assert any("q" * 40 in r.inputs["metadata"]["name"] for r in kueue)
