"""GKE capacity on the whole graph: flex-start, queued provisioning and reservations (specific by
name, shared, blocks, any), what each node pool sends, the Kueue objects of a queued pool, what
`fit`, `diff` and the cost say, and every bad input refused at once with what to do.

The stack is stacks/Pulumi.gcp-flex-start.yaml: an L4 pool on a shared reservation, a flex-start
H100 pool and a queued A3 Mega pool. Facts and sources: components/gcp/model/capacity.py.
"""

from __future__ import annotations

import copy
import json
import re
from datetime import date
from typing import Any

import jsonschema
import pytest

from components.gcp.model import capacity as gke
from components.model.capacity import QUEUE_LABEL
from components.model.config import ConfigError, parse_config
from components.model.cost import stack_cost
from components.model.pools import resolve_pools
from components.tooling.capacity_fit import Workload
from components.tooling.diff import diff_plans
from components.tooling.engine import Plan, RecordedResource
from components.tooling.fit import PoolVerdict, fit_check
from components.tooling.pool_views import PoolCheck, pool_checks
from components.tooling.scheduling.workloads import read_workloads
from components.tooling.stacks import load_stack
from tests.conftest import PINNED_TODAY, plan_of
from tests.test_kueue import crd_schema, document, kueue_objects

STACK = "gcp-flex-start"
NODE_POOL = "gcp:container/nodePool:NodePool"
# terraform-provider-google @e03b7622 node_config.go: consume_reservation_type's ValidateFunc.
TPG_RESERVATION_TYPES = (
    "UNSPECIFIED",
    "NO_RESERVATION",
    "ANY_RESERVATION",
    "SPECIFIC_RESERVATION",
    "ANY_RESERVATION_THEN_FAIL",
)


def raw() -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(STACK).gpufleet))


def problems_of(config: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(config)
    return [str(p) for p in caught.value.problems]


def node_pools(plan: Plan) -> dict[str, RecordedResource]:
    return {r.inputs["name"]: r for r in plan.of_type(NODE_POOL) if r.inputs["name"] != "system"}


def test_each_capacity_builds_the_node_pool_gke_documents() -> None:
    pools = node_pools(plan_of(STACK))
    flex, queued, reserved = pools["h100-flex"], pools["a3-queued"], pools["l4-reserved"]
    for pool in (flex, queued):
        config = pool.inputs["nodeConfig"]
        # --flex-start --reservation-affinity=none --no-enable-autorepair --location-policy=ANY
        # --num-nodes=0 --enable-autoscaling (how-to/provisioningrequest, dws-flex-start-training)
        assert config["flexStart"] is True and config["spot"] is False
        assert config["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
        assert pool.inputs["management"] == {"autoRepair": False, "autoUpgrade": True}
        assert pool.inputs["autoscaling"]["locationPolicy"] == "ANY"
        assert pool.inputs["autoscaling"]["totalMinNodeCount"] == 0
    assert flex.inputs["nodeConfig"]["maxRunDuration"] == "86400s"
    assert "queuedProvisioning" not in flex.inputs
    # Queued: nodes only through ProvisioningRequests; each Job says how long they run.
    assert queued.inputs["queuedProvisioning"] == {"enabled": True}
    assert "maxRunDuration" not in queued.inputs["nodeConfig"]
    # The shared reservation, as written, under GKE's key; no fallback; repaired as usual.
    assert reserved.inputs["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["projects/shared-gpu-capacity/reservations/l4-inference"],
    }
    assert reserved.inputs["management"]["autoRepair"] is True
    assert "flexStart" not in reserved.inputs["nodeConfig"]
    for pool in pools.values():
        config = pool.inputs["nodeConfig"]
        kind = config["reservationAffinity"]["consumeReservationType"]
        assert kind in TPG_RESERVATION_TYPES
        assert re.fullmatch(r"[0-9]+s", config.get("maxRunDuration", "1s"))
        # A queued pool replaced keeps its name: the old one goes first (GKE answers 409).
        assert pool.delete_before_replace is True


def test_gke_upgrades_flex_start_and_queued_pools_its_own_way_and_no_up_fights_it() -> None:
    """GKE sets SHORT_LIVED on flex-start and queued pools (node-pool-upgrade-strategies);
    the provider takes only SURGE or BLUE_GREEN, so sending any upgrade settings would differ
    from GKE's answer after every refresh. Other pools keep one node at a time, no surge."""
    pools = node_pools(plan_of(STACK))
    for name in ("h100-flex", "a3-queued"):
        assert "upgradeSettings" not in pools[name].inputs, name
        assert "upgradeSettings" in pools[name].ignore_changes, name
    reserved = pools["l4-reserved"]
    assert reserved.inputs["upgradeSettings"]["strategy"] == "SURGE"
    assert "upgradeSettings" not in reserved.ignore_changes


def test_what_the_scheduler_sees_on_flex_start_and_queued_nodes() -> None:
    outputs = {p["name"]: p for p in plan_of(STACK).outputs["gpuPools"]}
    for name in ("h100-flex", "a3-queued"):
        assert outputs[name]["nodeLabels"]["cloud.google.com/gke-flex-start"] == "true"
    assert "cloud.google.com/gke-flex-start" not in outputs["l4-reserved"]["nodeLabels"]
    queued_taint = {"key": "cloud.google.com/gke-queued", "value": "true", "effect": "NoSchedule"}
    assert queued_taint in outputs["a3-queued"]["nodeTaints"]
    assert queued_taint not in outputs["h100-flex"]["nodeTaints"]


def test_the_queued_pool_gets_kueue_with_gkes_provisioning_class() -> None:
    plan = plan_of(STACK)
    objects = kueue_objects(plan)
    assert sorted(k[0] for k in objects) == [
        "AdmissionCheck",
        "ClusterQueue",
        "LocalQueue",
        "ProvisioningRequestConfig",
        "ResourceFlavor",
    ]
    for (kind, _, _), resource in objects.items():
        jsonschema.validate(document(resource), crd_schema(kind))
    by_kind = {kind: resource.inputs["spec"] for (kind, _, _), resource in objects.items()}
    assert by_kind["ProvisioningRequestConfig"]["provisioningClassName"] == (
        "queued-provisioning.gke.io"
    )
    # Kueue adds the flavor's tolerations to admitted pods: GKE's queued taint included.
    assert {
        "key": "cloud.google.com/gke-queued",
        "operator": "Equal",
        "value": "true",
        "effect": "NoSchedule",
    } in by_kind["ResourceFlavor"]["tolerations"]
    quota = {
        r["name"]: r["nominalQuota"]
        for r in by_kind["ClusterQueue"]["resourceGroups"][0]["flavors"][0]["resources"]
    }
    assert quota["nvidia.com/gpu"] == 4 * 8  # maxNodes x 8 H100
    (release,) = [r for r in plan.resources if r.type.endswith("Release") and "kueue" in r.name]
    # Kueue's controller on the system pool, never on a GPU node it would hold up.
    assert release.inputs["values"]["controllerManager"]["nodeSelector"] == {
        "cloud.google.com/gke-nodepool": "system"
    }


JOB = """
apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: ml-training, labels: {labels}}}
spec:
  parallelism: {pods}
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {{cloud.google.com/gke-nodepool: {pool}}}
      tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
      containers:
      - name: main
        image: example.com/train:1
        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""


def verdict(
    checks: dict[str, PoolCheck], pool: str, pods: int, gpus: int, queue: bool
) -> PoolVerdict:
    labels = json.dumps({QUEUE_LABEL: pool} if queue else {})
    (template,) = read_workloads(
        JOB.format(labels=labels, pods=pods, pool=pool, gpus=gpus)
    ).templates
    workload = Workload(template.pods, template.labels, template.namespace)
    return fit_check(template.spec, checks[pool], workload)


def test_fit_says_a_queued_job_waits_for_all_its_nodes_from_gkes_scheduler() -> None:
    checks = {c.name: c for c in pool_checks(parse_config(raw()))}
    # Labelled: admitted with the flavor's tolerations, GKE's queued taint included.
    whole = verdict(checks, "a3-queued", pods=4, gpus=8, queue=True)
    assert whole.fits, whole.reasons
    (note,) = [n for n in whole.notes if n.startswith("queued")]
    assert note.startswith(
        "queued, all or nothing: the Job waits in Kueue until all 4 nodes for its 4 pods can be "
        "had at once (the autoscaler (GKE's Dynamic Workload Scheduler) obtains every node the "
        "Job needs at once"
    )
    assert not verdict(checks, "a3-queued", pods=5, gpus=8, queue=True).fits  # > maxNodes 4
    unlabelled = verdict(checks, "a3-queued", pods=1, gpus=8, queue=False)
    assert not unlabelled.fits
    assert any("its nodes come only through ProvisioningRequests" in r for r in unlabelled.reasons)


def test_fit_names_the_cap_the_shared_reservation_puts_on_its_pool() -> None:
    config = raw()
    config["gpuPools"][0]["gcp"]["reservation"]["count"] = 2
    checks = {c.name: c for c in pool_checks(parse_config(config))}
    pod = verdict(checks, "l4-reserved", pods=1, gpus=1, queue=False)
    assert pod.fits
    assert (
        "at most 2 nodes at once, not maxNodes 3: every node comes from reservation "
        "projects/shared-gpu-capacity/reservations/l4-inference (2 x g2-standard-8 in "
        "us-central1-a)"
    ) in pod.notes
    # The older spelling, a name alone, gives no cap (the size is not written).
    config["gpuPools"][0]["gcp"]["reservation"] = "l4-inference"
    (spec,) = [s for s in resolve_pools(parse_config(config)) if s.name == "l4-reserved"]
    assert spec.capacity == ("reserved",) and spec.reservation_cap is None


def test_gcp_reservation_alone_still_means_that_specific_reservation() -> None:
    """Stacks written before `capacity`: `gcp.reservation: NAME` keeps building the same pool."""
    config = raw()
    l4 = config["gpuPools"][0]
    del l4["capacity"]
    l4["gcp"]["reservation"] = "l4-block-1"
    (spec,) = [s for s in resolve_pools(parse_config(config)) if s.name == "l4-reserved"]
    assert spec.capacity == ("reserved",)
    # Writing `capacity: on-demand` beside it is a contradiction, said so.
    l4["capacity"] = "on-demand"
    (problem,) = problems_of(config)
    assert problem.startswith("gpuPools[0].gcp.reservation: capacity: on-demand consumes no")


def test_a3_ultra_and_a4_are_offered_as_flex_start_instead_of_on_demand() -> None:
    config = raw()
    h200 = {"name": "h200", "accelerator": "h200-141gb", "zones": ["us-central1-b"]}
    config["gpuPools"] = [h200]
    config.pop("queues")
    (problem,) = problems_of(config)
    assert problem.startswith(
        "gpuPools[0].spot: a3-ultragpu-8g is sold on demand only from a reservation: write "
        "capacity: flex-start (Dynamic Workload Scheduler, up to 7 days per node)"
    )
    for capacity in ("flex-start", "spot"):
        config["gpuPools"] = [{**h200, "capacity": capacity}]
        parse_config(config)
    config["gpuPools"] = [{**h200, "capacity": ["reserved", "on-demand"]}]
    (problem,) = problems_of(config)
    assert problem.startswith("gpuPools[0].capacity: a3-ultragpu-8g is sold on demand only")
    # A3 High 1g/2g/4g: Spot or flex-start only.
    small = {"name": "h100", "accelerator": "h100-80gb", "machineType": "a3-highgpu-4g"}
    config["gpuPools"] = [{**small, "capacity": "flex-start"}]
    parse_config(config)


def test_every_bad_capacity_input_is_refused_at_once_with_key_value_and_what_to_do() -> None:
    config = raw()
    reserved, flex, queued = config["gpuPools"]
    pools = [
        {**flex, "name": "p0", "spot": True},
        {**queued, "name": "p1", "minNodes": 1},
        {
            **reserved,
            "name": "p2",
            "zones": ["us-central1-b"],
            "gcp": {
                "reservation": {
                    "name": "l4-inference",
                    "zones": ["us-central1-a"],
                    "machineType": "g2-standard-24",
                }
            },
        },
        {**flex, "name": "p3", "gcp": {"maxRunDurationSeconds": 700000}},
        {**flex, "name": "p4", "accelerator": "t4", "machineType": "n1-standard-8"},
        {**reserved, "name": "p5", "capacity": ["reserved", "on-demand"]},
        {**reserved, "name": "p6", "gcp": {}},
        {**reserved, "name": "p7", "gcp": {"reservation": "projects/x/reservations/Bad_Name"}},
        {**queued, "name": "p8", "gcp": {"maxRunDurationSeconds": 3600}},
        {**reserved, "name": "p9", "capacity": "capacity-block", "gcp": {}},
        {**reserved, "name": "p10", "gcp": {"reservation": 3}},
    ]
    config["gpuPools"] = pools
    found = problems_of(config)
    expected = [
        "gpuPools[0].spot: contradicts gpuPools[0].capacity (flex-start): spot: true means "
        "capacity: spot exactly; remove spot",
        "gpuPools[1].minNodes: must be 0 for a queued pool: its nodes come only through "
        "ProvisioningRequests, so GKE keeps none waiting (queued node pools autoscale from 0); "
        "remove minNodes (got 1)",
        "gpuPools[2].gcp.reservation.machineType: the pool's nodes are g2-standard-8: GKE "
        "consumes a specific reservation only with VMs of its machine type; use a reservation "
        "of g2-standard-8, or set the pool's machineType to g2-standard-24 (got "
        "'g2-standard-24')",
        "gpuPools[2].zones: a specific reservation is zonal: l4-inference is in us-central1-a "
        "(gcp.reservation.zones), so nodes in us-central1-b would find no reservation and never "
        "start; limit the pool to those zones (got ['us-central1-b'])",
        "gpuPools[3].gcp.maxRunDurationSeconds: must be whole seconds from 1 to 604800 (7 days, "
        "GKE's most and its default for a flex-start node) (got 700000)",
        "gpuPools[4].machineType: n1-standard-8 cannot be flex-start: flex-start VMs (queued "
        "pools run on them too) come only on the accelerator-optimized series A2, A3, A4 and G2",
        "gpuPools[5].gcp.reservation: a specific reservation does not fall back to on-demand VMs "
        "on GKE",
        "gpuPools[6].gcp.reservation: is required with capacity: reserved",
        "gpuPools[7].gcp.reservation.name: must be a reservation (NAME, "
        "projects/PROJECT/reservations/NAME",
        "gpuPools[8].gcp.maxRunDurationSeconds: a queued pool's nodes run as long as each Job "
        "asks: annotate the Job with provreq.kueue.x-k8s.io/maxRunDurationSeconds",
        "gpuPools[9].capacity: not supported on gcp yet; supported here: on-demand, spot, "
        "reserved, [reserved, on-demand], flex-start, queued; a GKE node pool has one capacity",
        "gpuPools[10].gcp.reservation: must be a reservation name, or a mapping: name, zones, "
        "machineType, count (got 3)",
    ]
    for start in expected:
        assert any(p.startswith(start) for p in found), (start, found)
    assert len(found) == len(expected), found


def test_flex_start_and_queued_need_gkes_version_floor() -> None:
    config = raw()
    config["cluster"]["kubernetesVersion"] = "1.31"
    config["cluster"]["gcp"]["releaseChannel"] = "EXTENDED"
    found = problems_of(config)
    for index, word in ((1, "flex-start"), (2, "queued")):
        assert (
            f"gpuPools[{index}].capacity: {word} needs GKE 1.32.2-gke.1652000 or later; "
            f"cluster.kubernetesVersion is 1.31: raise it to 1.32 or later, or choose another "
            f"capacity (got '{word}')"
        ) in found, found
    assert not any(p.startswith("gpuPools[0].capacity") for p in found)
    assert gke.gke_version_at_least("1.32", "1.32") and not gke.gke_version_at_least("1.9", "1.32")


def test_what_gpufleet_cannot_check_offline_is_said() -> None:
    warnings = parse_config(raw()).warnings
    (said,) = [w for w in warnings if w.startswith("gpuPools[0].gcp.reservation")]
    assert "not checked offline: that projects/shared-gpu-capacity/reservations/l4-inference " in (
        said
    )
    assert "is shared with project ml-training-prod" in said
    config = raw()
    l4, flex, _ = config["gpuPools"]
    l4["gcp"]["reservation"]["count"] = 2
    flex["minNodes"] = 1
    warnings = parse_config(config).warnings
    assert (
        "gpuPools[0].maxNodes: 3, but projects/shared-gpu-capacity/reservations/l4-inference "
        "holds 2 VMs: at most 2 nodes at once"
    ) in warnings
    assert any(w.startswith("gpuPools[1].minNodes: 1 flex-start nodes are kept") for w in warnings)


def test_flex_start_is_priced_at_its_on_demand_ceiling_and_a_shared_reservation_is_not_ours() -> (
    None
):
    # Issue 31: a figure for every pool; what it stands for is said, never silent.
    cost = stack_cost(parse_config(raw()), PINNED_TODAY)
    priced = {pool.name: pool for pool in cost.pools}
    flex = priced["h100-flex"].machine_types[0]
    assert priced["h100-flex"].per_node_hour == flex.on_demand is not None
    assert "on-demand price as a ceiling" in flex.estimate and flex.spot is None
    assert cost.idle is not None and cost.max is not None
    said = "\n".join(cost.warnings)
    assert "pool h100-flex: a3-highgpu-8g in us-central1: estimate: " in said
    # The reservation is shared from project shared-gpu-capacity: its bill is not this stack's.
    assert priced["l4-reserved"].committed_nodes == 0
    assert "is project shared-gpu-capacity's: its VMs are billed there" in said
    # Any matching reservation, then on demand: on-demand is the most a node costs.
    config = raw()
    l4 = config["gpuPools"][0]
    l4["capacity"], l4["gcp"] = ["reserved", "on-demand"], {}
    fallback = stack_cost(parse_config(config), date(2026, 11, 22))
    assert {p.name: p.per_node_hour for p in fallback.pools}["l4-reserved"] is not None
    assert any(
        "pool l4-reserved: capacity [reserved, on-demand] is priced at on-demand" in w
        for w in fallback.warnings
    )


def test_moving_a_pool_between_capacities_replaces_it_deleting_first() -> None:
    before = plan_of(STACK)
    config = raw()
    config["gpuPools"][1].pop("capacity")  # flex-start -> on-demand
    config["gpuPools"][1].pop("gcp")
    config["gpuPools"][2]["capacity"] = "flex-start"  # queued -> flex-start
    config.pop("queues")
    after = plan_of(STACK, {"gpufleet:gpuPools": config["gpuPools"], "gpufleet:queues": None})
    diff = diff_plans(before.to_json(), after.to_json())
    changes = {c.name: c for c in diff.changed if c.type == NODE_POOL}
    flex, queued = changes["gpufleet-dws-h100-flex-pool"], changes["gpufleet-dws-a3-queued-pool"]
    assert flex.verdict == queued.verdict == "replace"
    assert {"nodeConfig.flexStart", "nodeConfig.maxRunDuration"} <= set(flex.replace_paths)
    assert (
        "queuedProvisioning" in queued.replace_paths
    )  # ForceNew (resource_container_node_pool.go)
    # deleteBeforeReplace: the name is free when the new pool comes; no refusal.
    assert not flex.refusals and not queued.refusals
    # The last queued pool gone: Kueue goes with it.
    assert any("kueue" in ref.name for ref in diff.removed)
