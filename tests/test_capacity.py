"""`gpuPools[].capacity`: the contract every cloud shares, and the interface each cloud answers.

Bad input is refused before anything exists, every problem at once, naming the key, the value as
written and what to do; `spot: true` keeps meaning what it meant; a cloud builds only the orders
it declares (the default interface refuses the rest as "not supported on <cloud> yet").
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from components.aws.model import kinds as eks_kinds
from components.azure.model.kinds.agent_pools import CAPACITY_ORDERS as AKS_ORDERS
from components.model import capacity
from components.model.capacity import CAPACITY_TYPES, ReservationCap
from components.model.catalog.provisioning import PROVISIONING_CLASSES
from components.model.config import ConfigError, parse_config
from components.model.pool_kind import PoolKind
from components.model.pools import resolve_pool, resolve_pools
from components.model.registry import CLOUDS
from components.tooling.snapshots import snapshot_text
from components.tooling.stacks import load_stack, shipped_stacks
from tests.conftest import plan_of

QUEUED_STACK = str(Path(__file__).parent / "fixtures" / "capacity" / "existing-queued.yaml")
ATOMIC = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
# Where a cloud's pool kinds answer which orders they build (EKS's four kinds, AKS's agent
# pools), every order one of them builds; elsewhere the cloud's own `capacity_orders`.
KIND_ORDERS: dict[str, tuple[capacity.CapacityOrder, ...]] = {
    "aws": tuple(
        dict.fromkeys(order for kind in eks_kinds.KINDS for order in kind.capacity_orders)
    ),
    "azure": AKS_ORDERS,
}


def built_orders(name: str) -> tuple[capacity.CapacityOrder, ...]:
    """Every capacity order some pool of this cloud can have."""
    return KIND_ORDERS.get(name, CLOUDS[name].capacity_orders)


def raw_of(stack: str) -> dict[str, Any]:
    return copy.deepcopy(load_stack(stack).gpufleet)


def problems_of(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def test_every_bad_capacity_is_refused_at_once_with_key_value_and_what_to_do() -> None:
    raw = raw_of("gcp-dev")
    first = {k: v for k, v in raw["gpuPools"][0].items() if k != "spot"}
    pools = [
        {**first, "name": "a", "capacity": "ondemand"},
        {**first, "name": "b", "capacity": ["spot", "spot"]},
        {**first, "name": "c", "capacity": ["queued", "on-demand"]},
        {**first, "name": "d", "capacity": [], "spot": False},
        {**first, "name": "e", "capacity": "on-demand", "spot": True},
        {**first, "name": "f", "capacity": ["spot", "on-demand"], "spot": False},
        {**first, "name": "g", "capacity": 3},
        {**first, "name": "h", "capacity": ["reserved", "nope"]},
    ]
    raw["gpuPools"] = pools
    found = problems_of(raw)
    expected = [
        "gpuPools[0].capacity: unknown capacity; allowed: on-demand, spot, reserved, "
        "capacity-block, flex-start, queued; did you mean on-demand? (got 'ondemand')",
        "gpuPools[1].capacity: spot repeated: each capacity once, in order (got ['spot', 'spot'])",
        "gpuPools[2].capacity: queued stands alone",
        "gpuPools[3].capacity: must list at least one of on-demand",
        "gpuPools[4].spot: contradicts gpuPools[4].capacity (on-demand): spot: true means "
        "capacity: spot exactly; remove spot",
        "gpuPools[5].spot: contradicts gpuPools[5].capacity ([spot, on-demand]): spot: false "
        "means no Spot nodes",
        "gpuPools[6].capacity: must be one of on-demand, spot, reserved, capacity-block, "
        "flex-start, queued, or a list of them in the order to fall back (got 3)",
        "gpuPools[7].capacity[1]: unknown capacity; allowed:",
    ]
    for start in expected:
        assert any(p.startswith(start) for p in found), (start, found)
    # The other sections are still checked in the same run.
    raw["cluster"]["gcp"]["project"] = "Bad_Project"
    assert any(p.startswith("cluster.gcp.project") for p in problems_of(raw))


def test_spot_true_and_capacity_spot_build_the_same_pool_on_every_shipped_stack() -> None:
    checked = 0
    for stack in shipped_stacks():
        raw = raw_of(stack)
        config = parse_config(raw)
        for index, pool in enumerate(raw["gpuPools"]):
            if not pool.get("spot"):
                continue
            rewritten = copy.deepcopy(raw)
            del rewritten["gpuPools"][index]["spot"]
            rewritten["gpuPools"][index]["capacity"] = "spot"
            again = parse_config(rewritten)
            before = resolve_pool(config, config.gpu_pools[index])
            after = resolve_pool(again, again.gpu_pools[index])
            assert after == before, (stack, pool["name"])
            assert after.spot and after.capacity == ("spot",)
            checked += 1
    assert checked >= 3  # GKE, EKS and AKS examples have Spot pools


def test_capacity_spot_plans_the_same_graph_as_spot_true() -> None:
    """On EKS self-managed groups, whose pool code reads `spot` in many places (the mixed
    instances policy, the termination handler's queue and hooks): the whole plan is unchanged."""
    pools = raw_of("aws-dev")["gpuPools"]
    for pool in pools:
        if pool.pop("spot", False):
            pool["capacity"] = "spot"
    rewritten = plan_of("aws-dev", {"gpufleet:gpuPools": pools})
    assert snapshot_text(rewritten) == snapshot_text(plan_of("aws-dev"))


def test_without_capacity_a_pool_says_what_spot_says() -> None:
    config = parse_config(raw_of("aws-dev"))
    for spec, pool in zip(resolve_pools(config), config.gpu_pools, strict=True):
        assert spec.capacity == (("spot",) if pool.spot else ("on-demand",))
        assert spec.queue is None and spec.reservation_cap is None


# What azure builds, as the refusal lists it; every other order is refused. aws and gcp build
# theirs (reservations, Capacity Blocks, flex-start, queued pools): tests/test_eks_capacity.py
# and tests/test_gke_capacity.py.
BUILT = {"azure": "on-demand, spot, [reserved, on-demand], reserved, queued"}
NOT_BUILT = {
    "azure": ["capacity-block", "flex-start", ["on-demand", "reserved"], ["reserved", "spot"]],
}


@pytest.mark.parametrize(
    ("cloud", "order"), [(cloud, order) for cloud, orders in NOT_BUILT.items() for order in orders]
)
def test_managed_clouds_refuse_what_they_do_not_build_yet(cloud: str, order: Any) -> None:
    raw = raw_of(f"{cloud}-dev")
    raw["gpuPools"][0].pop("spot", None)
    raw["gpuPools"][0]["capacity"] = order
    (problem,) = [p for p in problems_of(raw) if "capacity" in p]
    assert problem.startswith(
        f"gpuPools[0].capacity: not supported on {cloud} yet; supported here: {BUILT[cloud]}; "
    ), problem
    assert problem.endswith(f"(got {order!r})")
    assert "capacity [reserved, on-demand] with gpuPools[].azure.capacityReservationGroupId" in (
        problem
    )


def test_the_interface_refuses_by_default_and_a_queued_kind_names_its_class() -> None:
    for cloud in CLOUDS.values():
        assert cloud.pool_kinds, cloud.name
        for kind in cloud.pool_kinds:
            for order in kind.capacity_orders:
                assert order and set(order) <= set(CAPACITY_TYPES), (cloud.name, kind.title, order)
            overrides_class = type(kind).provisioning_class is not PoolKind.provisioning_class
            assert overrides_class == (capacity.QUEUED in kind.capacity_orders), kind.title
    assert PoolKind.capacity_orders == (("on-demand",), ("spot",))


def test_a_queued_pool_on_an_existing_cluster_needs_the_autoscalers_class() -> None:
    raw = raw_of(QUEUED_STACK)
    del raw["cluster"]["existing"]["provisioningRequestClass"]
    assert problems_of(raw) == [
        "cluster.existing.provisioningRequestClass: is required with a queued pool "
        "(gpuPools[0], h100): the ProvisioningRequest class this cluster's autoscaler serves, "
        f"one of {', '.join(PROVISIONING_CLASSES)} (gpufleet does not manage that autoscaler and "
        "cannot check it)"
    ]
    raw["cluster"]["existing"]["provisioningRequestClass"] = "atomic.example.com"
    assert problems_of(raw) == [
        "cluster.existing.provisioningRequestClass: unknown ProvisioningRequest class; known: "
        f"{', '.join(PROVISIONING_CLASSES)} (got 'atomic.example.com')"
    ]
    raw["cluster"]["existing"]["provisioningRequestClass"] = ATOMIC
    del raw["gpuPools"][0]["capacity"]
    found = problems_of(raw)
    assert (
        "cluster.existing.provisioningRequestClass: applies to queued pools only and no pool has "
        f"capacity: queued; remove it (got '{ATOMIC}')"
    ) in found
    assert (
        "queues: applies to queued pools and the pools queues.pools names, and there are none "
        "(no pool has capacity: queued); remove it, or name pools in queues.pools"
    ) in found


def test_an_adopting_cloud_refuses_the_existing_clusters_class() -> None:
    raw = raw_of("gcp-existing")
    raw["cluster"]["existing"]["provisioningRequestClass"] = ATOMIC
    found = problems_of(raw)
    assert any(
        p.startswith("cluster.existing.provisioningRequestClass: does not apply to cloud gcp")
        for p in found
    ), found


def test_queues_namespaces_are_the_teams_not_kueues() -> None:
    raw = raw_of(QUEUED_STACK)
    raw["queues"] = {"namespaces": ["ml", "kube-system", "kueue-system", "Bad", "ml"]}
    found = problems_of(raw)
    assert found == [
        "queues.namespaces[1]: Kueue does not manage workloads in kube-system or kueue-system "
        "(it refuses to start); use the namespace your Jobs run in (got 'kube-system')",
        "queues.namespaces[2]: Kueue does not manage workloads in kube-system or kueue-system "
        "(it refuses to start); use the namespace your Jobs run in (got 'kueue-system')",
        "queues.namespaces[3]: not a namespace name (1-63 of a-z 0-9 -, alphanumeric at both "
        "ends) (got 'Bad')",
        "queues.namespaces: must not repeat (got ['ml', 'kube-system', 'kueue-system', 'Bad', "
        "'ml'])",
    ]
    # gpufleet's own namespaces would go, Jobs and all, with the software that made them; a
    # queue there would also be a second Namespace of the same name at `up`.
    raw["queues"] = {"namespaces": ["ml", "gpufleet-samples", "gpu-operator"]}
    assert problems_of(raw) == [
        f"queues.namespaces[{index}]: is a namespace gpufleet creates for its own software "
        "(removing that software deletes the namespace with every Job in it); use a namespace "
        f"of your own (got '{name}')"
        for index, name in ((1, "gpufleet-samples"), (2, "gpu-operator"))
    ]
    raw["queues"] = {"namespaces": []}
    assert problems_of(raw) == ["queues.namespaces: must list at least one namespace (got [])"]
    raw["queues"] = {"namspaces": ["ml"]}
    assert problems_of(raw)[0].startswith("queues.namspaces: unknown key; allowed here: namespaces")


def test_a_queued_pool_needs_names_kueue_takes_and_a_node_shape_to_size_its_quota() -> None:
    raw = raw_of(QUEUED_STACK)
    pool = raw["gpuPools"][0]
    pool["name"] = "h" * 55
    del pool["machineType"]
    found = problems_of(raw)
    assert found == [
        f"gpuPools[0].name: a pool with a Kueue queue takes a name of at most 54 characters: its Kueue objects "
        f"are named gpufleet-<name>, at most 63 (got {'h' * 55!r})",
        "gpuPools[0].machineType: a pool with a Kueue queue has a ClusterQueue quota of nodes x a "
        "node's cpu and memory: name the nodes' machine type as one gpufleet's catalogs know (e.g. "
        "g2-standard-24, p5.48xlarge, Standard_NC24ads_A100_v4)",
    ]


def test_a_queued_pools_flavor_stays_within_kueues_eight_labels() -> None:
    raw = raw_of(QUEUED_STACK)
    raw["gpuPools"][0]["labels"] = {f"team-{i}": "x" for i in range(9)}
    assert problems_of(raw) == [
        "gpuPools[0].labels: a pool's Kueue ResourceFlavor takes at most 8 nodeLabels; "
        "this pool's nodes have 9 labels a pod selects the pool by (with the cloud's own); use "
        "fewer (got 9)"
    ]


def test_a_cloud_fills_the_reservation_cap_through_the_interface(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hook a pool kind implements reaches PoolSpec unchanged (fit's wording: test_kueue)."""
    cap = ReservationCap(2, "reservation lab-h100 (2 nodes)")
    (existing,) = {type(kind) for kind in CLOUDS["existing"].pool_kinds}
    monkeypatch.setattr(existing, "reservation_cap", lambda self, config, pool: cap)
    config = parse_config(raw_of(QUEUED_STACK))
    spec = resolve_pools(config)[0]
    assert spec.reservation_cap == cap
    assert resolve_pools(config)[1].reservation_cap == cap  # asked per pool, every pool
