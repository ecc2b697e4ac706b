"""Kueue over paid capacity at its edges (review rev-shared6 S6-1, S6-3, S6-4, S6-9), on
tests/fixtures/capacity/aws-reserved-queues.yaml (`h200-block`: a Capacity Block of 2
p5en.48xlarge, 8 H200 each, borrowing from the on-demand `h200-od`).

- A Capacity Block gives no quota and costs nothing once it has ended or its drain starts on the
  plan's day (EKS scales the group to 0 and Karpenter drains 40 minutes before the end): Kueue
  assigns the first flavor whose quota fits (whenCanBorrow MayStopSearch, kueue v0.19.2
  apis/kueue/v1beta2/clusterqueue_types.go), so quota over an ended block would admit Jobs whose
  pods never get a node.
- `fit` picks the flavor by quota as Kueue does, then judges packing on that pool.
- The interactive tools' settings leave the queues' pools out, and `plan` warns that unlabelled
  pods take the pool's GPUs uncounted.
"""

from __future__ import annotations

from typing import Any

import pytest

from components.model import kueue
from components.model.config import parse_config
from components.model.cost import stack_cost
from components.tooling.cli import main
from components.tooling.fit import TemplateVerdict, fit_templates
from components.tooling.pool_views import pool_checks
from components.tooling.scheduling.workloads import read_workloads
from tests.conftest import PINNED_TODAY
from tests.test_queue_paid_capacity import (
    GPU,
    STACK,
    fitting,
    gpu_quota,
    raw_of,
    specs_of,
)

# The plan's day is PINNED_TODAY (2026-11-22); the block's drain starts 40 minutes before its
# end, so a block ending at 00:40 the next day is the first that still counts today.
ENDS = [
    ("2026-11-01T11:30:00Z", 0),  # ended weeks ago
    ("2026-11-22T23:59:00Z", 0),  # ends today
    ("2026-11-23T00:39:00Z", 0),  # drain starts today (23:59)
    ("2026-11-23T00:40:00Z", 16),  # drain starts tomorrow: 2 x 8 GPUs
    ("2027-01-14T11:30:00Z", 16),  # the fixture's
]


def with_end(end: str) -> dict[str, Any]:
    raw = raw_of()
    raw["gpuPools"][0]["aws"]["capacityReservations"][0]["endTime"] = end
    return raw


@pytest.mark.parametrize(("end", "gpus"), ENDS)
def test_an_ended_capacity_blocks_flavor_gets_no_quota_nor_cost(end: str, gpus: int) -> None:
    assert PINNED_TODAY.isoformat() == "2026-11-22"
    raw = with_end(end)
    block = specs_of(raw)["h200-block"]
    assert gpu_quota(kueue.cluster_queue(block)) == {
        "gpufleet-h200-block": gpus,
        "gpufleet-h200-od": 0,
    }
    config = parse_config(raw)
    cost = stack_cost(config, PINNED_TODAY)
    (pool,) = [p for p in cost.pools if p.name == "h200-block"]
    assert pool.committed_nodes == gpus // 8
    assert (cost.committed or 0) > 0 if gpus else cost.committed == 0
    named = [w for w in config.warnings if "queue h200-block (ClusterQueue" in w]
    if gpus:
        assert named == []
    else:
        (warning,) = named
        assert "gets no quota from cr-0f1e2d3c4b5a69788" in warning
        assert "its Jobs borrow pool h200-od's unused quota" in warning


def job(pods: int, gpus: int) -> str:
    return f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: train, namespace: ml-training, labels: {{kueue.x-k8s.io/queue-name: h200-block}}}}
spec:
  parallelism: {pods}
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: x, resources: {{limits: {{{GPU}: {gpus}}}}}}}]
"""


def verdict(pods: int, gpus: int, raw: dict[str, Any] | None = None) -> TemplateVerdict:
    config = parse_config(raw or raw_of())
    (found,) = fit_templates(read_workloads(job(pods, gpus)).templates, pool_checks(config))
    return found


def test_fit_takes_the_flavor_kueue_takes_by_quota_then_packs_pods_on_its_nodes() -> None:
    # 5 pods x 3 GPUs = 15 <= the block's 16: Kueue admits it on the block (and never borrows),
    # but a node of 8 GPUs holds 2 such pods: its 2 nodes run 4, the 5th stays Pending.
    stranded = verdict(5, 3)
    assert fitting(stranded) == []
    (block,) = [p for p in stranded.pools if p.pool == "h200-block"]
    assert any(
        "by quota (15 of 16 nvidia.com/gpu)" in r and "4 run, 1 stays Pending" in r
        for r in block.reasons
    ), block.reasons
    (od,) = [p for p in stranded.pools if p.pool == "h200-od"]
    assert any("Kueue admits it on pool h200-block, not here" in r for r in od.reasons)
    # 4 x 4 = 16 packs on the block's 2 nodes.
    assert fitting(verdict(4, 4)) == ["h200-block"]
    # 6 x 3 = 18 > 16: the block's quota cannot hold it, so Kueue borrows the lender's.
    borrowed = verdict(6, 3)
    assert fitting(borrowed) == ["h200-od"]
    (block,) = [p for p in borrowed.pools if p.pool == "h200-block"]
    assert any("cannot hold it (18 of 16 nvidia.com/gpu)" in r for r in block.reasons)
    # An ended block has no quota: even one GPU borrows.
    assert fitting(verdict(1, 1, with_end("2026-11-22T23:59:00Z"))) == ["h200-od"]


@pytest.mark.parametrize("tool", ["jupyterhub", "fiftyone", "flyte"])
def test_interactive_tools_leave_the_queues_pools_out(
    tool: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["consumers", STACK, "--for", tool]) == 2
    err = capsys.readouterr().err
    for pool in ("h200-block", "h200-od"):
        assert f"warning: pool {pool}: no {tool} settings: its GPUs are the quota of Kueue " in err
    assert f"error: no GPU pool {tool}'s pods can reach" in err


def test_a_job_fragment_is_still_offered_and_plan_warns_of_unlabelled_pods(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["consumers", STACK, "--for", "pod", "--pool", "h200-block"]) == 0
    assert "kueue.x-k8s.io/queue-name: h200-block" in capsys.readouterr().out
    warnings = parse_config(raw_of()).warnings
    for index, pool in enumerate(("h200-block", "h200-od")):
        assert any(
            w.startswith(
                f"gpuPools[{index}]: pods without the label kueue.x-k8s.io/queue-name={pool}"
            )
            for w in warnings
        ), warnings
