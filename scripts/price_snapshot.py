"""An older multi-region catalog's prices, carried into a cloud's table as labelled estimates.

The table's own source may price one region only (EKS: Karpenter's generated table has
us-east-1) and no Spot at all. `scripts/price_data/` keeps rows taken from a wider catalog
(SkyPilot's, per region, on demand and Spot): `components.model.prices.PriceTable.machine` uses
them where the source has no price for the stack's region, and for the Spot price where the
source has none, each time labelled as an estimate with the snapshot's source and age.

A row is kept only where the snapshot still agrees with the table's own source: a machine type
whose on-demand price in a region both price differs by more than `AGREEMENT` is left out whole
(its list price changed since the snapshot, so its other regions and its Spot prices are stale
too), and the script says which.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "price_data"
AGREEMENT = 0.005  # relative difference of on-demand prices still taken as the same list price

# skypilot-org/skypilot-catalog's README (read @0082b0435f39) states no licence and no LICENSE
# file is among its stored paths; the Apache-2.0 of SkyPilot's code repository is another
# repository's. The rows are list prices, kept as facts with their source.
SKYPILOT_CATALOG_LICENCE = (
    "none stated in skypilot-org/skypilot-catalog (README @0082b043, no LICENSE file among its "
    "stored paths); SkyPilot itself (skypilot-org/skypilot) is Apache-2.0; list prices kept as "
    "facts"
)

SNAPSHOTS: Mapping[str, Mapping[str, str]] = {
    "aws": {
        "file": "skypilot_aws_v7.csv",
        "name": "skypilot-org/skypilot-catalog catalogs/v7/aws/vms.csv",
        "url": "https://github.com/skypilot-org/skypilot-catalog/blob/"
        "001367d22a0033fac286a8c71aeac7109e431bcb/catalogs/v7/aws/vms.csv",
        "licence": SKYPILOT_CATALOG_LICENCE,
        "read": "2026-11-28",
        "taken": "between 2024-12 and 2025-05 (dated by its content: see the data file)",
        # The latest day `taken` allows: the price-age rule counts from it.
        "takenBy": "2025-05-31",
        "onDemandEstimate": "{region} list price in SkyPilot's AWS catalog snapshot (taken "
        "before June 2025; its us-east-1 prices of this type equal the table's)",
        "spotEstimate": "Spot: the highest zone price in {region} in SkyPilot's AWS catalog "
        "snapshot (taken before June 2025; Spot prices move daily)",
    },
    "azure": {
        "file": "skypilot_azure_v6.csv",
        "name": "skypilot-org/skypilot-catalog catalogs/v6/azure/vms.csv",
        "url": "https://github.com/skypilot-org/skypilot-catalog/blob/"
        "098741e70562f65d7af1cceb81e33b284f742604/catalogs/v6/azure/vms.csv",
        "licence": SKYPILOT_CATALOG_LICENCE,
        "read": "2026-11-28",
        "taken": "date unknown (see the data file); US regions only",
        "onDemandEstimate": "{region} pay-as-you-go price in SkyPilot's Azure catalog snapshot "
        "(undated; its prices of this size equal the table's where both price it)",
        "spotEstimate": "Spot: the {region} price in SkyPilot's Azure catalog snapshot (undated, "
        "older than the table; Spot prices move)",
    },
}


def read_rows(path: Path) -> dict[str, dict[str, tuple[float, float | None]]]:
    """machine -> region -> (on demand, highest zone Spot or None) from a data file."""
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    rows: dict[str, dict[str, tuple[float, float | None]]] = {}
    for row in csv.DictReader(lines):
        on_demand = float(row["on_demand"])
        spot = float(row["spot_max"]) if row["spot_max"] else None
        # No Spot maximum price is set: EC2 charges at most the on-demand price.
        capped = None if spot is None else min(spot, on_demand)
        rows.setdefault(row["instance_type"], {})[row["region"]] = (on_demand, capped)
    return rows


def disagreeing(
    rows: Mapping[str, Mapping[str, tuple[float, float | None]]],
    exact: Mapping[str, Mapping[str, Any]],
) -> dict[str, str]:
    """Machine types whose snapshot on-demand price differs from the table's, with where."""
    stale: dict[str, str] = {}
    for machine, by_region in rows.items():
        for region, (on_demand, _) in sorted(by_region.items()):
            table = exact.get(machine, {}).get(region)
            if table is None:
                continue
            if abs(on_demand - float(table[0])) > AGREEMENT * float(table[0]):
                stale[machine] = f"{region}: snapshot {on_demand:g}, table {float(table[0]):g}"
                break
    return stale


def snapshot_section(cloud: str, exact: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """The table's `snapshot` section for `cloud` (None: the cloud has no snapshot)."""
    facts = SNAPSHOTS.get(cloud)
    if facts is None:
        return None
    rows = read_rows(DATA_DIR / facts["file"])
    stale = disagreeing(rows, exact)
    for machine, where in sorted(stale.items()):
        print(f"{cloud}: snapshot rows of {machine} left out, its list price changed ({where})")
    kept = {m: r for m, r in sorted(rows.items()) if m not in stale}
    return {
        "source": {k: v for k, v in facts.items() if k not in ("onDemandEstimate", "spotEstimate")},
        "onDemandEstimate": facts["onDemandEstimate"],
        "spotEstimate": facts["spotEstimate"],
        "leftOut": dict(sorted(stale.items())),
        "machines": {
            machine: {region: list(price) for region, price in sorted(by_region.items())}
            for machine, by_region in kept.items()
        },
    }
