"""How AKS stacks are priced: the table (prices.json, written by scripts/prices.py) and the
cluster's pricing tier (`cluster.azure.skuTier`: Free, Standard or Premium), whose fee per cluster
and hour the table holds (learn.microsoft.com/azure/aks/free-standard-pricing-tiers). A Spot pool
is created with `spotMaxPrice: -1`, so a Spot node never costs more than the on-demand price.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from components.azure.model.config import cluster_options
from components.model.prices import ControlPlaneFee, Pricing
from components.model.schema import StackConfig

TABLE = Path(__file__).with_name("prices.json")


class AksPricing(Pricing):
    def control_plane(self, config: StackConfig, today: date) -> ControlPlaneFee:
        return self.table().fee(cluster_options(config.cluster).sku_tier)


PRICING = AksPricing(TABLE)
