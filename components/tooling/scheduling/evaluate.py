"""Would kube-scheduler place this pod on a node of this pool? Every reason why not.

Mirrors the scheduler filters that depend only on the pod and the node: NodeAffinity
(nodeSelector and required node affinity), TaintToleration and NodeResourcesFit, plus the
API-server checks that would reject the pod before it is ever scheduled. Filters that depend
on other pods or on volumes (inter-pod affinity, topology spread, ports) are out of scope.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.tooling.scheduling.model import FitResult, NodeTemplate, PoolView
from components.tooling.scheduling.node_affinity import label_reasons
from components.tooling.scheduling.resources import fit_reasons, pod_requests
from components.tooling.scheduling.taints import taint_reasons

# --------------------------------------------------------------------------- entry points


def evaluate(
    pod_spec: Mapping[str, Any], node: NodeTemplate, *, extended_resource_toleration: bool | None
) -> list[str]:
    """Every reason the pod cannot be placed on a node like `node`; [] means it fits."""
    reasons: list[str] = []
    if pod_spec.get("nodeName"):
        reasons.append(
            f"spec.nodeName pins the pod to node {pod_spec['nodeName']}, "
            "which a pool template cannot promise"
        )
    reasons.extend(label_reasons(pod_spec, node))
    requested, resource_reasons = pod_requests(pod_spec)
    reasons.extend(taint_reasons(pod_spec, node, extended_resource_toleration))
    reasons.extend(resource_reasons)
    reasons.extend(fit_reasons(requested, node))
    return reasons


def fit_pool(pod_spec: Mapping[str, Any], pool: PoolView) -> FitResult:
    """Evaluate against what the scheduler or, at zero nodes, the autoscaler would see."""
    admission = pool.extended_resource_toleration
    live = evaluate(pod_spec, pool.node, extended_resource_toleration=admission)
    if pool.min_nodes > 0:
        return FitResult(pool.name, not live, live, "running nodes")
    via = "autoscaler template at zero"
    template = pool.scale_from_zero
    if template is None:
        reasons = [
            "pool has 0 nodes and the cluster autoscaler cannot see its template, "
            "so it would never scale up for this pod",
            *live,
        ]
        return FitResult(pool.name, False, reasons, via)
    at_zero = evaluate(pod_spec, template, extended_resource_toleration=admission)
    if at_zero and not live:
        # The pod is fine for a real node; only the autoscaler's picture of the empty pool
        # (e.g. a missing GPU resource tag or label hint) stops it from scaling up.
        fix = "fix the pool's scale-from-zero labels, taints or resource tags"
        at_zero = [
            "a running node of this pool would fit, but the pool is at 0 nodes and "
            f"{pool.provisioner}'s template of it (what it believes a new node would have) "
            f"blocks the pod, so it would not scale up; {fix}",
            *(f"autoscaler template: {reason}" for reason in at_zero),
        ]
    elif live and not at_zero:
        # Scale-up happens, then the real node still refuses the pod: it stays Pending.
        at_zero = [
            f"{pool.provisioner} would add a node for this pod, but the real node differs "
            "from its template and would not take it",
            *(f"running node: {reason}" for reason in live),
        ]
    return FitResult(pool.name, not at_zero, at_zero, via)
