"""Azure regions (with their availability zones) and the regions that sell each GPU VM size,
as dated data.

The table is offerings.json beside this file (scripts/offerings.py writes it; its `sources` and
`notes` say from where and how): Azure's location list (physical regions and their logical
zones) and, per VM size, the regions whose retail price list names it. Which zones of a region
sell a size is per subscription and in neither source, so zones are judged only against the
region having availability zones at all, and said to be unchecked otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from components.azure.model.catalog import CATALOG
from components.model import offerings
from components.model.catalog.gpus import MachineType
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

TABLE_FILE = Path(__file__).with_name("offerings.json")
# One line per stack (the same text from every pool is kept once).
ZONES_NOT_CHECKED = offerings.not_checked(
    "gpuPools[].zones",
    "the zones that sell each VM size",
    "Azure restricts sizes per zone and per subscription, which no public table lists",
    "see yours with `az vm list-skus --location <region> --size <vm size> --zone --output "
    "table`; AKS refuses to create a pool in a zone without its size",
)


def table() -> Mapping[str, Any]:
    return offerings.load_table(TABLE_FILE)


def regions() -> frozenset[str]:
    """Every region either source names (a region with prices exists even if the location list
    leaves it out, as it does restricted ones)."""
    data = table()
    return frozenset(data["regions"]) | frozenset(data["offerings"]["covered_regions"])


def covered(region: str) -> bool:
    return region in table()["offerings"]["covered_regions"]


def region_zones(region: str) -> list[str] | None:
    """The region's availability zones ([] for none; None when the location list lacks it)."""
    zones = table()["regions"].get(region)
    return None if zones is None else list(zones)


def offered(machine: MachineType, region: str) -> bool | None:
    if region not in regions() or not covered(region):
        return None
    where = table()["offerings"]["machines"].get(machine.name)
    # A size the source lists in no region at all is one it does not know: not checked.
    return region in where if where else None


def _zone_problem(where: str, region: str, zones: Sequence[str]) -> Problem | None:
    if not zones or region_zones(region) != []:
        return None
    return Problem(
        where,
        f"{region} has no availability zones (per {offerings.source(table(), 'regions').cite()}); "
        "leave zones out: AKS then places the pool's nodes in the region without zones",
        list(zones),
    )


def region_problems(cluster: ClusterConfig) -> list[Problem]:
    region = cluster.region
    if region is None:
        return []
    if region not in regions():
        return [offerings.unknown_region("cluster.region", region, regions(), "an Azure", table())]
    problem = _zone_problem("cluster.zones", region, cluster.zones or [])
    return [problem] if problem else []


def pool_problems(
    cluster: ClusterConfig, pool: GpuPoolConfig, path: str, warnings: list[str]
) -> list[Problem]:
    """The pool's VM size in the cluster's region, and its zones against the region's."""
    region = cluster.region
    if region is None or region not in regions():
        return []  # the region is wrong: reported once on cluster.region
    data = table()
    problems = []
    problem = _zone_problem(f"{path}.zones", region, pool.zones or [])
    if problem:
        problems.append(problem)
    elif (
        (pool.zones or cluster.zones)
        and region_zones(region) != []
        and ZONES_NOT_CHECKED not in warnings
    ):
        warnings.append(ZONES_NOT_CHECKED)
    default = CATALOG.defaults.get(pool.accelerator, "")
    keys = offerings.machine_keys(pool.machine_type, pool.machine_types, pool.accelerator, default)
    if not covered(region):
        warnings.append(
            offerings.not_checked(
                path,
                f"VM sizes {', '.join(k.name for k in keys)} in {region}",
                f"the price table ({offerings.source(data, 'offerings').cite()}, read "
                f"{data['read']}) has no prices for {region}",
                f"check with `az vm list-skus --location {region} --size <vm size> --output table`",
            )
        )
        return problems
    for key in keys:
        sold_in = data["offerings"]["machines"].get(key.name, [])
        if region in sold_in:
            continue
        if not sold_in:
            # A size the source lists in no region at all is one it does not know.
            warnings.append(
                offerings.not_checked(
                    f"{path}.{key.key}",
                    f"VM size {key.name} in {region}",
                    f"the price table ({offerings.source(data, 'offerings').cite()}) lists "
                    f"{key.name} in no region",
                    f"check with `az vm list-skus --location {region} --size {key.name} "
                    "--output table`",
                )
            )
            continue
        problems.append(
            offerings.not_offered(
                f"{path}.{key.key}", key.described, region, sold_in, data, key.value
            )
        )
    return problems
