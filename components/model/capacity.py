"""How a GPU pool gets its capacity: `gpuPools[].capacity`, the words and their order.

`capacity` is one word, or an ordered list the pool falls back along (the first that has nodes
to give wins). The words are the same on every cloud; which words and orders a cloud builds, and
its own rules for them (reservation names, zones, version floors), are its `Cloud`'s
(`capacity_orders`, `check_capacity`, `provisioning_class`, `reservation_cap`). The shared rules
live here, with no cloud in them.

`spot: true` is the older spelling of `capacity: spot`, and stays valid. Both may be written
only when they agree: `spot: true` with `capacity: spot` exactly, `spot: false` with a capacity
that never gives Spot nodes. A mixed order such as `[spot, on-demand]` leaves `spot` unset.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from components.model.catalog.provisioning import PROVISIONING_CLASSES
from components.model.problems import Problem

CapacityType = Literal["on-demand", "spot", "reserved", "capacity-block", "flex-start", "queued"]
# The words, in the order the documentation explains them.
CAPACITY_TYPES: tuple[CapacityType, ...] = (
    "on-demand",
    "spot",
    "reserved",
    "capacity-block",
    "flex-start",
    "queued",
)
# Orders whose every node comes from a reservation (nothing to fall back to).
RESERVATIONS = frozenset({"reserved", "capacity-block"})
# The capacity a pool of `queues.pools` may start with: paid capacity a team's Jobs share by
# quota (reservations, Capacity Blocks, flex-start), and on-demand to borrow from when it is full.
QUEUE_CAPACITY: tuple[str, ...] = ("reserved", "capacity-block", "flex-start", "on-demand")
# An ordered fallback: ("reserved", "on-demand") takes reserved nodes first.
CapacityOrder = tuple[str, ...]
ON_DEMAND: CapacityOrder = ("on-demand",)
SPOT: CapacityOrder = ("spot",)
QUEUED: CapacityOrder = ("queued",)
# Jobs wait in a queue and start when every node they need can be had at once; the pool has no
# other way in, so nothing to fall back to or from.
STANDS_ALONE = frozenset({"queued"})


def written_order(value: Any) -> CapacityOrder | None:
    """`capacity` as written, as an order (None: not written, or not words at all)."""
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def declared_order(capacity: Any, spot: bool) -> CapacityOrder:
    """The pool's order: `capacity` when written, else what `spot` says."""
    return written_order(capacity) or (SPOT if spot else ON_DEMAND)


def spot_from_capacity(capacity: Any) -> bool | None:
    """The `spot` a pool without that key gets from its `capacity` (None: leave the default)."""
    return True if written_order(capacity) == SPOT else None


def shown_order(order: CapacityOrder) -> str:
    """An order as a user writes it: `spot`, `[reserved, on-demand]`."""
    return order[0] if len(order) == 1 else f"[{', '.join(order)}]"


def order_problems(capacity: Any, spot_written: bool, spot: bool, path: str) -> list[Problem]:
    """The shared rules: known words, no repeats, `queued` alone, and `spot` agreeing."""
    key = f"{path}.capacity"
    allowed = ", ".join(CAPACITY_TYPES)
    order = written_order(capacity)
    if order is None:
        return [
            Problem(
                key,
                f"must be one of {allowed}, or a list of them in the order to fall back",
                capacity,
            )
        ]
    problems: list[Problem] = []
    if not order:
        problems.append(Problem(key, f"must list at least one of {allowed}", capacity))
    listed = isinstance(capacity, list)
    for index, word in enumerate(order):
        if word in CAPACITY_TYPES:
            continue
        close = difflib.get_close_matches(word, CAPACITY_TYPES, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        where = f"{key}[{index}]" if listed else key
        problems.append(Problem(where, f"unknown capacity; allowed: {allowed}{hint}", word))
    repeated = sorted({word for word in order if order.count(word) > 1})
    if repeated:
        problems.append(
            Problem(key, f"{', '.join(repeated)} repeated: each capacity once, in order", capacity)
        )
    alone = [word for word in order if word in STANDS_ALONE]
    if alone and len(order) > 1:
        problems.append(
            Problem(
                key,
                f"{alone[0]} stands alone: a queued pool's Jobs start only when all their nodes "
                "can be had at once, so there is nothing to fall back to; write "
                f"capacity: {alone[0]}, or make a second pool for the fallback",
                capacity,
            )
        )
    contradicts = order != SPOT if spot else "spot" in order
    if spot_written and order and contradicts:
        wants = (
            "spot: true means capacity: spot exactly"
            if spot
            else "spot: false means no Spot nodes, but capacity lists spot"
        )
        problems.append(
            Problem(
                f"{path}.spot",
                f"contradicts {key} ({shown_order(order)}): {wants}; remove spot (capacity "
                "says it all) or make the two agree",
                spot,
            )
        )
    return problems


@dataclass(frozen=True)
class ReservationCap:
    """A reservation that caps a pool: at most `nodes` nodes come from `source` (a sentence
    naming the reservation, e.g. "On-Demand Capacity Reservation cr-0abc: 4 p5.48xlarge")."""

    nodes: int
    source: str
    # Of `nodes`, those in reservations that have ended by the plan's day (a Capacity Block
    # past its end or within its drain window), and which: nothing launches into them, so
    # Kueue's quota and the committed cost leave them out.
    ended_nodes: int = 0
    ended: str = ""

    @property
    def live_nodes(self) -> int:
        return self.nodes - self.ended_nodes


@dataclass(frozen=True)
class PoolQueue:
    """A pool's Kueue objects: the LocalQueue a Job names (in each of `namespaces`), and, for a
    queued pool, the ProvisioningRequest class its admission check asks the autoscaler for
    (None: a pool of paid capacity in `queues.pools`, whose quota alone admits Jobs)."""

    local_queue: str
    cluster_queue: str
    namespaces: tuple[str, ...]
    provisioning_class: str | None
    # The ClusterQueue's quota in nodes: maxNodes, or the reservation's size when every node
    # comes from it (components/model/kueue.py).
    quota_nodes: int = 0
    # The Kueue cohort the ClusterQueue joins (a borrower and the pool it borrows from).
    cohort: str | None = None
    # The pool whose flavor (and unused quota) this queue borrows when its own is used up.
    borrow_from: str | None = None

    @property
    def requested(self) -> bool:
        """Whether Kueue asks the autoscaler for the Job's nodes (a queued pool's admission
        check) before it admits it."""
        return self.provisioning_class is not None

    @property
    def only_requested(self) -> bool:
        """Whether the pool's nodes come only through ProvisioningRequests (GKE's queued
        provisioning): a pod that was not admitted through the queue never gets a node."""
        if self.provisioning_class is None:
            return False
        known = PROVISIONING_CLASSES.get(self.provisioning_class)
        return known is not None and known.only_requested

    @property
    def label(self) -> dict[str, str]:
        """The label a Job (or JobSet, RayJob, ...) carries in its own metadata to use it."""
        return {QUEUE_LABEL: self.local_queue}


# Kueue: the label that puts a Job in a LocalQueue of its namespace (kueue
# pkg/controller/constants QueueLabel, v0.19.2).
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def unsupported(
    cloud: str, order: CapacityOrder, supported: Sequence[CapacityOrder], advice: str
) -> str:
    """The message for an order a cloud does not build (yet)."""
    offered = ", ".join(shown_order(o) for o in supported)
    message = f"not supported on {cloud} yet; supported here: {offered}"
    return f"{message}; {advice}" if advice else message
