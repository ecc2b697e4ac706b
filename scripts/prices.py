"""Generate components/<cloud>/model/prices.json: what each machine gpufleet knows costs per hour.

One table per cloud, for every machine type of that cloud's GPU catalog and system pool shapes,
in the regions the project knows (GKE: the regions of components/gcp/model/gpu_zones.py and of
the shipped stacks; EKS and AKS have no region table, so every region the source covers):
the on-demand Linux price and, where the source publishes one, the Spot price (a snapshot of
its date), in USD. A machine type the source has no price for is written as a named `unknown`
entry with the reason, never guessed. Each cloud's control-plane fee per tier is written too.

Sources (public catalogs built from the clouds' own price APIs; data, not code, is used):

- GKE: Cyclenerd/google-cloud-pricing-cost-calculator `pricing.yml` (Apache-2.0), generated from
  the Cloud Billing Catalog API. Read: `compute.instance.<machine>.cost.<region>.hour` (on
  demand) and `.hour_spot` (Spot), and `about.generated` (the date). Its accelerator-optimized
  machines (A2, A3, G2, G4) include their GPUs; it has no price for GPUs attached to N1
  machines, so those accelerators are `unknown`.
- EKS: aws/karpenter-provider-aws `pkg/providers/pricing/zz_generated.pricing_aws.go`
  (Apache-2.0), generated from the AWS Price List API: on-demand Linux, shared tenancy, for the
  regions it lists (us-east-1), and its `generated at` line. No Spot prices.
- EKS `snapshot` (estimates): SkyPilot's AWS catalog (no licence stated in its repository;
  SkyPilot itself is Apache-2.0; list prices kept as facts), rows kept in
  `scripts/price_data/skypilot_aws_v7.csv` and written by `scripts/price_snapshot.py`: the
  regions Karpenter's table does not price, and Spot prices, labelled as estimates (the
  snapshot predates June 2025).
- AKS: Azure/karpenter-provider-azure `pkg/providers/pricing/zz_generated.pricing.go`
  (Apache-2.0), generated from the Azure Retail Prices API: pay-as-you-go Linux (no Windows,
  Spot or low-priority meters), per region, and its `generated at` line. No Spot prices.

Usage (each input is the file as published at the commit named in SOURCES):

    .venv/bin/python scripts/prices.py --gcp pricing.yml --aws zz_generated.pricing_aws.go \
        --azure zz_generated.pricing.go

Update SOURCES (commit and URL) when you read a newer file; `plan` warns once a table is more
than 90 days old.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

PROJECT_DIR = Path(__file__).resolve().parents[1]
if str(PROJECT_DIR) not in sys.path:
    sys.path.insert(0, str(PROJECT_DIR))

from scripts.price_facts import (  # noqa: E402  (the project must be importable first)
    CONTROL_PLANE,
    CONTROL_PLANE_READ,
    ESTIMATED,
    FACTS_READ,
    FALLBACK_REGION,
    FEES,
    GPU_ESTIMATES,
    MACHINE_ESTIMATES,
)
from scripts.price_snapshot import snapshot_section  # noqa: E402

SOURCES: Mapping[str, Mapping[str, str]] = {
    "gcp": {
        "name": "Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml",
        "url": "https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/"
        "fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml",
        "licence": "Apache-2.0",
        "builtFrom": "Google Cloud Billing Catalog API (Compute Engine SKUs)",
        "reads": "compute.instance.<machine>.cost.<region>.hour (on demand) and .hour_spot (Spot)",
    },
    "aws": {
        "name": "aws/karpenter-provider-aws zz_generated.pricing_aws.go",
        "url": "https://github.com/aws/karpenter-provider-aws/blob/"
        "6fc13b5236fd04fd16ff3f9dc7490d0813994099/pkg/providers/pricing/zz_generated.pricing_aws.go",
        "licence": "Apache-2.0",
        "builtFrom": "AWS Price List API (AmazonEC2, Linux, shared tenancy, on demand)",
        "reads": "InitialOnDemandPricesAWS[<region>][<instance type>]",
    },
    "azure": {
        "name": "Azure/karpenter-provider-azure zz_generated.pricing.go",
        "url": "https://github.com/Azure/karpenter-provider-azure/blob/"
        "2b431da153a6a92b705c18046512c60b1631b682/pkg/providers/pricing/zz_generated.pricing.go",
        "licence": "Apache-2.0",
        "builtFrom": "Azure Retail Prices API (Virtual Machines, Linux, pay as you go)",
        "reads": 'initialOnDemandPrices["<region>"]["<VM size>"]',
    },
}

# region -> machine -> (on demand, Spot or None)
Prices = dict[str, dict[str, tuple[float, float | None]]]


def _round(value: float) -> float:
    return round(float(value), 6)


# --- sources ---------------------------------------------------------------------------------


def read_gcp(text: str, machines: Iterable[str]) -> tuple[date, Prices]:
    """Cyclenerd's pricing.yml: the machines' hourly on-demand and Spot prices per region."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    document = yaml.load(text, Loader=loader)
    generated = datetime.strptime(document["about"]["generated"], "%a %b %d %H:%M:%S %Y").date()
    instances = document["compute"]["instance"]
    prices: Prices = {}
    for machine in machines:
        for region, cost in (instances.get(machine) or {}).get("cost", {}).items():
            if isinstance(cost, Mapping) and cost.get("hour") is not None:
                spot = cost.get("hour_spot")
                prices.setdefault(region, {})[machine] = (
                    _round(cost["hour"]),
                    None if spot is None else _round(spot),
                )
    return generated, prices


_GENERATED_AT = re.compile(r"// generated at (\d{4}-\d{2}-\d{2})T")
_GO_REGION = re.compile(r'^\s*(?:"([a-z0-9-]+)": \{|initialOnDemandPrices\["([a-z0-9-]+)"\])')
_GO_PRICE = re.compile(r'"([A-Za-z0-9_.-]+)":\s*([0-9]+\.[0-9]+)')


def read_karpenter_go(text: str, machines: Iterable[str]) -> tuple[date, Prices]:
    """A Karpenter provider's generated on-demand price map (AWS or Azure): region blocks of
    `"<machine>": <price>` entries."""
    found = _GENERATED_AT.search(text)
    if not found:
        raise ValueError("no `// generated at` line: not a Karpenter pricing file")
    wanted = set(machines)
    prices: Prices = {}
    region = None
    for line in text.splitlines():
        header = _GO_REGION.match(line)
        if header:
            region = header.group(1) or header.group(2)
            continue
        if region is None:
            continue
        for machine, price in _GO_PRICE.findall(line):
            if machine in wanted:
                prices.setdefault(region, {})[machine] = (_round(float(price)), None)
    return date.fromisoformat(found.group(1)), prices


# --- what the project knows ------------------------------------------------------------------


def catalog_machines(cloud_name: str) -> list[str]:
    """Every machine type of the cloud's GPU catalog and system pool shapes, sorted."""
    from components.model.registry import cloud_named

    cloud = cloud_named(cloud_name)
    names = {row.name for row in cloud.catalog.rows}
    names |= set(getattr(cloud, "system_machine_shapes", {}))
    return sorted(names)


def attached_accelerators(cloud_name: str) -> list[str]:
    """GKE accelerator types attached to machines that do not include them (N1)."""
    from components.model.registry import cloud_named

    rows = cloud_named(cloud_name).catalog.rows
    return sorted({row.gke_accelerator for row in rows if row.attach_counts})


def stack_regions(cloud_name: str) -> set[str]:
    import yaml

    regions = set()
    for path in sorted((PROJECT_DIR / "stacks").glob("Pulumi.*.yaml")):
        config = (yaml.safe_load(path.read_text()) or {}).get("config") or {}
        cluster = config.get("gpufleet:cluster") or {}
        if config.get("gpufleet:cloud") == cloud_name and cluster.get("region"):
            regions.add(cluster["region"])
    return regions


def gcp_regions() -> set[str]:
    from components.gcp.model.gpu_zones import GPU_ZONES

    return {region for zones in GPU_ZONES.values() for region in zones} | stack_regions("gcp")


# --- the table ------------------------------------------------------------------------------


def table(
    cloud: str,
    as_of: date,
    prices: Prices,
    machines: Iterable[str],
    regions: set[str] | None,
    spot_source: str | None,
    accelerators: Iterable[str] = (),
) -> dict[str, Any]:
    """The JSON document of one cloud's table. `regions` None: every region of the source."""
    kept = {r: p for r, p in prices.items() if regions is None or r in regions}
    by_machine: dict[str, dict[str, list[float | None]]] = {}
    for region in sorted(kept):
        for machine, (on_demand, spot) in sorted(kept[region].items()):
            by_machine.setdefault(machine, {})[region] = [on_demand, spot]
    covered = ", ".join(sorted(kept)) if len(kept) <= 3 else f"{len(kept)} regions"
    unknown = {
        machine: f"no price in the source in any region of the table ({covered or 'none'})"
        for machine in machines
        if machine not in by_machine
    }
    unknown.update(
        {
            accelerator: "the source prices machine types only, not GPUs attached to N1 machines"
            for accelerator in accelerators
            if accelerator not in GPU_ESTIMATES
        }
    )
    return with_facts(
        {
            "cloud": cloud,
            "currency": "USD",
            "asOf": as_of.isoformat(),
            "spot": spot_source,
            "source": dict(SOURCES[cloud]),
            "controlPlane": {"read": CONTROL_PLANE_READ, "tiers": CONTROL_PLANE[cloud]},
            "machines": by_machine,
            "accelerators": {},
            "unknown": dict(sorted(unknown.items())),
        }
    )


def with_facts(document: dict[str, Any]) -> dict[str, Any]:
    """`document` with the hand-held facts of its cloud (scripts/price_facts.py) written in:
    control-plane tiers, fixed fees, the stand-in region, and hand-entered estimates."""
    cloud = document["cloud"]
    document["controlPlane"] = {"read": CONTROL_PLANE_READ, "tiers": CONTROL_PLANE[cloud]}
    document["fees"] = dict(FEES.get(cloud, {}))
    document["factsRead"] = FACTS_READ
    document["fallbackRegion"] = FALLBACK_REGION[cloud]
    estimated = dict(ESTIMATED.get(cloud, {}))
    document["estimated"] = estimated
    for machine, by_region in MACHINE_ESTIMATES.get(cloud, {}).items():
        document["machines"][machine] = {r: list(p) for r, p in sorted(by_region.items())}
    if cloud == "gcp":
        region = FALLBACK_REGION[cloud]
        document["accelerators"] = {
            name: {region: list(GPU_ESTIMATES[name])} for name in sorted(GPU_ESTIMATES)
        }
    document["unknown"] = {k: v for k, v in document["unknown"].items() if k not in estimated}
    snapshot = snapshot_section(cloud, document["machines"])
    if snapshot is not None:
        document["snapshot"] = snapshot
    return document


def _by_machine(key: str, prices: Mapping[str, Any], indent: str) -> str:
    """`"key": {...}` with one machine per line, so a regenerated table diffs by machine."""
    rows = [
        f"{indent} {json.dumps(machine)}: {json.dumps(regions, sort_keys=True)}"
        for machine, regions in sorted(prices.items())
    ]
    body = ",\n".join(rows)
    return f'{indent}"{key}": {{\n' + body + f"\n{indent}}}" if rows else f'{indent}"{key}": {{}}'


def render(document: Mapping[str, Any]) -> str:
    """Stable JSON, one machine per line (its own and a snapshot's)."""
    head = {k: v for k, v in document.items() if k not in ("machines", "snapshot")}
    lines = json.dumps(head, indent=1, sort_keys=True).splitlines()
    parts = [_by_machine("machines", document["machines"], " ")]
    if "snapshot" in document:
        snapshot = document["snapshot"]
        rest = {k: v for k, v in snapshot.items() if k != "machines"}
        inner = json.dumps(rest, indent=1, sort_keys=True).splitlines()
        nested = [f" {line}" for line in inner[1:-1]]
        machines = _by_machine("machines", snapshot["machines"], "  ")
        parts.append(' "snapshot": {\n' + ",\n".join(["\n".join(nested), machines]) + "\n }")
    return "\n".join([lines[0], *(part + "," for part in parts), *lines[1:]]) + "\n"


def output_path(cloud: str) -> Path:
    return PROJECT_DIR / "components" / cloud / "model" / "prices.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gcp", type=Path, help="Cyclenerd's pricing.yml")
    parser.add_argument(
        "--aws", type=Path, help="karpenter-provider-aws zz_generated.pricing_aws.go"
    )
    parser.add_argument(
        "--azure", type=Path, help="karpenter-provider-azure zz_generated.pricing.go"
    )
    parser.add_argument(
        "--facts-only",
        action="store_true",
        help="rewrite only the hand-held facts (scripts/price_facts.py) into the existing "
        "tables, keeping their machine prices",
    )
    options = parser.parse_args(argv)
    if options.facts_only:
        for cloud in ("gcp", "aws", "azure"):
            document = with_facts(json.loads(output_path(cloud).read_text()))
            output_path(cloud).write_text(render(document))
            print(f"{output_path(cloud).relative_to(PROJECT_DIR)}: facts of {FACTS_READ}")
        return 0
    if not (options.gcp or options.aws or options.azure):
        parser.error("name at least one source file, or --facts-only")
    written = []
    if options.gcp:
        machines = catalog_machines("gcp")
        as_of, prices = read_gcp(options.gcp.read_text(), machines)
        spot = f"Spot prices as published on {as_of.isoformat()} (Spot prices change; a snapshot)"
        document = table(
            "gcp", as_of, prices, machines, gcp_regions(), spot, attached_accelerators("gcp")
        )
        written.append(("gcp", document))
    for cloud, path in (("aws", options.aws), ("azure", options.azure)):
        if path:
            machines = catalog_machines(cloud)
            as_of, prices = read_karpenter_go(path.read_text(), machines)
            written.append((cloud, table(cloud, as_of, prices, machines, None, None)))
    for cloud, document in written:
        output_path(cloud).write_text(render(document))
        known = len(document["machines"])
        print(
            f"{output_path(cloud).relative_to(PROJECT_DIR)}: {known} machine types priced, "
            f"{len(document['unknown'])} unknown, as of {document['asOf']} "
            f"(generated {datetime.now(UTC).date().isoformat()})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
