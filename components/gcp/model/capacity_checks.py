"""GKE's rules for a pool's capacity, checked before anything is created (facts and sources:
components/gcp/model/capacity.py). Every problem names the key, the value as written and what to
do; what gpufleet cannot check offline is said in a warning."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from components.gcp.model import capacity as gke
from components.gcp.model import config as gcp_config
from components.model.capacity import (
    ON_DEMAND,
    QUEUED,
    SPOT,
    CapacityOrder,
    ReservationCap,
    shown_order,
)
from components.model.catalog.gpus import MachineType
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig


def _machine_key(pool: GpuPoolConfig, path: str) -> tuple[str, str]:
    """The key naming the pool's machine, and its value (the accelerator's when defaulted)."""
    if pool.machine_type is not None:
        return f"{path}.machineType", pool.machine_type
    return f"{path}.accelerator", pool.accelerator


def capacity_problems(
    cluster: ClusterConfig,
    pool: GpuPoolConfig,
    order: CapacityOrder,
    path: str,
    machines: Sequence[MachineType],
) -> list[Problem]:
    """Every problem with a GKE order the shared rules accepted."""
    problems = run_duration_problems(pool, order, path)
    problems += reservation_problems(pool, order, path, machines)
    if order in gke.DWS_ORDERS:
        problems += dws_problems(cluster, pool, order, path, machines)
    return problems


def run_duration_problems(pool: GpuPoolConfig, order: CapacityOrder, path: str) -> list[Problem]:
    seconds = gcp_config.pool_options(pool).max_run_duration_seconds
    key = f"{path}.gcp.maxRunDurationSeconds"
    if seconds is None:
        return []
    if order == QUEUED:
        return [
            Problem(
                key,
                "a queued pool's nodes run as long as each Job asks: annotate the Job with "
                f"{gke.JOB_MAX_RUN_ANNOTATION} (GKE's default and most: "
                f"{gke.MAX_RUN_DURATION_SECONDS} s, 7 days); remove maxRunDurationSeconds",
                seconds,
            )
        ]
    if order != gke.FLEX_START:
        return [
            Problem(
                key,
                f"applies to flex-start pools only (capacity is {shown_order(order)}); remove "
                "it, or write capacity: flex-start",
                seconds,
            )
        ]
    if not 1 <= seconds <= gke.MAX_RUN_DURATION_SECONDS:
        return [
            Problem(
                key,
                f"must be whole seconds from 1 to {gke.MAX_RUN_DURATION_SECONDS} (7 days, GKE's "
                "most and its default for a flex-start node)",
                seconds,
            )
        ]
    return []


def reservation_problems(
    pool: GpuPoolConfig, order: CapacityOrder, path: str, machines: Sequence[MachineType]
) -> list[Problem]:
    reservation = gcp_config.pool_options(pool).reservation
    key = f"{path}.gcp.reservation"
    if reservation is None:
        if order != gke.RESERVED:
            return []
        return [
            Problem(
                key,
                "is required with capacity: reserved, naming the specific reservation the "
                f"nodes consume ({gke.RESERVATION_FORM}); to take any matching reservation and "
                "then on-demand VMs, write capacity: [reserved, on-demand] instead",
                has_value=False,
            )
        ]
    name = reservation.name
    refused = {
        SPOT: "Spot nodes do not consume reservations; drop one of spot and reservation",
        ON_DEMAND: "capacity: on-demand consumes no named reservation; write capacity: reserved "
        "to take only this reservation's VMs, or remove gcp.reservation",
        gke.RESERVED_THEN_ON_DEMAND: "a specific reservation does not fall back to on-demand "
        "VMs on GKE (SPECIFIC_RESERVATION fails when it is full); write capacity: reserved to "
        "take only this reservation, or remove gcp.reservation: [reserved, on-demand] takes any "
        "matching reservation, then on-demand VMs (ANY_RESERVATION)",
        gke.FLEX_START: "flex-start nodes consume no reservation (GKE creates them with "
        "reservation affinity none); remove gcp.reservation, or write capacity: reserved",
        QUEUED: "a queued pool's nodes consume no reservation (GKE creates them with "
        "reservation affinity none); remove gcp.reservation, or make a second pool with "
        "capacity: reserved",
    }
    if order in refused:
        return [Problem(key, refused[order], name)]
    problems: list[Problem] = []
    if gke.parse_reservation(name) is None:
        problems.append(
            Problem(f"{key}.name", f"must be a reservation ({gke.RESERVATION_FORM})", name)
        )
    wanted = reservation.machine_type
    if wanted is not None and machines and machines[0].name != wanted:
        problems.append(
            Problem(
                f"{key}.machineType",
                f"the pool's nodes are {machines[0].name}: GKE consumes a specific reservation "
                "only with VMs of its machine type; use a reservation of "
                f"{machines[0].name}, or set the pool's machineType to {wanted}",
                wanted,
            )
        )
    if reservation.count is not None and reservation.count < 1:
        problems.append(
            Problem(f"{key}.count", "must be at least 1 (the reservation's VMs)", reservation.count)
        )
    return problems


def reservation_zone_problems(
    cluster: ClusterConfig,
    pool: GpuPoolConfig,
    order: CapacityOrder,
    path: str,
    zone_problems: Callable[[str, Sequence[str], str], list[Problem]] | None,
) -> list[Problem]:
    """A specific reservation is zonal: every zone of the pool must hold one of that name
    (`zone_problems`: the cloud's check of zone names in the cluster's region, if readable)."""
    reservation = gcp_config.pool_options(pool).reservation
    if order != gke.RESERVED or reservation is None or reservation.zones is None:
        return []
    problems: list[Problem] = []
    if zone_problems is not None:
        key = f"{path}.gcp.reservation.zones"
        problems += zone_problems(cluster.region or "", reservation.zones, key)
    zones = list(pool.zones or cluster.zones or [])
    outside = [zone for zone in zones if zone not in reservation.zones]
    if not outside:
        return problems
    where = "" if pool.zones else " (cluster.zones: set the pool's own zones)"
    return [
        *problems,
        Problem(
            f"{path}.zones",
            f"a specific reservation is zonal: {reservation.name} is in "
            f"{', '.join(reservation.zones)} (gcp.reservation.zones), so nodes in "
            f"{', '.join(outside)} would find no reservation and never start{where}; limit the "
            f"pool to {', '.join(z for z in zones if z in reservation.zones) or 'those zones'}",
            zones,
        ),
    ]


def reservation_cap(pool: GpuPoolConfig, machines: Sequence[MachineType]) -> ReservationCap | None:
    """The most nodes a specific reservation gives the pool, where its count is written."""
    reservation = gcp_config.pool_options(pool).reservation
    if reservation is None or reservation.count is None or reservation.count < 1:
        return None
    machine = reservation.machine_type or (machines[0].name if machines else "VMs")
    where = f" in {', '.join(reservation.zones)}" if reservation.zones else ""
    return ReservationCap(
        reservation.count,
        f"reservation {reservation.name} ({reservation.count} x {machine}{where})",
    )


def dws_problems(
    cluster: ClusterConfig,
    pool: GpuPoolConfig,
    order: CapacityOrder,
    path: str,
    machines: Sequence[MachineType],
) -> list[Problem]:
    """Flex-start and queued pools: GKE's version floor, machine series and queued minimum."""
    word = order[0]
    problems: list[Problem] = []
    floor = gke.FLOORS[word]
    version = cluster.kubernetes_version
    if not gke.gke_version_at_least(version, floor.minor):
        problems.append(
            Problem(
                f"{path}.capacity",
                f"{word} needs GKE {floor.patch} or later; cluster.kubernetesVersion is "
                f"{version}: raise it to {floor.minor} or later, or choose another capacity",
                pool.capacity,
            )
        )
    for machine in machines:
        if not gke.takes_flex_start(machine.name):
            key, value = _machine_key(pool, path)
            problems.append(
                Problem(
                    key,
                    f"{machine.name} cannot be {word}: flex-start VMs (queued pools run on them "
                    "too) come only on the accelerator-optimized series A2, A3, A4 and G2 (not "
                    "G4, A4X, or N1 with attached GPUs); use one of those, or capacity: "
                    "on-demand or spot",
                    value,
                )
            )
    if order == QUEUED and pool.min_nodes != 0:
        problems.append(
            Problem(
                f"{path}.minNodes",
                "must be 0 for a queued pool: its nodes come only through ProvisioningRequests, "
                "so GKE keeps none waiting (queued node pools autoscale from 0); remove minNodes",
                pool.min_nodes,
            )
        )
    return problems


def capacity_warnings(
    cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder, path: str
) -> list[str]:
    """What works but gpufleet cannot check, or likely not what was meant."""
    warnings: list[str] = []
    reservation = gcp_config.pool_options(pool).reservation
    if order == gke.RESERVED and reservation is not None:
        ref = gke.parse_reservation(reservation.name)
        shared = (
            f", and is shared with project {gcp_config.cluster_options(cluster).project}"
            if ref is not None and ref.shared
            else ""
        )
        unknown = [
            key
            for key, value in (
                ("zones", reservation.zones),
                ("machineType", reservation.machine_type),
                ("count", reservation.count),
            )
            if value is None
        ]
        unwritten = (
            f"; its {', '.join(unknown)} not written (gcp.reservation.{unknown[0]}...), so not "
            "checked either"
            if unknown
            else ""
        )
        warnings.append(
            f"{path}.gcp.reservation: not checked offline: that {reservation.name} exists, was "
            f"created for specific consumption (--require-specific-reservation){shared}"
            f"{unwritten}; GKE starts no node the reservation cannot take"
        )
        if reservation.count is not None and reservation.count < pool.max_nodes:
            warnings.append(
                f"{path}.maxNodes: {pool.max_nodes}, but {reservation.name} holds "
                f"{reservation.count} VMs: at most {reservation.count} nodes at once"
            )
    if order == gke.RESERVED_THEN_ON_DEMAND:
        warnings.append(
            f"{path}.capacity: [reserved, on-demand] takes any matching reservation first "
            "(this project's, then shared ones), then on-demand VMs; which reservations match "
            "is not checked offline"
        )
    if order == gke.FLEX_START and pool.min_nodes > 0:
        warnings.append(
            f"{path}.minNodes: {pool.min_nodes} flex-start nodes are kept: each is deleted "
            "after its maxRunDurationSeconds and requested again (GKE creates flex-start pools "
            "from 0)"
        )
    return warnings
