"""Prices as data: one generated table per cloud, read lazily, and how a cloud prices a stack.

Each cloud that creates nodes keeps `components/<cloud>/model/prices.json`, written by
`scripts/prices.py` from a public catalog built from the cloud's own price API (the table names
its source, licence and date): USD per hour, on demand (Linux) and, where the source publishes
one, Spot, per machine type and region; the control-plane fee per tier; the fixed network fees a
stack pays whether or not it runs nodes (NAT gateways, load balancers, public addresses); and every
catalog machine type the source has no price for, as a named `unknown` entry with the reason.

A price is exact (a row of the source for the stack's region), an **estimate** that says so (the
region's price in an older catalog the table keeps as its `snapshot`, or the table's
`fallbackRegion` list price, for a region the source does not cover; the snapshot's Spot price
where the source has none; a rate derived from a published rule), or `None` with the reason.
An estimate is never silent: `NodePrice.estimate` (and `spot_estimate`) names how it was made,
and `plan` lists it in the warnings.

A table is read the first time a stack of its cloud is priced, and only that cloud's.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

from components.model.capacity import CapacityOrder
from components.model.pool_spec import PoolSpec
from components.model.schema import GpuPoolConfig, StackConfig


@dataclass(frozen=True)
class NodePrice:
    """What one node costs per hour; `None` where the table has no price (`unknown` says why)."""

    on_demand: float | None
    spot: float | None
    unknown: str = ""
    estimate: str = ""  # not empty: the figure is an estimate, made as this says
    spot_estimate: str = ""  # not empty: the Spot figure is an estimate, made as this says


@dataclass(frozen=True)
class Fee:
    """A fixed fee per hour from the table (`fees`), with its source."""

    per_hour: float
    source: str


@dataclass(frozen=True)
class ControlPlaneFee:
    """The cluster's own fee per hour. `counted` False: not this stack's (an adopted cluster)."""

    tier: str
    per_hour: float | None
    note: str = ""
    counted: bool = True


@dataclass(frozen=True)
class PriceTable:
    cloud: str
    as_of: date
    spot_note: str | None  # None: the source has no Spot prices
    source: Mapping[str, str]
    control_plane: Mapping[str, tuple[float | None, str]]  # tier -> (per hour, source)
    machines: Mapping[str, Mapping[str, tuple[float, float | None]]]  # machine -> region -> price
    accelerators: Mapping[str, Mapping[str, tuple[float, float | None]]]
    unknown: Mapping[str, str]  # machine or accelerator -> why it has no price
    # The region whose list price stands in, as a labelled estimate, for a region the source
    # does not cover (None: no stand-in, such a price is unknown).
    fallback_region: str | None = None
    fees: Mapping[str, Fee] = field(default_factory=dict)
    # machine or accelerator -> how its every price was made (entered by hand, not a catalog's)
    estimated: Mapping[str, str] = field(default_factory=dict)
    # An older catalog's prices (`snapshot` in the table): machine -> region -> (on demand,
    # Spot), used as labelled estimates where the source has no price for the region, and for
    # the Spot price where the source has none.
    snapshot: Mapping[str, Mapping[str, tuple[float, float | None]]] = field(default_factory=dict)
    snapshot_on_demand: str = ""  # how a snapshot on-demand price was made ({region} filled in)
    snapshot_spot: str = ""  # how a snapshot Spot price was made ({region} filled in)
    snapshot_name: str = ""  # the snapshot's source, as its `source.name` says
    # The latest day the snapshot can be from (None: undated), for the price-age rule.
    snapshot_taken_by: date | None = None

    def from_snapshot(self, name: str, region: str | None, spot: bool) -> bool:
        """Whether `machine` prices `name` in `region` from the snapshot: its on-demand price,
        or, when `spot`, its Spot price."""
        older = self.snapshot.get(name, {}).get(region or "")
        if older is None or name in self.unknown or name not in self.machines:
            return False
        exact = self.machines[name].get(region or "")
        return exact is None or (spot and exact[1] is None and older[1] is not None)

    def machine(self, name: str, region: str | None) -> NodePrice:
        price = self._lookup(self.machines, name, region, "machine type")
        older = self.snapshot.get(name, {}).get(region or "")
        if older is None or price.on_demand is None:
            return price
        if region not in self.machines.get(name, {}):
            # The source has no price for the region: the snapshot's is closer than a stand-in.
            on_demand, spot = older
            made = self.snapshot_on_demand.format(region=region)
            estimate = "; ".join(p for p in (self.estimated.get(name, ""), made) if p)
            return NodePrice(
                on_demand, spot, estimate=estimate, spot_estimate=self._spot(spot, region)
            )
        if price.spot is None and older[1] is not None:
            return replace(price, spot=older[1], spot_estimate=self._spot(older[1], region))
        return price

    def _spot(self, spot: float | None, region: str | None = None) -> str:
        return "" if spot is None else self.snapshot_spot.format(region=region)

    def accelerator(self, name: str, region: str | None) -> NodePrice:
        return self._lookup(self.accelerators, name, region, "accelerator")

    def _lookup(
        self,
        rows: Mapping[str, Mapping[str, tuple[float, float | None]]],
        name: str,
        region: str | None,
        what: str,
    ) -> NodePrice:
        if name in self.unknown:
            return NodePrice(None, None, f"unknown: {self.unknown[name]}")
        by_region = rows.get(name)
        if by_region is None:
            return NodePrice(None, None, f"{what} not in the price table")
        made = self.estimated.get(name, "")
        if region is not None and region in by_region:
            on_demand, spot = by_region[region]
            return NodePrice(on_demand, spot, estimate=made)
        where = f"region {region}" if region else "a stack without a region"
        stand_in = self.fallback_region
        if stand_in is not None and stand_in in by_region:
            on_demand, spot = by_region[stand_in]
            used = f"{stand_in} list price (the source has no {name} price for {where})"
            return NodePrice(on_demand, spot, estimate="; ".join(p for p in (made, used) if p))
        if by_region:
            # Not priced in the stand-in region either: the dearest region the source prices
            # is the type's list price ceiling.
            dearest = max(by_region, key=lambda r: (by_region[r][0], r))
            on_demand, spot = by_region[dearest]
            used = (
                f"{dearest} list price, the highest of the {len(by_region)} regions the source "
                f"prices {name} in (none for {where})"
            )
            return NodePrice(on_demand, spot, estimate="; ".join(p for p in (made, used) if p))
        return NodePrice(None, None, f"no price for {where} (the table has none)")

    def fee(self, name: str) -> Fee | None:
        """A fixed fee of the table (`fees`), None when the table has none of that name."""
        return self.fees.get(name)

    def tier(self, tier: str) -> ControlPlaneFee:
        per_hour, source = self.control_plane.get(tier, (None, "tier not in the price table"))
        return ControlPlaneFee(tier, per_hour, "" if per_hour is not None else source)


def _prices(rows: Mapping[str, Any]) -> dict[str, dict[str, tuple[float, float | None]]]:
    return {
        name: {
            region: (float(pair[0]), None if pair[1] is None else float(pair[1]))
            for region, pair in regions.items()
        }
        for name, regions in rows.items()
    }


@functools.cache
def load_table(path: Path) -> PriceTable:
    """The table in `path` (read once per process)."""
    document = json.loads(path.read_text())
    tiers = document["controlPlane"]["tiers"]
    snapshot = document.get("snapshot") or {}
    return PriceTable(
        cloud=document["cloud"],
        as_of=date.fromisoformat(document["asOf"]),
        spot_note=document.get("spot"),
        source=document["source"],
        control_plane={
            tier: (None if entry["perHour"] is None else float(entry["perHour"]), entry["source"])
            for tier, entry in tiers.items()
        },
        machines=_prices(document["machines"]),
        accelerators=_prices(document.get("accelerators", {})),
        unknown=document.get("unknown", {}),
        fallback_region=document.get("fallbackRegion"),
        estimated=document.get("estimated", {}),
        snapshot=_prices(snapshot.get("machines", {})),
        snapshot_on_demand=snapshot.get("onDemandEstimate", ""),
        snapshot_spot=snapshot.get("spotEstimate", ""),
        snapshot_name=str(snapshot.get("source", {}).get("name", "")),
        snapshot_taken_by=(
            date.fromisoformat(snapshot["source"]["takenBy"])
            if snapshot.get("source", {}).get("takenBy")
            else None
        ),
        fees={
            name: Fee(float(entry["perHour"]), str(entry["source"]))
            for name, entry in document.get("fees", {}).items()
        },
    )


class Pricing:
    """How one cloud prices a stack from its table: a node of a pool, the control plane, and
    whether a Spot pool may launch on demand. Clouds override what differs."""

    def __init__(self, table_file: Path) -> None:
        self.table_file = table_file

    def table(self) -> PriceTable:
        return load_table(self.table_file)

    def node_price(self, config: StackConfig, pool: PoolSpec, machine: str) -> NodePrice:
        """One node of `pool` on `machine`, everything it carries included (GPUs)."""
        return self.table().machine(machine, config.cluster.region)

    def control_plane(self, config: StackConfig, today: date) -> ControlPlaneFee:
        return self.table().tier("standard")

    def launches_on_demand(self, config: StackConfig, pool: GpuPoolConfig) -> bool:
        """Whether the pool may launch on-demand nodes (a Spot pool with a fallback may)."""
        return not pool.spot

    def capacity_order(
        self, config: StackConfig, pool: GpuPoolConfig, spec: PoolSpec
    ) -> CapacityOrder:
        """The capacity the pool's nodes may come from, in fallback order, as priced: its
        `capacity`, with on-demand last where a Spot pool may launch on-demand nodes
        (`launches_on_demand`, e.g. Karpenter's `onDemandFallback`)."""
        order = tuple(spec.capacity)
        if "spot" in order and "on-demand" not in order and self.launches_on_demand(config, pool):
            return (*order, "on-demand")
        return order

    def notes(self, config: StackConfig) -> list[str]:
        """What the figures leave out for this stack, beyond what every figure leaves out."""
        return []

    def max_nodes(self, config: StackConfig, pool: GpuPoolConfig, spec: PoolSpec) -> int:
        """The most nodes the pool may run at once: its `maxNodes`, unless the cloud caps
        each of several node pools the pool makes at it (a GKE compute class)."""
        return spec.max_nodes

    def committed(self, config: StackConfig, pool: GpuPoolConfig) -> Commitment | None:
        """Capacity the pool is bound to and billed for whether or not nodes run (a
        reservation, a Capacity Block), at its count; None: the pool commits to nothing."""
        return None

    def network(self, config: StackConfig, nodes: int) -> list[NetworkCost]:
        """The stack's own network resources billed by the hour while it exists (NAT gateways,
        load balancers, public addresses), with `nodes` nodes running."""
        return []


@dataclass(frozen=True)
class Commitment:
    """Reserved capacity billed whether used or not: `nodes` of the pool's machine at
    `per_node` (None: unknown, `note` says why). A node that runs in it is billed once."""

    nodes: int
    per_node: float | None
    note: str
    estimate: str = ""


@dataclass(frozen=True)
class NetworkCost:
    """One fixed network charge: what it is, how many, per hour each."""

    what: str
    count: int
    per_hour: float
    source: str
