"""GCP regions, and the zones that offer each GKE accelerator type, as dated data.

The table is offerings.json beside this file (scripts/offerings.py writes it; its `sources` and
`notes` say from where and how): Google's list of Cloud regions, and the zone table of
`gpu_zones.py`. A pool's zones are judged where the table covers its accelerator in the
region; elsewhere `plan` says they are not checked (review gke-2 N9: G4's nvidia-rtx-pro-6000
has no rows at all).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from components.gcp.model import gpu_zones
from components.gcp.model.catalog import CATALOG
from components.model import offerings
from components.model.catalog.gpus import MachineType
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

TABLE_FILE = Path(__file__).with_name("offerings.json")


def table() -> Mapping[str, Any]:
    return offerings.load_table(TABLE_FILE)


def regions() -> frozenset[str]:
    """Google's regions, and every region of the zone table."""
    zoned = {region for by_region in gpu_zones.GPU_ZONES.values() for region in by_region}
    return frozenset(table()["regions"]) | frozenset(zoned)


def offered(machine: MachineType, region: str) -> bool | None:
    """Whether the machine's accelerator is in some zone of `region` (None: not known)."""
    if region not in gpu_zones.GPU_ZONES.get(machine.gke_accelerator, {}):
        return None
    return True


def region_problems(cluster: ClusterConfig) -> list[Problem]:
    region = cluster.region
    if region is None or region in regions():
        return []
    return [offerings.unknown_region("cluster.region", region, regions(), "a GCP", table())]


def pool_problems(
    cluster: ClusterConfig, pool: GpuPoolConfig, path: str, warnings: list[str]
) -> list[Problem]:
    """Zones where Compute Engine does not offer the pool's accelerator type (GKE refuses to
    create nodes there), judged where the zone table covers the region; said otherwise."""
    placed = offerings.pool_zones(cluster, pool, path)
    zones = placed.zones
    region = cluster.region or ""
    if not zones or region not in regions():
        return []  # no zones: required elsewhere; a wrong region: reported on cluster.region
    machine = CATALOG.machine(
        pool.accelerator, pool.machine_type or CATALOG.defaults[pool.accelerator]
    )
    if machine is None:
        return []  # refused by the catalog checks
    accelerator = machine.gke_accelerator
    where = placed.key
    missing = gpu_zones.zones_without(accelerator, region, zones)
    if missing is None:
        known = gpu_zones.GPU_ZONES.get(accelerator, {})
        why = (
            f"the zone table has no {accelerator} rows at all"
            if not known
            else f"the zone table has no {accelerator} rows for {region} (it lists "
            f"{offerings.listing(known, 8)})"
        )
        warnings.append(
            offerings.not_checked(
                where,
                f"zones {', '.join(zones)} for {accelerator}",
                f"{why} ({gpu_zones.SOURCE}, read {gpu_zones.SOURCE_READ})",
                f"check with `gcloud compute accelerator-types list --filter="
                f"name={accelerator} AND zone~^{region}-`; GKE refuses nodes in a zone without it",
            )
        )
        return []
    if not missing:
        return []
    offered = gpu_zones.GPU_ZONES[accelerator][region]
    keep = [zone for zone in zones if zone not in missing] or list(offered)
    return [
        placed.problem(
            f"{accelerator} is not offered in {', '.join(missing)}; in {region} it is in "
            f"{', '.join(offered)} (Compute Engine's accelerator zones as of "
            f"{gpu_zones.SOURCE_READ})"
            + (f"; give the pool its own zones: [{', '.join(keep)}]" if placed.inherited else "")
        )
    ]
