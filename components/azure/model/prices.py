"""How AKS stacks are priced: the table (prices.json, written by scripts/prices.py) and the
cluster's pricing tier (`cluster.azure.skuTier`: Free, Standard or Premium), whose fee per cluster
and hour the table holds (learn.microsoft.com/azure/aks/free-standard-pricing-tiers). A Spot pool
is created with `spotMaxPrice: -1`, so a Spot node never costs more than the on-demand price.

A pool in a capacity reservation group: Azure bills every reserved VM at the size's
pay-as-you-go rate whether a VM uses it or not, and a VM that uses it once, as the VM
(virtual-machines/capacity-reservation-overview, "Pricing and billing"). The group is the user's,
billed on its own (it outlives the stack), so the figures count only the pool's running nodes and
a warning says what the reservation adds while they are fewer than it holds.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from components.azure.model.config import cluster_options, pool_options
from components.azure.model.reservations import group_id, vm_size
from components.model.prices import ControlPlaneFee, Pricing
from components.model.schema import GpuPoolConfig, StackConfig

TABLE = Path(__file__).with_name("prices.json")


class AksPricing(Pricing):
    def control_plane(self, config: StackConfig, today: date) -> ControlPlaneFee:
        return self.table().fee(cluster_options(config.cluster).sku_tier)

    def notes(self, config: StackConfig) -> list[str]:
        return [
            note
            for pool in config.gpu_pools
            if (note := self._reservation_note(config, pool)) is not None
        ]

    def _reservation_note(self, config: StackConfig, pool: GpuPoolConfig) -> str | None:
        options = pool_options(pool)
        group = group_id(options.capacity_reservation_group_id)
        if group is None:
            return None
        size = vm_size(pool) or "its VM size"
        region = config.cluster.region
        price = self.table().machine(size, region).on_demand
        head = (
            f"pool {pool.name}: capacity reservation group {group.name} is billed on its own, "
            f"whether the pool's nodes run or not: every reserved {size} at its pay-as-you-go "
            "rate"
        )
        tail = (
            "; idle and full scale count only the pool's running nodes (a node that uses a "
            "reservation is billed once, as the VM)"
        )
        count = options.reserved_nodes
        if price is None:
            return f"{head} (no price for {size} in {region} in the table){tail}"
        if count is None:
            return (
                f"{head}, ${price:.4f}/h each; gpufleet does not know how many it holds (set "
                f"azure.reservedNodes to see what they cost){tail}"
            )
        return (
            f"{head}: its {count} cost ${count * price:.4f}/h on top of idle while none of the "
            f"pool's nodes run, ${price:.4f}/h less for each node that does, up to {count}{tail}"
        )


PRICING = AksPricing(TABLE)
