"""What one EKS pool of auto scaling groups (self-managed groups, managed node groups) is built
with, computed once from its config: the image family, its capacity and its image start.

Both group components take the same `EksGroupSettings` (as terraform-aws-eks's
self-managed-node-group and eks-managed-node-group modules share their input names) and only
map its fields onto the provider's inputs; `components/aws/stack.py` computes it with
`group_settings`. A new capability of group pools is a field here (a frozen object of its own,
like `EksImageStart`) and the components reading it (docs/development.md, "How to add a pool
capability").
"""

from __future__ import annotations

from dataclasses import dataclass

from components.aws.model import capacity, provisioners
from components.aws.model.amis import AmiFamily
from components.aws.model.config import pool_options
from components.aws.model.fabric import EksFabric, fabric_group
from components.aws.model.image_start import EksImageStart
from components.aws.model.kinds import pool_kind
from components.model.schema import ClusterConfig, GpuPoolConfig

# A managed node group's capacityType for a Capacity Block.
CAPACITY_BLOCK = provisioners.MANAGED_CAPACITY_TYPES[capacity.CAPACITY_BLOCK]


@dataclass(frozen=True)
class EksGroupCapacity:
    """Where a group pool's instances come from (components/aws/model/capacity.py)."""

    # A managed node group's capacityType: ON_DEMAND, SPOT or CAPACITY_BLOCK (self-managed
    # groups run Spot through their mixed instances policy instead).
    capacity_type: str
    # The reservation the launch template targets: an On-Demand Capacity Reservation, or the
    # Capacity Block of a CAPACITY_BLOCK group (None: none).
    reservation_id: str | None
    # gpuPools[].aws.maxNodesPerZone: every zone's group may grow to this many.
    max_nodes_per_zone: int | None
    # A self-managed group's own Capacity Reservation preference and the ODCRs it targets
    # (`[reserved, on-demand]`: capacity-reservations-first; None: the group sets none).
    group_preference: str | None = None
    group_reservation_ids: tuple[str, ...] = ()

    @property
    def capacity_block(self) -> bool:
        return self.capacity_type == CAPACITY_BLOCK

    @property
    def one_instance_type(self) -> bool:
        """Whether the group launches its template's one instance type (a reservation's),
        rather than a mixed instances policy over the pool's types."""
        return self.reservation_id is not None or self.group_preference is not None


@dataclass(frozen=True)
class EksGroupSettings:
    """Everything a group pool's component reads beyond the pool's PoolSpec and the cluster."""

    ami_family: AmiFamily
    capacity: EksGroupCapacity
    # SOCI parallel pull and the data volume's snapshot (the pool kind's EksImageStart).
    image_start: EksImageStart
    # EFA interfaces and placement (`interconnect: fabric`; None: the default network only).
    fabric: EksFabric | None = None


def group_settings(cluster: ClusterConfig, pool: GpuPoolConfig) -> EksGroupSettings:
    """The settings of one group pool of a checked config."""
    options = pool_options(pool)
    target = capacity.launch_target(pool)
    reserved_first = capacity.order_of(pool) == capacity.RESERVED_FIRST and target is not None
    return EksGroupSettings(
        ami_family=options.ami_family,
        capacity=EksGroupCapacity(
            capacity_type=provisioners.managed_capacity_type(pool),
            # Reserved first: the group targets the ODCR, and the template nothing (a template
            # target would launch into the reservation or fail, never fall back).
            reservation_id=None if reserved_first else target,
            max_nodes_per_zone=options.max_nodes_per_zone,
            group_preference=capacity.RESERVATIONS_FIRST_PREFERENCE if reserved_first else None,
            group_reservation_ids=(target,) if reserved_first and target else (),
        ),
        image_start=pool_kind(cluster, pool).image_start(pool),
        fabric=fabric_group(pool),
    )
