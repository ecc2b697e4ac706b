"""How GKE stacks are priced: the table (prices.json, written by scripts/prices.py) and GKE's
rules. A node's price includes its GPUs: the accelerator-optimized machines (A2, A3, G2, G4) are
priced with theirs in the source; an N1 node is its machine plus the GPUs attached to it, each at
the accelerator's own price (GKE bills attached GPUs per GPU:
cloud.google.com/compute/gpus-pricing). GKE charges one cluster management fee per cluster
(cloud.google.com/kubernetes-engine/pricing); gpufleet offers no Extended channel, so the
extended-support surcharge never applies.

A pool's capacity decides which price applies (components/gcp/model/capacity.py). The table has
on-demand and Spot list prices only, so two capacities are not priced, never guessed: flex-start
and queued nodes are billed at Dynamic Workload Scheduler prices (discounted from on-demand for
A2, A3 and A4, GKE docs how-to/dws-flex-start-training and Compute Engine about-flex-start-vms),
and a specific reservation's nodes are paid for by the reservation, whose rate (on-demand less
any commitment) is its holder's. `[reserved, on-demand]` is priced at on-demand, the most a node
of it costs.
"""

from __future__ import annotations

from pathlib import Path

from components.gcp.model import capacity as gke
from components.gcp.model import config as gcp_config
from components.gcp.model.catalog import CATALOG
from components.model.capacity import declared_order
from components.model.pool_spec import PoolSpec
from components.model.prices import NodePrice, Pricing
from components.model.schema import StackConfig

TABLE = Path(__file__).with_name("prices.json")


def _dws_unpriced(machine: str) -> str:
    discount = (
        "discounted from on-demand for A2, A3 and A4 (up to 53% on vCPUs and GPUs)"
        if gke.series(machine) in gke.DISCOUNTED_SERIES
        else "for which Compute Engine names a discount on A2, A3, A4 and H4D only"
    )
    return (
        "not priced: flex-start VMs (queued pools' too) are billed at Dynamic Workload "
        f"Scheduler prices, {discount}; the price table has on-demand and Spot prices only, "
        "and gpufleet does not guess"
    )


class GkePricing(Pricing):
    def node_price(self, config: StackConfig, pool: PoolSpec, machine: str) -> NodePrice:
        if pool.capacity in gke.DWS_ORDERS:
            return NodePrice(None, None, _dws_unpriced(machine))
        if pool.capacity == gke.RESERVED:
            configured = {p.name: p for p in config.gpu_pools}.get(pool.name)
            options = gcp_config.pool_options(configured) if configured else None
            name = options.reservation.name if options and options.reservation else "a reservation"
            return NodePrice(
                None,
                None,
                f"not priced: every node is a VM of reservation {name}, which its holder pays "
                "for whether or not nodes run, at the reservation's own rate (the price table "
                "has on-demand and Spot list prices only)",
            )
        table = self.table()
        region = config.cluster.region
        node = table.machine(machine, region)
        row = CATALOG.machine(pool.accelerator, machine)
        if row is None or not row.attach_counts or node.on_demand is None:
            return node
        gpu = table.accelerator(row.gke_accelerator, region)
        if gpu.on_demand is None:
            return NodePrice(None, None, f"{row.gke_accelerator} attached: {gpu.unknown}")
        count = pool.gpus_per_node
        spot = None if node.spot is None or gpu.spot is None else node.spot + count * gpu.spot
        return NodePrice(round(node.on_demand + count * gpu.on_demand, 6), spot)

    def notes(self, config: StackConfig) -> list[str]:
        return [
            f"pool {pool.name}: capacity [reserved, on-demand] is priced at on-demand, the most "
            "a node costs; a node that takes a matching reservation is paid for by the "
            "reservation instead"
            for pool in config.gpu_pools
            if declared_order(pool.capacity, pool.spot) == gke.RESERVED_THEN_ON_DEMAND
        ]


PRICING = GkePricing(TABLE)
