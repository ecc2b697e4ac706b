"""Where DaemonSets and sample pods would land, evaluated with the scheduling simulator.

Pure functions over PoolSpecs and rendered pod specs, used by the tests on every shipped stack:
a DaemonSet's pod must fit every GPU pool it serves and no CPU pool; a sample pod must fit its
own pool and no other. The simulator (`components.tooling.scheduling`) answers per node template.

The GPU Operator needs a model of what it does at run time: NFD's worker (a DaemonSet on every
node it tolerates) labels nodes that have an NVIDIA PCI device, the operator then labels them
`nvidia.com/gpu.present=true` and `nvidia.com/gpu.deploy.<operand>=true`, and each operand
DaemonSet selects on its label with `daemonsets.tolerations`. `operator_node` applies that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components.model.pools import PoolSpec
from components.tooling import pool_views
from components.tooling.scheduling import NodeTemplate, evaluate

NFD_GPU_LABEL = "feature.node.kubernetes.io/pci-10de.present"
OPERATOR_GPU_LABEL = "nvidia.com/gpu.present"
OPERANDS = (
    "driver",
    "container-toolkit",
    "device-plugin",
    "gpu-feature-discovery",
    "dcgm-exporter",
    "mig-manager",
    "operator-validator",
)


@dataclass(frozen=True)
class Target:
    """A node template to place on, and whether the pod is meant to land there."""

    node: NodeTemplate
    gpu: bool
    extended_resource_toleration: bool | None = False


@dataclass
class Placement:
    """Which templates a pod fits, and why it does not fit the others."""

    fits: list[str] = field(default_factory=list)
    reasons: dict[str, list[str]] = field(default_factory=dict)


def node_template(pool: PoolSpec, extra_labels: Mapping[str, str] | None = None) -> NodeTemplate:
    """What one node of `pool` looks like to the scheduler, plus labels added at run time."""
    return pool_views.node_template(pool, labels={**pool.node_labels, **(extra_labels or {})})


def other_node() -> NodeTemplate:
    """Any other node of an existing cluster: we only know it runs Linux and is not described."""
    shape = pool_views.UNKNOWN_SHAPE
    return NodeTemplate(
        pool="(other nodes)",
        labels={"kubernetes.io/os": "linux"},
        cpu_millis=shape,
        memory_bytes=shape,
    )


def targets(
    gpu_pools: Sequence[PoolSpec],
    cpu_pool: PoolSpec | None,
    extra_labels: Mapping[str, str] | None = None,
) -> list[Target]:
    """The GPU pools, then the CPU pool (or, on an existing cluster, an undescribed node)."""
    result = [
        Target(node_template(p, extra_labels), True, p.extended_resource_toleration)
        for p in gpu_pools
    ]
    if cpu_pool is not None:
        result.append(Target(node_template(cpu_pool), False, cpu_pool.extended_resource_toleration))
    else:
        result.append(Target(other_node(), False))
    return result


def place(pod_spec: Mapping[str, Any], nodes: Iterable[Target]) -> Placement:
    """Evaluate `pod_spec` on every target."""
    placement = Placement()
    for target in nodes:
        reasons = evaluate(
            pod_spec, target.node, extended_resource_toleration=target.extended_resource_toleration
        )
        if reasons:
            placement.reasons[target.node.pool] = reasons
        else:
            placement.fits.append(target.node.pool)
    return placement


def daemonset_pod(
    values: Mapping[str, Any], resources: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The scheduling-relevant pod spec a chart renders from (merged) values at one level."""
    spec: dict[str, Any] = {"containers": [{"name": "main", "resources": dict(resources or {})}]}
    for key in ("nodeSelector", "affinity", "tolerations"):
        if values.get(key):
            spec[key] = values[key]
    return spec


def operand_pod(merged_values: Mapping[str, Any], operand: str) -> dict[str, Any]:
    """An operator operand's pod: it selects the operator's deploy label for it."""
    return {
        "containers": [{"name": operand}],
        "nodeSelector": {f"nvidia.com/gpu.deploy.{operand}": "true"},
        "tolerations": merged_values.get("daemonsets", {}).get("tolerations") or [],
    }


def operator_node(target: Target, nfd_worker_pod: Mapping[str, Any]) -> Target:
    """The node after NFD and the operator labelled it (only GPU nodes NFD's worker reaches)."""
    if not target.gpu or place(nfd_worker_pod, [target]).reasons:
        return target
    labels = {**target.node.labels, NFD_GPU_LABEL: "true", OPERATOR_GPU_LABEL: "true"}
    labels.update({f"nvidia.com/gpu.deploy.{operand}": "true" for operand in OPERANDS})
    node = NodeTemplate(
        pool=target.node.pool,
        labels=labels,
        label_choices=target.node.label_choices,
        taints=target.node.taints,
        allocatable=target.node.allocatable,
        cpu_millis=target.node.cpu_millis,
        memory_bytes=target.node.memory_bytes,
        shape_is_allocatable=target.node.shape_is_allocatable,
        after_daemonsets=target.node.after_daemonsets,
        largest_type=target.node.largest_type,
    )
    return Target(node, target.gpu, target.extended_resource_toleration)
