"""Where a pool's reservations and capacity break a rule, each with what to do: the checks
behind `EksPoolKind.check_capacity`. The facts and sources they rest on are in
`components/aws/model/capacity.py`."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from components.aws.model import config as aws_config
from components.aws.model.capacity import (
    CAPACITY_BLOCK,
    MAX_SELECTOR_TAGS,
    MAX_SELECTOR_TERMS,
    RESERVATION_ID,
    RESERVED,
    noun,
    parse_end_time,
    pool_machine_types,
    reservation_word,
)
from components.model.capacity import QUEUED, CapacityOrder, shown_order
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

# How a pool's kind launches into its reservations: (cluster, pool, reservation word, path).
ReservationRules = Callable[[ClusterConfig, GpuPoolConfig, str, str], list[Problem]]


def check(
    cluster: ClusterConfig,
    pool: GpuPoolConfig,
    order: CapacityOrder,
    path: str,
    launches: ReservationRules,
) -> list[Problem]:
    """Every problem with a supported order's reservations (ids, tags, zones, instance types,
    end times) and with a queued pool's autoscaler, each with what to do; `launches` is the
    pool kind's rules for the reservations it launches into."""
    options = aws_config.pool_options(pool)
    reservations = options.capacity_reservations
    tags = options.capacity_reservation_tags
    word = reservation_word(order)
    key = f"{path}.aws.capacityReservations"
    problems = _entry_problems(cluster, pool, word, path)
    if order == QUEUED and aws_config.existing_options(cluster).autoscaler_installed:
        problems.append(
            Problem(
                f"{path}.capacity",
                "a queued pool needs a cluster autoscaler started with "
                "--enable-provisioning-requests=true and the ProvisioningRequest CRD; this "
                "cluster's autoscaler is its owner's (cluster.existing.autoscalerInstalled), "
                "which gpufleet can neither configure nor check: let gpufleet run it "
                "(autoscalerInstalled: false), or use cloud: existing with "
                "cluster.existing.provisioningRequestClass",
                pool.capacity,
            )
        )
    if word is None:
        spot = " (Spot instances never run in a reservation)" if "spot" in order else ""
        written: tuple[tuple[str, Any], ...] = (
            (
                "capacityReservations",
                None if reservations is None else [r.id for r in reservations],
            ),
            ("capacityReservationTags", tags),
        )
        for name, value in written:
            if value is not None:
                problems.append(
                    Problem(
                        f"{path}.aws.{name}",
                        f"applies only to a pool whose capacity starts with {RESERVED} or "
                        f"{CAPACITY_BLOCK}; this pool's is {shown_order(order)}{spot}: write "
                        f"capacity: {RESERVED} (On-Demand Capacity Reservations) or "
                        f"{CAPACITY_BLOCK}, or remove it",
                        value,
                    )
                )
        return problems
    if not reservations and not tags:
        how = (
            " (or, under Karpenter or EKS Auto Mode, capacityReservationTags)"
            if word == RESERVED
            else ""
        )
        problems.append(
            Problem(
                key,
                f"is required with capacity {shown_order(order)}: the {noun(word)} the pool "
                f"launches into, each as {{id: cr-...}}{how}",
                has_value=False,
            )
        )
        return problems
    return problems + launches(cluster, pool, word, path)


def _entry_problems(
    cluster: ClusterConfig, pool: GpuPoolConfig, word: str | None, path: str
) -> list[Problem]:
    """Each reservation as written: its id, zone and end time, no repeats; the tags."""
    options = aws_config.pool_options(pool)
    key = f"{path}.aws.capacityReservations"
    problems: list[Problem] = []
    reservations = options.capacity_reservations or []
    if options.capacity_reservations is not None and not reservations:
        problems.append(
            Problem(key, "must list at least one reservation; leave it out otherwise", [])
        )
    seen: dict[str, int] = {}
    region = cluster.region or ""
    for index, entry in enumerate(reservations):
        where = f"{key}[{index}]"
        if not RESERVATION_ID.fullmatch(entry.id):
            problems.append(
                Problem(
                    f"{where}.id",
                    "must be a capacity reservation id such as cr-0123456789abcdef0 (aws ec2 "
                    "describe-capacity-reservations)",
                    entry.id,
                )
            )
        elif entry.id in seen:
            problems.append(Problem(f"{where}.id", f"repeats {key}[{seen[entry.id]}]", entry.id))
        seen.setdefault(entry.id, index)
        if (
            entry.zone is not None
            and region
            and not re.fullmatch(rf"{re.escape(region)}[a-z]", entry.zone)
        ):
            problems.append(
                Problem(
                    f"{where}.zone",
                    f"must be a zone of cluster.region {region} ({region}<letter>)",
                    entry.zone,
                )
            )
        if entry.end_time is not None:
            if word == RESERVED:
                problems.append(
                    Problem(
                        f"{where}.endTime",
                        "is for Capacity Blocks (capacity: capacity-block), whose instances EC2 "
                        "terminates at the end; an On-Demand Capacity Reservation's instances "
                        "keep running on-demand when it ends: remove it",
                        entry.end_time,
                    )
                )
            elif parse_end_time(entry.end_time) is None:
                problems.append(
                    Problem(
                        f"{where}.endTime",
                        "must be the block's end in UTC, ISO 8601, such as "
                        "2026-12-10T11:30:00Z (EndDate in aws ec2 describe-capacity-reservations)",
                        entry.end_time,
                    )
                )
    tags = options.capacity_reservation_tags
    if tags is not None:
        tag_key = f"{path}.aws.capacityReservationTags"
        if not tags:
            problems.append(
                Problem(tag_key, "must name at least one tag; leave it out otherwise", {})
            )
        empty = sorted(k for k, v in tags.items() if not k or not v)
        if empty:
            problems.append(
                Problem(
                    tag_key,
                    "tag keys and values must not be empty (Karpenter's CRD refuses them; '*' "
                    "matches any value)",
                    empty,
                )
            )
        if len(tags) > MAX_SELECTOR_TAGS:
            problems.append(
                Problem(
                    tag_key,
                    f"at most {MAX_SELECTOR_TAGS} tags (Karpenter's selector term limit)",
                    len(tags),
                )
            )
    return problems


def _zones(cluster: ClusterConfig, pool: GpuPoolConfig) -> list[str]:
    return list(pool.zones or cluster.zones or [])


def karpenter_problems(
    cluster: ClusterConfig, pool: GpuPoolConfig, word: str, path: str
) -> list[Problem]:
    """Karpenter finds each reservation's zone and type itself; where the config shows them,
    they must be the pool's, or the NodePool never launches into the reservation."""
    options = aws_config.pool_options(pool)
    key = f"{path}.aws.capacityReservations"
    reservations = options.capacity_reservations or []
    problems: list[Problem] = []
    terms = len(reservations) + (1 if options.capacity_reservation_tags else 0)
    if terms > MAX_SELECTOR_TERMS:
        problems.append(
            Problem(
                key,
                f"at most {MAX_SELECTOR_TERMS} reservations and tag sets together (Karpenter's "
                "capacityReservationSelectorTerms limit); select more by tags",
                terms,
            )
        )
    zones, types = _zones(cluster, pool), pool_machine_types(pool)
    for index, entry in enumerate(reservations):
        where = f"{key}[{index}]"
        if entry.zone is not None and zones and entry.zone not in zones:
            problems.append(
                Problem(
                    f"{where}.zone",
                    f"not among the pool's zones {zones}: the NodePool would never launch into "
                    f"{entry.id}; add the zone to the pool (or cluster.zones)",
                    entry.zone,
                )
            )
        if entry.instance_type is not None and entry.instance_type not in types:
            problems.append(
                Problem(
                    f"{where}.instanceType",
                    f"not among the pool's machine types {types}: the NodePool would never "
                    f"launch into {entry.id}; add it to machineTypes",
                    entry.instance_type,
                )
            )
    return problems


def group_problems(
    cluster: ClusterConfig, pool: GpuPoolConfig, word: str, path: str, *, drains_blocks: bool
) -> list[Problem]:
    """A node group's launch template targets one reservation, of one type in one zone."""
    options = aws_config.pool_options(pool)
    key = f"{path}.aws.capacityReservations"
    reservations = options.capacity_reservations or []
    problems: list[Problem] = []
    if options.capacity_reservation_tags is not None:
        problems.append(
            Problem(
                f"{path}.aws.capacityReservationTags",
                "only Karpenter selects reservations by tag; a node group's launch template "
                "targets one by id: list it in capacityReservations",
                options.capacity_reservation_tags,
            )
        )
    if len(reservations) > 1:
        problems.append(
            Problem(
                key,
                "a node group's launch template targets one reservation: list exactly one "
                "(make a pool per reservation, or use cluster.aws.provisioner: karpenter)",
                [r.id for r in reservations],
            )
        )
    if word == CAPACITY_BLOCK and not drains_blocks:
        problems.append(
            Problem(
                f"{path}.aws.nodeGroup",
                "Capacity Blocks need an EKS managed node group here: EKS scales a managed "
                "Capacity Block group to 0 and drains it 40 minutes before the block ends, "
                "while a self-managed group's nodes would be cut off when EC2 terminates them "
                "30 minutes before the end; set aws.nodeGroup: managed",
                options.node_group,
            )
        )
    if word == CAPACITY_BLOCK and pool.min_nodes > 0:
        problems.append(
            Problem(
                f"{path}.minNodes",
                "a Capacity Block pool must be able to reach 0 nodes: it has none before the "
                "block starts, and EKS scales it to 0 before the block ends; set 0",
                pool.min_nodes,
            )
        )
    zones, types = _zones(cluster, pool), pool_machine_types(pool)
    entry = reservations[0] if len(reservations) == 1 else None
    if len(zones) != 1:
        problems.append(
            Problem(
                f"{path}.zones",
                f"a reservation is in one zone and a node group launches into it only there: "
                f"give the pool that one zone{f' ({entry.zone})' if entry and entry.zone else ''}"
                " (a pool per zone's reservation)",
                zones,
            )
        )
    elif entry is not None and entry.zone is not None and entry.zone != zones[0]:
        problems.append(
            Problem(
                f"{key}[0].zone",
                f"is not the pool's zone {zones[0]}: no instance of the pool could launch into "
                f"{entry.id}; make the pool's zones [{entry.zone}]",
                entry.zone,
            )
        )
    if len(types) != 1:
        problems.append(
            Problem(
                f"{path}.machineTypes",
                "a reservation is for one instance type: give the pool only the reservation's"
                f"{f' ({entry.instance_type})' if entry and entry.instance_type else ''}",
                types,
            )
        )
    elif entry is not None and entry.instance_type not in (None, types[0]):
        problems.append(
            Problem(
                f"{key}[0].instanceType",
                f"is not the pool's machine type {types[0]}: no instance of the pool could "
                f"launch into {entry.id}; make the pool's machine type {entry.instance_type}",
                entry.instance_type,
            )
        )
    return problems
