"""The table of zones per GKE accelerator type, and the one question asked of it."""

from __future__ import annotations

import re

import pytest

from components.gcp.model.catalog import CATALOG
from components.gcp.model.gpu_zones import GPU_ZONES, SOURCE, zones_without
from components.model.catalog import index as gpus
from components.model.config import parse_config
from components.model.pools import resolve_pools
from components.tooling.stacks import load_stack

GKE_STACKS = ["gcp-dev", "gcp-a100-mig"]
CENTRAL1 = ["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"]


def test_l4_is_not_offered_in_us_central1_f() -> None:
    # Issue 13: "L4 in us-central1-f passes today".
    assert zones_without("nvidia-l4", "us-central1", CENTRAL1) == ["us-central1-f"]
    assert zones_without("nvidia-l4", "us-central1", ["us-central1-f"]) == ["us-central1-f"]


def test_l4_is_offered_in_us_central1_a() -> None:
    assert zones_without("nvidia-l4", "us-central1", ["us-central1-a"]) == []
    assert "us-central1-a" in GPU_ZONES["nvidia-l4"]["us-central1"]


def test_each_accelerator_type_has_its_own_zones() -> None:
    assert zones_without("nvidia-tesla-t4", "us-central1", CENTRAL1) == []
    assert zones_without("nvidia-h100-80gb", "us-central1", CENTRAL1) == ["us-central1-f"]
    assert zones_without("nvidia-a100-80gb", "us-central1", CENTRAL1) == [
        "us-central1-b",
        "us-central1-f",
    ]


def test_a_region_the_table_does_not_cover_is_not_judged() -> None:
    # H100 is not listed in us-west2, which may mean "not offered" or "not recorded": silence.
    assert zones_without("nvidia-h100-80gb", "us-west2", ["us-west2-a"]) is None
    assert zones_without("nvidia-l4", "mars-north1", ["mars-north1-a"]) is None


def test_an_accelerator_without_zone_data_is_not_judged() -> None:
    assert GPU_ZONES["nvidia-rtx-pro-6000"] == {}
    assert zones_without("nvidia-rtx-pro-6000", "us-central1", CENTRAL1) is None
    assert zones_without("nvidia-unknown", "us-central1", CENTRAL1) is None


def test_zones_of_other_regions_and_repeats_are_left_to_the_zone_checks() -> None:
    zones = ["us-east1-b", "us-central1-f", "us-central1-f", "us-central1-a"]
    assert zones_without("nvidia-l4", "us-central1", zones) == ["us-central1-f"]
    assert zones_without("nvidia-l4", "us-central1", []) == []


def test_every_accelerator_type_of_the_gke_catalog_is_in_the_table() -> None:
    used = {row.gke_accelerator for row in CATALOG.rows}
    assert "" not in used
    assert used <= set(GPU_ZONES)
    # And the table names no type the catalog does not use.
    assert set(GPU_ZONES) == used


def test_every_type_but_rtx_pro_6000_covers_the_shipped_stacks_region() -> None:
    regions = {load_stack(stack).gpufleet["cluster"]["region"] for stack in GKE_STACKS}
    assert regions == {"us-central1"}
    for accelerator, by_region in GPU_ZONES.items():
        if accelerator != "nvidia-rtx-pro-6000":
            assert "us-central1" in by_region, accelerator


@pytest.mark.parametrize("accelerator", sorted(GPU_ZONES))
def test_zone_names_are_region_dash_letter(accelerator: str) -> None:
    for region, zones in GPU_ZONES[accelerator].items():
        assert re.fullmatch(r"[a-z]+-[a-z]+[0-9]+", region), region
        assert zones, region
        assert len(set(zones)) == len(zones), region
        assert list(zones) == sorted(zones), region
        for zone in zones:
            assert re.fullmatch(re.escape(region) + r"-[a-z]", zone), zone


def test_the_source_is_named() -> None:
    assert SOURCE.startswith("https://github.com/skypilot-org/skypilot-catalog/blob/")


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_the_shipped_gke_stacks_use_zones_that_offer_their_gpus(stack: str) -> None:
    config = parse_config(load_stack(stack).gpufleet)
    region = config.cluster.region
    for spec in resolve_pools(config):
        for machine_type in spec.machine_types:
            accelerator = gpus.MACHINE_TYPES[("gcp", spec.accelerator, machine_type)]
            missing = zones_without(accelerator.gke_accelerator, region, spec.zones)
            assert missing == [], (spec.name, accelerator.gke_accelerator, missing)
