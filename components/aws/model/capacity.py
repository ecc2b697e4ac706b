"""EC2 capacity for EKS GPU pools: On-Demand Capacity Reservations (ODCRs), Capacity Blocks for
ML, and queued pools, as data with sources and the rules `Aws` answers the capacity interface
with (`components/model/cloud.py`, docs/capacity.md).

What each provisioner builds:

- **Karpenter** (aws/karpenter-provider-aws v1.14.1): the EC2NodeClass selects the pool's
  reservations (`capacityReservationSelectorTerms`, by id or by tags; CRD
  karpenter.k8s.aws_ec2nodeclasses.yaml) and the NodePool allows `karpenter.sh/capacity-type`
  `reserved`, which covers ODCRs and Capacity Blocks alike ("Capacity blocks are modeled as
  on-demand capacity reservations", website docs/tasks/odcrs.md). Behind the chart's
  `settings.featureGates.reservedCapacity` (beta, on by default in values.yaml). Whatever the
  requirement's order, Karpenter tries `reserved`, then `spot`, then `on-demand`
  (docs/concepts/nodepools.md, Capacity Type), so only orders in that sequence are built.
- **The cluster autoscaler's groups**: a launch template that targets one reservation
  (`capacityReservationSpecification.capacityReservationTarget`); an instance launched so
  either goes into the reservation or fails, so such a pool never falls back. Capacity Blocks
  on EKS managed node groups: `capacityType: CAPACITY_BLOCK`, the template's
  `instanceMarketOptions.marketType: capacity-block`, its reservation target and its instance
  type, and subnets of the block's zone only (awsdocs/amazon-eks-user-guide
  latest/ug/ml/capacity-blocks-mng.adoc at 4d52b4d). A reservation is zonal and for one instance
  type, so a group pool on one names one zone and one instance type.
- **Self-managed groups, `[reserved, on-demand]`**: the group itself (not its launch template)
  carries the preference `capacity-reservations-first` and targets the ODCR
  (`capacityReservationSpecification`, `RESERVATIONS_FIRST_PREFERENCE` below): an instance goes
  into the reservation while it has room, else runs on-demand. The cluster autoscaler's template
  of the group at zero is the same either way (the launch template's instance type and the
  node-template tags; nothing on a node says where it runs), so it scales the group as any
  on-demand group. EKS managed node groups own their group and take no such preference
  (CreateNodegroup has none): they stay `reserved` alone.
- **EKS Auto Mode**: not built by gpufleet.

The end of a Capacity Block (EC2 user guide, ec2-capacity-blocks: "With 30 minutes ... left in
your Capacity Block reservation, we begin terminating any instances that are running in the
Capacity Block"): EKS scales a managed Capacity Block group to 0 forty minutes before the end
(scheduled action "Amazon EKS Node Group Capacity Scaledown Before Reservation End",
capacity-blocks-mng.adoc), draining its nodes; Karpenter drains its nodes ten minutes before EC2
begins terminating them (docs/tasks/odcrs.md, Capacity Blocks). Self-managed groups get neither
(capacity-blocks.adoc leaves the scale-down to the user), so gpufleet does not build Capacity
Blocks on them. An ODCR that ends leaves its instances running as on-demand (Karpenter relabels
them `on-demand`, odcrs.md, Expiration).

Queued pools (all-or-nothing scale-up) are built under the cluster autoscaler only: Karpenter
serves no ProvisioningRequest (kubernetes-sigs/karpenter at 6e7eab7a0f48, the core Karpenter
v1.14.1 builds on, has no ProvisioningRequest controller, RBAC or type; its only
autoscaling.x-k8s.io API is CapacityBuffer), so Kueue's admission check would wait forever. The
autoscaler's side: `components/aws/model/provisioning_requests.py`.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

from components.aws.model import config as aws_config
from components.aws.model.catalog import CATALOG
from components.model.capacity import (
    QUEUED,
    CapacityOrder,
    ReservationCap,
    declared_order,
)
from components.model.schema import ClusterConfig, GpuPoolConfig

# The words that launch into a reservation.
RESERVED = "reserved"
CAPACITY_BLOCK = "capacity-block"
RESERVATION_WORDS = (RESERVED, CAPACITY_BLOCK)
# Orders Karpenter builds: a reservation first, then what it falls back to, in its own order.
_FALLBACKS: tuple[tuple[str, ...], ...] = ((), ("on-demand",), ("spot",), ("spot", "on-demand"))
KARPENTER_ORDERS: tuple[CapacityOrder, ...] = tuple(
    (word, *rest) for word in RESERVATION_WORDS for rest in _FALLBACKS
)
GROUP_ORDERS: tuple[CapacityOrder, ...] = ((RESERVED,), (CAPACITY_BLOCK,))
# A self-managed group falls back from its ODCR to on-demand through the group's own Capacity
# Reservation preference (below).
RESERVED_FIRST: CapacityOrder = (RESERVED, "on-demand")
# EC2 Auto Scaling's group-level preference (API CapacityReservationSpecification: "Auto
# Scaling will try to launch instances into a Capacity Reservation or Capacity Reservation
# resource group first. If capacity isn't available, instances will run in On-Demand
# capacity"; docs.aws.amazon.com/autoscaling/ec2/APIReference/
# API_CapacityReservationSpecification.html; pulumi_aws 7.51.1
# autoscaling.GroupCapacityReservationSpecificationArgs, valid values default,
# capacity-reservations-only, capacity-reservations-first, none). Set on the group, it
# overrides the launch template's (`default` defers to the template), so the template targets
# nothing. Changing it is UpdateAutoScalingGroup: running instances stay where they run.
RESERVATIONS_FIRST_PREFERENCE = "capacity-reservations-first"

# EC2 reservation ids: cr- and 17 (or, older, 8) hex digits (EC2 API CapacityReservation);
# Karpenter's CRD takes ^cr-[0-9a-z]+$.
RESERVATION_ID = re.compile(r"cr-([0-9a-f]{8}|[0-9a-f]{17})")
# EC2NodeClass capacityReservationSelectorTerms: at most 30 terms, 20 tags a term, no empty tag
# key or value (CRD maxItems, maxProperties, x-kubernetes-validations).
MAX_SELECTOR_TERMS = 30
MAX_SELECTOR_TAGS = 20
# EC2 begins terminating a Capacity Block's instances this long before its end (UltraServer
# blocks: 60); EKS scales a managed block group to 0, and Karpenter drains, this long before.
TERMINATION_LEAD_MINUTES = 30
DRAIN_LEAD_MINUTES = 40
# `plan` warns this many days before a Capacity Block's configured end.
NEAR_END_DAYS = 7


def reservation_word(order: CapacityOrder) -> str | None:
    """`reserved` or `capacity-block` when the pool launches into reservations first."""
    return order[0] if order and order[0] in RESERVATION_WORDS else None


def noun(word: str) -> str:
    return "Capacity Blocks" if word == CAPACITY_BLOCK else "On-Demand Capacity Reservations"


def common_advice(display: str, order: CapacityOrder) -> str:
    """What to do instead of an order a pool's kind does not build, where every kind says the
    same (a kind says first what is its own: components/aws/model/kinds/)."""
    reserving = [w for w in order if w in RESERVATION_WORDS]
    if order == QUEUED:
        return (
            f"{display} serves no ProvisioningRequest (Karpenter has "
            "no ProvisioningRequest controller; EKS Auto Mode runs Karpenter), so Kueue's "
            "admission check would wait forever; queued pools need cluster.aws.provisioner: "
            "cluster-autoscaler"
        )
    if len(reserving) > 1:
        return (
            f"a pool launches into {RESERVED} capacity or {CAPACITY_BLOCK}s, not both (Karpenter "
            "counts both as reserved, with no order between them): make a pool for each"
        )
    if order == ("spot", "on-demand"):
        return "write spot with aws.onDemandFallback: true (Karpenter)"
    return "leave capacity out (on-demand) or write spot"


# Karpenter's reserved-first consolidation (aws/karpenter-provider-aws v1.14.1, commit bde0065,
# website/content/en/docs/tasks/odcrs.md "Prioritization Behavior"): "Karpenter will prioritize
# reserved capacity during consolidation. Since ODCRs are pre-paid, Karpenter will model them as
# free and consolidate spot / on-demand nodes when possible". Replacing a node that runs pods is
# consolidation of an underutilized node, which only `consolidationPolicy:
# WhenEmptyOrUnderutilized` allows (docs/concepts/disruption.md); gpufleet's NodePools have
# `WhenEmpty` unless the pool sets aws.consolidateUnderutilized (components/model/karpenter_pool.py).
RESERVED_FIRST_SOURCE = "Karpenter v1.14 docs, tasks/odcrs.md (Prioritization Behavior)"


def reserved_first_consolidation(pool: GpuPoolConfig, order: CapacityOrder, path: str) -> list[str]:
    """What `plan` says of a Karpenter pool that falls back from a reservation: whether work
    moves back into the reservation once it has room (a warning when it does not, or drains)."""
    fallback = [word for word in order[1:] if word not in RESERVATION_WORDS]
    if not fallback:
        return []
    options = aws_config.pool_options(pool)
    where = " or ".join(fallback)
    if options.consolidate_underutilized:
        return [
            f"{path}.capacity: with aws.consolidateUnderutilized, Karpenter moves work back "
            f"into the reservation: it counts reserved capacity as free and replaces a node on "
            f"{where} with a reserved one once the reservation has room, draining it (its pods "
            f"restart; a running training job restarts from its checkpoint) ({RESERVED_FIRST_SOURCE})"
        ]
    return [
        f"{path}.capacity: a node Karpenter starts on {where} while the reservation is full keeps "
        "running for as long as it has pods (consolidationPolicy WhenEmpty), billed beside the "
        "reservation, which is billed anyway; Karpenter moves such work back into the "
        "reservation only when it may replace nodes that run pods: set "
        "aws.consolidateUnderutilized: true for that (it drains those nodes, so running jobs "
        f"restart), or keep it off and the node goes when its pods finish ({RESERVED_FIRST_SOURCE})"
    ]


def single_reservation(order: CapacityOrder) -> str | None:
    """The one reservation word of an order that names exactly one (None: none, or both)."""
    reserving = [w for w in order if w in RESERVATION_WORDS]
    return reserving[0] if len(reserving) == 1 else None


def pool_machine_types(pool: GpuPoolConfig) -> list[str]:
    default = CATALOG.defaults.get(pool.accelerator)
    return pool.machine_types or [pool.machine_type or default or ""]


def parse_end_time(text: str) -> datetime | None:
    """A Capacity Block's end as written (ISO 8601, UTC), or None when it is not one."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    offset = value.utcoffset()
    if offset is None or offset.total_seconds() != 0:
        return None
    return value.astimezone(UTC)


def block_ended(end_time: str | None, today: date | None) -> bool:
    """Whether a Capacity Block ending at `end_time` gives no nodes on `today`: planning is per
    day, so a block whose drain starts today (DRAIN_LEAD_MINUTES before its end: EKS scales
    its group to 0, Karpenter drains) or earlier counts as ended. An unknown end or day: live."""
    end = parse_end_time(end_time) if end_time is not None else None
    if end is None or today is None:
        return False
    return (end - timedelta(minutes=DRAIN_LEAD_MINUTES)).date() <= today


def warnings(cluster: ClusterConfig, pool: GpuPoolConfig, path: str, today: date) -> list[str]:
    """What `plan` says of a pool's Capacity Blocks: an end near or past, an end it does not
    know (the pool's kind adds its own: `EksPoolKind.reservation_warnings`)."""
    word = reservation_word(order_of(pool))
    if word is None:
        return []
    found: list[str] = []
    options = aws_config.pool_options(pool)
    if word != CAPACITY_BLOCK:
        return found
    for index, entry in enumerate(options.capacity_reservations or []):
        where = f"{path}.aws.capacityReservations[{index}]"
        if entry.end_time is None:
            found.append(
                f"{where}: no endTime: gpufleet cannot warn before Capacity Block {entry.id} "
                f"ends (EC2 terminates its instances {TERMINATION_LEAD_MINUTES} minutes before "
                "the end, pods and all); add its EndDate from aws ec2 "
                "describe-capacity-reservations"
            )
            continue
        end = parse_end_time(entry.end_time)
        if end is None:
            continue
        days = (end.date() - today).days
        shown = end.strftime("%Y-%m-%d %H:%M UTC")
        if days < 0:
            found.append(
                f"{where}.endTime: Capacity Block {entry.id} ended {shown}: nothing launches "
                "into it any more, so the pool gets no nodes from it; point the pool at a new "
                "block or remove it"
            )
        elif days <= NEAR_END_DAYS:
            when = "today" if days == 0 else f"in {days} day{'s' if days != 1 else ''}"
            found.append(
                f"{where}.endTime: Capacity Block {entry.id} ends {when} ({shown}): "
                f"{DRAIN_LEAD_MINUTES} minutes before, its nodes are drained (EKS scales the "
                f"group to 0; Karpenter drains them) and {TERMINATION_LEAD_MINUTES} minutes "
                "before, EC2 terminates whatever still runs; checkpoint long jobs before, and "
                "point the pool at a new block"
            )
    return found


def reservation_cap(pool: GpuPoolConfig, today: date | None = None) -> ReservationCap | None:
    """The pool's reservations' instances, when the config shows every one (no tags), with
    those of Capacity Blocks that have ended by `today` (`block_ended`)."""
    word = reservation_word(order_of(pool))
    options = aws_config.pool_options(pool)
    reservations = options.capacity_reservations or []
    if word is None or not reservations or options.capacity_reservation_tags:
        return None
    counts = [entry.instance_count for entry in reservations]
    if any(count is None for count in counts):
        return None
    nodes = sum(count for count in counts if count is not None)
    kind = "Capacity Block" if word == CAPACITY_BLOCK else "On-Demand Capacity Reservation"
    parts = [
        f"{entry.id} ({entry.instance_count}{' x ' + entry.instance_type if entry.instance_type else ''})"
        for entry in reservations
    ]
    plural = "s" if len(parts) > 1 else ""
    ended = [
        entry
        for entry in reservations
        if word == CAPACITY_BLOCK and block_ended(entry.end_time, today)
    ]
    return ReservationCap(
        nodes,
        f"{kind}{plural} {', '.join(parts)}",
        ended_nodes=sum(entry.instance_count or 0 for entry in ended),
        ended=", ".join(f"{entry.id} (endTime {entry.end_time})" for entry in ended),
    )


def selector_terms(pool: GpuPoolConfig) -> list[dict[str, Any]]:
    """The EC2NodeClass's capacityReservationSelectorTerms: each id, and the tags as one term."""
    options = aws_config.pool_options(pool)
    terms: list[dict[str, Any]] = [{"id": r.id} for r in options.capacity_reservations or []]
    if options.capacity_reservation_tags:
        terms.append({"tags": dict(sorted(options.capacity_reservation_tags.items()))})
    return terms


def launch_target(pool: GpuPoolConfig) -> str | None:
    """The reservation a node group's launch template targets (None: none)."""
    reservations = aws_config.pool_options(pool).capacity_reservations or []
    return reservations[0].id if reservations else None


def order_of(pool: GpuPoolConfig) -> CapacityOrder:
    return declared_order(pool.capacity, pool.spot)
