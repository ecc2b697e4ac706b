"""Whether a pool holds all the pods of a workload at once: a Job's `parallelism`, a JobSet's
replicated jobs, a Kueue pod group.

kube-scheduler places pods one by one, and the autoscaler adds nodes for the pending ones up to
what the pool may have; pods beyond that stay Pending. For pods that must run together (a
distributed training Job waits for every rank), a pool that holds only some of them at once runs
none of the work: `fit` judges the whole workload on each pool. What caps a pool at once:

- `maxNodes` (the autoscaler's or Karpenter's limit for the whole pool);
- a reservation or Capacity Block the pool's every node comes from (its instance count);
- one zone's share of `maxNodes`, where the autoscaler has a group per zone and the pods keep to
  one zone (a zone nodeSelector or required node affinity, or a required pod affinity over
  `topology.kubernetes.io/zone`, as NCCL jobs ask);
- for pods that ask for the pool's GPU fabric, one placement (`PoolFabric.placement_max_nodes`:
  the most nodes one cluster placement group, compact placement or scale set holds). Such pods
  are NCCL ranks: they must run together even where the object does not say so, and a fabric
  pool runs in one zone (the config checks), so the whole gang is judged in that zone.

A queued pool's Jobs are judged by Kueue's rules instead (components/tooling/queue_fit.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.model.capacity import RESERVATIONS
from components.model.pool_spec import PoolSpec
from components.tooling.fabric_fit import asks_for_fabric
from components.tooling.scheduling.model import NodeTemplate
from components.tooling.scheduling.resources import pod_requests
from components.tooling.scheduling.workload_objects import PodSet

RESERVED_ONLY = RESERVATIONS
ZONE_KEYS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


def pods_per_node(pod_spec: Mapping[str, Any], node: NodeTemplate) -> int:
    """How many such pods one empty node takes by their requests (at least 1: whether one fits
    at all is the scheduler simulation's verdict)."""
    requested, _ = pod_requests(pod_spec)
    room: list[int] = []
    for name, amount in requested.items():
        if amount.total <= 0:
            continue
        offered = _offered(node, name)
        if offered > 0:
            room.append(offered // amount.total)
    return max(1, min(room, default=1))


def _offered(node: NodeTemplate, name: str) -> int:
    """What the node's allocatable holds of a resource, in the units a request counts."""
    if name == "cpu":
        return node.cpu_millis
    if name == "memory":
        return node.memory_bytes
    return node.allocatable.get(name, 0)


def nodes_needed(pods: int, per_node: int) -> int:
    return math.ceil(pods / per_node)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _zone_selector(pod_spec: Mapping[str, Any]) -> str | None:
    selector = pod_spec.get("nodeSelector")
    if isinstance(selector, Mapping):
        for key in ZONE_KEYS:
            if key in selector:
                return f"nodeSelector {key}={selector[key]}"
    affinity = pod_spec.get("affinity")
    node = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else None
    required = (
        node.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node, Mapping)
        else None
    )
    terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
    if not isinstance(terms, list) or not terms:
        return None
    zones: set[str] = set()
    for term in terms:
        expressions = term.get("matchExpressions") if isinstance(term, Mapping) else None
        listed = expressions if isinstance(expressions, list) else []
        pinned = [
            e
            for e in listed
            if isinstance(e, Mapping) and e.get("key") in ZONE_KEYS and e.get("operator") == "In"
        ]
        if not pinned:
            return None  # a term that allows any zone
        values = [v for e in pinned for v in (e.get("values") or [])]
        zones.update(str(v) for v in values)
    return (
        f"required node affinity {ZONE_KEYS[0]} In [{', '.join(sorted(zones))}]"
        if len(zones) == 1
        else None
    )


def _zone_pod_affinity(pod_spec: Mapping[str, Any]) -> str | None:
    affinity = pod_spec.get("affinity")
    pods = affinity.get("podAffinity") if isinstance(affinity, Mapping) else None
    required = (
        pods.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(pods, Mapping)
        else None
    )
    for term in required if isinstance(required, list) else []:
        if isinstance(term, Mapping) and term.get("topologyKey") in ZONE_KEYS:
            return f"required pod affinity over {term['topologyKey']}"
    return None


def one_zone(pod_spec: Mapping[str, Any]) -> str | None:
    """How the pod keeps to one zone, in words (None: it may run in any zone of the pool)."""
    return _zone_selector(pod_spec) or _zone_pod_affinity(pod_spec)


@dataclass(frozen=True)
class Cap:
    """The most nodes a pool gives a workload at once, why, and what would raise it (`fix`,
    with `{needed}` for the nodes the workload needs)."""

    nodes: int
    why: str
    fix: str


def caps(spec: PoolSpec, pod_spec: Mapping[str, Any]) -> list[Cap]:
    """Every limit on the pool's nodes at once for this pod, smallest first."""
    found = [
        Cap(spec.max_nodes, f"maxNodes {spec.max_nodes}", "raise the pool's maxNodes to {needed}")
    ]
    cap = spec.reservation_cap
    if cap is not None and set(spec.capacity) <= RESERVED_ONLY:
        found.append(
            Cap(
                cap.nodes,
                f"every node comes from {cap.source}, at most {plural(cap.nodes, 'node')}",
                "buy a Capacity Block of {needed} instances"
                if "capacity-block" in spec.capacity
                else "reserve {needed} nodes, or let the pool fall back to on-demand after the "
                "reservation (capacity: [reserved, on-demand])",
            )
        )
    zone = one_zone(pod_spec)
    if spec.zone_max_nodes is not None and spec.zone_max_nodes < spec.max_nodes and zone:
        found.append(
            Cap(
                spec.zone_max_nodes,
                f"its pods keep to one zone ({zone}) and one zone of the pool holds at most "
                f"{plural(spec.zone_max_nodes, 'node')} (maxNodes {spec.max_nodes} over "
                f"{len(spec.zones)} zones)",
                "let one zone of the pool hold {needed} nodes (its nodes per zone, or a pool "
                "of that one zone)",
            )
        )
    fabric = spec.fabric
    placed = fabric.placement_max_nodes if fabric is not None else None
    if fabric is not None and placed is not None and asks_for_fabric(pod_spec, spec):
        found.append(
            Cap(
                placed,
                f"its pods use the GPU fabric, whose {fabric.placement} in {fabric.zone} "
                f"holds at most {plural(placed, 'node')}",
                f"fit the job in {placed} nodes (fewer ranks, or more GPUs per node): one "
                "placement cannot hold {needed}",
            )
        )
    # On a tie, the reservation, the zone or the placement: raising maxNodes alone would not
    # help.
    return sorted(found, key=lambda c: (c.nodes, c is found[0]))


def _lower_bound_nodes(sets: Sequence[PodSet], node: NodeTemplate) -> int:
    """The fewest nodes that could hold all these pods, resource by resource."""
    totals: dict[str, int] = {}
    for pod_set in sets:
        requested, _ = pod_requests(pod_set.spec)
        for name, amount in requested.items():
            totals[name] = totals.get(name, 0) + amount.total * pod_set.count
    bound = 0
    for name, total in totals.items():
        offered = _offered(node, name)
        if offered > 0 and total > 0:
            bound = max(bound, math.ceil(total / offered))
    return bound


@dataclass(frozen=True)
class GangVerdict:
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def gang_verdict(
    spec: PoolSpec,
    pod_spec: Mapping[str, Any],
    node: NodeTemplate,
    pods: int,
    together: str | None,
    siblings: Sequence[PodSet] = (),
) -> GangVerdict:
    """Whether the pool holds the workload's pods at once: a reason when pods that must run
    together do not all fit, a note when pods that run on their own do not (the rest stay
    Pending) or when those that fit still start one by one. `siblings`: the other pod sets of
    the same workload that this pool also takes (a JobSet's other replicated jobs)."""
    if pods < 2 and not siblings:
        return GangVerdict()
    if together is None and spec.fabric is not None and asks_for_fabric(pod_spec, spec):
        together = f"its {pods} pods use the GPU fabric (NCCL ranks run together)"
    per_node = pods_per_node(pod_spec, node)
    needed = nodes_needed(pods, per_node)
    limits = caps(spec, pod_spec)
    tightest = limits[0]
    holds = tightest.nodes * per_node
    packing = f"{per_node} per node" if per_node > 1 else "one per node"
    if needed > tightest.nodes:
        if together is None:
            return GangVerdict(
                notes=(
                    f"only {holds} of its {pods} pods run at once ({packing}, "
                    f"{tightest.why}); the others stay Pending until one ends",
                )
            )
        fewer = f"run at most {holds} at once" if holds else "run them elsewhere"
        fix = tightest.fix.format(needed=needed)
        return GangVerdict(
            reasons=(
                f"{together}, but this pool holds {holds} of them at once ({packing}, "
                f"{tightest.why}): they need {plural(needed, 'node')}; {fix}, or {fewer}",
            )
        )
    if siblings and together is not None:
        everything = _lower_bound_nodes([*siblings, PodSet("this", pod_spec, pods)], node)
        names = ", ".join(s.name for s in siblings)
        if everything > tightest.nodes:
            return GangVerdict(
                reasons=(
                    f"{together}; with {names}, which this pool also takes, they need at least "
                    f"{plural(everything, 'node')} at once, but it holds "
                    f"{plural(tightest.nodes, 'node')} ({tightest.why}); "
                    f"{tightest.fix.format(needed=everything)}",
                )
            )
        needed_here = f"at least {plural(everything, 'node')} with {names}"
    else:
        needed_here = f"{plural(needed, 'node')} ({packing})"
    if together is None:
        return GangVerdict()
    return GangVerdict(
        notes=(
            f"{together}: {needed_here}, within {tightest.why}; they start as the nodes "
            "come, not all at once (only Kueue admits a Job whole)",
        )
    )
