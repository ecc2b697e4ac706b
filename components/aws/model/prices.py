"""How EKS stacks are priced: the table (prices.json, written by scripts/prices.py) and EKS's
rules. The control plane costs the standard fee while the cluster's minor is in standard support
and the extended fee once it is past it (only with `cluster.aws.supportType: EXTENDED`; with
STANDARD, EKS upgrades the cluster instead): aws.amazon.com/eks/pricing. A Karpenter Spot pool
with `onDemandFallback` may launch on-demand nodes. EKS Auto Mode bills a management fee per node
on top of the EC2 price (aws.amazon.com/eks/pricing): the table holds it as a share of the
on-demand price (`fees.autoModeNodeShare`), an estimate, and says so.

Committed capacity (EC2 user guide, capacity-reservations-pricing-billing and
capacity-blocks-pricing-billing): an On-Demand Capacity Reservation bills every reserved instance
at the on-demand rate while it is active, used or not; a Capacity Block is paid upfront for its
window. Both are counted at their `instanceCount` in idle and full scale (a node that runs in
them is billed once). A block's own rate is its upfront fee over its hours, which only the
purchase shows (DescribeCapacityBlockOfferings): the on-demand rate stands in, as an estimate.

Network: a VPC gpufleet creates has one NAT gateway (`natGateways: single`) or one per zone,
each with an Elastic IP (a public IPv4 address), billed per hour (aws.amazon.com/vpc/pricing).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from components.aws.model import capacity
from components.aws.model.config import cluster_options, pool_options
from components.aws.model.kinds import cluster_kind
from components.aws.model.versions import LIFECYCLE
from components.model.lifecycle import assess
from components.model.pool_spec import PoolSpec
from components.model.prices import (
    Commitment,
    ControlPlaneFee,
    NetworkCost,
    NodePrice,
    Pricing,
)
from components.model.schema import GpuPoolConfig, StackConfig

TABLE = Path(__file__).with_name("prices.json")
# What a pool that selects reservations by tags is told: EC2 picks the reservations at launch, so
# neither their count nor their instance type is in the config (review fix8-eks F8E-4).
TAGS_NOT_KNOWN = "committed: not known (reservations selected by tags)"


class EksPricing(Pricing):
    def control_plane(self, config: StackConfig, today: date) -> ControlPlaneFee:
        verdict = assess(LIFECYCLE, config.cluster.kubernetes_version, today)
        return self.table().tier("extended" if verdict.status == "extended" else "standard")

    def launches_on_demand(self, config: StackConfig, pool: GpuPoolConfig) -> bool:
        return not pool.spot or pool_options(pool).on_demand_fallback

    def node_price(self, config: StackConfig, pool: PoolSpec, machine: str) -> NodePrice:
        price = self.table().machine(machine, config.cluster.region)
        share = self.table().fee("autoModeNodeShare")
        if not cluster_kind(config.cluster).node_fee or price.on_demand is None or share is None:
            return price
        fee = round(price.on_demand * share.per_hour, 6)
        spot = None if price.spot is None else round(price.spot + fee, 6)
        made = f"EKS Auto Mode node fee ${fee:g}/h included ({share.source})"
        return NodePrice(
            round(price.on_demand + fee, 6),
            spot,
            estimate="; ".join(part for part in (price.estimate, made) if part),
            spot_estimate=price.spot_estimate,
        )

    def committed(self, config: StackConfig, pool: GpuPoolConfig) -> Commitment | None:
        word = capacity.reservation_word(capacity.order_of(pool))
        if word is None:
            return None
        options = pool_options(pool)
        reservations = options.capacity_reservations or []
        # A Capacity Block that has ended (or drains today) bills nothing more (block_ended).
        ended = [
            r
            for r in reservations
            if word == capacity.CAPACITY_BLOCK and capacity.block_ended(r.end_time, config.today)
        ]
        known = [r for r in reservations if r.instance_count and r not in ended]
        unknown_count = len(known) < len(reservations) - len(ended) or bool(
            options.capacity_reservation_tags
        )
        nodes = sum(r.instance_count or 0 for r in known)
        rates = [
            self.table().machine(r.instance_type or pool.machine_type or "", config.cluster.region)
            for r in known
        ]
        per_node = None
        if nodes and all(rate.on_demand is not None for rate in rates):
            per_node = (
                sum(
                    (r.instance_count or 0) * (rate.on_demand or 0.0)
                    for r, rate in zip(known, rates, strict=True)
                )
                / nodes
            )
        what = capacity.noun(word)
        counted = (
            f"{nodes} reserved instance(s) of {what}" if nodes or ended else f"no count for {what}"
        )
        if word == capacity.CAPACITY_BLOCK:
            note = (
                f"{counted}, paid upfront for the block's window whether or not nodes run; "
                "priced at the on-demand rate as an estimate of the block's rate (its upfront "
                "fee over its hours is known at purchase)"
            )
        else:
            note = (
                f"{counted}, billed at the on-demand rate while active, used or not; a node "
                "that runs in it is billed once"
            )
        if options.capacity_reservation_tags:
            note = f"{TAGS_NOT_KNOWN}, not checked; {note}"
        if unknown_count:
            note += (
                "; reservations without instanceCount (or found by tags) are not counted: "
                "set instanceCount on each to include them"
            )
        if ended:
            note += "; " + ", ".join(
                f"{r.id} (endTime {r.end_time}) is not counted: the block has ended or drains today"
                for r in ended
            )
        if per_node is None and nodes:
            note += "; no price for the reserved instance type"
        estimate = "on-demand rate" if word == capacity.CAPACITY_BLOCK else ""
        return Commitment(nodes, per_node if nodes else 0.0, note, estimate)

    def network(self, config: StackConfig, nodes: int) -> list[NetworkCost]:
        options = cluster_options(config.cluster)
        if options.private_subnet_ids:
            return []  # the user's subnets: their NAT is theirs
        nat, address = self.table().fee("natGateway"), self.table().fee("publicIpv4")
        count = len(config.cluster.zones or []) if options.nat_gateways == "per-zone" else 1
        found = [(what, fee) for what, fee in (("NAT gateway", nat), ("Elastic IP", address))]
        return [
            NetworkCost(what, max(count, 1), fee.per_hour, fee.source)
            for what, fee in found
            if fee is not None
        ]


PRICING = EksPricing(TABLE)
