"""The cold-start estimate of each GPU pool (the shapes and the figures' story:
`components.model.cold_start`): node + driver + image start from the cloud's figures, and a
warm node's price from the stack's cost model."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from components.model.cold_start import CloudColdStart, PoolColdStart, Span
from components.model.cost import HOURS_PER_MONTH, PoolCost, stack_cost
from components.model.registry import cloud_of
from components.model.schema import GpuPoolConfig, StackConfig

# Capacity orders whose first wait is for capacity itself (flex-start, queued): how long the
# cloud takes to find GPUs is not a figure anyone publishes.
CAPACITY_WAITS = frozenset({"flex-start", "queued"})


def cold_start_model(config: StackConfig) -> CloudColdStart | None:
    """The cloud's cold-start model (None: the cloud keeps no figures)."""
    return cloud_of(config).cold_start


def pool_cold_starts(
    config: StackConfig, image_gb: float, today: date
) -> tuple[PoolColdStart, ...]:
    """Every GPU pool's first-pod wait for an image of `image_gb` GB."""
    model = cold_start_model(config)
    costs = {pool.name: pool for pool in stack_cost(config, today).pools}
    return tuple(
        pool_cold_start(model, config, pool, image_gb, costs.get(pool.name))
        for pool in config.gpu_pools
    )


def pool_cold_start(
    model: CloudColdStart | None,
    config: StackConfig,
    pool: GpuPoolConfig,
    image_gb: float,
    cost: PoolCost | None,
) -> PoolColdStart:
    cloud = cloud_of(config)
    blank = PoolColdStart(pool.name, pool.min_nodes, image_gb)
    if pool.min_nodes > 0:
        return _replace(
            blank,
            f"minNodes {pool.min_nodes}: a warm node takes the first pod without waiting for "
            "a node (more pods than the warm nodes hold still wait)",
        )
    if model is None:
        return _replace(
            blank,
            f"gpufleet keeps no start-up figures for cloud {cloud.name}: its nodes are the "
            "cluster owner's (docs/cold-start.md says how to measure them)",
        )
    kind = cloud.pool_kind(config.cluster, pool)
    order = set(kind.capacity_order(pool))
    if order & CAPACITY_WAITS:
        return _replace(
            blank,
            f"capacity {', '.join(sorted(order & CAPACITY_WAITS))}: the pod first waits for the "
            "cloud to find GPUs, for as long as that takes (no published figure)",
        )
    figures = model.figures
    driver, mode = model.driver_path(config, pool), model.image_start(config, pool)
    start = figures.image_start.get(mode)
    if start is None:
        return _replace(
            blank, f"no sourced figure for image start mode {mode!r} on {cloud.name} yet"
        )
    image_low, image_high = start.time(image_gb)
    parts = {
        "node": Span(figures.node_ready.low, figures.node_ready.high),
        "driver": Span(figures.driver[driver].low, figures.driver[driver].high),
        "image": Span(image_low, image_high),
    }
    total = Span(sum(p.low for p in parts.values()), sum(p.high for p in parts.values()))
    warm = warm_node(
        cost, spot="spot" in order, keep_one=kind.traits(config.cluster, pool).keep_one_warm
    )
    shorten = (warm, *model.faster_image_start(config, pool))
    return PoolColdStart(
        pool.name,
        pool.min_nodes,
        image_gb,
        total,
        parts,
        mode,
        driver,
        shorten,
        model.notes(config, pool),
    )


def warm_node(cost: PoolCost | None, *, spot: bool = False, keep_one: str = "minNodes: 1") -> str:
    """What keeps one node warm (`keep_one`: the pool kind's `PoolTraits.keep_one_warm`, since
    a Karpenter NodePool refuses minNodes above 0) and what that node adds to the bill (the cost
    model's price); a Spot pool's warm node may be reclaimed like any other (review aks-5 H5-8)."""
    added = None if cost is None else _difference(cost.at(1), cost.at(0))
    if added is None:
        price = "its price is not in the price table"
    elif added == 0:
        price = "it adds nothing: the pool's committed capacity is billed anyway"
    else:
        price = f"it costs ${added:,.2f}/h (${added * HOURS_PER_MONTH:,.0f}/month)"
    evicted = "; Spot: the cloud may reclaim it, and the wait comes back" if spot else ""
    return f"{keep_one} keeps one node warm (no node start, driver or first pull); {price}{evicted}"


def _difference(warm: float | None, cold: float | None) -> float | None:
    return None if warm is None or cold is None else round(warm - cold, 6)


def _replace(blank: PoolColdStart, why: str) -> PoolColdStart:
    return PoolColdStart(blank.pool, blank.min_nodes, blank.image_gb, not_estimated=why)


def to_json(starts: Sequence[PoolColdStart], image_gb: float) -> dict[str, Any]:
    """The `coldStart` object of `plan --json`."""
    return {
        "imageGb": image_gb,
        "pools": {start.pool: start.to_json() for start in starts},
    }
