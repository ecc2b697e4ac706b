"""Karpenter's cloud-neutral `karpenter.sh` objects, as data: one NodePool per GPU pool and the
NodeOverlay that states a shared or MIG node's GPU count. Every Karpenter provider reads these
(EKS: gpufleet's Karpenter and EKS Auto Mode; AKS node auto-provisioning is Karpenter too); each
cloud adds its node class (EKS: `components/aws/model/karpenter.py` EC2NodeClass,
`components/aws/model/auto_mode.py` NodeClass) and its reserved label domain.

Sources: the kubernetes-sigs/karpenter v1 CRDs as aws/karpenter-provider-aws v1.14.1 ships them
(`karpenter.sh_nodepools.yaml`, `karpenter.sh_nodeoverlays.yaml`; the tests validate what is
built here against them when ../shared/reference/karpenter is present), and Karpenter's v1 docs
(concepts/nodepools.md, concepts/disruption.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components.model.pool_spec import PoolSpec

NODE_POOL_API_VERSION = "karpenter.sh/v1"
# NodeOverlay: alpha in 1.14 (karpenter-crd chart 1.14.1 ships its CRD), behind the chart's
# settings.featureGates.nodeOverlay, off by default (values.yaml). Its `capacity` is merged over
# the instance type's in Karpenter's scheduling simulation (kubernetes-sigs/karpenter
# pkg/cloudprovider/types.go ApplyCapacityOverlay: lo.Assign, the overlay's value wins), so
# `nvidia.com/gpu: 4` replaces the 1 Karpenter reads from the cloud for a single-GPU type.
NODE_OVERLAY_API_VERSION = "karpenter.sh/v1alpha1"

# Labels Karpenter puts on every node it launches (karpenter.sh/v1 well-known labels).
NODEPOOL_LABEL = "karpenter.sh/nodepool"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"

# How long a node with no pods (other than DaemonSets) stays before Karpenter removes it.
EMPTY_NODE_TTL = "5m"
# Karpenter's default replaces every node after 720h: a month-long training job would be
# drained for it. Nodes go when empty instead.
NEVER_EXPIRE: Mapping[str, str] = {"expireAfter": "Never"}

# NodePool template labels the v1 CRD refuses (its x-kubernetes-validations on
# spec.template.metadata.labels): the karpenter.sh domain, the provider's own domain (gpufleet
# sets none of their few allowed keys as labels) and kubernetes.io/hostname.
_RESERVED_DOMAIN = "karpenter.sh"
_RESERVED_KEYS = ("kubernetes.io/hostname",)


def reserved_label(key: str, provider_domain: str) -> bool:
    """Whether a NodePool refuses `key` as a template label (`provider_domain`: the cloud
    provider's label domain, e.g. karpenter.k8s.aws)."""
    domain = key.split("/", 1)[0] if "/" in key else ""
    return key in _RESERVED_KEYS or domain.endswith((_RESERVED_DOMAIN, provider_domain))


# karpenter.sh/capacity-type values in the order Karpenter tries them, whatever the order of
# a requirement's values: reserved, then Spot, then on-demand (docs concepts/nodepools.md,
# Capacity Type); `reserved` is any reservation the node class selects (on EKS On-Demand
# Capacity Reservations and Capacity Blocks alike, docs/tasks/odcrs.md), behind the
# reservedCapacity gate.
CAPACITY_PRIORITY = ("reserved", "spot", "on-demand")
# The `gpuPools[].capacity` words Karpenter builds, by its name for each.
CAPACITY_VALUES = {
    "reserved": "reserved",
    "capacity-block": "reserved",
    "spot": "spot",
    "on-demand": "on-demand",
}


def capacity_types(order: Sequence[str], on_demand_fallback: bool) -> tuple[str, ...]:
    """The NodePool's capacity types for a pool's order (a Spot pool with onDemandFallback may
    launch on-demand too), in the order Karpenter tries them."""
    wanted = {CAPACITY_VALUES[word] for word in order if word in CAPACITY_VALUES}
    if on_demand_fallback and "spot" in wanted:
        wanted.add("on-demand")
    return tuple(value for value in CAPACITY_PRIORITY if value in wanted)


@dataclass(frozen=True)
class NodePoolOptions:
    """What a Karpenter provider writes into every NodePool it builds, beyond the pool's own."""

    # The provider's node class the NodePool names (one per pool, named after it).
    node_class_ref: Mapping[str, str]
    # A `kubernetes.io/os: linux` requirement (a provider that sets the OS itself takes none).
    os_requirement: bool = True
    # The template's expireAfter (and terminationGracePeriod, if the provider limits lifetime).
    lifetime: Mapping[str, str] = field(default_factory=lambda: NEVER_EXPIRE)


def _limits(pool: PoolSpec, vcpus: int, memory_gib: float) -> dict[str, str]:
    """At most maxNodes nodes' worth of GPUs, CPUs and memory (of the largest allowed type)."""
    return {
        pool.gpu_resource: str(pool.max_nodes * pool.gpus_allocatable),
        "cpu": str(pool.max_nodes * vcpus),
        "memory": f"{int(pool.max_nodes * memory_gib)}Gi",
    }


def _requirements(
    pool: PoolSpec, capacity: Sequence[str], os_requirement: bool
) -> list[dict[str, Any]]:
    requirements: list[dict[str, Any]] = [
        {
            "key": "node.kubernetes.io/instance-type",
            "operator": "In",
            "values": list(pool.machine_types),
        },
        {"key": CAPACITY_TYPE_LABEL, "operator": "In", "values": list(capacity)},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
    ]
    if os_requirement:
        requirements.append({"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]})
    if pool.zones:
        zone_values = pool.label_choices.get("topology.kubernetes.io/zone") or (
            pool.node_labels["topology.kubernetes.io/zone"],
        )
        requirements.append(
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(zone_values)}
        )
    return requirements


def _disruption(consolidate_underutilized: bool) -> dict[str, Any]:
    return {
        # Empty GPU nodes go; busy ones are only repacked if the pool opts in.
        "consolidationPolicy": "WhenEmptyOrUnderutilized"
        if consolidate_underutilized
        else "WhenEmpty",
        "consolidateAfter": EMPTY_NODE_TTL,
        # A NodePool or node class edit (a new image release, another instance type) marks
        # running nodes Drifted; Karpenter would drain them to replace them. None is drained
        # for drift: they go when empty, and new nodes come up as edited.
        "budgets": [{"nodes": "10%"}, {"nodes": "0", "reasons": ["Drifted"]}],
    }


def node_pool(
    pool: PoolSpec,
    options: NodePoolOptions,
    *,
    capacity: Sequence[str],
    largest: tuple[int, float],
    consolidate_underutilized: bool,
) -> dict[str, Any]:
    """The pool's `karpenter.sh/v1` NodePool (metadata.name is the pool's name) as the provider
    builds it (`options`), limited to maxNodes of its `largest` allowed type (vCPUs, GiB)."""
    return {
        "apiVersion": NODE_POOL_API_VERSION,
        "kind": "NodePool",
        "metadata": {"name": pool.name},
        "spec": {
            "template": {
                "metadata": {"labels": dict(sorted(pool.declared_labels.items()))},
                "spec": {
                    "nodeClassRef": dict(options.node_class_ref),
                    "requirements": _requirements(pool, capacity, options.os_requirement),
                    "taints": [
                        {"key": t.key, "value": t.value, "effect": t.effect}
                        if t.value
                        else {"key": t.key, "effect": t.effect}
                        for t in pool.declared_taints
                    ],
                    **options.lifetime,
                },
            },
            "limits": _limits(pool, *largest),
            "disruption": _disruption(consolidate_underutilized),
        },
    }


def node_overlay(pool: PoolSpec) -> dict[str, Any] | None:
    """The pool's NodeOverlay when its nodes advertise another GPU count than the cloud says
    (time-sharing, MPS or MIG): Karpenter sizes instance types from the cloud's GPU count alone
    (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go, `nvidia.com/gpu`
    = the GPUs EC2 lists), so without it a pod asking for 2 shares of an L4 never gets a node
    launched and 4 pods asking for one share each get 4 nodes (kubernetes-sigs/karpenter#729,
    review eks-2.md N3). Applied to this pool's NodePool and instance types only."""
    if pool.gpus_allocatable == pool.gpus_per_node:
        return None
    return {
        "apiVersion": NODE_OVERLAY_API_VERSION,
        "kind": "NodeOverlay",
        "metadata": {"name": pool.name},
        "spec": {
            "requirements": [
                {"key": NODEPOOL_LABEL, "operator": "In", "values": [pool.name]},
                {
                    "key": "node.kubernetes.io/instance-type",
                    "operator": "In",
                    "values": list(pool.machine_types),
                },
            ],
            "capacity": {pool.gpu_resource: str(pool.gpus_allocatable)},
        },
    }


def planned_gpus(physical: int, overlay: Mapping[str, Any] | None, resource: str) -> int:
    """The GPU count Karpenter plans a new node of the pool with: the cloud's, or the overlay's."""
    if overlay is None:
        return physical
    return int(overlay["spec"]["capacity"].get(resource, physical))
