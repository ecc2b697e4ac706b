"""How GKE stacks are priced: the table (prices.json, written by scripts/prices.py) and GKE's
rules. A node's price includes its GPUs: the accelerator-optimized machines (A2, A3, G2, G4) are
priced with theirs in the source; an N1 node is its machine plus the GPUs attached to it, each at
the accelerator's own price (GKE bills attached GPUs per GPU:
cloud.google.com/compute/gpus-pricing). GKE charges one cluster management fee per cluster
(cloud.google.com/kubernetes-engine/pricing); gpufleet offers no Extended channel, so the
extended-support surcharge never applies.

A pool's capacity decides which price applies (components/gcp/model/capacity.py). Flex-start
and queued nodes are billed at Dynamic Workload Scheduler prices, discounted from on-demand for
A2, A3 and A4 (GKE docs how-to/dws-flex-start-training, Compute Engine about-flex-start-vms): the
table has no DWS rate, so they are priced at on-demand, their ceiling, labelled as an estimate. A
specific reservation's nodes are VMs of the reservation, billed to its project whether or not
they run: a reservation of this stack's project is committed capacity at its `count` (priced at
on-demand, its rate less any commitment the project holds); one shared from another project is
that project's bill and is not counted.

Network: the VPC gpufleet creates has a Cloud NAT gateway, billed per VM that uses it (up to 32
VMs, then a flat rate per gateway: cloud.google.com/vpc/network-pricing#nat-pricing).
"""

from __future__ import annotations

from pathlib import Path

from components.gcp.model import capacity as gke
from components.gcp.model import config as gcp_config
from components.gcp.model.catalog import CATALOG
from components.gcp.model.compute_class import ORDERS as CLASS_ORDERS
from components.model.capacity import declared_order, shown_order
from components.model.pool_spec import PoolSpec
from components.model.prices import Commitment, NetworkCost, NodePrice, Pricing
from components.model.schema import GpuPoolConfig, StackConfig

TABLE = Path(__file__).with_name("prices.json")
# Cloud NAT bills each VM using the gateway up to this many; beyond, the gateway's hourly charge
# stays at this many VMs' worth (cloud.google.com/vpc/network-pricing#nat-pricing).
NAT_BILLED_VMS = 32


def _dws_estimate(machine: str) -> str:
    discount = (
        "discounted from on-demand for A2, A3 and A4 (up to 53% on vCPUs and GPUs)"
        if gke.series(machine) in gke.DISCOUNTED_SERIES
        else "for which Compute Engine names a discount on A2, A3, A4 and H4D only"
    )
    return (
        "on-demand price as a ceiling: flex-start VMs (queued pools' too) are billed at Dynamic "
        f"Workload Scheduler prices, {discount}, which the price table does not have"
    )


class GkePricing(Pricing):
    def node_price(self, config: StackConfig, pool: PoolSpec, machine: str) -> NodePrice:
        price = self._list_price(config, pool.accelerator, pool.gpus_per_node, machine)
        if pool.capacity in gke.DWS_ORDERS and price.on_demand is not None:
            made = "; ".join(part for part in (price.estimate, _dws_estimate(machine)) if part)
            return NodePrice(price.on_demand, None, estimate=made)
        return price

    def _list_price(
        self, config: StackConfig, accelerator: str, gpus: int, machine: str
    ) -> NodePrice:
        """The node's on-demand and Spot list price, its `gpus` attached GPUs included."""
        table = self.table()
        region = config.cluster.region
        node = table.machine(machine, region)
        row = CATALOG.machine(accelerator, machine)
        if row is None or not row.attach_counts or node.on_demand is None:
            return node
        gpu = table.accelerator(row.gke_accelerator, region)
        if gpu.on_demand is None:
            return NodePrice(None, None, f"{row.gke_accelerator} attached: {gpu.unknown}")
        count = gpus
        spot = None if node.spot is None or gpu.spot is None else node.spot + count * gpu.spot
        made = "; ".join(
            f"{name}: {text}"
            for name, text in ((machine, node.estimate), (row.gke_accelerator, gpu.estimate))
            if text
        )
        return NodePrice(
            round(node.on_demand + count * gpu.on_demand, 6),
            None if spot is None else round(spot, 6),
            estimate=made,
        )

    def committed(self, config: StackConfig, pool: GpuPoolConfig) -> Commitment | None:
        order = declared_order(pool.capacity, pool.spot)
        # A compute class's reserved priority consumes the same specific reservation.
        if order != gke.RESERVED and not (order in CLASS_ORDERS and "reserved" in order):
            return None
        reservation = gcp_config.pool_options(pool).reservation
        if reservation is None:
            return None
        holder = _holder(reservation.name)
        project = gcp_config.cluster_options(config.cluster).project
        if holder is not None and holder != project:
            return Commitment(
                0,
                0.0,
                f"reservation {reservation.name} is project {holder}'s: its VMs are billed "
                "there, not counted here",
            )
        if reservation.count is None:
            return Commitment(
                0,
                0.0,
                f"reservation {reservation.name} is billed whether or not nodes run; not "
                "counted: set gcp.reservation.count to include it",
            )
        machine = reservation.machine_type or pool.machine_type or ""
        row = CATALOG.machine(pool.accelerator, machine)
        # As the pool resolves it (components/model/managed_cloud.py): N1 attaches gpusPerNode.
        gpus = (pool.gpus_per_node or 1) if row and row.attach_counts else (row.gpus if row else 1)
        price = (
            self._list_price(config, pool.accelerator, gpus, machine)
            if machine
            else NodePrice(None, None)
        )
        return Commitment(
            reservation.count,
            price.on_demand,
            f"reservation {reservation.name}: {reservation.count} VMs billed at on-demand "
            "whether or not nodes run (less any commitment the project holds); a node in it is "
            "billed once",
            price.estimate,
        )

    def max_nodes(self, config: StackConfig, pool: GpuPoolConfig, spec: PoolSpec) -> int:
        # GKE caps each of a class's node pools at maxNodes, none caps their sum
        # (compute_class.py `class_warnings`): the class may run all of them full at once.
        order = declared_order(pool.capacity, pool.spot)
        return len(order) * spec.max_nodes if order in CLASS_ORDERS else spec.max_nodes

    def network(self, config: StackConfig, nodes: int) -> list[NetworkCost]:
        if gcp_config.cluster_options(config.cluster).network:
            return []  # the user's VPC: its NAT is theirs
        per_vm = self.table().fee("cloudNatPerVm")
        if per_vm is None:
            return []
        vms = min(nodes, NAT_BILLED_VMS)
        return [NetworkCost("Cloud NAT VM", vms, per_vm.per_hour, per_vm.source)]

    def notes(self, config: StackConfig) -> list[str]:
        notes = []
        for pool in config.gpu_pools:
            order = declared_order(pool.capacity, pool.spot)
            if order == gke.RESERVED_THEN_ON_DEMAND:
                notes.append(
                    f"pool {pool.name}: capacity [reserved, on-demand] is priced at on-demand, "
                    "the most a node costs; a node that takes a matching reservation is paid "
                    "for by the reservation instead"
                )
            elif order in CLASS_ORDERS:
                # A class may fall back to any of its capacities: its dearest prices the pool
                # (on-demand, or flex-start's ceiling, which is on-demand: _dws_estimate).
                notes.append(
                    f"pool {pool.name}: compute class {shown_order(order)} is priced at "
                    "on-demand, the most expensive capacity it may fall back to (Spot and "
                    "flex-start nodes cost less; nodes in the reservation are paid for by it), "
                    f"and at {len(order)} x maxNodes ({pool.max_nodes}) = "
                    f"{len(order) * pool.max_nodes} nodes: GKE caps each of its {len(order)} "
                    "node pools at maxNodes, not their sum"
                )
        return notes


def _holder(name: str) -> str | None:
    """The project named in `projects/PROJECT/reservations/...`, None for a bare name."""
    parts = name.split("/")
    return parts[1] if len(parts) > 1 and parts[0] == "projects" else None


PRICING = GkePricing(TABLE)
