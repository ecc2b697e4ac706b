"""How GKE stacks are priced: the table (prices.json, written by scripts/prices.py) and GKE's
rules. A node's price includes its GPUs: the accelerator-optimized machines (A2, A3, G2, G4) are
priced with theirs in the source; an N1 node is its machine plus the GPUs attached to it, each at
the accelerator's own price (GKE bills attached GPUs per GPU:
cloud.google.com/compute/gpus-pricing). GKE charges one cluster management fee per cluster
(cloud.google.com/kubernetes-engine/pricing); gpufleet offers no Extended channel, so the
extended-support surcharge never applies.
"""

from __future__ import annotations

from pathlib import Path

from components.gcp.model.catalog import CATALOG
from components.model.pool_spec import PoolSpec
from components.model.prices import NodePrice, Pricing
from components.model.schema import StackConfig

TABLE = Path(__file__).with_name("prices.json")


class GkePricing(Pricing):
    def node_price(self, config: StackConfig, pool: PoolSpec, machine: str) -> NodePrice:
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


PRICING = GkePricing(TABLE)
