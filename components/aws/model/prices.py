"""How EKS stacks are priced: the table (prices.json, written by scripts/prices.py) and EKS's
rules. The control plane costs the standard fee while the cluster's minor is in standard support
and the extended fee once it is past it (only with `cluster.aws.supportType: EXTENDED`; with
STANDARD, EKS upgrades the cluster instead): aws.amazon.com/eks/pricing. A Karpenter Spot pool
with `onDemandFallback` may launch on-demand nodes. EKS Auto Mode bills a management fee per node
on top of the EC2 price (aws.amazon.com/eks/pricing), which the table does not hold.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from components.aws.model import capacity
from components.aws.model.config import cluster_options, pool_options
from components.aws.model.versions import LIFECYCLE
from components.model.lifecycle import assess
from components.model.prices import ControlPlaneFee, Pricing
from components.model.schema import GpuPoolConfig, StackConfig

TABLE = Path(__file__).with_name("prices.json")


class EksPricing(Pricing):
    def control_plane(self, config: StackConfig, today: date) -> ControlPlaneFee:
        verdict = assess(LIFECYCLE, config.cluster.kubernetes_version, today)
        return self.table().fee("extended" if verdict.status == "extended" else "standard")

    def launches_on_demand(self, config: StackConfig, pool: GpuPoolConfig) -> bool:
        return not pool.spot or pool_options(pool).on_demand_fallback

    def notes(self, config: StackConfig) -> list[str]:
        found = [self._reservation_note(config, pool) for pool in config.gpu_pools]
        notes = [note for note in found if note]
        if cluster_options(config.cluster).provisioner == "auto-mode":
            notes.append(
                "EKS Auto Mode bills a management fee per node on top of the EC2 price; the "
                "price table does not hold it, so the figures leave it out"
            )
        return notes

    def _reservation_note(self, config: StackConfig, pool: GpuPoolConfig) -> str | None:
        """Reserved capacity is not billed per node: say what the figures make of it. An
        On-Demand Capacity Reservation bills every reserved instance at the on-demand rate,
        used or not, while it is active; a Capacity Block is paid upfront for its window (EC2
        user guide, capacity-reservations-pricing-billing and capacity-blocks-pricing-billing)."""
        word = capacity.reservation_word(capacity.order_of(pool))
        if word is None:
            return None
        if word == capacity.CAPACITY_BLOCK:
            return (
                f"pool {pool.name}: capacity-block: billed by the block, paid upfront for its "
                "whole window, not per node; the figures price its nodes at the on-demand "
                "rate, which is not what the block costs"
            )
        reservations = pool_options(pool).capacity_reservations or []
        bill = ""
        known = [r for r in reservations if r.instance_count and r.instance_type]
        if (
            known
            and len(known) == len(reservations)
            and not pool_options(pool).capacity_reservation_tags
        ):
            rates = [
                self.table().machine(r.instance_type or "", config.cluster.region).on_demand
                for r in known
            ]
            if all(rate is not None for rate in rates):
                hourly = sum(
                    (r.instance_count or 0) * (rate or 0.0)
                    for r, rate in zip(known, rates, strict=True)
                )
                bill = f" (here {hourly:.2f} USD per hour whether or not nodes run)"
        return (
            f"pool {pool.name}: reserved: billed by the reservation, every reserved instance at "
            f"the on-demand rate while it is active, used or not{bill}; the figures price the "
            "pool's nodes at on-demand and leave the reservation's own bill out"
        )


PRICING = EksPricing(TABLE)
