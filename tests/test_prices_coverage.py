"""Issue 31: every machine type of each cloud's catalog that `plan` accepts somewhere has a
numeric on-demand price (exact, or an estimate that says how it was made) in every region
`plan` accepts it in. A catalog row that lands without a price fails here, not in a user's plan.

`plan` accepts a type in a region its offerings table says sells it, and in a region the table
does not cover (with a "not checked" warning); it refuses it where the table says it is not sold.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import pytest

from components.model.catalog.gpus import MachineType
from components.model.prices import NodePrice
from components.model.registry import CLOUDS

PRICED = sorted(name for name, cloud in CLOUDS.items() if cloud.pricing is not None)


def _regions(cloud: str) -> list[str]:
    offerings = CLOUDS[cloud].offerings
    assert offerings is not None, f"{cloud} prices machines but has no offerings table"
    return sorted(offerings.regions())  # type: ignore[attr-defined]  # each cloud's module


def _price(cloud: str, row: MachineType, region: str) -> NodePrice:
    pricing = CLOUDS[cloud].pricing
    assert pricing is not None
    table = pricing.table()
    price = table.machine(row.name, region)
    if price.on_demand is not None and row.attach_counts:
        # An N1 machine with attached GPUs: the GPUs are priced on their own.
        return table.accelerator(row.gke_accelerator, region)
    return price


def _unpriced(cloud: str, rows: Iterable[MachineType]) -> list[str]:
    """`machine in region: why` for every accepted (machine, region) without a numeric price."""
    missing = []
    for row in rows:
        for region in _regions(cloud):
            if CLOUDS[cloud].offered(row, region) is False:
                continue  # `plan` refuses it there
            price = _price(cloud, row, region)
            if price.on_demand is None:
                missing.append(f"{row.name} in {region}: {price.unknown}")
    return missing


@pytest.mark.parametrize("cloud", PRICED)
def test_every_accepted_catalog_type_has_a_numeric_on_demand_price_in_every_region(
    cloud: str,
) -> None:
    rows = CLOUDS[cloud].catalog.rows
    accepted = [
        r for r in rows if any(CLOUDS[cloud].offered(r, g) is not False for g in _regions(cloud))
    ]
    assert len(accepted) >= 10
    assert _unpriced(cloud, rows) == [], "run scripts/prices.py or add a labelled estimate"


@pytest.mark.parametrize("cloud", PRICED)
def test_a_new_catalog_row_without_a_price_fails_the_coverage_check(cloud: str) -> None:
    row = CLOUDS[cloud].catalog.rows[0]
    newcomer = dataclasses.replace(row, name=f"{row.name}-newcomer")
    assert _unpriced(cloud, [row]) == []
    missing = _unpriced(cloud, [newcomer])
    assert missing and all(m.startswith(f"{newcomer.name} in ") for m in missing)


@pytest.mark.parametrize(
    ("cloud", "machine", "region", "on_demand", "says"),
    [
        # Sold only in regions no source prices (not us-east-1): p5en's us-east-1 price.
        ("aws", "p5e.48xlarge", "us-east-2", 63.296, "priced as p5en.48xlarge, likely high"),
        # Google's quoted us-central1 list price, standing in for every region.
        ("gcp", "a4-highgpu-8g", "us-central1", 90.22, "likely low outside us-central1"),
        ("gcp", "a4-highgpu-8g", "europe-west4", 90.22, "us-central1 list price"),
    ],
)
def test_a_type_no_source_prices_is_an_estimate_that_says_which_way_it_errs(
    cloud: str, machine: str, region: str, on_demand: float, says: str
) -> None:
    row = next(r for r in CLOUDS[cloud].catalog.rows if r.name == machine)
    assert CLOUDS[cloud].offered(row, region) is not False
    price = _price(cloud, row, region)
    assert price.on_demand == on_demand
    assert says in price.estimate
