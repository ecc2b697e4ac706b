"""Zones of each region where Compute Engine offers a GKE accelerator type, as data.

Source: Compute Engine's own per-zone accelerator-type list (`acceleratorTypes.list`, what
`gcloud compute accelerator-types list` prints), as recorded by SkyPilot's GCP catalog:
github.com/skypilot-org/skypilot-catalog, catalogs/v8/gcp/vms.csv at commit
006059e0f18acb1341e22a27751e9f80df6ba92f (the rows with an AcceleratorName and no
InstanceType; written by skypilot-org/skypilot sky/catalog/data_fetchers/fetch_gcp.py with
--all-regions). Read 2026-11-24. The capture date of that commit is not known here; it lists
2025-era regions (europe-north2, northamerica-south1) and B200/H200, so it is from 2025 or later.

Google's published table (cloud.google.com/compute/docs/gpus/gpu-regions-zones) could not be
reached from here. Cross-checks against the machine types of the same snapshot: the zones of
g2-standard-96 equal the L4 zones, a2-highgpu-1g the A100 40GB zones, a2-ultragpu-1g the A100
80GB zones, a3-ultragpu-8g the H200 zones and a4-highgpu-8g the B200 zones. L4 is offered in
us-central1-a/b/c, not us-central1-f (as issue 13 says).

Coverage, per accelerator type: only the regions listed. The catalog drops an accelerator from a
whole region when it finds no price for it there (for example H100 in europe-west8, where
a3-highgpu-* machines exist, and H100 Mega in asia-east1 and europe-north1, where a3-megagpu-8g
exists), so an unlisted region means "not known", never "not offered", and is not judged.
nvidia-rtx-pro-6000 (G4) has no rows in the source at all: no region of it is judged.
Zones that GCP adds after the snapshot are missing here; refresh the table from a newer source.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

SOURCE = (
    "https://github.com/skypilot-org/skypilot-catalog/blob/"
    "006059e0f18acb1341e22a27751e9f80df6ba92f/catalogs/v8/gcp/vms.csv"
)
SOURCE_READ = "2026-11-24"

# GKE accelerator type -> region -> the zones of that region where the type is offered.
GPU_ZONES: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "nvidia-tesla-t4": {
        "asia-east1": ("asia-east1-a", "asia-east1-c"),
        "asia-east2": ("asia-east2-a", "asia-east2-c"),
        "asia-northeast1": ("asia-northeast1-a", "asia-northeast1-c"),
        "asia-northeast3": ("asia-northeast3-b", "asia-northeast3-c"),
        "asia-south1": ("asia-south1-a", "asia-south1-b"),
        "asia-southeast1": ("asia-southeast1-a", "asia-southeast1-b", "asia-southeast1-c"),
        "asia-southeast2": ("asia-southeast2-a", "asia-southeast2-b"),
        "australia-southeast1": ("australia-southeast1-a", "australia-southeast1-c"),
        "europe-central2": ("europe-central2-b", "europe-central2-c"),
        "europe-west1": ("europe-west1-b", "europe-west1-c", "europe-west1-d"),
        "europe-west2": ("europe-west2-a", "europe-west2-b"),
        "europe-west3": ("europe-west3-b",),
        "europe-west4": ("europe-west4-a", "europe-west4-b", "europe-west4-c"),
        "me-west1": ("me-west1-b", "me-west1-c"),
        "northamerica-northeast1": ("northamerica-northeast1-c",),
        "southamerica-east1": (
            "southamerica-east1-a",
            "southamerica-east1-b",
            "southamerica-east1-c",
        ),
        "us-central1": ("us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"),
        "us-east1": ("us-east1-b", "us-east1-c", "us-east1-d"),
        "us-east4": ("us-east4-a", "us-east4-b", "us-east4-c"),
        "us-west1": ("us-west1-a", "us-west1-b"),
        "us-west2": ("us-west2-b", "us-west2-c"),
        "us-west3": ("us-west3-b",),
        "us-west4": ("us-west4-a", "us-west4-b"),
    },
    "nvidia-tesla-p4": {
        "asia-southeast1": ("asia-southeast1-a", "asia-southeast1-b", "asia-southeast1-c"),
        "australia-southeast1": ("australia-southeast1-a", "australia-southeast1-b"),
        "europe-west4": ("europe-west4-b", "europe-west4-c"),
        "northamerica-northeast1": (
            "northamerica-northeast1-a",
            "northamerica-northeast1-b",
            "northamerica-northeast1-c",
        ),
        "us-central1": ("us-central1-a", "us-central1-c"),
        "us-east4": ("us-east4-a", "us-east4-b", "us-east4-c"),
        "us-west2": ("us-west2-b", "us-west2-c"),
    },
    "nvidia-tesla-p100": {
        "asia-east1": ("asia-east1-a", "asia-east1-c"),
        "australia-southeast1": ("australia-southeast1-b",),
        "europe-west1": ("europe-west1-b", "europe-west1-d"),
        "europe-west4": ("europe-west4-a",),
        "us-central1": ("us-central1-c", "us-central1-f"),
        "us-east1": ("us-east1-b", "us-east1-c"),
        "us-west1": ("us-west1-a", "us-west1-b"),
    },
    "nvidia-tesla-v100": {
        "asia-east1": ("asia-east1-c",),
        "europe-west4": ("europe-west4-a", "europe-west4-b", "europe-west4-c"),
        "us-central1": ("us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"),
        "us-east1": ("us-east1-b", "us-east1-c"),
        "us-west1": ("us-west1-a", "us-west1-b"),
    },
    "nvidia-l4": {
        "asia-east1": ("asia-east1-a", "asia-east1-b", "asia-east1-c"),
        "asia-northeast1": ("asia-northeast1-a", "asia-northeast1-b", "asia-northeast1-c"),
        "asia-northeast3": ("asia-northeast3-a", "asia-northeast3-b"),
        "asia-south1": ("asia-south1-a", "asia-south1-b", "asia-south1-c"),
        "asia-southeast1": ("asia-southeast1-a", "asia-southeast1-b", "asia-southeast1-c"),
        "europe-west1": ("europe-west1-b", "europe-west1-c"),
        "europe-west2": ("europe-west2-a", "europe-west2-b"),
        "europe-west3": ("europe-west3-a", "europe-west3-b"),
        "europe-west4": ("europe-west4-a", "europe-west4-b", "europe-west4-c"),
        "europe-west6": ("europe-west6-b", "europe-west6-c"),
        "me-central2": ("me-central2-a", "me-central2-c"),
        "northamerica-northeast1": ("northamerica-northeast1-b", "northamerica-northeast1-c"),
        "northamerica-northeast2": ("northamerica-northeast2-a", "northamerica-northeast2-b"),
        "us-central1": ("us-central1-a", "us-central1-b", "us-central1-c"),
        "us-east1": ("us-east1-b", "us-east1-c", "us-east1-d"),
        "us-east4": ("us-east4-a", "us-east4-c"),
        "us-west1": ("us-west1-a", "us-west1-b", "us-west1-c"),
        "us-west4": ("us-west4-a", "us-west4-c"),
    },
    "nvidia-tesla-a100": {
        "asia-northeast1": ("asia-northeast1-a", "asia-northeast1-c"),
        "asia-northeast3": ("asia-northeast3-a", "asia-northeast3-b"),
        "asia-southeast1": ("asia-southeast1-a", "asia-southeast1-b", "asia-southeast1-c"),
        "europe-west4": ("europe-west4-a", "europe-west4-b"),
        "me-west1": ("me-west1-a", "me-west1-c"),
        "us-central1": ("us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"),
        "us-east1": ("us-east1-b",),
        "us-west1": ("us-west1-b",),
        "us-west3": ("us-west3-b",),
        "us-west4": ("us-west4-b",),
    },
    "nvidia-a100-80gb": {
        "asia-southeast1": ("asia-southeast1-c",),
        "europe-west4": ("europe-west4-a",),
        "us-central1": ("us-central1-a", "us-central1-c"),
        "us-east4": ("us-east4-c",),
        "us-east5": ("us-east5-a", "us-east5-b"),
    },
    # nvidia-h100-80gb also carries the A3 Edge machines (a3-edgegpu-*): some zones below
    # (asia-northeast3-a/c, europe-west2-b, europe-west3-a, northamerica-northeast2-c) have
    # the accelerator type but no a3-highgpu-* machine in the same snapshot.
    "nvidia-h100-80gb": {
        "asia-east1": ("asia-east1-c",),
        "asia-northeast1": ("asia-northeast1-b",),
        "asia-northeast3": ("asia-northeast3-a", "asia-northeast3-c"),
        "asia-south1": ("asia-south1-c",),
        "asia-south2": ("asia-south2-b",),
        "asia-southeast1": ("asia-southeast1-b", "asia-southeast1-c"),
        "australia-southeast1": ("australia-southeast1-c",),
        "europe-north1": ("europe-north1-c",),
        "europe-west1": ("europe-west1-b", "europe-west1-c"),
        "europe-west2": ("europe-west2-b",),
        "europe-west3": ("europe-west3-a", "europe-west3-c"),
        "europe-west4": ("europe-west4-b", "europe-west4-c"),
        "europe-west9": ("europe-west9-c",),
        "northamerica-northeast2": ("northamerica-northeast2-c",),
        "us-central1": ("us-central1-a", "us-central1-b", "us-central1-c"),
        "us-east4": ("us-east4-a", "us-east4-b", "us-east4-c"),
        "us-east5": ("us-east5-a",),
        "us-west1": ("us-west1-a", "us-west1-b"),
        "us-west4": ("us-west4-a",),
    },
    "nvidia-h100-mega-80gb": {
        "asia-northeast1": ("asia-northeast1-b",),
        "asia-northeast3": ("asia-northeast3-a", "asia-northeast3-c"),
        "asia-south1": ("asia-south1-c",),
        "asia-southeast1": ("asia-southeast1-b", "asia-southeast1-c"),
        "australia-southeast1": ("australia-southeast1-c",),
        "europe-west1": ("europe-west1-b", "europe-west1-c"),
        "europe-west3": ("europe-west3-a", "europe-west3-c"),
        "europe-west4": ("europe-west4-b", "europe-west4-c"),
        "northamerica-northeast2": ("northamerica-northeast2-c",),
        "us-central1": ("us-central1-a", "us-central1-b", "us-central1-c"),
        "us-east4": ("us-east4-a", "us-east4-b", "us-east4-c"),
        "us-east5": ("us-east5-a",),
        "us-west1": ("us-west1-a", "us-west1-b"),
        "us-west4": ("us-west4-a",),
    },
    "nvidia-h200-141gb": {
        "asia-south1": ("asia-south1-b",),
        "asia-south2": ("asia-south2-c",),
        "europe-west1": ("europe-west1-b",),
        "europe-west4": ("europe-west4-a",),
        "us-central1": ("us-central1-b",),
        "us-east4": ("us-east4-b",),
        "us-east5": ("us-east5-a",),
        "us-south1": ("us-south1-b",),
        "us-west1": ("us-west1-c",),
    },
    "nvidia-b200": {
        "asia-northeast1": ("asia-northeast1-b",),
        "asia-southeast1": ("asia-southeast1-b",),
        "europe-north1": ("europe-north1-b",),
        "europe-west4": ("europe-west4-b",),
        "us-central1": ("us-central1-b",),
        "us-east1": ("us-east1-b",),
        "us-east4": ("us-east4-b",),
        "us-south1": ("us-south1-b",),
        "us-west2": ("us-west2-c",),
        "us-west3": ("us-west3-b", "us-west3-c"),
    },
    # No rows in the source (the catalog has no G4 prices): no region is judged.
    "nvidia-rtx-pro-6000": {},
}


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
