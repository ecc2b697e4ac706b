"""Karpenter rules: GPU NodePools have limits, and Spot interruptions reach Karpenter."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyResource,
    ResourceValidationPolicy,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from .resources import GPU_RESOURCE, HELM_TYPES, KARPENTER_NODE_POOL, get, gpu_pools
from .rules import resource_rule, stack_rule

# A provider type token written out: the pack runs in Pulumi's analyzer without gpufleet's
# program, so it cannot ask gpufleet's clouds (tests/test_architecture.py lets policy/ keep it).
EVENT_RULE = "aws:cloudwatch/eventRule:EventRule"
SPOT_WARNING = "EC2 Spot Instance Interruption Warning"
SELF_RUN_GROUP = "karpenter.k8s.aws"


def check_limits(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """A GPU NodePool caps its GPUs: without `limits` Karpenter launches as many nodes as pending
    pods ask for."""
    problems = []
    for name, pool in gpu_pools(resource_type, props):
        if resource_type != KARPENTER_NODE_POOL:
            continue
        limits = get(pool, "spec", "limits") or {}
        if GPU_RESOURCE not in limits:
            problems.append(
                f"GPU NodePool {name!r} has no limits.{GPU_RESOURCE}: Karpenter would launch GPU "
                "nodes for every pending pod without bound"
            )
    return problems


def _release_queue(release: PolicyResource) -> str | None:
    """The interruption queue a Karpenter release is given ('' if none, None if unknown yet)."""
    try:
        values = release.props.get("values") or {}
        queue = get(values, "settings", "interruptionQueue")
    except UnknownValueError:
        return None
    return "" if queue is None else str(queue)


def _feeds_spot_warnings(rule: PolicyResource) -> bool:
    try:
        pattern = json.loads(str(rule.props.get("eventPattern") or "{}"))
    except (UnknownValueError, json.JSONDecodeError):
        return False
    return SPOT_WARNING in (pattern.get("detail-type") or [])


def check_stack(resources: Sequence[PolicyResource]) -> list[tuple[str, str | None]]:
    """GPU NodePools of a self-run Karpenter need Karpenter itself, with an interruption queue
    that EventBridge feeds Spot interruption warnings: else a reclaimed Spot node dies without a
    drain."""
    pools = [r for r in resources if gpu_pools(r.resource_type, r.props)]
    # NodePools of the Karpenter the stack runs itself (EKS Auto Mode's NodeClass group is
    # eks.amazonaws.com: AWS runs that Karpenter and handles interruptions).
    pools = [
        r
        for r in pools
        if r.resource_type == KARPENTER_NODE_POOL
        and get(r.props, "spec", "template", "spec", "nodeClassRef", "group") == SELF_RUN_GROUP
    ]
    if not pools:
        return []
    releases = [
        r
        for r in resources
        if r.resource_type in HELM_TYPES and str(get(r.props, "chart") or "").endswith("/karpenter")
    ]
    if not releases:
        return [("the stack has GPU NodePools but no Karpenter Helm release", pools[0].urn)]
    problems: list[tuple[str, str | None]] = []
    for release in releases:
        if _release_queue(release) == "":
            problems.append(
                (
                    f"Karpenter release {release.name!r} has no settings.interruptionQueue: Spot "
                    "interruptions and rebalance notices would not drain GPU nodes",
                    release.urn,
                )
            )
    if not any(r.resource_type == EVENT_RULE and _feeds_spot_warnings(r) for r in resources):
        problems.append(
            (
                f"no EventBridge rule sends '{SPOT_WARNING}' events to Karpenter's queue",
                releases[0].urn,
            )
        )
    return problems


limits = ResourceValidationPolicy(
    name="karpenter-gpu-pools-limited",
    description="Every Karpenter GPU NodePool sets limits on nvidia.com/gpu.",
    validate=resource_rule(check_limits),
    enforcement_level=EnforcementLevel.MANDATORY,
)
interruptions = StackValidationPolicy(
    name="karpenter-handles-interruptions",
    description="GPU NodePools come with Karpenter and an interruption queue fed Spot warnings.",
    validate=stack_rule(check_stack),
    enforcement_level=EnforcementLevel.MANDATORY,
)

POLICIES = [limits, interruptions]
