"""What one AKS GPU agent pool sends for its capacity, computed once from its config: Spot or
regular VMs, and the capacity reservation group its VMs are placed in.

`components/azure/stack.py` computes it with `pool_capacity` and passes it whole into
`AksGpuAgentPoolArgs.capacity`; the component only maps its fields onto the agent pool's inputs
(as GKE's `NodePoolCapacity` and EKS's `EksGroupSettings`). The rules that refuse a capacity
AKS would refuse are in `components/azure/model/reservations.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from components.azure.model.config import pool_options
from components.model.schema import GpuPoolConfig


@dataclass(frozen=True)
class AksPoolCapacity:
    """The capacity settings of one agent pool (None: not sent, AKS's default)."""

    spot: bool
    # The capacity reservation group's ARM id, as written in gpuPools[].azure.
    reservation_group: str | None

    @property
    def scale_set_priority(self) -> Literal["Spot", "Regular"]:
        return "Spot" if self.spot else "Regular"

    @property
    def eviction_policy(self) -> Literal["Delete"] | None:
        return "Delete" if self.spot else None

    @property
    def spot_max_price(self) -> int | None:
        # -1: pay up to the on-demand price, so capacity, not price, decides eviction.
        return -1 if self.spot else None


def pool_capacity(pool: GpuPoolConfig) -> AksPoolCapacity:
    """The capacity of one pool of a checked config."""
    return AksPoolCapacity(
        spot=pool.spot,
        reservation_group=pool_options(pool).capacity_reservation_group_id,
    )
