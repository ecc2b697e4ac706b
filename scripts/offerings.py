"""Regenerate the region and machine-offering tables: components/<cloud>/model/offerings.json.

Each table says which regions a cloud has and where it sells the GPU machines of gpufleet's
catalog, with its sources and the day it was read. Only data is taken from the sources:

- GKE: regions from Google's own region list (GoogleCloudPlatform/region-carbon-info,
  data/yearly/<year>.csv), and the zones of each region where Compute Engine offers an
  accelerator type from SkyPilot's GCP catalog (skypilot-org/skypilot-catalog,
  catalogs/v8/gcp/vms.csv: the rows with an AcceleratorName and no InstanceType, which its
  fetcher takes from Compute Engine's acceleratorTypes.list).
- EKS: regions from botocore's partitions.json (boto/botocore, botocore/data/partitions.json:
  the aws, aws-cn and aws-us-gov partitions), and per instance type the availability-zone ids
  that offer it from SkyPilot's AWS catalog (catalogs/v8/aws/vms.csv, whose fetcher asks EC2's
  DescribeInstanceTypeOfferings per zone and records zone *ids*, the same in every account).
- AKS: regions and whether they have availability zones from the location list Azure's own
  Karpenter provider records (Azure/karpenter-provider-azure, pkg/fake/locations.json, an Azure
  `List Locations` answer), and the regions that sell each VM size from its generated price
  table (pkg/providers/pricing/zz_generated.pricing.go, from the Azure Retail Prices API).

Run with internet access (downloads the newest commit of each source, and names it):

    .venv/bin/python scripts/offerings.py [--cloud aws|azure|gcp] [--read YYYY-MM-DD]

or from local copies of the source files (`--files` names them, see `--help`). A table whose
catalog gained a machine type the source does not list keeps no row for it: `plan` then says
"not checked" for it, and tests/test_offerings.py fails until the table is regenerated.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from datetime import date
from pathlib import Path
from typing import Any

PROJECT_DIR = Path(__file__).resolve().parent.parent
# NAME -> "COMMIT@DATE" of a local copy given with --files (set by main).
PINS: dict[str, str] = {}

# (repository, path) of every source file, by name.
SOURCES: Mapping[str, tuple[str, str]] = {
    "gcp-regions": ("GoogleCloudPlatform/region-carbon-info", "data/yearly/{year}.csv"),
    "gcp-vms": ("skypilot-org/skypilot-catalog", "catalogs/v8/gcp/vms.csv"),
    "aws-partitions": ("boto/botocore", "botocore/data/partitions.json"),
    "aws-vms": ("skypilot-org/skypilot-catalog", "catalogs/v8/aws/vms.csv"),
    "azure-locations": ("Azure/karpenter-provider-azure", "pkg/fake/locations.json"),
    "azure-prices": (
        "Azure/karpenter-provider-azure",
        "pkg/providers/pricing/zz_generated.pricing.go",
    ),
}
LICENCES: Mapping[str, str] = {
    "GoogleCloudPlatform/region-carbon-info": "a Google repository of published region data",
    "skypilot-org/skypilot-catalog": "no licence file; the rows are facts from the clouds' APIs",
    "boto/botocore": "Apache-2.0",
    "Azure/karpenter-provider-azure": "Apache-2.0",
}
# EKS runs in these partitions; the ISO and sovereign ones are not public.
AWS_PARTITIONS = ("aws", "aws-cn", "aws-us-gov")
# SkyPilot's accelerator names -> GKE's accelerator types (cloud.google.com/compute/docs/gpus).
GKE_ACCELERATORS: Mapping[str, str] = {
    "T4": "nvidia-tesla-t4",
    "P4": "nvidia-tesla-p4",
    "P100": "nvidia-tesla-p100",
    "V100": "nvidia-tesla-v100",
    "L4": "nvidia-l4",
    "A100": "nvidia-tesla-a100",
    "A100-80GB": "nvidia-a100-80gb",
    "H100": "nvidia-h100-80gb",
    "H100-MEGA": "nvidia-h100-mega-80gb",
    "H200": "nvidia-h200-141gb",
    "B200": "nvidia-b200",
    "RTXPRO6000": "nvidia-rtx-pro-6000",
}


# --------------------------------------------------------------------------- parsers


def gcp_regions(csv_text: str) -> list[str]:
    """The region column of Google's region-carbon-info CSV."""
    return sorted({row["Google Cloud Region"] for row in csv.DictReader(io.StringIO(csv_text))})


def gcp_gpu_zones(
    csv_text: str, accelerator_types: Iterable[str]
) -> dict[str, dict[str, list[str]]]:
    """GKE accelerator type -> region -> zones offering it (the catalog's accelerator rows)."""
    wanted = set(accelerator_types)
    zones: dict[str, dict[str, set[str]]] = {a: {} for a in sorted(wanted)}
    for row in csv.DictReader(io.StringIO(csv_text)):
        if row.get("InstanceType") or not row.get("AcceleratorName"):
            continue
        accelerator = GKE_ACCELERATORS.get(row["AcceleratorName"])
        if accelerator in wanted:
            zones[accelerator].setdefault(row["Region"], set()).add(row["AvailabilityZone"])
    return {a: {r: sorted(z) for r, z in sorted(regions.items())} for a, regions in zones.items()}


def aws_regions(partitions: Mapping[str, Any]) -> list[str]:
    """The regions of EKS's partitions (botocore's pseudo regions such as aws-global left out)."""
    names: set[str] = set()
    for partition in partitions["partitions"]:
        if partition["id"] not in AWS_PARTITIONS:
            continue
        pattern = re.compile(partition["regionRegex"])
        names |= {name for name in partition["regions"] if pattern.match(name)}
    return sorted(names)


def _zone_id(value: str) -> bool:
    """An availability-zone id such as use1-az1 (not a Local or Wavelength zone's usw2-lax1-az1)."""
    return re.fullmatch(r"[a-z]+[0-9]+-az[0-9]+", value) is not None


def aws_offerings(csv_text: str, instance_types: Iterable[str]) -> dict[str, Any]:
    """Per instance type, region -> the zone ids offering it; the regions the source covers and
    the zone ids each has (every row of the file counts, not only the catalog's types)."""
    wanted = set(instance_types)
    machines: dict[str, dict[str, set[str]]] = {name: {} for name in sorted(wanted)}
    region_zones: dict[str, set[str]] = {}
    for row in csv.DictReader(io.StringIO(csv_text)):
        zone = row["AvailabilityZone"]
        if not _zone_id(zone):
            continue
        region_zones.setdefault(row["Region"], set()).add(zone)
        if row["InstanceType"] in wanted:
            machines[row["InstanceType"]].setdefault(row["Region"], set()).add(zone)
    return {
        "covered_regions": sorted(region_zones),
        "region_zone_ids": {r: sorted(z) for r, z in sorted(region_zones.items())},
        "machines": {
            name: {r: sorted(z) for r, z in sorted(regions.items())}
            for name, regions in machines.items()
        },
    }


def azure_regions(locations: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Physical Azure regions -> their logical availability zones ([] for none)."""
    return {
        location["name"]: sorted(
            m["logicalZone"] for m in location.get("availabilityZoneMappings") or []
        )
        for location in sorted(locations, key=lambda x: x["name"])
        if location.get("metadata", {}).get("regionType") == "Physical"
    }


_PRICE_REGION = re.compile(r'initialOnDemandPrices\["([a-z0-9]+)"\]\s*=')
_PRICE_SKU = re.compile(r'"([A-Za-z0-9_]+)":\s*[0-9.]+')


def azure_offerings(go_source: str, sizes: Iterable[str]) -> dict[str, Any]:
    """Per VM size, the regions whose price table lists it; and the regions with a price table."""
    wanted = set(sizes)
    machines: dict[str, set[str]] = {name: set() for name in sorted(wanted)}
    covered: list[str] = []
    region = ""
    for line in go_source.splitlines():
        found = _PRICE_REGION.search(line)
        if found:
            region = found.group(1)
            covered.append(region)
            continue
        for sku in _PRICE_SKU.findall(line):
            if region and sku in wanted:
                machines[sku].add(region)
    generated = re.search(r"generated at (\S+)", go_source)
    return {
        "generated": generated.group(1) if generated else None,
        "covered_regions": sorted(set(covered)),
        "machines": {name: sorted(regions) for name, regions in machines.items()},
    }


# --------------------------------------------------------------------------- sources


def _get(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "gpufleet-offerings"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return bytes(response.read())


def newest_commit(repo: str, path: str) -> tuple[str, str]:
    """The newest commit of `repo` that changed `path`, and its date (GitHub's public API)."""
    url = f"https://api.github.com/repos/{repo}/commits?path={path}&per_page=1"
    (commit,) = json.loads(_get(url))
    return commit["sha"], commit["commit"]["committer"]["date"][:10]


def fetch(name: str, year: int, files: Mapping[str, Path]) -> tuple[str, dict[str, str]]:
    """A source file's text and where it came from: a local copy (named by `--pin`), or GitHub
    at the newest commit of the file."""
    repo, path = SOURCES[name]
    path = path.format(year=year)
    source = {"repository": repo, "path": path, "licence": LICENCES[repo]}
    if name in files:
        commit, _, day = PINS.get(name, "local copy@unknown").partition("@")
        text = files[name].read_text(encoding="utf-8")
        return text, {**source, "commit": commit, "commit_date": day}
    sha, day = newest_commit(repo, path)
    text = _get(f"https://raw.githubusercontent.com/{repo}/{sha}/{path}").decode("utf-8")
    return text, {**source, "commit": sha, "commit_date": day}


# --------------------------------------------------------------------------- tables


def _catalog_names(cloud: str) -> list[str]:
    sys.path.insert(0, str(PROJECT_DIR))
    from components.model.registry import CLOUDS

    rows = CLOUDS[cloud].catalog.rows
    if cloud == "gcp":
        return sorted({row.gke_accelerator for row in rows})
    return sorted({row.name for row in rows})


def build_gcp(read: str, year: int, files: Mapping[str, Path]) -> dict[str, Any]:
    regions_text, regions_source = fetch("gcp-regions", year, files)
    vms_text, vms_source = fetch("gcp-vms", year, files)
    return {
        "read": read,
        "sources": {"regions": regions_source, "gpu_zones": vms_source},
        "regions": gcp_regions(regions_text),
        "gpu_zones": gcp_gpu_zones(vms_text, _catalog_names("gcp")),
    }


def build_aws(read: str, year: int, files: Mapping[str, Path]) -> dict[str, Any]:
    partitions_text, partitions_source = fetch("aws-partitions", year, files)
    vms_text, vms_source = fetch("aws-vms", year, files)
    return {
        "read": read,
        "sources": {"regions": partitions_source, "offerings": vms_source},
        "regions": aws_regions(json.loads(partitions_text)),
        "offerings": aws_offerings(vms_text, _catalog_names("aws")),
    }


def build_azure(read: str, year: int, files: Mapping[str, Path]) -> dict[str, Any]:
    locations_text, locations_source = fetch("azure-locations", year, files)
    prices_text, prices_source = fetch("azure-prices", year, files)
    return {
        "read": read,
        "sources": {"regions": locations_source, "offerings": prices_source},
        "regions": azure_regions(json.loads(locations_text)),
        "offerings": azure_offerings(prices_text, _catalog_names("azure")),
    }


BUILDERS: Mapping[str, Callable[[str, int, Mapping[str, Path]], dict[str, Any]]] = {
    "gcp": build_gcp,
    "aws": build_aws,
    "azure": build_azure,
}


def table_file(cloud: str) -> Path:
    return PROJECT_DIR / "components" / cloud / "model" / "offerings.json"


def write(cloud: str, table: Mapping[str, Any], notes: list[str]) -> Path:
    if notes:
        table = {**table, "notes": notes}
    target = table_file(cloud)
    target.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cloud", choices=sorted(BUILDERS), action="append")
    parser.add_argument("--read", default=date.today().isoformat(), help="the day read")
    parser.add_argument("--year", type=int, default=2025, help="region-carbon-info's year file")
    parser.add_argument(
        "--files",
        nargs="*",
        default=[],
        metavar="NAME=PATH",
        help=f"local copies instead of downloads; NAME is one of {', '.join(SOURCES)}",
    )
    parser.add_argument(
        "--pin",
        nargs="*",
        default=[],
        metavar="NAME=COMMIT@DATE",
        help="the commit (and its date) a local copy was taken from, recorded in the table",
    )
    parser.add_argument("--note", action="append", default=[], help="a note kept in the table")
    options = parser.parse_args(argv)
    files = {name: Path(path) for name, _, path in (f.partition("=") for f in options.files)}
    PINS.update(dict(p.partition("=")[::2] for p in options.pin))
    unknown = sorted(set(files) - set(SOURCES))
    if unknown:
        parser.error(f"unknown source {', '.join(unknown)}; known: {', '.join(SOURCES)}")
    for cloud in options.cloud or sorted(BUILDERS):
        target = write(cloud, BUILDERS[cloud](options.read, options.year, files), options.note)
        print(f"wrote {target.relative_to(PROJECT_DIR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
