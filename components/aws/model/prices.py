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
        if cluster_options(config.cluster).provisioner != "auto-mode":
            return []
        return [
            "EKS Auto Mode bills a management fee per node on top of the EC2 price; the price "
            "table does not hold it, so the figures leave it out"
        ]


PRICING = EksPricing(TABLE)
