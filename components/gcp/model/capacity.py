"""How a GKE node pool gets its nodes: on demand, Spot, a reservation, flex-start or queued
provisioning, as data with sources, and what each asks of the node pool (docs/gke.md).

| capacity | the node pool |
|---|---|
| `on-demand` | no reservation affinity sent (GKE's default applies, as before) |
| `spot` | `spot: true` |
| `reserved` | `SPECIFIC_RESERVATION` on `gcp.reservation` (a name, a shared reservation, a block); no fallback |
| `[reserved, on-demand]` | `ANY_RESERVATION`: any matching reservation first, then on-demand VMs |
| `flex-start` | `flexStart`, `maxRunDuration`, `NO_RESERVATION`, no auto-repair, location policy ANY |
| `queued` | flex-start plus `queuedProvisioning.enabled`: nodes only through ProvisioningRequests |

Sources, read 2026-11-25:

- terraform-provider-google @e03b7622 (2026-08-21): google/services/container/node_config.go
  (`flex_start`, `max_run_duration` "in seconds, terminated by 's'", `reservation_affinity` with
  `consume_reservation_type` NO_RESERVATION/ANY_RESERVATION/SPECIFIC_RESERVATION, `key`,
  `values`: all ForceNew) and resource_container_node_pool.go (`queued_provisioning.enabled`,
  ForceNew). pulumi-gcp 10.2.0 exposes all four (`NodePoolNodeConfigArgs.flex_start`,
  `.max_run_duration`, `NodePoolQueuedProvisioningArgs`).
- GKE docs, how-to/provisioningrequest ("Run a large-scale workload with flex-start with queued
  provisioning"): a cluster at 1.32.2-gke.1652000 or later; the node pool created with
  `--enable-queued-provisioning --flex-start --enable-autoscaling --num-nodes=0
  --location-policy=ANY --reservation-affinity=none --no-enable-autorepair`; GKE adds the
  `cloud.google.com/gke-queued` taint to the pool; ProvisioningRequest class
  `queued-provisioning.gke.io`; the Job's `provreq.kueue.x-k8s.io/maxRunDurationSeconds`
  ("up to the default of seven days"); the VMs use preemptible quota; keep one pool without it.
- GKE docs, how-to/dws-flex-start-training ("Run a small batch workload with GPUs and Flex-start
  VMs", updated 2026-06-09): `--flex-start --max-run-duration ... --num-nodes 0
  --enable-autoscaling --total-min-nodes 0 --location-policy ANY --reservation-affinity none
  --no-enable-autorepair`; max run duration "up to the default of seven days", ending in `s`;
  pods select `cloud.google.com/gke-flex-start: "true"`; billed at Dynamic Workload Scheduler
  prices ("Discounted (up to 53%) for vCPUs, GPUs, and TPUs").
- GKE docs, concepts/dws (Requirements): "To run GPUs, use GKE version 1.32.2-gke.1652000 or
  later".
- Compute Engine docs, instances/about-flex-start-vms: "Flex-start VMs support all
  accelerator-optimized machine types (except A4X and G4) and H4D machine types. For A4, A3, A2,
  and H4D machine types, you obtain vCPUs, memory, and any attached GPUs at a discounted price";
  at most seven days' run.
- GKE docs, how-to/consuming-reservations: consumption modes any, specific and none; "In the any
  reservation consumption mode, nodes first take capacity from all single-project reservations
  before any shared reservations". AI Hypercomputer docs, create/gke-ai-hypercompute-custom: a
  specific reservation, shared or not, is `projects/PROJECT_ID/reservations/RESERVATION_NAME
  /reservationBlocks/BLOCK_NAME`, and "If the reservation is located in the current project, you
  can omit projects/PROJECT_ID/reservations/". gcloud's container api_adapter sends the
  `--reservation` value as written, under the key `compute.googleapis.com/reservation-name`.
- GoogleCloudPlatform/cluster-toolkit @10470803 modules/compute/gke-node-pool/main.tf
  preconditions: flex-start needs `auto_repair = false` and `NO_RESERVATION`; queued needs
  `NO_RESERVATION` and `autoscaling_total_min_nodes = 0`; neither with Spot; Spot only with
  `NO_RESERVATION`. reservation_definitions.tf: specific reservations as
  `projects/<p>/reservations/<n>[/reservationBlocks/<b>]`, checked to exist in every zone of
  the pool with the pool's machine type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from components.model.capacity import ON_DEMAND, QUEUED, SPOT, CapacityOrder
from components.model.catalog.provisioning import GKE_QUEUED

RESERVED: Final[CapacityOrder] = ("reserved",)
# ANY_RESERVATION: GKE takes a matching reservation where one has room, else an on-demand VM.
RESERVED_THEN_ON_DEMAND: Final[CapacityOrder] = ("reserved", "on-demand")
FLEX_START: Final[CapacityOrder] = ("flex-start",)
# Every order a GKE node pool can express: one capacity per pool, the one fallback being GKE's
# own (ANY_RESERVATION). Spot-then-on-demand, reservation-then-flex-start and the like are
# custom ComputeClasses, which gpufleet does not build: two pools do it.
ORDERS: Final[tuple[CapacityOrder, ...]] = (
    ON_DEMAND,
    SPOT,
    RESERVED,
    RESERVED_THEN_ON_DEMAND,
    FLEX_START,
    QUEUED,
)
# Flex-start VMs carry both; a queued pool's nodes are flex-start VMs too.
DWS_ORDERS: Final[tuple[CapacityOrder, ...]] = (FLEX_START, QUEUED)
PROVISIONING_CLASS: Final[str] = GKE_QUEUED.name

_DOCS = "cloud.google.com/kubernetes-engine/docs"


@dataclass(frozen=True)
class VersionFloor:
    """The oldest GKE version a capacity runs on: the minor gpufleet checks, and the patch."""

    capacity: str
    minor: str
    patch: str
    source: str


FLOORS: Final[dict[str, VersionFloor]] = {
    "flex-start": VersionFloor(
        "flex-start",
        "1.32",
        "1.32.2-gke.1652000",
        f"{_DOCS}/concepts/dws Requirements ('To run GPUs, use GKE version 1.32.2-gke.1652000 "
        "or later')",
    ),
    "queued": VersionFloor(
        "queued",
        "1.32",
        "1.32.2-gke.1652000",
        f"{_DOCS}/how-to/provisioningrequest Before you begin ('Ensure that you have a GKE "
        "cluster in version 1.32.2-gke.1652000 or later'; flex-start with queued provisioning)",
    ),
}

# GKE's default and maximum run of a flex-start node ("up to the default of seven days").
MAX_RUN_DURATION_SECONDS: Final[int] = 7 * 24 * 3600
# Kueue's annotation that carries a queued Job's run time into its ProvisioningRequest.
JOB_MAX_RUN_ANNOTATION: Final[str] = "provreq.kueue.x-k8s.io/maxRunDurationSeconds"

# Machine series whose VMs come as flex-start (Compute Engine about-flex-start-vms: every
# accelerator-optimized series but A4X and G4). N1 with attached GPUs is not one of them.
FLEX_START_SERIES: Final[tuple[str, ...]] = ("a2", "a3", "a4", "g2")
# Of those, the ones whose flex-start price Compute Engine says is discounted.
DISCOUNTED_SERIES: Final[tuple[str, ...]] = ("a2", "a3", "a4")

# What GKE puts on the nodes: flex-start VMs are labelled (pods select them by it, GKE docs
# dws-flex-start-training), and a queued pool is tainted (how-to/provisioningrequest).
FLEX_START_LABEL: Final[tuple[str, str]] = ("cloud.google.com/gke-flex-start", "true")
QUEUED_TAINT: Final[tuple[str, str, str]] = ("cloud.google.com/gke-queued", "true", "NoSchedule")

RESERVATION_KEY: Final[str] = "compute.googleapis.com/reservation-name"
_NAME = r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?"
_PROJECT = r"[a-z][-a-z0-9]{4,28}[a-z0-9]"
RESERVATION_FORM: Final[str] = (
    "NAME, projects/PROJECT/reservations/NAME (a shared reservation), either followed by "
    "/reservationBlocks/BLOCK (NAME and BLOCK: 1-63 of a-z 0-9 -, starting with a letter)"
)
_RESERVATION = re.compile(
    rf"(?:projects/(?P<project>{_PROJECT})/reservations/)?(?P<name>{_NAME})"
    rf"(?:/reservationBlocks/(?P<block>{_NAME}))?"
)


def series(machine: str) -> str:
    """`a3` of `a3-highgpu-8g`."""
    return machine.split("-", 1)[0]


def takes_flex_start(machine: str) -> bool:
    return series(machine) in FLEX_START_SERIES


@dataclass(frozen=True)
class ReservationRef:
    """A specific reservation as written: its project (None: the cluster's), name and block."""

    written: str
    project: str | None
    name: str
    block: str | None

    @property
    def shared(self) -> bool:
        return self.project is not None


def parse_reservation(written: str) -> ReservationRef | None:
    """The reservation a `gcp.reservation.name` names (None: not of RESERVATION_FORM)."""
    match = _RESERVATION.fullmatch(written)
    if match is None:
        return None
    return ReservationRef(written, match["project"], match["name"], match["block"])


def gke_version_at_least(version: str, minor: str) -> bool:
    """Whether the `1.35`-style cluster minor is `minor` or later (False when unreadable)."""

    def parts(text: str) -> tuple[int, ...] | None:
        pieces = text.split(".")[:2]
        return tuple(int(p) for p in pieces) if all(p.isdigit() for p in pieces) else None

    have, need = parts(version), parts(minor)
    return have is not None and need is not None and have >= need


@dataclass(frozen=True)
class ReservationAffinity:
    consume_reservation_type: str
    key: str | None = None
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class NodePoolCapacity:
    """What a node pool of this capacity sends to GKE (None/False: not sent, GKE's default)."""

    flex_start: bool = False
    max_run_duration: str | None = None  # "604800s"
    queued: bool = False
    reservation: ReservationAffinity | None = None
    # Flex-start VMs run out their time; GKE's docs create those pools without auto-repair.
    auto_repair: bool = True
    # Flex-start and queued pools take capacity in whichever zone has it.
    any_zone: bool = False

    @property
    def short_lived_upgrades(self) -> bool:
        """GKE upgrades flex-start and queued pools its own way (SHORT_LIVED: a node is
        replaced when its workload ends), sets that strategy on the pool itself and ignores
        what is sent; terraform-provider-google accepts only SURGE and BLUE_GREEN, so a pool
        that sends upgrade settings differs from GKE's answer after every refresh (a no-op
        update each `up`). Sources: GKE docs concepts/node-pool-upgrade-strategies ("For
        nodes that use Flex-start VMs, GKE uses short-lived upgrades"); the container v1 API's
        NodePoolUpdateStrategy.SHORT_LIVED ("the dedicated upgrade strategy for
        QueuedProvisioning and flex start nodepools"); crossplane-contrib/provider-upjet-gcp
        PR #1029 (2026-09: GKE forces SHORT_LIVED with max_surge 0 server-side, the provider's
        SURGE default then never converges)."""
        return self.flex_start


def node_pool_capacity(
    order: CapacityOrder, reservation: str | None, max_run_seconds: int | None
) -> NodePoolCapacity:
    """The node pool's settings for a checked order."""
    if order in DWS_ORDERS:
        queued = order == QUEUED
        # A queued pool's nodes run as long as each request asks (the Job's annotation).
        seconds = None if queued else (max_run_seconds or MAX_RUN_DURATION_SECONDS)
        return NodePoolCapacity(
            flex_start=True,
            max_run_duration=None if seconds is None else f"{seconds}s",
            queued=queued,
            reservation=ReservationAffinity("NO_RESERVATION"),
            auto_repair=False,
            any_zone=True,
        )
    if order == RESERVED and reservation is not None:
        return NodePoolCapacity(
            reservation=ReservationAffinity("SPECIFIC_RESERVATION", RESERVATION_KEY, (reservation,))
        )
    if order == RESERVED_THEN_ON_DEMAND:
        return NodePoolCapacity(reservation=ReservationAffinity("ANY_RESERVATION"))
    return NodePoolCapacity()
