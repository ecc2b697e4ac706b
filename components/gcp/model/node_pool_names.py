"""The GKE node pools gpufleet creates for a stack's GPU pools, by name, and what GKE refuses of
those names.

A plain pool is one node pool of its own name; a compute class pool is one node pool per
capacity, `{pool}-res/-flex/-spot/-od` (compute_class.py `node_pool_name`), and none named
`{pool}`. GKE node pool names are unique in a cluster: creating a second one of a name fails
with ALREADY_EXISTS (GKE API projects.locations.clusters.nodePools.create; review rev-gke6 G6-2,
G6-7). So the names are checked at plan time against each other (a class pool `x` with
`[spot, on-demand]` beside a plain pool `x-spot`) and, on an adopted cluster, against the
owner's node pools. A node pool whose nodes carry `gpufleet.io/pool` with the gpufleet pool it
belongs to is gpufleet's, from an earlier `up`, and not refused (review gke-2.md N2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from components.gcp.model import compute_class as gke_class
from components.gcp.model.adopted import GkeClusterFacts
from components.gcp.model.kinds.node_pools import capacity_order
from components.model.labels import POOL_LABEL
from components.model.problems import Problem
from components.model.schema import GpuPoolConfig


@dataclass(frozen=True)
class GpufleetNodePool:
    """One GKE node pool gpufleet creates: its name, and the GPU pool (with its index) it
    belongs to, which its nodes' `gpufleet.io/pool` label names."""

    index: int
    pool: str
    name: str
    # The capacity it holds within a compute class (None: a plain pool's one node pool).
    capacity: str | None = None

    def described(self) -> str:
        if self.capacity is None:
            return f"gpuPools[{self.index}] ({self.pool})"
        return (
            f"gpuPools[{self.index}] ({self.pool}, its compute class's {self.capacity} node pool)"
        )


def gpufleet_node_pools(
    pools: Sequence[tuple[int, GpuPoolConfig]],
) -> tuple[GpufleetNodePool, ...]:
    """Every node pool the pools make, in the pools' order."""
    made: list[GpufleetNodePool] = []
    for index, pool in pools:
        order = capacity_order(pool)
        if order in gke_class.ORDERS:
            made += (
                GpufleetNodePool(index, pool.name, gke_class.node_pool_name(pool.name, word), word)
                for word in order
            )
        else:
            made.append(GpufleetNodePool(index, pool.name, pool.name))
    return tuple(made)


def name_problems(pools: Sequence[tuple[int, GpuPoolConfig]]) -> list[Problem]:
    """Two node pools of one name, every one at once (two pools of the same name are refused
    as duplicates already)."""
    problems: list[Problem] = []
    first: dict[str, GpufleetNodePool] = {}
    for node_pool in gpufleet_node_pools(pools):
        earlier = first.setdefault(node_pool.name, node_pool)
        if earlier is node_pool or earlier.pool == node_pool.pool:
            continue
        problems.append(
            Problem(
                f"gpuPools[{node_pool.index}].name",
                f"makes GKE node pool {node_pool.name} ({node_pool.described()}), as does "
                f"{earlier.described()}: GKE node pool names are unique in a cluster "
                "(ALREADY_EXISTS); rename one of the two pools",
                node_pool.pool,
            )
        )
    return problems


def owner_pool_problems(
    facts: GkeClusterFacts, node_pools: Sequence[GpufleetNodePool]
) -> list[Problem]:
    """The adopted cluster's own node pools a gpufleet node pool's name would take."""
    problems: list[Problem] = []
    for node_pool in node_pools:
        labels = facts.node_pools.get(node_pool.name)
        if labels is None or labels.get(POOL_LABEL) == node_pool.pool:
            continue
        made_by = "" if node_pool.capacity is None else f", the name {node_pool.described()} makes"
        problems.append(
            Problem(
                f"gpuPools[{node_pool.index}].name",
                f"cluster {facts.name} already has a node pool named {node_pool.name} (not "
                f"gpufleet's){made_by}: GKE refuses a second one; choose another name",
                node_pool.pool,
            )
        )
    return problems
