"""What a stack costs per hour: idle (nobody uses it) and at full scale (every pool full).

From the validated config alone, the cloud's price table (`components.model.prices`) and the
pools as resolved for the cloud:

- idle: what is billed with no GPU node running: the control plane, the system pool at its
  minimum, the stack's own network charges (NAT gateways, load balancers, public addresses),
  every GPU pool at `minNodes`, and capacity a pool is committed to (reservations, Capacity
  Blocks), billed at its count whether or not nodes run;
- full scale: the same with every pool at the most nodes it may run: its `maxNodes` (a GKE
  compute class: each of its node pools at `maxNodes`), or its reservations' count when it
  launches into reservations alone and the config shows that count; a node in committed
  capacity is billed once.

Each pool is priced per node at the most expensive machine type it may launch; a Spot pool at
its Spot price, unless it may fall back to on-demand nodes. A Spot price the table does not have
is replaced by the on-demand price, the most a Spot node is charged (gpufleet sets no Spot
maximum price: EC2 then charges at most the On-Demand price, AKS pools get `spotMaxPrice: -1`,
GCE Spot prices are discounts off on-demand), and the warnings say so. An estimate (a stand-in
region's list price, a ceiling for a capacity billed below on-demand) is labelled in the JSON and
the warnings. A price the table does not have at all is `None`, named in the warnings; a total
it would enter is `None` too. A pool at zero nodes costs nothing whatever its price.

Figures leave out storage, network egress, logging, taxes and any discount (committed use,
savings plans, free tiers): docs/cost.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from components.model.capacity import ON_DEMAND, RESERVATIONS, CapacityOrder
from components.model.pool_spec import PoolSpec
from components.model.pools import resolve_pool, system_pool
from components.model.prices import Commitment, ControlPlaneFee, PriceTable, Pricing
from components.model.registry import cloud_of
from components.model.schema import StackConfig

CURRENCY = "USD"
HOURS_PER_MONTH = 730
# Older prices make `plan` warn: list prices move, Spot prices move every day.
MAX_PRICE_AGE_DAYS = 90


@dataclass(frozen=True)
class MachineCost:
    machine_type: str
    on_demand: float | None
    spot: float | None  # None: unknown, or the pool does not run on Spot
    estimate: str = ""  # not empty: the price is an estimate, made as this says


@dataclass(frozen=True)
class PoolCost:
    name: str
    min_nodes: int
    max_nodes: int
    per_node_hour: float | None  # what one node of the pool is priced at
    machine_types: tuple[MachineCost, ...]
    committed_nodes: int = 0  # reserved instances billed whether or not nodes run
    committed_per_hour: float | None = 0.0  # what they cost (None: unknown)
    # The capacity the pool may fall back along (`capacity: [spot, on-demand]`), in its order.
    capacity: tuple[str, ...] = ()
    # Per node, its cheapest capacity (None: unknown); `per_node_hour` is its dearest.
    cheapest_per_node_hour: float | None = None
    # The nodes it can reach at full scale when fewer than max_nodes (a pool confined to its
    # reservations); None: max_nodes.
    reachable_nodes: int | None = None

    @property
    def full_scale_nodes(self) -> int:
        return self.max_nodes if self.reachable_nodes is None else self.reachable_nodes

    def at(
        self, nodes: int, per_node: float | Literal["dearest"] | None = "dearest"
    ) -> float | None:
        """The pool with `nodes` running: its committed capacity plus the nodes beyond it, each
        at `per_node` (by default the dearest capacity the pool may fall back to)."""
        rate = self.per_node_hour if per_node == "dearest" else per_node
        beyond = max(0, nodes - self.committed_nodes)
        if self.committed_per_hour is None:
            return None
        if beyond == 0:
            return self.committed_per_hour
        if rate is None:
            return None
        return self.committed_per_hour + beyond * rate

    @property
    def per_node_range(self) -> tuple[float | None, float | None]:
        """(cheapest, dearest) per node over the capacity the pool may fall back along."""
        return (self.cheapest_per_node_hour, self.per_node_hour)


@dataclass(frozen=True)
class StackCost:
    prices_as_of: date | None
    control_plane: float | None
    idle: float | None
    max: float | None
    pools: tuple[PoolCost, ...]
    warnings: tuple[str, ...] = field(default=())
    committed: float | None = 0.0  # committed capacity per hour, part of idle and full scale
    network_idle: float | None = 0.0  # the stack's own network charges, idle
    network_max: float | None = 0.0  # and at full scale
    spot_prices: bool = False  # whether the table has Spot prices
    # Idle and full scale with every pool on its cheapest capacity (None: unknown); `idle` and
    # `max` are each pool on the dearest it may fall back to.
    idle_cheapest: float | None = None
    max_cheapest: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The `cost` object of `plan --json` (its keys are an interface: keep them)."""
        return {
            "currency": CURRENCY,
            "pricesAsOf": self.prices_as_of.isoformat() if self.prices_as_of else None,
            "controlPlanePerHour": self.control_plane,
            "idlePerHour": self.idle,
            "maxPerHour": self.max,
            "committedPerHour": self.committed,
            "networkPerHour": self.network_idle,
            "networkMaxPerHour": self.network_max,
            "spotPrices": self.spot_prices,
            # (cheapest, dearest) over the capacity each pool may fall back along
            "idlePerHourRange": [self.idle_cheapest, self.idle],
            "maxPerHourRange": [self.max_cheapest, self.max],
            "pools": [
                {
                    "name": pool.name,
                    "minNodes": pool.min_nodes,
                    "maxNodes": pool.max_nodes,
                    "perNodeHour": pool.per_node_hour,
                    "capacity": list(pool.capacity),
                    "perNodeHourRange": list(pool.per_node_range),
                    "committedNodes": pool.committed_nodes,
                    "committedPerHour": pool.committed_per_hour,
                    "machineTypes": [
                        {
                            "machineType": machine.machine_type,
                            "onDemandPerHour": machine.on_demand,
                            "spotPerHour": machine.spot,
                            "estimate": machine.estimate or None,
                        }
                        for machine in pool.machine_types
                    ],
                }
                for pool in self.pools
            ],
            "warnings": list(self.warnings),
        }


def stack_cost(config: StackConfig, today: date) -> StackCost:
    """The stack's idle and full-scale cost per hour (see the module)."""
    cloud = cloud_of(config)
    pricing = cloud.pricing
    system = system_pool(config)
    # Each pool's spec, capacity order, commitment and the most nodes it may run.
    pools: list[tuple[PoolSpec, CapacityOrder, Commitment | None, int]] = (
        [(system, ON_DEMAND, None, system.max_nodes)] if system else []
    )
    for pool in config.gpu_pools:
        spec = resolve_pool(config, pool)
        if pricing is None:
            pools.append((spec, spec.capacity, None, spec.max_nodes))
            continue
        pools.append(
            (
                spec,
                pricing.capacity_order(config, pool, spec),
                pricing.committed(config, pool),
                pricing.max_nodes(config, pool, spec),
            )
        )
    if pricing is None:
        return StackCost(
            None,
            None,
            None,
            None,
            tuple(_unpriced(spec) for spec, _, _, _ in pools),
            (
                f"not priced: on cloud {cloud.name} gpufleet creates neither nodes nor a "
                "control plane; the cluster's owner pays for them (machine types and prices "
                "unknown)",
            ),
            committed=None,
            network_idle=None,
            network_max=None,
        )
    warnings: list[str] = []
    fee = _control_plane(pricing, config, today, cloud.adopted(config.cluster))
    if fee.per_hour is None and fee.counted:
        warnings.append(f"control plane ({fee.tier} tier): no price: {fee.note}")
    elif not fee.counted:
        warnings.append(fee.note)
    priced = tuple(
        _pool_cost(pricing, config, spec, order, commitment, max_nodes, warnings)
        for spec, order, commitment, max_nodes in pools
    )
    warnings += pricing.notes(config)
    table = pricing.table()
    if any(
        table.from_snapshot(machine, config.cluster.region, "spot" in order)
        for spec, order, _, _ in pools
        for machine in spec.machine_types
    ):
        warnings += stale_snapshot(table, today)
    # An adopted cluster's network is its owner's.
    owned = fee.counted
    network_idle = _network(pricing, config, sum(p.min_nodes for p in priced), owned, warnings)
    network_max = _network(pricing, config, sum(p.full_scale_nodes for p in priced), owned, None)
    base = fee.per_hour if fee.counted else 0.0
    committed = _sum([p.committed_per_hour for p in priced])
    return StackCost(
        prices_as_of=pricing.table().as_of,
        control_plane=fee.per_hour,
        idle=_total(base, network_idle, [p.at(p.min_nodes) for p in priced]),
        max=_total(base, network_max, [p.at(p.full_scale_nodes) for p in priced]),
        idle_cheapest=_total(
            base, network_idle, [p.at(p.min_nodes, p.cheapest_per_node_hour) for p in priced]
        ),
        max_cheapest=_total(
            base,
            network_max,
            [p.at(p.full_scale_nodes, p.cheapest_per_node_hour) for p in priced],
        ),
        pools=priced,
        warnings=tuple(warnings),
        committed=committed,
        network_idle=network_idle,
        network_max=network_max,
        spot_prices=pricing.table().spot_note is not None,
    )


def stale_prices(config: StackConfig, today: date) -> str | None:
    """A warning when the stack's prices are older than MAX_PRICE_AGE_DAYS on `today`."""
    pricing = cloud_of(config).pricing
    if pricing is None:
        return None
    as_of = pricing.table().as_of
    age = (today - as_of).days
    if age <= MAX_PRICE_AGE_DAYS:
        return None
    return (
        f"the {config.cloud} prices are from {as_of} ({age} days old, more than "
        f"{MAX_PRICE_AGE_DAYS}): costs may be out of date; to refresh them run "
        f"`.venv/bin/python scripts/prices.py --help` (docs/cost.md, The price tables)"
    )


def stale_snapshot(table: PriceTable, today: date) -> list[str]:
    """The price-age rule on the older snapshot the stack's estimates come from: its latest
    possible day older than MAX_PRICE_AGE_DAYS, or no date at all, is said."""
    taken = table.snapshot_taken_by
    if taken is None:
        return [
            f"the estimates taken from the price snapshot ({table.snapshot_name}) are undated: "
            f"they may be more than {MAX_PRICE_AGE_DAYS} days old"
        ]
    age = (today - taken).days
    if age <= MAX_PRICE_AGE_DAYS:
        return []
    return [
        f"the estimates taken from the price snapshot ({table.snapshot_name}) are from {taken} "
        f"or before (at least {age} days old, more than {MAX_PRICE_AGE_DAYS}): the snapshot's "
        "date, not the table's"
    ]


def _control_plane(
    pricing: Pricing, config: StackConfig, today: date, adopted: bool
) -> ControlPlaneFee:
    if adopted:
        return ControlPlaneFee(
            "adopted",
            None,
            "cluster.existing: the adopted cluster's control plane and its other node pools are "
            "its owner's, not counted; the figures are the GPU pools gpufleet adds",
            counted=False,
        )
    return pricing.control_plane(config, today)


def _pool_cost(
    pricing: Pricing,
    config: StackConfig,
    spec: PoolSpec,
    order: CapacityOrder,
    commitment: Commitment | None,
    max_nodes: int,
    warnings: list[str],
) -> PoolCost:
    """The pool per node at each capacity of its order, each at the dearest machine type it may
    launch: a Spot node at its Spot price (on-demand where the table has none, the most a Spot
    node is charged), any other at on-demand (reservations and blocks are counted apart, as
    committed capacity). `per_node_hour` is the dearest capacity, the cheapest kept beside it."""
    region = config.cluster.region
    uses_spot = "spot" in order
    uses_other = any(word != "spot" for word in order) or not order
    machines: list[MachineCost] = []
    on_demand: list[float | None] = []
    spot: list[float | None] = []
    no_spot: list[str] = []
    for machine in spec.machine_types:
        price = pricing.node_price(config, spec, machine)
        spot_used = uses_spot and price.spot is not None
        made = "; ".join(
            part for part in (price.estimate, price.spot_estimate if spot_used else "") if part
        )
        if price.on_demand is None:
            warnings.append(
                f"pool {spec.name}: {machine} in {region} has no price: {price.unknown}"
            )
        elif made:
            warnings.append(f"pool {spec.name}: {machine} in {region}: estimate: {made}")
        machines.append(
            MachineCost(machine, price.on_demand, price.spot if uses_spot else None, made)
        )
        on_demand.append(price.on_demand)
        spot.append(price.spot if price.spot is not None else price.on_demand)
        if uses_spot and price.spot is None and price.on_demand is not None:
            no_spot.append(machine)
    if no_spot:
        warnings.append(
            f"pool {spec.name}: no Spot price for {', '.join(no_spot)} in {region} in the price "
            "table; priced at on-demand, the most a Spot node is charged"
        )
    if not spec.machine_types:
        warnings.append(f"pool {spec.name}: no machine type to price")
    rates = [_dearest(spot)] if uses_spot else []
    rates += [_dearest(on_demand)] if uses_other else []
    known = [rate for rate in rates if rate is not None]
    per_node = max(known) if known and len(known) == len(rates) else None
    cheapest = min(known) if known and len(known) == len(rates) else None
    committed_nodes = 0
    committed_cost: float | None = 0.0
    if commitment is not None:
        committed_nodes = commitment.nodes
        committed_cost = (
            None
            if commitment.per_node is None
            else round(commitment.nodes * commitment.per_node, 6)
        )
        warnings.append(f"pool {spec.name}: {commitment.note}")
    reachable = _reachable_nodes(spec, order)
    if reachable is not None:
        warnings.append(
            f"pool {spec.name}: full scale counts {reachable} nodes, not maxNodes "
            f"{spec.max_nodes}: it launches into its reservations alone, which hold "
            f"{reachable} ({spec.reservation_cap.source if spec.reservation_cap else ''}); "
            "add on-demand to its capacity to reach maxNodes"
        )
    return PoolCost(
        spec.name,
        spec.min_nodes,
        max_nodes,
        per_node,
        tuple(machines),
        committed_nodes,
        committed_cost,
        capacity=tuple(order),
        cheapest_per_node_hour=cheapest,
        reachable_nodes=reachable,
    )


def _reachable_nodes(spec: PoolSpec, order: CapacityOrder) -> int | None:
    """The nodes a pool confined to its reservations can run, when fewer than its maxNodes (None:
    it can reach maxNodes, or the config does not show the reservations' count)."""
    cap = spec.reservation_cap
    confined = bool(order) and all(word in RESERVATIONS for word in order)
    if cap is None or not confined or cap.nodes >= spec.max_nodes:
        return None
    return cap.nodes


def _dearest(rates: Sequence[float | None]) -> float | None:
    """The dearest machine type's rate (None: one of them is unknown, or there is none)."""
    if not rates or any(rate is None for rate in rates):
        return None
    return max(rate for rate in rates if rate is not None)


def _network(
    pricing: Pricing, config: StackConfig, nodes: int, owned: bool, warnings: list[str] | None
) -> float:
    """The stack's own network charges per hour with `nodes` nodes running."""
    charges = pricing.network(config, nodes) if owned else []
    if warnings is not None and charges:
        listed = ", ".join(f"{c.count} x {c.what} ${c.per_hour:g}/h" for c in charges)
        warnings.append(f"network, billed while the stack exists: {listed}")
    return round(sum(c.count * c.per_hour for c in charges), 6)


def _unpriced(spec: PoolSpec) -> PoolCost:
    machines = tuple(MachineCost(machine, None, None) for machine in spec.machine_types)
    return PoolCost(spec.name, spec.min_nodes, spec.max_nodes, None, machines, 0, None)


def _sum(values: Sequence[float | None]) -> float | None:
    if any(value is None for value in values):
        return None
    return round(sum(value or 0.0 for value in values), 6)


def _total(base: float | None, network: float, pools: Sequence[float | None]) -> float | None:
    """`base` plus the network plus each pool's figure; None when one of them is unknown."""
    if base is None:
        return None
    total = _sum([base, network, *pools])
    return total
