"""The cold-start estimate of GPU pools at zero (issue 34 item 2): its figures per cloud, `plan`
and `fit`'s words, `--image-gb`, and the sample's own start-up timeline."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest

from components.aws.model import cold_start as eks
from components.azure.model import cold_start as aks
from components.gcp.model import cold_start as gke
from components.kubernetes.sample_manifests import vectoradd_job
from components.model.cold_start import DEFAULT_IMAGE_GB, ColdStartFigures
from components.model.cold_start_estimate import pool_cold_starts
from components.model.config import parse_config
from components.model.cost import stack_cost
from components.model.pools import resolve_pool
from components.model.schema import StackConfig
from components.tooling.cli import main as cli_main
from components.tooling.cold_start_view import render_cold_start, with_waits
from components.tooling.fit import PoolVerdict, TemplateVerdict
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

TODAY = date(2026, 11, 28)


def _config(stack: str, edit: Any = None) -> StackConfig:
    raw = copy.deepcopy(dict(load_stack(stack).gpufleet))
    if edit is not None:
        edit(raw)
    return parse_config(raw, TODAY)


def _expected(figures: ColdStartFigures, driver: str, mode: str, image_gb: float) -> dict:
    """The estimate as the cloud's data gives it: node + driver + image at `image_gb`."""
    start = figures.image_start[mode]  # type: ignore[index]
    if start.seconds is not None:
        image = (start.seconds.low, start.seconds.high)
    else:
        assert start.mb_per_second is not None
        image = (
            image_gb * 1000 / start.mb_per_second.high,
            image_gb * 1000 / start.mb_per_second.low,
        )
    low = figures.node_ready.low + figures.driver[driver].low + image[0]  # type: ignore[index]
    high = figures.node_ready.high + figures.driver[driver].high + image[1]  # type: ignore[index]
    return {"low": round(low), "high": round(high)}


@pytest.mark.parametrize(
    ("stack", "pool", "figures", "driver", "mode"),
    [
        ("gcp-dev", "t4", gke.FIGURES, "cloud-install", "streaming"),
        ("aws-dev", "l4", eks.FIGURES, "in-image", "pull"),
        ("azure-dev", "t4", aks.FIGURES, "cloud-install", "pull"),
    ],
)
def test_plan_json_gives_each_cloud_the_estimate_its_figures_make(
    stack: str, pool: str, figures: ColdStartFigures, driver: str, mode: str
) -> None:
    document = plan_of(stack).to_json()["coldStart"]
    start = document["pools"][pool]
    assert document["imageGb"] == DEFAULT_IMAGE_GB
    assert start["estimateSeconds"] == _expected(figures, driver, mode, DEFAULT_IMAGE_GB)
    assert (start["imageStart"], start["driver"], start["notEstimated"]) == (mode, driver, None)
    assert set(start["parts"]) == {"node", "driver", "image"}
    # The warm node is priced by the cost model: the pool's node price.
    cost = next(p for p in plan_of(stack).cost["pools"] if p["name"] == pool)  # type: ignore[index]
    assert f"${cost['perNodeHour']:,.2f}/h" in start["shorten"][0]


def test_every_figure_says_its_source_and_an_estimate_says_what_it_rests_on() -> None:
    for figures in (gke.FIGURES, eks.FIGURES, aks.FIGURES):
        singles = [figures.node_ready, *figures.driver.values()]
        singles += [
            f for s in figures.image_start.values() for f in (s.seconds, s.mb_per_second) if f
        ]
        for figure in singles:
            assert figure.source and 0 <= figure.low <= figure.high
        # No first-party node boot-to-Ready figure exists (research notes, section 8).
        assert figures.node_ready.estimate


def test_the_image_part_grows_with_the_image_on_a_pull_and_not_when_streamed() -> None:
    aws = _config("aws-dev")
    small, large = (pool_cold_starts(aws, gb, TODAY)[1] for gb in (15, 30))
    assert large.parts["image"].high == pytest.approx(2 * small.parts["image"].high)
    gcp = _config("gcp-dev")
    assert pool_cold_starts(gcp, 15, TODAY)[0].parts == pool_cold_starts(gcp, 30, TODAY)[0].parts


def test_a_gke_pool_without_streaming_pulls_and_is_told_the_key_that_streams() -> None:
    def no_streaming(raw: dict) -> None:
        raw["gpuPools"][0].setdefault("gcp", {})["imageStreaming"] = False

    start = pool_cold_starts(_config("gcp-dev", no_streaming), 15, TODAY)[0]
    assert start.image_start == "pull"
    assert start.total is not None
    assert round(start.total.high) == _expected(gke.FIGURES, "cloud-install", "pull", 15)["high"]
    assert any("gpuPools[].gcp.imageStreaming: true" in s for s in start.shorten)


def test_a_gke_pool_with_a_preloaded_disk_waits_the_preloaded_figure_not_a_pull() -> None:
    def preloaded(raw: dict) -> None:
        raw["gpuPools"][0].setdefault("gcp", {})["secondaryBootDisk"] = "global/images/pytorch"

    streaming = pool_cold_starts(_config("gcp-dev"), 15, TODAY)[0]
    start = pool_cold_starts(_config("gcp-dev", preloaded), 15, TODAY)[0]
    assert start.image_start == "preloaded"
    assert start.total is not None and streaming.total is not None
    assert (
        round(start.total.high) == _expected(gke.FIGURES, "cloud-install", "preloaded", 15)["high"]
    )
    assert not any("secondaryBootDisk" in s for s in start.shorten)
    assert any("secondaryBootDisk" in s for s in streaming.shorten)
    assert any("secondary boot disk" in note for note in start.notes)


def test_eks_pools_wait_as_their_image_start_says_parallel_pull_or_preloaded() -> None:
    starts = {s.pool: s for s in pool_cold_starts(_config("aws-training"), 15, TODAY)}
    # No pool pulls in parallel by default (review eks-5 E5-1), and none is told to.
    assert starts["a100-spot"].image_start == "pull"
    assert starts["h100"].image_start == "pull"
    assert not any("fastImagePull" in s for st in starts.values() for s in st.shorten)
    assert any("SOCI parallel pull" in n and "is off" in n for n in starts["h100"].notes)
    assert any("aws.dataVolumeSnapshot" in s for s in starts["a100-spot"].shorten)
    assert not any("aws.dataVolumeSnapshot" in s for s in starts["h100"].shorten)  # AL2023

    def parallel(raw: dict) -> None:
        pool = next(p for p in raw["gpuPools"] if p["name"] == "a100-spot")
        pool["aws"]["fastImagePull"] = True

    opted = next(
        s
        for s in pool_cold_starts(_config("aws-training", parallel), 15, TODAY)
        if s.pool == "a100-spot"
    )
    assert opted.image_start == "parallel-pull"
    # Parallel pull cannot write faster than the gp3 disk: 15 GB at 131 MB/s at best.
    assert opted.parts["image"].low == pytest.approx(15 * 1000 / 131, rel=0.01)

    def preloaded(raw: dict) -> None:
        pool = next(p for p in raw["gpuPools"] if p["name"] == "a100-spot")
        pool["aws"]["dataVolumeSnapshot"] = "snap-0123456789abcdef0"

    start = next(
        s
        for s in pool_cold_starts(_config("aws-training", preloaded), 15, TODAY)
        if s.pool == "a100-spot"
    )
    assert start.image_start == "preloaded"
    assert not any("dataVolumeSnapshot" in s for s in start.shorten)


def test_a_spot_pools_warm_node_is_said_to_be_reclaimable() -> None:
    starts = {s.pool: s for s in pool_cold_starts(_config("aws-dev"), 15, TODAY)}
    spot = [s for s in starts.values() if "spot" in s.pool]
    assert spot and all("Spot: the cloud may reclaim it" in s.shorten[0] for s in spot)
    on_demand = [s for s in starts.values() if "spot" not in s.pool and s.shorten]
    assert on_demand and not any("reclaim" in s.shorten[0] for s in on_demand)


def test_aks_operator_driver_pools_wait_for_the_operators_driver() -> None:
    def operator_driver(raw: dict) -> None:
        raw["gpuSoftware"] = {"mode": "gpu-operator", "operatorDriver": True}

    start = pool_cold_starts(_config("azure-dev", operator_driver), 15, TODAY)[0]
    assert start.driver == "gpu-operator"
    assert start.parts["driver"].low == aks.FIGURES.driver["gpu-operator"].low


def test_a_pool_with_a_warm_node_has_no_cold_start_line() -> None:
    def warm(raw: dict) -> None:
        raw["gpuPools"][0]["minNodes"] = 1

    config = _config("aws-dev", warm)
    starts = pool_cold_starts(config, 15, TODAY)
    document = {"pools": {s.pool: s.to_json() for s in starts}}
    text = render_cold_start(document)
    assert starts[0].total is None and "minNodes 1" in (starts[0].not_estimated or "")
    assert f"  {starts[0].pool}:" not in text
    assert f"  {starts[1].pool}: estimate " in text


def test_pools_that_wait_for_capacity_or_belong_to_an_owner_are_not_estimated() -> None:
    flex = {s.pool: s for s in pool_cold_starts(_config("gcp-flex-start"), 15, TODAY)}
    assert flex["h100-flex"].total is None and "flex-start" in (
        flex["h100-flex"].not_estimated or ""
    )
    text = render_cold_start({"pools": {k: v.to_json() for k, v in flex.items()}})
    assert "h100-flex: not estimated: capacity flex-start" in text
    existing = pool_cold_starts(_config("existing-dev"), 15, TODAY)
    assert all(s.total is None and "owner" in (s.not_estimated or "") for s in existing)


def test_a_committed_warm_node_is_said_to_add_nothing() -> None:
    config = _config("aws-reserved")
    costs = {p.name: p for p in stack_cost(config, TODAY).pools}
    for start in pool_cold_starts(config, 15, TODAY):
        cost = costs[start.pool]
        if start.total is not None and cost.committed_nodes > 0:
            assert "adds nothing" in start.shorten[0]


@pytest.mark.parametrize("value", ["0", "-1", "-0.0", "x", "nan", "inf"])
def test_image_gb_refuses_a_size_not_above_zero_or_not_a_number(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["plan", "aws-dev"], ["fit", "aws-dev", "-"]):
        with pytest.raises(SystemExit) as stopped:
            cli_main([*command, "--image-gb", value])
        assert stopped.value.code == 2
        assert "--image-gb" in capsys.readouterr().err


def test_image_gb_takes_the_smallest_size_above_zero() -> None:
    from components.tooling.cold_start_view import image_gb

    assert image_gb("0.001") == 0.001


def test_fit_says_the_wait_on_a_pool_at_zero_that_takes_the_pod() -> None:
    config = _config("aws-dev")
    starts = pool_cold_starts(config, 20, TODAY)
    (at_zero,) = (s for s in starts if s.pool == "l4")
    fits = PoolVerdict("l4", "gpu", True, "template", ())
    other = PoolVerdict("t4-spot", "gpu", False, "template", ("no",))
    (verdict,) = with_waits([TemplateVerdict("Job/x", (fits, other))], starts)
    assert at_zero.total is not None
    assert any(
        "estimated wait before the pod runs" in n and "20 GB" in n for n in verdict.pools[0].notes
    )
    assert verdict.pools[1].notes == ()
    assert resolve_pool(config, config.gpu_pools[1]).min_nodes == 0


def test_the_vectoradd_sample_prints_its_start_up_timeline_in_order() -> None:
    config = _config("aws-dev")
    job = vectoradd_job(resolve_pool(config, config.gpu_pools[0]))
    script = job["spec"]["template"]["spec"]["containers"][0]["command"][-1]
    steps = [
        "container-started",
        "driver-answered",
        "/cuda-samples/vectorAdd",
        "cuda-first-kernel-done",
    ]
    positions = [script.index(step) for step in steps]
    assert positions == sorted(positions)
    assert script.startswith("set -e")
