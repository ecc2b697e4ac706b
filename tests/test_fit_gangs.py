"""`fit` judges a workload whose pods must run together as a whole, on every pool: a Job's
`parallelism` (capped by `completions`), a JobSet's replicated jobs, a Kueue pod group. A pool
that holds fewer of them at once (by maxNodes, a reservation or Capacity Block, or one zone's
share) does not fit it, and says what to change; each limit is tested at its edge.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from components.model.config import parse_config
from components.tooling.fit import PoolVerdict, TemplateVerdict, fit_templates
from components.tooling.pool_views import needs_plan, pool_checks
from components.tooling.scheduling.workloads import read_workloads
from components.tooling.stacks import load_stack
from tests.conftest import plan_of


def job(
    parallelism: int,
    gpus: int,
    *,
    completions: int | None = None,
    selector: dict[str, str] | None = None,
    affinity: dict[str, Any] | None = None,
    kind: str = "Job",
) -> str:
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "tolerations": [{"operator": "Exists"}],
        "containers": [{"name": "rank", "resources": {"limits": {"nvidia.com/gpu": gpus}}}],
    }
    if selector:
        pod["nodeSelector"] = selector
    if affinity:
        pod["affinity"] = affinity
    spec: dict[str, Any] = {"parallelism": parallelism, "template": {"spec": pod}}
    if completions is not None:
        spec["completions"] = completions
    if kind == "Deployment":
        spec = {"replicas": parallelism, "template": {"spec": pod}}
    api = "batch/v1" if kind == "Job" else "apps/v1"
    return yaml.safe_dump(
        {"apiVersion": api, "kind": kind, "metadata": {"name": "t"}, "spec": spec}
    )


def verdicts(stack: str, manifest: str, raw: dict[str, Any] | None = None) -> list[TemplateVerdict]:
    """`raw` edits only pools whose autoscaler view is their own (managed groups): the shipped
    stack's planned auto scaling groups still stand for its self-managed ones."""
    config = parse_config(raw if raw is not None else dict(load_stack(stack).gpufleet))
    resources = plan_of(stack).resources if needs_plan(config) else None
    return fit_templates(read_workloads(manifest).templates, pool_checks(config, resources))


def pools(stack: str, manifest: str, raw: dict[str, Any] | None = None) -> dict[str, PoolVerdict]:
    (verdict,) = verdicts(stack, manifest, raw)
    return {pool.pool: pool for pool in verdict.pools}


def test_an_8_pod_job_does_not_fit_a_pool_that_holds_4_of_its_pods() -> None:
    """aws-training's h100 pool: p5.48xlarge (8 GPUs), maxNodes 2: two 4-GPU pods per node."""
    h100 = pools("aws-training", job(8, 4))["h100"]
    assert not h100.fits
    assert h100.reasons == (
        "the Job runs 8 pods at once, but this pool holds 4 of them at once (2 per node, "
        "maxNodes 2): they need 4 nodes; raise the pool's maxNodes to 4, or run at most 4 at "
        "once",
    )
    # The edge: 4 pods fill the pool exactly; 5 are one too many.
    assert pools("aws-training", job(4, 4))["h100"].fits
    assert not pools("aws-training", job(5, 4))["h100"].fits
    # Completions cap the pods at once (Kueue and the Job controller count min of both).
    assert pools("aws-training", job(8, 4, completions=4))["h100"].fits


def test_the_whole_job_is_judged_on_every_pool_and_the_command_fails() -> None:
    (verdict,) = verdicts("aws-training", job(16, 8))
    assert not verdict.fits
    assert verdict.pods == 16
    assert verdict.together == "the Job runs 16 pods at once"
    for pool in verdict.pools:
        assert not pool.fits


def test_pods_that_run_on_their_own_are_only_noted() -> None:
    """A Deployment's replicas do not wait for each other: those without a node stay Pending."""
    h100 = pools("aws-training", job(6, 8, kind="Deployment"))["h100"]
    assert h100.fits
    assert (
        "only 2 of its 6 pods run at once (one per node, maxNodes 2); the others stay Pending "
        "until one ends"
    ) in h100.notes


def test_a_capacity_block_caps_the_job_at_its_instances() -> None:
    """aws-training's h100-block: every node from a 2-instance Capacity Block."""
    raw = copy.deepcopy(dict(load_stack("aws-training").gpufleet))
    (block,) = [p for p in raw["gpuPools"] if p["name"] == "h100-block"]
    block["maxNodes"] = 4
    block["aws"]["capacityReservations"][0]["instanceCount"] = 3
    within = pools("aws-training", job(3, 8), raw)["h100-block"]
    assert within.fits, within.reasons
    over = pools("aws-training", job(4, 8), raw)["h100-block"]
    assert over.reasons == (
        "the Job runs 4 pods at once, but this pool holds 3 of them at once (one per node, "
        "every node comes from Capacity Block cr-0123456789abcdef0 (3 x p5.48xlarge), at most "
        "3 nodes): they need 4 nodes; buy a Capacity Block of 4 instances, or run at most 3 at "
        "once",
    )


def test_a_reservation_with_an_on_demand_fallback_does_not_cap_the_job() -> None:
    h100 = pools("aws-reserved", job(8, 4))["h100"]  # 2 reserved, then on-demand, maxNodes 4
    assert h100.fits
    assert not pools("aws-reserved", job(9, 4))["h100"].fits


ZONE = "topology.kubernetes.io/zone"


def _four_h100_nodes_over_two_zones() -> dict[str, Any]:
    raw = copy.deepcopy(dict(load_stack("aws-training").gpufleet))
    raw["gpuPools"][0]["maxNodes"] = 4  # h100: us-west-2a and us-west-2b, 2 per zone
    return raw


def test_pods_kept_to_one_zone_get_one_zones_share_of_max_nodes() -> None:
    raw = _four_h100_nodes_over_two_zones()
    pinned = {ZONE: "us-west-2a"}
    assert pools("aws-training", job(2, 8, selector=pinned), raw)["h100"].fits
    over = pools("aws-training", job(3, 8, selector=pinned), raw)["h100"]
    assert over.reasons == (
        "the Job runs 3 pods at once, but this pool holds 2 of them at once (one per node, its "
        f"pods keep to one zone (nodeSelector {ZONE}=us-west-2a) and one zone of the pool holds "
        "at most 2 nodes (maxNodes 4 over 2 zones)): they need 3 nodes; let one zone of the pool "
        "hold 3 nodes (its nodes per zone, or a pool of that one zone), or run at most 2 at once",
    )
    # Spread over both zones, the whole pool takes them.
    assert pools("aws-training", job(4, 8), raw)["h100"].fits
    # A required pod affinity over the zone keeps them to one zone too (NCCL jobs ask it).
    together = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"job": "t"}}, "topologyKey": ZONE}
            ]
        }
    }
    assert not pools("aws-training", job(3, 8, affinity=together), raw)["h100"].fits


JOBSET = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {{name: llm, namespace: ml-training, labels: {labels}}}
spec:
  replicatedJobs:
  - name: leader
    template:
      spec:
        template:
          spec:
            tolerations: [{{operator: Exists}}]
            containers: [{{name: l, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}]
  - name: workers
    replicas: {workers}
    template:
      spec:
        parallelism: {parallelism}
        template:
          spec:
            tolerations: [{{operator: Exists}}]
            containers: [{{name: w, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}]
"""


def jobset(workers: int, parallelism: int = 1, queue: str | None = None) -> str:
    labels = {"kueue.x-k8s.io/queue-name": queue} if queue else {}
    return JOBSET.format(workers=workers, parallelism=parallelism, labels=labels)


def test_a_jobset_runs_every_replicated_job_at_once() -> None:
    leader, workers = verdicts("aws-training", jobset(workers=2))
    assert (leader.pods, workers.pods) == (1, 2)
    assert workers.together == (
        "JobSet llm runs all its replicated jobs at once (leader 1, workers 2: 3 pods)"
    )
    # h100 holds 2 nodes: each replicated job alone would fit, not the three pods together.
    for verdict in (leader, workers):
        (h100,) = [p for p in verdict.pools if p.pool == "h100"]
        assert not h100.fits
        assert (
            "they need at least 3 nodes at once, but it holds 2 nodes (maxNodes 2)"
            in (h100.reasons[0])
        )
    leader, workers = verdicts("aws-training", jobset(workers=1))
    assert all(p.fits for v in (leader, workers) for p in v.pools if p.pool == "h100")
    # Replicas x parallelism: 2 Jobs of 2 pods.
    _, workers = verdicts("aws-training", jobset(workers=2, parallelism=2))
    assert workers.pods == 4


def test_a_kueue_pod_group_is_judged_whole() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "rank-0",
            "labels": {"kueue.x-k8s.io/pod-group-name": "ranks"},
            "annotations": {"kueue.x-k8s.io/pod-group-total-count": "3"},
        },
        "spec": yaml.safe_load(job(1, 8))["spec"]["template"]["spec"],
    }
    (verdict,) = verdicts("aws-training", yaml.safe_dump(pod))
    assert verdict.pods == 3
    (h100,) = [p for p in verdict.pools if p.pool == "h100"]
    assert h100.reasons[0].startswith(
        "Kueue admits pod group ranks (3 pods) whole, but this pool holds 2 of them at once"
    )


@pytest.mark.parametrize(("parallelism", "fits"), [(4, True), (5, False)])
def test_fit_exits_1_for_a_job_no_pool_holds(
    parallelism: int, fits: bool, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    from components.tooling.cli import main

    manifest = tmp_path / "job.yaml"
    manifest.write_text(job(parallelism, 8, selector={"gpufleet.io/pool": "a100-spot"}))
    assert main(["fit", "aws-training", str(manifest)]) == (0 if fits else 1)
    out = capsys.readouterr().out
    assert ("=> schedules on: a100-spot" in out) == fits
