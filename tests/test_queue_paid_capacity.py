"""Kueue over paid capacity (`queues.pools`, issue 33 item 4): a Capacity Block's ClusterQueue
holds the block's size in quota, borrows an on-demand pool's unused quota through one cohort,
and `fit` and `consumers` follow.

The stack is tests/fixtures/capacity/aws-reserved-queues.yaml: `h200-block` (a Capacity Block of
2 p5en.48xlarge, 8 H200 each; maxNodes 4) borrows from `h200-od` (on-demand, maxNodes 3).
Objects are validated against Kueue v0.19.2's CRDs (tests/data/kueue_facts.json); cohortName is
v1beta2's field (kubernetes-sigs/kueue apis/kueue/v1beta2/clusterqueue_types.go @ 8eab687).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from components.model import kueue
from components.model.capacity import QUEUE_LABEL
from components.model.config import ConfigError, parse_config
from components.model.pool_spec import PoolSpec
from components.model.pools import resolve_pools
from components.tooling.consumers.shared import queue_lines
from components.tooling.fit import TemplateVerdict, fit_templates
from components.tooling.pool_views import pool_checks
from components.tooling.scheduling.workloads import read_workloads
from components.tooling.stacks import load_stack
from tests.conftest import plan_of
from tests.test_kueue import crd_schema, document, kueue_objects

STACK = str(Path(__file__).parent / "fixtures" / "capacity" / "aws-reserved-queues.yaml")
GPU = "nvidia.com/gpu"


def raw_of() -> dict[str, Any]:
    return copy.deepcopy(load_stack(STACK).gpufleet)


def specs_of(raw: dict[str, Any]) -> dict[str, PoolSpec]:
    return {spec.name: spec for spec in resolve_pools(parse_config(raw))}


def gpu_quota(queue: dict[str, Any]) -> dict[str, int]:
    """flavor -> its GPU nominalQuota."""
    (group,) = queue["spec"]["resourceGroups"]
    return {
        flavor["name"]: next(r["nominalQuota"] for r in flavor["resources"] if r["name"] == GPU)
        for flavor in group["flavors"]
    }


def problems_of(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def test_paid_pools_get_queues_in_one_cohort_valid_for_the_pinned_crds() -> None:
    objects = kueue_objects(plan_of(STACK))
    kinds = sorted((kind, name) for kind, _, name in objects)
    # No admission check: the nodes come as the autoscaler adds them, not through a
    # ProvisioningRequest.
    assert kinds == sorted(
        [
            (kind, f"gpufleet-{pool}")
            for kind in ("ResourceFlavor", "ClusterQueue")
            for pool in ("h200-block", "h200-od")
        ]
        + [("LocalQueue", "h200-block"), ("LocalQueue", "h200-od")]
    )
    for (kind, _, _), resource in objects.items():
        jsonschema.validate(document(resource), crd_schema(kind))
    block = document(objects[("ClusterQueue", "", "gpufleet-h200-block")])
    lender = document(objects[("ClusterQueue", "", "gpufleet-h200-od")])
    assert block["spec"]["cohortName"] == lender["spec"]["cohortName"] == "gpufleet-h200-od"
    assert "admissionChecksStrategy" not in block["spec"]
    # The block's quota is its 2 nodes x 8 GPUs; the lender's flavor comes second, with none
    # of the block's own (only borrowed); the lender holds maxNodes 3 x 8.
    assert gpu_quota(block) == {"gpufleet-h200-block": 16, "gpufleet-h200-od": 0}
    assert gpu_quota(lender) == {"gpufleet-h200-od": 24}
    # Every flavor of a group lists the group's covered resources (CEL rule of the CRD).
    for queue in (block, lender):
        (group,) = queue["spec"]["resourceGroups"]
        for flavor in group["flavors"]:
            assert [r["name"] for r in flavor["resources"]] == group["coveredResources"]


@pytest.mark.parametrize(("count", "gpus"), [(3, 24), (4, 32), (5, 32)])
def test_the_quota_is_the_reservations_size_up_to_max_nodes(count: int, gpus: int) -> None:
    raw = raw_of()
    raw["gpuPools"][0]["aws"]["capacityReservations"][0]["instanceCount"] = count
    block = specs_of(raw)["h200-block"]
    assert gpu_quota(kueue.cluster_queue(block))["gpufleet-h200-block"] == gpus


def verdict_of(raw: dict[str, Any], pods: int, queue: str = "h200-block") -> TemplateVerdict:
    manifest = f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: ml-training, labels: {{{QUEUE_LABEL}: {queue}}}}}
spec:
  parallelism: {pods}
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: x, resources: {{limits: {{{GPU}: 1}}}}}}]
"""
    (verdict,) = fit_templates(read_workloads(manifest).templates, pool_checks(parse_config(raw)))
    return verdict


def fitting(verdict: TemplateVerdict) -> list[str]:
    return [pool.pool for pool in verdict.pools if pool.fits]


def test_fit_judges_a_job_on_its_queues_flavors_at_the_quotas_edge() -> None:
    raw = raw_of()
    # 16 one-GPU pods: the block's whole quota. Kueue takes the first flavor whose quota fits
    # without borrowing (whenCanBorrow MayStopSearch), so never the lender's here.
    assert fitting(verdict_of(raw, 16)) == ["h200-block"]
    # One GPU over the block's quota: only borrowing admits it, on the lender's nodes.
    over = verdict_of(raw, 17)
    assert fitting(over) == ["h200-od"]
    (od,) = [p for p in over.pools if p.pool == "h200-od"]
    assert any(n.startswith("borrowed: when ClusterQueue gpufleet-h200-block") for n in od.notes)
    # One over the lender's quota as well: nothing ever admits it.
    assert fitting(verdict_of(raw, 25)) == []
    # Without borrowFrom the block alone: one GPU over its quota is refused.
    raw["queues"]["pools"][0].pop("borrowFrom")
    assert fitting(verdict_of(raw, 16)) == ["h200-block"]
    alone = verdict_of(raw, 17)
    assert fitting(alone) == []
    (block,) = [p for p in alone.pools if p.pool == "h200-block"]
    assert any(
        "more than ClusterQueue gpufleet-h200-block's quota of 16" in r for r in block.reasons
    ), block.reasons


def test_fit_says_an_unlabelled_job_bypasses_the_quota() -> None:
    manifest = f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: t, namespace: ml-training}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: x, resources: {{limits: {{{GPU}: 1}}}}}}]
"""
    (verdict,) = fit_templates(
        read_workloads(manifest).templates, pool_checks(parse_config(raw_of()))
    )
    (block,) = [p for p in verdict.pools if p.pool == "h200-block"]
    assert block.fits
    assert any(
        n.startswith(
            "the pool has a Kueue queue (queues.pools), but a workload without "
            f"{QUEUE_LABEL}=h200-block bypasses it"
        )
        for n in block.notes
    ), block.notes


def test_consumers_name_the_local_queue_and_the_quota() -> None:
    specs = specs_of(raw_of())
    lines = queue_lines(specs["h200-block"])
    assert f"      {QUEUE_LABEL}: h200-block" in lines
    assert lines[-1] == (
        "Kueue starts the Job when the pool's quota (2 nodes' worth) holds all its pods, else "
        "on pool h200-od by borrowing its unused quota."
    )


def test_queues_pools_are_refused_all_at_once_with_what_to_do() -> None:
    raw = raw_of()
    spot = {**raw["gpuPools"][1], "name": "h200-spot", "capacity": "spot"}
    raw["gpuPools"].append(spot)
    raw["queues"]["pools"] = [
        {"pool": "nope"},
        {"pool": "h200-spot"},
        {"pool": "h200-block", "borrowFrom": "h200-block"},
        {"pool": "h200-od", "borrowFrom": "h200-spot"},
    ]
    assert problems_of(raw) == [
        "queues.pools[0].pool: names no pool of gpuPools (h200-block, h200-od, h200-spot) "
        "(got 'nope')",
        "queues.pools[1].pool: pool h200-spot has capacity spot: a queue goes on capacity that "
        "starts with reserved, capacity-block, flex-start, on-demand and never falls back to "
        "spot (Spot nodes are taken back at any time, so quota over them admits Jobs that then "
        "lose nodes); remove spot from the pool's capacity, or list another pool "
        "(got 'h200-spot')",
        "queues.pools[2].borrowFrom: is the pool itself (got 'h200-block')",
        "queues.pools[3].borrowFrom: pool h200-spot has capacity spot: borrow from an on-demand "
        "pool (capacity: on-demand), the capacity that is there when a reservation is full "
        "(got 'h200-spot')",
    ]
    raw = raw_of()
    raw["queues"]["pools"] = [{"pool": "h200-block", "borrowFrom": "h200-od"}]
    assert problems_of(raw) == [
        "queues.pools[0].borrowFrom: must name another pool of queues.pools (its ClusterQueue "
        "lends the quota) (got 'h200-od')"
    ]


def test_a_private_gke_cluster_opens_kueues_ports_for_paid_pools_too() -> None:
    """Kueue's webhooks must be reachable from a private GKE control plane (docs/gke.md): the
    firewall rule comes with any pool that has a queue, not only a queued one."""
    raw = raw_of_stack("gcp-flex-start")
    pools = [pool for pool in raw["gpuPools"] if pool["name"] != "a3-queued"]
    queues = {**raw["queues"], "pools": [{"pool": "h100-flex"}, {"pool": "l4-reserved"}]}
    plan = plan_of("gcp-flex-start", {"gpufleet:gpuPools": pools, "gpufleet:queues": queues})
    firewalls = [r for r in plan.of_type("gcp:compute/firewall:Firewall") if "kueue" in r.name]
    assert firewalls, [r.name for r in plan.of_type("gcp:compute/firewall:Firewall")]
    objects = kueue_objects(plan)
    assert ("ClusterQueue", "", "gpufleet-h100-flex") in objects
    assert not [key for key in objects if key[0] == "AdmissionCheck"]


def raw_of_stack(stack: str) -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(stack).gpufleet))
