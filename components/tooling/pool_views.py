"""Resolved pools -> what kube-scheduler and the cluster autoscaler see of them.

`fit` needs two pictures of every pool: a running node (labels, taints, allocatable, machine
shape), and, for a pool at zero nodes, the cluster autoscaler's template of a node it could add.
GKE and AKS build that template from the pool's own API object, so it matches `PoolSpec`. On EKS
a self-managed pool's template is whatever the auto scaling groups' `node-template` tags say, so
it is read from the planned graph, not assumed: a missing tag there is a real scale-up failure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from components.model import resource_index
from components.model.pools import POOL_LABEL, PoolSpec, resolve_pools, system_pool
from components.model.registry import all_machine_types
from components.model.schema import StackConfig
from components.tooling.engine import RecordedResource, plan_stack
from components.tooling.scheduling import NodeTemplate, PoolView, Taint, quantity
from components.tooling.scheduling.model import TAINT_EFFECTS
from components.tooling.stacks import StackFile

GIB = 2**30
# A machine shape the catalog does not know: make CPU and memory never the limiting factor
# (and say so in a note) rather than report every pod as too big for a 0-vCPU machine.
UNKNOWN_SHAPE = 2**62

CA_PREFIX = "k8s.io/cluster-autoscaler/"
# What gpufleet's autoscaler on an adopted cluster discovers its groups by, alone
# (components/aws/model/autoscaler_tags.py GPUFLEET_PREFIX; tests pin the two equal).
GPUFLEET_DISCOVERY_PREFIX = "gpufleet.io/autoscaler/"
TEMPLATE_PREFIX = CA_PREFIX + "node-template/"
LABEL_TAG = TEMPLATE_PREFIX + "label/"
TAINT_TAG = TEMPLATE_PREFIX + "taint/"
RESOURCE_TAG = TEMPLATE_PREFIX + "resources/"
POOL_TAG = LABEL_TAG + POOL_LABEL
# cluster-autoscaler aws_manager.go extractTaintsFromAsg: `<value>:<Effect>`; the regexp is
# unanchored and the value is split at the first colon. A bare `NoSchedule` is ignored.
_CA_TAINT_VALUE = re.compile(r"(.*):(?:NoSchedule|NoExecute|PreferNoSchedule)")


@dataclass(frozen=True)
class PoolCheck:
    """One pool as `fit` evaluates it.

    `views` usually holds one view. On EKS, auto scaling groups of one pool whose tags differ
    each get their own autoscaler template (CA treats every ASG as its own node group); a pod
    fits the pool at zero if any of them would take it. The label names the ASGs ("" if one).
    """

    spec: PoolSpec
    views: tuple[tuple[str, PoolView], ...]
    notes: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def kind(self) -> str:
        return self.spec.kind


# --------------------------------------------------------------------------- from PoolSpec


def _shape(spec: PoolSpec) -> tuple[int, int] | None:
    """(cpu millis, memory bytes) of the pool's machine, or None when unknown."""
    node = spec.allocatable_per_node
    if "cpu" in node and "memory" in node:
        # What the kubelet leaves pods: the cloud's reservations already taken off.
        return quantity.cpu_millis(str(node["cpu"])), quantity.memory_bytes(str(node["memory"]))
    if spec.vcpus > 0 and spec.memory_gib > 0:
        return spec.vcpus * 1000, int(spec.memory_gib * GIB)
    # Existing clusters: the user may name a machine type the catalog knows on some cloud.
    for name in spec.machine_types:
        for machine in all_machine_types():
            if machine.name == name:
                return machine.vcpus * 1000, int(machine.memory_gib * GIB)
    return None


def node_template(
    spec: PoolSpec,
    *,
    labels: Mapping[str, str] | None = None,
    label_choices: Mapping[str, tuple[str, ...]] | None = None,
    taints: Iterable[Taint] | None = None,
    allocatable: Mapping[str, int] | None = None,
    memory_bytes: int | None = None,
) -> NodeTemplate:
    """A node of `spec`'s pool; each keyword replaces that part of the running node's picture."""
    choices = dict(spec.label_choices if label_choices is None else label_choices)
    fixed = spec.node_labels if labels is None else labels
    shape = _shape(spec) or (UNKNOWN_SHAPE, UNKNOWN_SHAPE)
    return NodeTemplate(
        shape_is_allocatable="cpu" in spec.allocatable_per_node,
        after_daemonsets="cpu" in spec.allocatable_per_node and bool(spec.daemonsets),
        largest_type=spec.sized_by,
        pool=spec.name,
        # A key that varies per node (zone, instance type) is only a choice, never fixed.
        labels={key: value for key, value in fixed.items() if key not in choices},
        label_choices=choices,
        taints=tuple(
            taints
            if taints is not None
            else (Taint(t.key, t.value, t.effect) for t in spec.node_taints)
        ),
        allocatable=dict(spec.extended_resources if allocatable is None else allocatable),
        cpu_millis=shape[0],
        memory_bytes=shape[1] if memory_bytes is None else memory_bytes,
    )


def _spec_autoscaler_template(spec: PoolSpec) -> NodeTemplate | None:
    """GKE, AKS, EKS managed node groups, existing clusters: the pool's declared template."""
    if spec.autoscaler_labels is None:
        return None
    return node_template(
        spec,
        labels=spec.autoscaler_labels,
        taints=(Taint(t.key, t.value, t.effect) for t in spec.autoscaler_taints),
        allocatable=spec.autoscaler_resources,
    )


def _view(spec: PoolSpec, scale_from_zero: NodeTemplate | None) -> PoolView:
    return PoolView(
        name=spec.name,
        kind=spec.kind,
        min_nodes=spec.min_nodes,
        node=node_template(spec),
        scale_from_zero=scale_from_zero,
        extended_resource_toleration=spec.extended_resource_toleration,
        provisioner=spec.provisioner,
    )


def _shape_notes(spec: PoolSpec) -> list[str]:
    if _shape(spec) is not None:
        return []
    machine = ", ".join(spec.machine_types) or "not given"
    return [
        f"CPU and memory not checked: the machine shape of this pool is unknown "
        f"(machine type {machine})"
    ]


# --------------------------------------------------------------------------- EKS ASG tags


@dataclass(frozen=True)
class AsgTemplate:
    """What cluster-autoscaler reads from one auto scaling group's tags."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    resources: Mapping[str, int]
    discoverable: bool
    ignored: tuple[str, ...] = field(default=())

    @property
    def pool(self) -> str | None:
        return self.labels.get(POOL_LABEL)

    def signature(self) -> tuple[object, ...]:
        return (
            tuple(sorted(self.labels.items())),
            tuple(sorted((t.key, t.value, t.effect) for t in self.taints)),
            tuple(sorted(self.resources.items())),
        )


def asg_tags(resource: RecordedResource) -> dict[str, str]:
    """A node group's tags as key -> value, read as its cloud's resource knowledge says (the
    groups whose tags carry the autoscaler's node-template tags; none for any other type)."""
    read = resource_index.NODE_TEMPLATE_TAGS.get(resource.type)
    return read(resource.inputs) if read is not None else {}


def read_asg(resource: RecordedResource) -> AsgTemplate:
    """Parse an ASG's tags the way cluster-autoscaler's AWS provider does."""
    tags = asg_tags(resource)
    labels: dict[str, str] = {}
    taints: list[Taint] = []
    resources: dict[str, int] = {}
    ignored: list[str] = []
    for key, value in sorted(tags.items()):
        if key.startswith(LABEL_TAG):
            labels[key[len(LABEL_TAG) :]] = value
        elif key.startswith(TAINT_TAG):
            taint_key = key[len(TAINT_TAG) :]
            if not _CA_TAINT_VALUE.search(value):
                ignored.append(
                    f"tag {key}={value} is ignored by the autoscaler (expected <value>:<Effect>)"
                )
                continue
            taint_value, effect = value.split(":", 1)
            if effect not in TAINT_EFFECTS:
                ignored.append(f"tag {key}={value}: effect {effect!r} is not a taint effect")
                continue
            taints.append(Taint(taint_key, taint_value, effect))
        elif key.startswith(RESOURCE_TAG):
            name = key[len(RESOURCE_TAG) :]
            try:
                resources[name] = quantity.count(value)
            except ValueError as error:
                ignored.append(f"tag {key}: {error}")
    # CA auto-discovery: `k8s.io/cluster-autoscaler/enabled` and `k8s.io/cluster-autoscaler/<cluster>`
    # on a cluster gpufleet created; gpufleet's own tag alone on one it adopts.
    owners = [
        key
        for key in tags
        if key.startswith(CA_PREFIX)
        and "/" not in key[len(CA_PREFIX) :]
        and key != CA_PREFIX + "enabled"
    ]
    discoverable = (CA_PREFIX + "enabled" in tags and bool(owners)) or any(
        key.startswith(GPUFLEET_DISCOVERY_PREFIX) for key in tags
    )
    return AsgTemplate(
        resource.name, labels, tuple(taints), resources, discoverable, tuple(ignored)
    )


def asgs_by_pool(resources: Iterable[RecordedResource]) -> dict[str, list[AsgTemplate]]:
    """Every ASG of the graph, grouped by its `node-template/label/gpufleet.io/pool` tag."""
    grouped: dict[str, list[AsgTemplate]] = {}
    for resource in resources:
        if resource.type not in resource_index.NODE_TEMPLATE_TAGS:
            continue
        asg = read_asg(resource)
        if asg.pool:
            grouped.setdefault(asg.pool, []).append(asg)
    return grouped


def _ca_generic_labels(
    spec: PoolSpec, region: str
) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """Labels CA's AWS provider derives itself (buildGenericLabels) from the instance type and
    the ASG's zones. With several instance types it simulates the first one."""
    labels = {
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/region": region,
    }
    if spec.machine_types:
        labels["node.kubernetes.io/instance-type"] = spec.machine_types[0]
    choices: dict[str, tuple[str, ...]] = {}
    if len(spec.zones) == 1:
        labels["topology.kubernetes.io/zone"] = spec.zones[0]
    elif spec.zones:
        choices["topology.kubernetes.io/zone"] = tuple(spec.zones)
    return labels, choices


def eks_zero_templates(
    spec: PoolSpec, asgs: Sequence[AsgTemplate], region: str
) -> tuple[list[tuple[str, NodeTemplate]], list[str]]:
    """Autoscaler templates of a self-managed EKS pool at zero, one per distinct tag set."""
    notes: list[str] = []
    visible = [asg for asg in asgs if asg.discoverable]
    for asg in asgs:
        notes.extend(f"ASG {asg.name}: {why}" for why in asg.ignored)
        if not asg.discoverable:
            notes.append(
                f"ASG {asg.name} lacks the autoscaler's discovery tags "
                f"({CA_PREFIX}enabled and {CA_PREFIX}<cluster>, or "
                f"{GPUFLEET_DISCOVERY_PREFIX}<cluster> on an adopted cluster), so it is never "
                "scaled"
            )
    if not asgs:
        notes.append(
            f"no auto scaling group in the plan is tagged {POOL_TAG}={spec.name}, so the "
            "autoscaler has no template for this pool at zero"
        )
    groups: dict[tuple[object, ...], list[AsgTemplate]] = {}
    for asg in visible:
        groups.setdefault(asg.signature(), []).append(asg)
    generic, choices = _ca_generic_labels(spec, region)
    templates: list[tuple[str, NodeTemplate]] = []
    for members in groups.values():
        asg = members[0]
        if spec.gpu_resource and spec.gpu_resource not in asg.resources:
            notes.append(
                f"ASG {', '.join(m.name for m in members)} has no "
                f"{RESOURCE_TAG}{spec.gpu_resource} tag: at zero nodes the autoscaler does not "
                "know the node would offer GPUs"
            )
        # Tag values win over the generic labels (joinNodeLabelsChoosingUserValuesOverAPIValues).
        labels = {**generic, **asg.labels}
        template = node_template(
            spec,
            labels=labels,
            label_choices={k: v for k, v in choices.items() if k not in asg.labels},
            taints=asg.taints,
            allocatable=asg.resources,
        )
        label = "" if len(groups) == 1 else "ASG " + ", ".join(m.name for m in members)
        templates.append((label, template))
    return templates, notes


# --------------------------------------------------------------------------- the stack


def _reads_tags_at_zero(spec: PoolSpec) -> bool:
    """At zero nodes, the autoscaler's picture of this pool is its groups' node-template tags."""
    return spec.scale_from_zero == "node-template-tags" and spec.min_nodes == 0


def needs_plan(config: StackConfig) -> bool:
    """Whether `pool_checks` needs the planned graph: some pool is seen through its tags."""
    return any(_reads_tags_at_zero(spec) for spec in resolve_pools(config))


def pool_checks(
    config: StackConfig, resources: Sequence[RecordedResource] | None = None
) -> list[PoolCheck]:
    """Every GPU pool (config order), then the CPU system pool when the cluster has one.

    `resources` is the planned graph; it is required when `needs_plan(config)`.
    """
    specs = list(resolve_pools(config))
    system = system_pool(config)
    if system is not None:
        specs.append(system)
    by_pool = asgs_by_pool(resources or ())
    checks: list[PoolCheck] = []
    for spec in specs:
        notes = _shape_notes(spec) + list(spec.allocatable_notes)
        if _reads_tags_at_zero(spec):
            if resources is None:
                raise ValueError("EKS self-managed pools at zero need the planned graph")
            templates, eks_notes = eks_zero_templates(
                spec, by_pool.get(spec.name, []), config.cluster.region or ""
            )
            notes += eks_notes
            views = tuple((label, _view(spec, template)) for label, template in templates)
            checks.append(PoolCheck(spec, views or (("", _view(spec, None)),), tuple(notes)))
            continue
        if spec.scale_from_zero == "unmanaged" and spec.min_nodes == 0:
            notes.append(
                "at zero nodes this assumes the cluster's autoscaler knows the pool's labels, "
                "taints and GPU count (gpufleet does not manage it on an existing cluster)"
            )
        checks.append(
            PoolCheck(spec, (("", _view(spec, _spec_autoscaler_template(spec))),), tuple(notes))
        )
    return checks


def stack_pool_checks(stack: StackFile, config: StackConfig) -> list[PoolCheck]:
    """`pool_checks` for a stack file, planning it only when an EKS template must be read."""
    resources = plan_stack(stack).resources if needs_plan(config) else None
    return pool_checks(config, resources)
