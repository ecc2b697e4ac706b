"""How AKS stacks are priced: the table (prices.json, written by scripts/prices.py) and the
cluster's pricing tier (`cluster.azure.skuTier`: Free, Standard or Premium), whose fee per cluster
and hour the table holds (learn.microsoft.com/azure/aks/free-standard-pricing-tiers). A Spot pool
is created with `spotMaxPrice: -1`, so a Spot node never costs more than the on-demand price.

A pool in a capacity reservation group: Azure bills every reserved VM at the size's
pay-as-you-go rate whether a VM uses it or not, and a VM that uses it once, as the VM
(virtual-machines/capacity-reservation-overview, "Pricing and billing"). The pool's
`azure.reservedNodes` is counted as committed capacity in idle and full scale; without it the
reservation's size is unknown and a warning says so.

Network: AKS's outbound type `loadBalancer` (gpufleet's) makes a Standard load balancer with
an outbound rule and one public IP, billed per hour (azure.microsoft.com/pricing/details/
load-balancer and /ip-addresses).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from components.azure.model import kinds, nap
from components.azure.model.config import cluster_options, pool_options
from components.azure.model.reservations import group_id, vm_size
from components.model.prices import Commitment, ControlPlaneFee, NetworkCost, Pricing
from components.model.schema import GpuPoolConfig, StackConfig

TABLE = Path(__file__).with_name("prices.json")


class AksPricing(Pricing):
    def control_plane(self, config: StackConfig, today: date) -> ControlPlaneFee:
        return self.table().tier(cluster_options(config.cluster).sku_tier)

    def notes(self, config: StackConfig) -> list[str]:
        # Under NAP AKS runs its own CPU NodePool beside gpufleet's pools (review aks-6 A6-9).
        return (
            [nap.default_node_pool_cost_note()] if kinds.auto_provisioning(config.cluster) else []
        )

    def committed(self, config: StackConfig, pool: GpuPoolConfig) -> Commitment | None:
        options = pool_options(pool)
        group = group_id(options.capacity_reservation_group_id)
        if group is None:
            return None
        size = vm_size(pool) or "its VM size"
        price = self.table().machine(size, config.cluster.region)
        count = options.reserved_nodes
        head = (
            f"capacity reservation group {group.name}: every reserved {size} is billed at its "
            "pay-as-you-go rate whether the pool's nodes run or not (a node that uses a "
            "reservation is billed once, as the VM)"
        )
        if count is None:
            return Commitment(
                0,
                0.0,
                f"{head}; not counted: gpufleet does not know how many it holds (set "
                "azure.reservedNodes)",
            )
        if price.on_demand is None:
            return Commitment(count, None, f"{head}; {count} reserved, no price for {size}")
        return Commitment(
            count, price.on_demand, f"{head}; {count} reserved, counted", price.estimate
        )

    def network(self, config: StackConfig, nodes: int) -> list[NetworkCost]:
        found = (
            ("Standard load balancer (outbound rule)", self.table().fee("loadBalancer")),
            ("public IP", self.table().fee("publicIp")),
        )
        return [NetworkCost(what, 1, fee.per_hour, fee.source) for what, fee in found if fee]


PRICING = AksPricing(TABLE)
