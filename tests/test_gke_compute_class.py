"""GKE custom compute classes on the whole graph: a pool whose `capacity` is a fallback list one
node pool cannot express becomes a ComputeClass over one node pool per capacity, pods select the
class, GKE's refusals are refused at their edge, `diff` says what switching a running pool does
to its nodes, and cost uses the dearest capacity the class may fall back to.

The stack is stacks/Pulumi.gcp-compute-class.yaml: `h100` is [reserved, flex-start, spot,
on-demand] on a reservation of 2 VMs, `l4` is [spot, on-demand]. Facts and sources:
components/gcp/model/compute_class.py.
"""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest

from components.gcp.model import compute_class as gke_class
from components.gcp.model.adopted import GkeClusterFacts
from components.gcp.model.node_pool_names import GpufleetNodePool, owner_pool_problems
from components.mock_world import World
from components.model.config import ConfigError, parse_config
from components.model.cost import stack_cost
from components.model.labels import POOL_LABEL
from components.model.pools import resolve_pool
from components.tooling.commands import BadInput
from components.tooling.diff import diff_plans, render_text
from components.tooling.engine import plan_stack
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

pytestmark = pytest.mark.xdist_group("gke-compute-class")

STACK = "gcp-compute-class"
NODE_POOL = "gcp:container/nodePool:NodePool"
CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
CLASS_LABEL = "cloud.google.com/compute-class"


def _raw(stack: str = STACK) -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(stack).gpufleet))


def _with_l4(**changes: Any) -> dict[str, Any]:
    """The example with its [spot, on-demand] L4 pool changed (a key set to None is removed)."""
    raw = _raw()
    pool = raw["gpuPools"][1]
    for key, value in changes.items():
        if value is None:
            pool.pop(key, None)
        else:
            pool[key] = value
    return raw


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def _node_pools() -> dict[str, dict[str, Any]]:
    return {r.inputs["name"]: r.inputs for r in plan_of(STACK).of_type(NODE_POOL)}


def test_the_class_lists_its_node_pools_in_the_pools_order_and_says_how_it_falls_back() -> None:
    classes = {r.inputs["metadata"]["name"]: r.inputs for r in plan_of(STACK).of_type(CLASS)}
    assert set(classes) == {"h100", "l4"}
    spec = classes["h100"]["spec"]
    assert spec["priorities"] == [
        {"nodepools": ["h100-res"]},
        {"nodepools": ["h100-flex"]},
        {"nodepools": ["h100-spot"]},
        {"nodepools": ["h100-od"]},
    ]
    assert spec["activeMigration"] == {"optimizeRulePriority": True}
    assert spec["whenUnsatisfiable"] == "DoNotScaleUp"
    assert spec["nodePoolAutoCreation"] == {"enabled": False}
    assert classes["l4"]["spec"]["priorities"] == [
        {"nodepools": ["l4-spot"]},
        {"nodepools": ["l4-od"]},
    ]


def test_each_priority_is_a_node_pool_of_that_capacity_labelled_and_tainted_for_the_class() -> None:
    pools = _node_pools()
    for name in ("h100-res", "h100-flex", "h100-spot", "h100-od"):
        node_config = pools[name]["nodeConfig"]
        assert node_config["labels"][CLASS_LABEL] == "h100", name
        assert {"key": CLASS_LABEL, "value": "h100", "effect": "NO_SCHEDULE"} in node_config[
            "taints"
        ], name
        # Scale to zero kept: every priority starts empty (the example sets no minimum).
        assert pools[name]["autoscaling"]["totalMinNodeCount"] == 0, name
        assert pools[name]["autoscaling"]["totalMaxNodeCount"] == 2, name
    reserved = pools["h100-res"]["nodeConfig"]
    assert reserved["reservationAffinity"]["consumeReservationType"] == "SPECIFIC_RESERVATION"
    assert reserved["reservationAffinity"]["values"] == ["h100-training"]
    assert not reserved["spot"]
    flex = pools["h100-flex"]["nodeConfig"]
    assert flex["flexStart"] is True and flex["maxRunDuration"] == "86400s"
    assert flex["reservationAffinity"]["consumeReservationType"] == "NO_RESERVATION"
    assert pools["h100-flex"]["management"]["autoRepair"] is False
    assert pools["h100-spot"]["nodeConfig"]["spot"] is True
    assert not pools["h100-od"]["nodeConfig"]["spot"]
    assert "reservationAffinity" not in pools["h100-od"]["nodeConfig"]
    assert "h100" not in pools and "l4" not in pools  # no node pool of the pool's own name


def test_a_minimum_stays_on_the_first_priority_only() -> None:
    raw = _with_l4(minNodes=1)
    pools = {
        r.inputs["name"]: r.inputs
        for r in plan_of(STACK, {"gpufleet:gpuPools": raw["gpuPools"]}).of_type(NODE_POOL)
    }
    assert pools["l4-spot"]["autoscaling"]["totalMinNodeCount"] == 1
    assert pools["l4-od"]["autoscaling"]["totalMinNodeCount"] == 0


def test_pods_select_the_class_and_tolerate_its_taint() -> None:
    config = parse_config(_raw())
    spec = resolve_pool(config, config.gpu_pools[0])
    assert spec.selector_keys == (CLASS_LABEL,)
    scheduling = spec.pod_scheduling
    assert scheduling["nodeSelector"] == {CLASS_LABEL: "h100"}
    assert {
        "key": CLASS_LABEL,
        "operator": "Equal",
        "value": "h100",
        "effect": "NoSchedule",
    } in scheduling["tolerations"]
    # The node pool label names one of the class's pools: a choice, not a fixed label.
    assert spec.label_choices["cloud.google.com/gke-nodepool"] == (
        "h100-res",
        "h100-flex",
        "h100-spot",
        "h100-od",
    )
    assert "cloud.google.com/gke-nodepool" not in spec.node_labels


def test_gke_refusals_are_refused_at_their_edge() -> None:
    # The class's name: GKE refuses names starting with gke or autopilot.
    assert any(
        "GKE refuses class names starting with gke or autopilot" in p
        for p in _problems(_with_l4(name="gke-l4"))
    )
    # Its node pools' names: 40 characters at most ("-spot" is the longest suffix here).
    parse_config(_with_l4(name="l" * 35))
    (long,) = [p for p in _problems(_with_l4(name="l" * 36)) if "longer than GKE's 40" in p]
    assert "at most 35" in long
    # A machine Compute Engine sells only as Spot or flex-start cannot fall back to on-demand.
    spot_only = {"accelerator": "h100-80gb", "machineType": "a3-highgpu-1g"}
    refused = _problems(_with_l4(**spot_only))
    assert any("is sold only as Spot or flex-start on GKE" in p for p in refused)
    parse_config(_with_l4(**spot_only, capacity=["spot", "flex-start"], zones=None))
    # A reservation needs a reserved priority, and a reserved priority a specific reservation.
    named = {"reservation": {"name": "l4-inference"}}
    assert any("has no reserved priority" in p for p in _problems(_with_l4(gcp=named)))
    assert any(
        "gcp.reservation: is required with capacity: reserved" in p
        for p in _problems(_with_l4(capacity=["reserved", "spot"]))
    )
    parse_config(_with_l4(capacity=["reserved", "spot"], gcp=named))
    # A run duration belongs to a flex-start priority.
    duration = {"maxRunDurationSeconds": 3600}
    assert any("applies to flex-start pools only" in p for p in _problems(_with_l4(gcp=duration)))
    # Queued stands alone (shared rule): never a priority.
    assert _problems(_with_l4(capacity=["queued", "on-demand"]))


def test_the_version_floor_is_checked_at_its_edge() -> None:
    config = parse_config(_raw())
    pool, order = config.gpu_pools[1], ("spot", "on-demand")

    def version_problems(version: str) -> list[str]:
        cluster = config.cluster.model_copy(update={"kubernetes_version": version})
        found = gke_class.class_problems(cluster, pool, order, "gpuPools[1]", [])
        return [str(p) for p in found if "1.30.3-gke.1451000" in str(p)]

    assert version_problems("1.30") == []
    (refused,) = version_problems("1.29")
    assert refused.startswith("cluster.kubernetesVersion:")


def test_switching_a_running_pool_to_a_class_replaces_its_node_pool_and_says_so() -> None:
    pools = _raw("gcp-dev")["gpuPools"]
    pools[0].pop("spot")
    pools[0]["capacity"] = ["spot", "on-demand"]
    diff = diff_plans(
        plan_of("gcp-dev").to_json(), plan_of("gcp-dev", {"gpufleet:gpuPools": pools}).to_json()
    )
    removed = {(c.type, c.name) for c in diff.removed}
    assert (NODE_POOL, "gpufleet-dev-l4-spot-pool") in removed
    added = {(c.type, c.name) for c in diff.added}
    assert (NODE_POOL, "gpufleet-dev-l4-spot-spot-pool") in added
    assert (NODE_POOL, "gpufleet-dev-l4-spot-on-demand-pool") in added
    assert (CLASS, "gpufleet-dev-l4-spot-class") in added
    assert not diff.changed or all(c.verdict != "replace" for c in diff.changed)
    text = render_text(diff)
    assert "GKE drains every node of the pool and deletes it: its pods are evicted" in text


def test_a_class_is_priced_at_the_dearest_capacity_it_may_fall_back_to() -> None:
    cost = stack_cost(parse_config(_raw()), date(2026, 11, 28))
    pools = {p.name: p for p in cost.pools}
    l4 = pools["l4"]
    (machine,) = l4.machine_types
    assert machine.on_demand is not None
    # [spot, on-demand]: on-demand, the dearest it may fall back to, at maxNodes; Spot is the
    # range's low end.
    assert machine.spot is not None and machine.spot < machine.on_demand
    assert l4.per_node_hour == machine.on_demand
    # GKE caps each of the class's node pools at maxNodes (4), not their sum (review rev-gke6
    # G6-8): full scale is 2 node pools x 4 nodes.
    assert l4.max_nodes == 8
    assert l4.at(l4.max_nodes) == pytest.approx(8 * machine.on_demand)
    assert pools["h100"].max_nodes == 4 * 2
    assert any("and at 2 x maxNodes (4) = 8 nodes" in w for w in cost.warnings)
    # The reserved priority's reservation is committed capacity, as for capacity: reserved.
    assert pools["h100"].committed_nodes == 2
    assert any("compute class [spot, on-demand] is priced at on-demand" in w for w in cost.warnings)


def _plain(name: str) -> dict[str, Any]:
    """A plain Spot L4 pool (one node pool of its own name) named `name`."""
    return {**_raw()["gpuPools"][1], "name": name, "capacity": "spot"}


def test_a_node_pool_name_a_class_makes_and_another_pool_takes_is_refused() -> None:
    """Class l4 makes node pools l4-spot and l4-od; a plain pool of either name would be a
    second node pool of that name, which GKE refuses (review rev-gke6 G6-2)."""
    raw = _raw()
    raw["gpuPools"] += [_plain("l4-spot"), _plain("l4-od")]
    assert _problems(raw) == [
        "gpuPools[2].name: makes GKE node pool l4-spot (gpuPools[2] (l4-spot)), as does "
        "gpuPools[1] (l4, its compute class's spot node pool): GKE node pool names are unique "
        "in a cluster (ALREADY_EXISTS); rename one of the two pools (got 'l4-spot')",
        "gpuPools[3].name: makes GKE node pool l4-od (gpuPools[3] (l4-od)), as does "
        "gpuPools[1] (l4, its compute class's on-demand node pool): GKE node pool names are "
        "unique in a cluster (ALREADY_EXISTS); rename one of the two pools (got 'l4-od')",
    ]
    # The edge: x beside x-spot is refused whichever comes first; x-spot2 is another name.
    raw = _raw()
    raw["gpuPools"].insert(0, _plain("l4-spot"))
    (problem,) = _problems(raw)
    assert problem.startswith("gpuPools[2].name: makes GKE node pool l4-spot (gpuPools[2] (l4")
    raw = _raw()
    raw["gpuPools"].append(_plain("l4-spot2"))
    parse_config(raw)
    # Two class pools: x-spot's node pools (x-spot-spot, x-spot-od) take none of x's.
    raw = _raw()
    raw["gpuPools"].append({**raw["gpuPools"][1], "name": "l4-spot"})
    parse_config(raw)


def _adopted_class(world: World) -> Any:
    """gcp-existing with its first pool a class l4 [spot, on-demand] (node pools l4-spot, l4-od)."""
    pools = copy.deepcopy(dict(load_stack("gcp-existing").gpufleet)["gpuPools"])
    pools[0].pop("spot")
    pools[0].update(name="l4", capacity=["spot", "on-demand"])
    return plan_stack(load_stack("gcp-existing"), {"gpufleet:gpuPools": pools}, world)


def test_an_adopted_clusters_node_pools_are_compared_with_the_node_pools_a_class_makes() -> None:
    """Review rev-gke6 G6-7: the owner's l4-od is the name the class's on-demand node pool
    takes (refused); the owner's l4 is no name the class makes (accepted)."""
    with pytest.raises(BadInput) as caught:
        _adopted_class(World("1.35.2", node_pools=("default-pool", "l4-od")))
    assert (
        "gpuPools[0].name: cluster platform-prod already has a node pool named l4-od (not "
        "gpufleet's), the name gpuPools[0] (l4, its compute class's on-demand node pool) makes: "
        "GKE refuses a second one; choose another name (got 'l4')"
    ) in str(caught.value)
    plan = _adopted_class(World("1.35.2", node_pools=("default-pool", "l4")))
    made = {r.inputs["name"] for r in plan.of_type(NODE_POOL)}
    assert made == {"l4-spot", "l4-od", "t4"}


def test_a_class_node_pool_from_an_earlier_up_is_gpufleets() -> None:
    """Its nodes carry gpufleet.io/pool with the class pool's name (not the node pool's)."""
    facts = GkeClusterFacts(
        cluster_id="projects/p/locations/us-central1/clusters/c",
        name="c",
        location="us-central1",
        master_version="1.35.2",
        workload_pool="p.svc.id.goog",
        release_channel=None,
        has_maintenance_window=True,
        dns_endpoint="c.example",
        ip_endpoint="",
        ca_certificate="",
        node_pools={"l4-od": {POOL_LABEL: "l4"}, "x-od": {POOL_LABEL: "x-od"}},
    )
    own = GpufleetNodePool(0, "l4", "l4-od", "on-demand")
    assert owner_pool_problems(facts, [own]) == []
    other = GpufleetNodePool(1, "x", "x-od", "on-demand")
    (problem,) = owner_pool_problems(facts, [own, other])
    assert problem.path == "gpuPools[1].name"


def _queued(capacity: list[str]) -> dict[str, Any]:
    raw = _with_l4(capacity=capacity)
    raw["queues"] = {"namespaces": ["ml-training"], "pools": [{"pool": "l4"}]}
    return raw


def test_a_queue_over_a_class_that_falls_back_to_spot_is_refused() -> None:
    """Review rev-gke6 G6-6: the queue's Jobs land on any priority of the class."""
    for capacity in (["on-demand", "spot"], ["reserved", "flex-start", "spot", "on-demand"]):
        raw = _queued(capacity)
        if "reserved" in capacity:
            raw["gpuPools"][1]["gcp"] = {"reservation": {"name": "l4-inference"}}
        (problem,) = [p for p in _problems(raw) if p.startswith("queues.pools[0]")]
        assert "never falls back to spot" in problem
        assert "remove spot from the pool's capacity, or list another pool" in problem
    # Without spot, accepted; a flex-start fallback is said, flex-start first is not.
    config = parse_config(_queued(["on-demand", "flex-start"]))
    (warning,) = [w for w in config.warnings if w.startswith("queues.pools[0]")]
    assert "Jobs its queue admits run on flex-start nodes whenever on-demand has no room" in warning
    config = parse_config(_queued(["flex-start", "on-demand"]))
    assert not [w for w in config.warnings if w.startswith("queues.pools[0]")]
