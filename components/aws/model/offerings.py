"""AWS regions, and the availability zones that sell each GPU instance type, as dated data.

The table is offerings.json beside this file (scripts/offerings.py writes it; its `sources` and
`notes` say from where and how): the regions of botocore's EKS partitions, and per instance
type the zone *ids* (use1-az1) EC2's DescribeInstanceTypeOfferings lists, for the regions the
source covers. Zone ids are the same in every account; the zone *names* a stack lists
(us-east-1a) map to them differently per account, so a pool's zones are judged by count, and a
type missing from some zones of a region is a warning naming the ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from components.aws.model.catalog import CATALOG
from components.aws.model.kinds import pool_kind
from components.model import offerings
from components.model.catalog.gpus import MachineType
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

TABLE_FILE = Path(__file__).with_name("offerings.json")


def table() -> Mapping[str, Any]:
    return offerings.load_table(TABLE_FILE)


def regions() -> frozenset[str]:
    return frozenset(table()["regions"])


def covered(region: str) -> bool:
    return region in table()["offerings"]["covered_regions"]


def zone_ids(machine: str, region: str) -> tuple[str, ...]:
    """The zone ids of `region` that sell `machine` (empty: none, or not covered)."""
    return tuple(table()["offerings"]["machines"].get(machine, {}).get(region, ()))


def offered(machine: MachineType, region: str) -> bool | None:
    if region not in regions() or not covered(region):
        return None
    return bool(zone_ids(machine.name, region))


def region_problems(cluster: ClusterConfig) -> list[Problem]:
    region = cluster.region
    if region is None or region in regions():
        return []
    return [offerings.unknown_region("cluster.region", region, regions(), "an AWS", table())]


def _describe(region: str, names: Sequence[str]) -> str:
    return (
        f"`aws ec2 describe-instance-type-offerings --region {region} --location-type "
        f"availability-zone-id --filters Name=instance-type,Values={','.join(names)}`"
    )


def pool_problems(
    cluster: ClusterConfig, pool: GpuPoolConfig, path: str, warnings: list[str]
) -> list[Problem]:
    """The pool's instance types in the cluster's region, and (where an auto scaling group
    per zone must launch them) in its zones."""
    region = cluster.region
    if region is None or region not in regions():
        return []  # the region is wrong: one mistake, reported once on cluster.region
    default = CATALOG.defaults.get(pool.accelerator, "")
    keys = offerings.machine_keys(pool.machine_type, pool.machine_types, pool.accelerator, default)
    names = [k.name for k in keys]
    data = table()
    if not covered(region):
        warnings.append(
            offerings.not_checked(
                path,
                f"instance types {', '.join(names)} in {region}",
                f"the offerings table ({offerings.source(data, 'offerings').cite()}, read "
                f"{data['read']}) does not cover {region}",
                f"check with {_describe(region, names)}",
            )
        )
        return []
    problems = []
    for key in keys:
        if zone_ids(key.name, region):
            continue
        sold_in = data["offerings"]["machines"].get(key.name, {})
        problems.append(
            offerings.not_offered(
                f"{path}.{key.key}", key.described, region, sold_in, data, key.value
            )
        )
    if problems or pool_kind(cluster, pool).node_pools:
        # Karpenter and Auto Mode launch only where EC2 offers the type: zones need no check.
        return problems
    placed = offerings.pool_zones(cluster, pool, path)
    zones, where = placed.zones, placed.key
    ids = sorted({zone for name in names for zone in zone_ids(name, region)})
    region_ids = data["offerings"]["region_zone_ids"].get(region, [])
    if len(zones) > len(ids):
        problems.append(
            placed.problem(
                f"{' and '.join(names)} {'is' if len(names) == 1 else 'are'} offered in "
                f"{len(ids)} zone(s) of {region} ({', '.join(ids)}), fewer than the "
                f"{len(zones)} listed: each zone gets its own group, which never launches in "
                f"a zone without the type; list at most {len(ids)} zone(s) for the pool, those "
                f"`aws ec2 describe-availability-zones --region {region}` maps to these ids"
            )
        )
    elif zones and set(ids) != set(region_ids):
        missing = sorted(set(region_ids) - set(ids))
        warnings.append(
            offerings.not_checked(
                where,
                f"zones {', '.join(zones)} for {', '.join(names)}",
                f"{region}'s {'zone' if len(missing) == 1 else 'zones'} {' and '.join(missing)} "
                f"{'does' if len(missing) == 1 else 'do'} not offer "
                f"{'it' if len(names) == 1 else 'them'}, and zone names map to zone ids "
                "differently in every account",
                f"`aws ec2 describe-availability-zones --region {region}` shows which of your "
                f"zones are {', '.join(ids)}; a group in another zone never launches",
            )
        )
    return problems
