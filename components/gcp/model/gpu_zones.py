"""Zones of each region where Compute Engine offers a GKE accelerator type, as data.

The table is `gpu_zones` in offerings.json beside this file (scripts/offerings.py writes it;
its `sources` and `notes` say from where): Compute Engine's own per-zone accelerator-type list
(`acceleratorTypes.list`, what `gcloud compute accelerator-types list` prints), as recorded by
SkyPilot's GCP catalog (github.com/skypilot-org/skypilot-catalog, catalogs/v8/gcp/vms.csv at
commit 006059e0f18acb1341e22a27751e9f80df6ba92f, the rows with an AcceleratorName and no
InstanceType), read 2026-11-24. The capture date of that commit is not known here; it lists
2025-era regions (europe-north2, northamerica-south1) and B200/H200, so it is from 2025 or later.

Google's published table (cloud.google.com/compute/docs/gpus/gpu-regions-zones) could not be
reached from here. Cross-checks against the machine types of the same snapshot: the zones of
g2-standard-96 equal the L4 zones, a2-highgpu-1g the A100 40GB zones, a2-ultragpu-1g the A100
80GB zones, a3-ultragpu-8g the H200 zones and a4-highgpu-8g the B200 zones. L4 is offered in
us-central1-a/b/c, not us-central1-f (as issue 13 says).

Coverage, per accelerator type: only the regions listed. The catalog drops an accelerator from a
whole region when it finds no price for it there (for example H100 in europe-west8, where
a3-highgpu-* machines exist, and H100 Mega in asia-east1 and europe-north1, where a3-megagpu-8g
exists), so an unlisted region means "not known", never "not offered", and is not judged (plan
says so: components/gcp/model/offerings.py). nvidia-rtx-pro-6000 (G4) has no rows in the source
at all: no region of it is judged. Zones that GCP adds after the snapshot are missing here;
refresh the table from a newer source with scripts/offerings.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from components.model.cloud import NameRule
from components.model.offerings import load_table

_TABLE = load_table(Path(__file__).with_name("offerings.json"))
_SOURCE = _TABLE["sources"]["gpu_zones"]
SOURCE = f"https://github.com/{_SOURCE['repository']}/blob/{_SOURCE['commit']}/{_SOURCE['path']}"
SOURCE_READ = "2026-11-24"

# GKE accelerator type -> region -> the zones of that region where the type is offered.
GPU_ZONES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    accelerator: {region: tuple(zones) for region, zones in regions.items()}
    for accelerator, regions in _TABLE["gpu_zones"].items()
}


def zone_rule(region: str) -> NameRule:
    """GKE's zone names in `region`: the region, a hyphen, a letter."""
    return NameRule(rf"{re.escape(region)}-[a-z]", f"{region}-<letter>")


def zones_without(accelerator_type: str, region: str, zones: Sequence[str]) -> list[str] | None:
    """The zones of `region` among `zones` where `accelerator_type` is not offered (in the order
    given, each once), or None when the table does not cover that accelerator type in that
    region. Zones of other regions are left to the zone-name checks."""
    offered = GPU_ZONES.get(accelerator_type, {}).get(region)
    if offered is None:
        return None
    return [
        zone
        for zone in dict.fromkeys(zones)
        if zone.rpartition("-")[0] == region and zone not in offered
    ]
