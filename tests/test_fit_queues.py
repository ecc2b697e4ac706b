"""`fit` on Jobs labelled for a Kueue queue, as Kueue v0.19.2 treats them with gpufleet's
configuration (review capacity-cost-3.md N-S3-1): in a namespace Kueue manages, the queue's pool
is the Job's only pool, and a Job its ClusterQueue never admits fits nowhere; in a namespace it
does not manage, the Job runs at once, unqueued, and fit says so.

The stack is gcp-flex-start: `a3-queued` (a3-megagpu-8g, 8 GPUs a node, maxNodes 4) is queued
with LocalQueues in `ml-training`; `h100-flex` (a3-highgpu-8g, maxNodes 2) takes 8-GPU pods too.
"""

from __future__ import annotations

from typing import Any

import yaml

from components.model.capacity import QUEUE_LABEL
from components.model.config import parse_config
from components.tooling.fit import TemplateVerdict, fit_templates
from components.tooling.pool_views import pool_checks
from components.tooling.scheduling.workloads import read_workloads
from components.tooling.stacks import load_stack

STACK = "gcp-flex-start"


def job(
    parallelism: int,
    *,
    queue: str | None = "a3-queued",
    namespace: str | None = "ml-training",
    gpus: int = 8,
    cpu: str | None = None,
    limits: dict[str, Any] | None = None,
    tolerate: tuple[str, ...] = ("nvidia.com/gpu",),
) -> str:
    metadata: dict[str, Any] = {"name": "train"}
    if namespace is not None:
        metadata["namespace"] = namespace
    if queue is not None:
        metadata["labels"] = {QUEUE_LABEL: queue}
    requests = {"cpu": cpu} if cpu else {}
    pod = {
        "restartPolicy": "Never",
        "tolerations": [
            {"key": key, "operator": "Exists", "effect": "NoSchedule"} for key in tolerate
        ],
        "containers": [
            {
                "name": "rank",
                "resources": {
                    "limits": {"nvidia.com/gpu": gpus, **(limits or {})},
                    "requests": requests,
                },
            }
        ],
    }
    return yaml.safe_dump(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": metadata,
            "spec": {"parallelism": parallelism, "template": {"spec": pod}},
        }
    )


def verdict_of(manifest: str, stack: str = STACK) -> TemplateVerdict:
    config = parse_config(dict(load_stack(stack).gpufleet))
    (verdict,) = fit_templates(read_workloads(manifest).templates, pool_checks(config))
    return verdict


def fitting(verdict: TemplateVerdict) -> list[str]:
    return [pool.pool for pool in verdict.pools if pool.fits]


def test_a_job_its_queue_never_admits_fails_the_check() -> None:
    """N-S3-1 (a): 5 pods of 8 GPUs need 5 nodes; the queue's pool has maxNodes 4."""
    verdict = verdict_of(job(5))
    assert not verdict.fits
    (a3,) = [p for p in verdict.pools if p.pool == "a3-queued"]
    assert a3.reasons == (
        "Kueue admits a Job whole or not at all: its 5 pods need 5 nodes (1 per node), more than "
        "the pool's maxNodes 4 (its ClusterQueue quota), so it waits in the queue forever; run "
        "fewer pods at once or raise maxNodes",
    )
    # h100-flex would take its pods, but Kueue never lets them reach it.
    (flex,) = [p for p in verdict.pools if p.pool == "h100-flex"]
    assert flex.reasons == (
        "Kueue admits it through LocalQueue a3-queued, whose ResourceFlavor gpufleet-a3-queued "
        "puts its pods on pool a3-queued only",
    )
    # The edge: 4 pods are admitted whole.
    assert fitting(verdict_of(job(4))) == ["a3-queued"]


def test_an_admitted_job_runs_on_its_queues_pool_only() -> None:
    """N-S3-1 (b): the flavor's node labels put the admitted pods on a3-queued alone."""
    verdict = verdict_of(job(1))
    assert fitting(verdict) == ["a3-queued"]
    (a3,) = [p for p in verdict.pools if p.pool == "a3-queued"]
    assert any(
        note.startswith("queued, all or nothing: the Job waits in Kueue") for note in a3.notes
    )


def test_a_job_in_a_namespace_kueue_does_not_manage_runs_unqueued() -> None:
    """N-S3-1 (c): Kueue's webhooks and reconciler skip `default`; the Job starts at once on a
    pool that takes it, and the queued pool (nodes only through ProvisioningRequests) does not."""
    verdict = verdict_of(job(2, namespace="default"))
    assert verdict.notes == (
        f"labelled {QUEUE_LABEL}=a3-queued, but namespace default is not managed by Kueue (it "
        "manages queues.namespaces: ml-training): the workload runs at once, unqueued, and its "
        "pods no longer start all together; create it in one of those namespaces",
    )
    assert fitting(verdict) == ["h100-flex"]
    (a3,) = [p for p in verdict.pools if p.pool == "a3-queued"]
    assert any("in a namespace Kueue does not manage never gets a node" in r for r in a3.reasons)
    assert not any("never admits" in r for p in verdict.pools for r in p.reasons)


def test_a_queue_the_stack_does_not_make_admits_nothing() -> None:
    verdict = verdict_of(job(1, queue="batch"))
    assert not verdict.fits
    for pool in verdict.pools:
        assert pool.reasons == (
            f"labelled {QUEUE_LABEL}=batch, but this stack makes no LocalQueue batch in namespace "
            "ml-training (its queues: a3-queued): Kueue keeps the workload suspended until a "
            "queue of that name exists; label it for one of them",
        )


def test_a_job_without_a_namespace_is_judged_as_managed_and_said_so() -> None:
    verdict = verdict_of(job(1, namespace=None))
    assert fitting(verdict) == ["a3-queued"]
    assert verdict.notes == (
        "no namespace in the manifest: judged as created in one Kueue manages "
        "(queues.namespaces: ml-training); in any other it runs at once, unqueued",
    )


def test_a_queue_label_on_a_stack_without_kueue_is_said_to_do_nothing() -> None:
    verdict = verdict_of(job(1, queue="a3-queued"), stack="gcp-dev")
    assert verdict.notes[0].startswith(
        f"labelled {QUEUE_LABEL}=a3-queued, but this stack has no queued pool and installs no Kueue"
    )


def test_a_request_beyond_the_cluster_queues_quota_is_never_admitted() -> None:
    """Pods that each fit a node but ask, all together, for more cpu than maxNodes nodes have:
    the quota is nodes' worth of every resource. A resource the queue does not cover blocks it."""
    config = parse_config(dict(load_stack(STACK).gpufleet))
    (a3,) = [c for c in pool_checks(config) if c.name == "a3-queued"]
    cpu_millis = a3.views[0][1].node.cpu_millis
    # Two replicated jobs of one pod each on one node's worth of cpu... within 4 nodes.
    sets = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {{name: big, namespace: ml-training, labels: {{{label}: a3-queued}}}}
spec:
  replicatedJobs:
  - name: a
    replicas: {a}
    template: {{spec: {{template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: {cpu}m}}, limits: {{nvidia.com/gpu: 1}}}}}}]}}}}}}}}
  - name: b
    replicas: {b}
    template: {{spec: {{template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: {cpu}m}}, limits: {{nvidia.com/gpu: 1}}}}}}]}}}}}}}}
"""
    within = sets.format(label=QUEUE_LABEL, a=2, b=2, cpu=cpu_millis)
    over = sets.format(label=QUEUE_LABEL, a=3, b=2, cpu=cpu_millis)
    assert all(fitting(v) == ["a3-queued"] for v in verdicts(within))
    for verdict in verdicts(over):
        (pool,) = [p for p in verdict.pools if p.pool == "a3-queued"]
        assert any(
            r.startswith("its 5 pods request")
            and "cpu in all, more than ClusterQueue gpufleet-a3-queued's quota" in r
            for r in pool.reasons
        ), pool.reasons
    hugepages = job(1, limits={"hugepages-2Mi": "2Mi"})
    (pool,) = [p for p in verdict_of(hugepages).pools if p.pool == "a3-queued"]
    assert any(
        r.startswith(
            "it requests hugepages-2Mi, which ClusterQueue gpufleet-a3-queued does not cover"
        )
        for r in pool.reasons
    )


def verdicts(manifest: str) -> list[TemplateVerdict]:
    config = parse_config(dict(load_stack(STACK).gpufleet))
    return fit_templates(read_workloads(manifest).templates, pool_checks(config))


def test_an_aks_queued_pool_takes_only_what_its_queue_admits() -> None:
    """azure-reserved's `train` pool carries gpufleet's gpufleet.io/queued taint, which only the
    flavor's toleration (added to admitted pods) tolerates."""
    pod: dict[str, Any] = {"queue": "train", "tolerate": ("sku",), "gpus": 4}
    admitted = verdict_of(job(2, namespace="ml-training", **pod), stack="azure-reserved")
    unqueued = verdict_of(job(2, namespace="default", **pod), stack="azure-reserved")
    assert "train" in fitting(admitted)
    assert "train" not in fitting(unqueued)


def test_a_queued_pool_that_refuses_the_pod_says_nothing_of_its_queue() -> None:
    """Review capacity-cost-3 N-S5-2: the all-or-nothing note was printed on a pool row that
    fails because a node has fewer GPUs than the pod asks for."""
    pod: dict[str, Any] = {"queue": "train", "tolerate": ("sku",), "gpus": 8}
    (train,) = [
        p for p in verdict_of(job(1, **pod), stack="azure-reserved").pools if p.pool == "train"
    ]
    assert not train.fits
    assert train.reasons[0].startswith("requests nvidia.com/gpu: 8 but a node offers 4")
    assert not any(note.startswith("queued, all or nothing") for note in train.notes)
