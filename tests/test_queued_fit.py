"""What `consumers` and `fit` say about queued pools: the label a Job needs, a Job that waits for
all its nodes at once (or forever), and the cap a reservation puts on a pool.

The stack is tests/fixtures/capacity/existing-queued.yaml (see test_kueue.py).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model.capacity import QUEUE_LABEL, ReservationCap
from components.model.config import parse_config
from components.tooling.capacity_fit import Workload
from components.tooling.cli import main
from components.tooling.fit import PoolVerdict, fit_check
from components.tooling.pool_views import PoolCheck, pool_checks
from components.tooling.scheduling.workloads import read_workloads
from components.tooling.stacks import load_stack

STACK = str(Path(__file__).parent / "fixtures" / "capacity" / "existing-queued.yaml")


def checks_of(raw: dict[str, Any]) -> dict[str, PoolCheck]:
    return {c.name: c for c in pool_checks(parse_config(raw))}


def stack_checks(**existing: str) -> dict[str, PoolCheck]:
    raw = copy.deepcopy(load_stack(STACK).gpufleet)
    raw["cluster"]["existing"].update(existing)
    return checks_of(raw)


def test_consumers_print_the_label_a_job_needs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["consumers", STACK, "--for", "pod"]) == 0
    out, err = capsys.readouterr()
    h100, l4 = out.split("\n---\n")
    assert f"#       {QUEUE_LABEL}: h100" in h100.splitlines()
    assert "in namespace ml-training or research" in h100
    assert "queued (Kueue admits a Job whole)" in h100.splitlines()[0]
    assert QUEUE_LABEL not in l4
    # The only warning: the existing cluster's owner must have made the queues' namespaces.
    assert err.startswith("warning: queues.namespaces: ml-training, research must exist")
    assert err.count("warning:") == 1
    # The fragment itself is unchanged: a pod spec the queued pool takes.
    fragment = yaml.safe_load(h100)
    assert fragment["nodeSelector"] == {"node-group": "h100-training"}
    assert main(["consumers", STACK, "--for", "flyte"]) == 0
    _, err = capsys.readouterr()
    assert f"warning: pool h100 is queued: these settings carry no {QUEUE_LABEL}" in err


JOB = """
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, namespace: {namespace}, labels: {labels}}}
spec:
  parallelism: {parallelism}
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {{node-group: h100-training}}
      tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
      containers:
      - name: main
        image: example.com/train:1
        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""


def job(
    parallelism: int,
    gpus: int,
    queue: str | None = "h100",
    namespace: str = "ml-training",
    name: str = "train",
) -> str:
    labels = {QUEUE_LABEL: queue} if queue else {}
    return JOB.format(
        name=name,
        namespace=namespace,
        labels=json.dumps(labels),
        parallelism=parallelism,
        gpus=gpus,
    )


def verdict(manifest: str, checks: dict[str, PoolCheck], pool: str = "h100") -> PoolVerdict:
    (template,) = read_workloads(manifest).templates
    workload = Workload(template.pods, template.labels, template.namespace)
    return fit_check(template.spec, checks[pool], workload)


def test_fit_says_a_queued_job_waits_for_all_its_nodes_at_once() -> None:
    checks = stack_checks()
    # 4 pods of 8 GPUs: 4 whole nodes, the pool's maxNodes.
    whole = verdict(job(4, 8), checks)
    assert whole.fits
    (note,) = [n for n in whole.notes if n.startswith("queued")]
    assert note.startswith(
        "queued, all or nothing: the Job waits in Kueue until all 4 nodes for its 4 pods can be "
        "had at once (the autoscaler scales the pool up by all the nodes the Job needs in one "
        "step, or not at all;"
    )
    # 9 pods of 4 GPUs: 2 per node, 5 nodes > maxNodes 4: Kueue never admits it.
    too_big = verdict(job(9, 4), checks)
    assert not too_big.fits
    assert (
        "Kueue admits a Job whole or not at all: its 9 pods need 5 nodes (2 per node), more "
        "than the pool's maxNodes 4 (its ClusterQueue quota), so it waits in the queue forever; "
        "run fewer pods at once or raise maxNodes"
    ) in too_big.reasons
    # In a namespace Kueue does not manage (its webhooks and reconciler skip it): the Job runs
    # at once, unqueued, so the pool takes its pods one by one, as any other workload's.
    elsewhere = verdict(job(1, 8, namespace="default"), checks)
    assert elsewhere.fits
    assert any(
        n.startswith(
            f"the pool is queued, but a workload labelled {QUEUE_LABEL}=h100 in a namespace "
            "Kueue does not manage bypasses its queue"
        )
        for n in elsewhere.notes
    )
    # Without the label, the cluster autoscaler still scales the pool, one pod at a time.
    unlabelled = verdict(job(2, 8, queue=None), checks)
    assert unlabelled.fits
    assert any(n.startswith("the pool is queued, but a workload without") for n in unlabelled.notes)


def test_fit_refuses_an_unlabelled_job_where_nodes_come_only_through_requests() -> None:
    checks = stack_checks(provisioningRequestClass="queued-provisioning.gke.io")
    unlabelled = verdict(job(1, 8, queue=None), checks)
    assert not unlabelled.fits
    assert (
        "the pool is queued and its nodes come only through ProvisioningRequests "
        "(queued-provisioning.gke.io), which Kueue makes for Jobs labelled "
        f"{QUEUE_LABEL}=h100 in namespace ml-training or research; a workload without "
        f"{QUEUE_LABEL}=h100 never gets a node"
    ) in unlabelled.reasons
    assert verdict(job(1, 8), checks).fits


def test_fit_names_the_cap_a_reservation_puts_on_a_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cloud fills `reservation_cap`; fit says what it means for the pool and for a queued Job
    (here through a stand-in on the existing cloud: no cloud fills it yet)."""
    cap = ReservationCap(2, "reservation lab-h100 (2 x p5.48xlarge)")
    checks = stack_checks()
    queued = checks["h100"]
    reserved = dataclasses.replace(
        queued, spec=dataclasses.replace(queued.spec, capacity=("reserved",), reservation_cap=cap)
    )
    # Reserved only: at most 2 nodes at once, so a Job needing 3 never starts.
    three = verdict(job(3, 8), {"h100": reserved})
    assert not three.fits
    assert (
        "Kueue admits a Job whole or not at all: its 3 pods need 3 nodes at once, but "
        "reservation lab-h100 (2 x p5.48xlarge) gives this pool at most 2 nodes, so it waits "
        "forever"
    ) in three.reasons
    assert (
        "at most 2 nodes at once, not maxNodes 4: every node comes from reservation lab-h100 "
        "(2 x p5.48xlarge)"
    ) in three.notes
    assert verdict(job(2, 8), {"h100": reserved}).fits
    # With a fallback, the cap is where the reservation ends, not a limit.
    fallback = dataclasses.replace(
        queued,
        spec=dataclasses.replace(
            queued.spec, capacity=("reserved", "on-demand"), reservation_cap=cap, queue=None
        ),
    )
    pod = verdict(job(1, 8, queue=None), {"h100": fallback})
    assert pod.fits
    assert (
        "the first 2 nodes come from reservation lab-h100 (2 x p5.48xlarge); beyond them, "
        "on-demand (capacity [reserved, on-demand])"
    ) in pod.notes


def test_fit_command_reads_the_job_around_the_pod(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = tmp_path / "jobs.yaml"
    manifest.write_text(job(4, 8) + "---" + job(9, 4, name="too-big"))
    assert main(["fit", STACK, str(manifest), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    fitting = [[p["pool"] for p in t["pools"] if p["fits"]] for t in document["templates"]]
    assert fitting == [["h100"], []]
