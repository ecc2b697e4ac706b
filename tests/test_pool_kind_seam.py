"""The pool-kind seam: what differs per kind of pool (how pods select its nodes, what its
provisioner expects of a new node, which capacity it builds and its rules) is asked of the kind,
so a new kind (GKE compute classes, AKS node auto-provisioning) is its own kind file plus its
cloud's `pool_kind`. A fake second GKE kind, defined here and returned by a patched
`Gcp.pool_kind`, changes those answers with no other change to `Gcp` (design-2 N4)."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest

from components.gcp.model.cloud import Gcp
from components.gcp.model.kinds.compute_class import COMPUTE_CLASSES
from components.gcp.model.kinds.node_pools import NODE_POOLS, NodePools
from components.model.capacity import ON_DEMAND, SPOT, CapacityOrder, ReservationCap
from components.model.catalog.gpus import MachineType
from components.model.cloud import Cloud
from components.model.config import ConfigError, parse_config
from components.model.managed_cloud import ManagedCloud
from components.model.pool_kind import GpuNodeFacts, PoolKind, SharingVia
from components.model.pools import resolve_pool
from components.model.problems import Problem
from components.model.registry import CLOUDS
from components.model.schema import ClusterConfig, GpuPoolConfig, StackConfig
from components.tooling.stacks import load_stack

CLASS_LABEL = "cloud.google.com/compute-class"
NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"
FALLBACK = ("spot", "on-demand")
FAKE_CAP = ReservationCap(3, "the fake class's reservation (3 nodes)")

# What a kind answers and no cloud may (the shared callers ask `cloud.pool_kind(...)`).
KIND_HOOKS = (
    "selector_keys",
    "pool_label_key",
    "autoscaler_gpus",
    "capacity_order",
    "capacity_orders",
    "capacity_advice",
    "check_capacity",
    "provisioning_class",
    "capacity_warnings",
    "reservation_cap",
)
# The Cloud hooks the kind's answers replaced.
GONE = ("supported_capacity", "unsupported_capacity_advice")


class FakeComputeClass(NodePools):
    """GKE nodes a compute class provisions: selected by the class, falling back Spot to
    on-demand (which one node pool cannot), with its own capacity rule, warning and cap."""

    title = "fake GKE compute classes"
    pool_label_key = CLASS_LABEL
    capacity_orders = (ON_DEMAND, SPOT, FALLBACK)

    def node_facts(
        self,
        config: StackConfig,
        pool: GpuPoolConfig,
        machines: list[MachineType],
        sharing_via: SharingVia,
    ) -> GpuNodeFacts:
        facts = super().node_facts(config, pool, machines, sharing_via)
        del facts.labels[NODE_POOL_LABEL]  # the class names its node pools itself
        facts.labels[CLASS_LABEL] = pool.name
        return facts

    def capacity_advice(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder
    ) -> str:
        return "the fake class falls back [spot, on-demand] only"

    def check_capacity(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder, path: str
    ) -> list[Problem]:
        if order == FALLBACK and pool.min_nodes:
            return [Problem(f"{path}.minNodes", "a fake fallback class starts at 0", 1)]
        return []

    def capacity_warnings(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str, today: date
    ) -> list[str]:
        return ["the fake class's warning"]

    def reservation_cap(self, config: StackConfig, pool: GpuPoolConfig) -> ReservationCap:
        return FAKE_CAP


FAKE = FakeComputeClass()


def raw_with(capacity: Any = None, min_nodes: int = 0) -> dict[str, Any]:
    """gcp-dev with its on-demand T4 pool given `capacity` (None: left out)."""
    raw = copy.deepcopy(load_stack("gcp-dev").gpufleet)
    pool = raw["gpuPools"][1]
    pool["minNodes"] = min_nodes
    if capacity is not None:
        pool["capacity"] = capacity
    return raw


def problems_of(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


@pytest.fixture
def compute_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """GKE makes every pool with the fake kind: `pool_kind` is the only thing patched."""
    monkeypatch.setattr(Gcp, "pool_kind", lambda self, cluster, pool: FAKE)


def test_gke_node_pools_answer_as_today() -> None:
    """The baseline the fake kind changes (so the seam test below cannot pass vacuously)."""
    config = parse_config(raw_with())
    spec = resolve_pool(config, config.gpu_pools[1])
    assert spec.selector_keys == (NODE_POOL_LABEL,)
    assert spec.pod_scheduling["nodeSelector"] == {NODE_POOL_LABEL: "t4"}
    assert spec.reservation_cap is None
    assert "the fake class's warning" not in config.warnings
    # A fallback list GKE builds as a real compute class now; a capacity block it never does.
    (refusal,) = problems_of(raw_with("capacity-block"))
    assert refusal.startswith("gpuPools[1].capacity: not supported on gcp yet")
    assert "a GKE node pool has one capacity" in refusal


@pytest.mark.usefixtures("compute_class")
def test_a_second_gke_kind_changes_selection_and_capacity_through_pool_kind_only() -> None:
    config = parse_config(raw_with(["spot", "on-demand"]))
    spec = resolve_pool(config, config.gpu_pools[1])
    assert spec.selector_keys == (CLASS_LABEL,)
    assert spec.pod_scheduling["nodeSelector"] == {CLASS_LABEL: "t4"}
    assert spec.capacity == FALLBACK
    assert spec.reservation_cap == FAKE_CAP
    assert "the fake class's warning" in config.warnings
    # The kind's own rule at its edge (minNodes 0 passes above, 1 is refused), then its advice.
    assert problems_of(raw_with(["spot", "on-demand"], min_nodes=1)) == [
        "gpuPools[1].minNodes: a fake fallback class starts at 0 (got 1)"
    ]
    (refusal,) = problems_of(raw_with("flex-start"))
    assert refusal.startswith(
        "gpuPools[1].capacity: not supported on gcp yet; supported here: on-demand, spot, "
        "[spot, on-demand]; "
    ), refusal
    assert "the fake class falls back [spot, on-demand] only" in refusal


def test_no_cloud_answers_what_a_kind_answers() -> None:
    """The per-kind hooks live on PoolKind only: a cloud that grew one back would answer for
    every kind it makes (the next kind would inherit a node pool's answers)."""
    for hook in KIND_HOOKS:
        assert hasattr(PoolKind, hook), hook
        assert not hasattr(Cloud, hook) and not hasattr(ManagedCloud, hook), hook
        for cloud in CLOUDS.values():
            assert not hasattr(cloud, hook), (cloud.name, hook)
    for hook in GONE:
        assert not any(hasattr(c, hook) for c in (PoolKind, *CLOUDS.values())), hook
    assert Gcp.pool_kinds == (NODE_POOLS, COMPUTE_CLASSES)


def test_karpenter_refusals_are_shared_and_eks_adds_its_advice() -> None:
    """The NodePool CRD's nodeClassRef refusal is every Karpenter's, in neutral words; EKS's
    advice (moving to or from Auto Mode) replaces only what to do, on EKS's NodePools."""
    from components.aws.model.change_rules import PROVISIONER_SWITCH_INSTEAD
    from components.model import karpenter_day_two, resource_index

    shared = karpenter_day_two.REFUSED_IN_PLACE[karpenter_day_two.NODE_POOL]
    assert [r.path for r in shared] == [
        "spec.template.spec.nodeClassRef.group",
        "spec.template.spec.nodeClassRef.kind",
    ]
    assert not any("Auto Mode" in r.reason + r.instead for r in shared)
    found = resource_index.refusals(karpenter_day_two.NODE_POOL)
    assert [(r.path, r.reason) for r in found] == [(r.path, r.reason) for r in shared]
    assert {r.instead for r in found} == {PROVISIONER_SWITCH_INSTEAD}
