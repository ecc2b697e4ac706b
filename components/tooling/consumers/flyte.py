"""`--for flyte`: flytepropeller's k8s plugin settings, and the task arguments that pick each pool.

Key names and how propeller applies them are checked against flyteplugins v1.16.8:
`go/tasks/pluginmachinery/flytek8s/config/config.go` (the `plugins.k8s` keys) and
`flytek8s/pod_helper.go` / `k8s_resource_adds.go` (`resource-tolerations` for every pod asking
for the GPU resource; `interruptible-tolerations` and `interruptible-node-selector-requirement`
only for tasks with `interruptible=True`, `non-interruptible-node-selector-requirement` for all
others; device and partition node affinity from the task's accelerator).

A task can only say device, partition size and interruptible, so two pools that agree on all
three stay indistinguishable; the output says so. Spot pools are told apart by the label their
Spot nodes carry (found by resolving the pool again without Spot): the cloud's own where its
autoscaler sees it at zero (GKE, AKS, Karpenter's per-node capacity type), else gpufleet's on
EKS groups; their Spot taint is tolerated only by interruptible tasks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.model.pools import ACCELERATOR_LABEL, PoolSpec, Taint, resolve_pool
from components.model.schema import StackConfig
from components.tooling.consumers.shared import (
    ConsumerError,
    Request,
    and_list,
    comment,
    keep_running,
    to_yaml,
)
from components.tooling.scheduling import NodeTemplate, evaluate
from components.tooling.scheduling import Taint as NodeTaint

FLYTE_GPU_DOC = (
    "https://docs.flyte.org/en/latest/user_guide/productionizing/configuring_access_to_gpus.html"
)
FLYTE_CONFIG_DOC = (
    "https://docs.flyte.org/en/latest/deployment/configuration/generated/flytepropeller_config.html"
)
FLYTE_CONFIG_SOURCE = (
    "https://github.com/flyteorg/flyte/blob/flyteplugins/v1.16.8/flyteplugins/go/tasks/"
    "pluginmachinery/flytek8s/config/config.go"
)
# config.go's default for gpu-partition-size-node-label.
FLYTE_DEFAULT_PARTITION_LABEL = "k8s.amazonaws.com/gpu-partition-size"

# flytekit.extras.accelerators constants whose device string matches GKE's label values.
FLYTEKIT_MIG_CONSTANTS: Mapping[str, str] = {
    "nvidia-tesla-a100": "A100",
    "nvidia-a100-80gb": "A100_80GB",
}


@dataclass(frozen=True)
class FlyteAccelerator:
    """What a task asks for to land on one pool: device, partition size / unpartitioned, and
    whether it is interruptible (Spot pools)."""

    pool: str
    device: str
    partition: str | None = None
    unpartitioned: bool = False
    interruptible: bool = False

    @property
    def needs_class(self) -> bool:
        """A MIG request for a device flytekit has no constant for needs a small subclass."""
        return (self.partition is not None or self.unpartitioned) and (
            self.device not in FLYTEKIT_MIG_CONSTANTS
        )

    @property
    def class_name(self) -> str:
        return re.sub(r"\W", "_", self.device).upper() + "_DEVICE"

    def class_definition(self) -> str:
        return f'class {self.class_name}(MultiInstanceGPUAccelerator): device = "{self.device}"'

    def python(self) -> str:
        """The flytekit `accelerator=` argument."""
        constant = FLYTEKIT_MIG_CONSTANTS.get(self.device)
        if self.partition:
            if constant:
                return f"{constant}.partition_{self.partition.replace('.', '_')}"
            return f'{self.class_name}.partitioned("{self.partition}")'
        if self.unpartitioned:
            return f"{constant}.unpartitioned" if constant else f"{self.class_name}().unpartitioned"
        return f'GPUAccelerator("{self.device}")'

    def task(self) -> str:
        interruptible = ", interruptible=True" if self.interruptible else ""
        return f'@task(limits=Resources(gpu="1"), accelerator={self.python()}{interruptible})'


@dataclass(frozen=True)
class FlyteSettings:
    config: dict[str, Any]  # the propeller `plugins.k8s` keys
    accelerators: tuple[FlyteAccelerator, ...]
    notes: tuple[str, ...]


def _device_label(pools: Sequence[PoolSpec]) -> str:
    """The node label Flyte matches the task's device against: one key on every pool, whose
    value differs between pools of different GPU models.

    First choice is the label the cloud names GPU models by (GKE's accelerator label, as in
    Flyte's own GKE example; on EKS the label gpufleet sets for the cluster autoscaler, Flyte's
    default key), then gpufleet's own (AKS only labels `accelerator=nvidia`)."""
    preferred = [pools[0].accelerator_label, ACCELERATOR_LABEL]
    # Existing clusters: a label the user gave every pool, e.g. gpu-type.
    declared = sorted(set.intersection(*(set(s.declared_labels) for s in pools)))
    for label in [*preferred, *declared]:
        if not all(label in s.node_labels for s in pools):
            continue
        models: dict[str, str] = {}
        if all(
            models.setdefault(s.node_labels[label], s.accelerator) == s.accelerator for s in pools
        ):
            return label
    raise ConsumerError(
        "flyte: the pools share no node label naming their GPU model, which Flyte's "
        "gpu-device-node-label needs; give every pool a label such as gpu-type: <model>"
    )


def _partition_label(pools: Sequence[PoolSpec]) -> str | None:
    """The node label whose value is the bare MIG partition size on every MIG pool: the cloud's
    own (GKE), else any label the MIG pools share that holds their size (a user label)."""
    preferred = pools[0].partition_label
    mig = [s for s in pools if s.mig_partition_size]
    if not mig:
        return preferred
    shared = set.intersection(*(set(s.node_labels) for s in mig))
    for label in [*([preferred] if preferred else []), *sorted(shared)]:
        if all(s.node_labels.get(label) == s.mig_partition_size for s in mig) and not any(
            label in s.node_labels for s in pools if not s.mig_partition_size
        ):
            return label
    return None


def _carries(spec: PoolSpec, key: str, value: str) -> bool:
    """Whether some node of the pool can carry the label: a fixed label, or one of its per-node
    choices (Karpenter's capacity type on a pool that falls back to on-demand)."""
    return spec.node_labels.get(key) == value or value in spec.label_choices.get(key, ())


def _seen_at_zero(spec: PoolSpec, key: str, value: str) -> bool:
    """Whether the provisioner's template of the pool at zero has the label, so a pod that
    selects it scales the pool up (EKS managed groups' capacityType label is only on nodes)."""
    if spec.autoscaler_labels is None:
        return True
    return spec.autoscaler_labels.get(key) == value or value in spec.label_choices.get(key, ())


def spot_marks(config: StackConfig, spec: PoolSpec) -> tuple[dict[str, str], frozenset[Taint]]:
    """The labels and taints a Spot pool's nodes carry because they are Spot: what its cloud
    (or gpufleet) puts on them beyond what the same pool on demand would have. A label counts
    when the pool's Spot nodes carry it (per node, where the pool mixes Spot and on-demand)
    and its autoscaler's picture of the pool at zero has it too."""
    pool = next((p for p in config.gpu_pools if p.name == spec.name), None)
    if not spec.spot or pool is None:
        return {}, frozenset()
    on_demand = resolve_pool(config, pool.model_copy(update={"spot": False, "capacity": None}))
    candidates = [*spec.node_labels.items()]
    candidates += [(key, value) for key, values in spec.label_choices.items() for value in values]
    labels = {
        key: value
        for key, value in candidates
        if not _carries(on_demand, key, value) and _seen_at_zero(spec, key, value)
    }
    return labels, frozenset(spec.node_taints) - frozenset(on_demand.node_taints)


def task_pod(plugin: Mapping[str, Any], accelerator: FlyteAccelerator) -> dict[str, Any]:
    """The scheduling part of the pod propeller builds for a task asking for one GPU with this
    accelerator (GetPodTolerations, ApplyInterruptibleNodeAffinity, ApplyGPUNodeSelectors)."""
    resource = plugin["gpu-resource-name"]
    tolerations = [t for item in plugin["resource-tolerations"] for t in item.get(resource, [])]
    if accelerator.interruptible:
        tolerations += plugin.get("interruptible-tolerations", [])
    device_label = plugin["gpu-device-node-label"]
    partition_label = plugin.get("gpu-partition-size-node-label", FLYTE_DEFAULT_PARTITION_LABEL)
    expressions: list[dict[str, Any]] = [
        {"key": device_label, "operator": "In", "values": [accelerator.device]}
    ]
    tolerations.append(
        {
            "key": device_label,
            "operator": "Equal",
            "value": accelerator.device,
            "effect": "NoSchedule",
        }
    )
    if accelerator.partition:
        expressions.append(
            {"key": partition_label, "operator": "In", "values": [accelerator.partition]}
        )
        tolerations.append(
            {
                "key": partition_label,
                "operator": "Equal",
                "value": accelerator.partition,
                "effect": "NoSchedule",
            }
        )
    elif accelerator.unpartitioned:
        expressions.append({"key": partition_label, "operator": "DoesNotExist"})
    prefix = "" if accelerator.interruptible else "non-"
    requirement = plugin.get(f"{prefix}interruptible-node-selector-requirement")
    if requirement:
        expressions.append(dict(requirement))
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": expressions}]
                }
            }
        },
        "tolerations": tolerations,
        "containers": [{"name": "task", "resources": {"limits": {resource: 1}}}],
    }


def _node(spec: PoolSpec) -> NodeTemplate:
    """A node of the pool as the scheduler simulator sees it (labels, taints, the GPU)."""
    choices = dict(spec.label_choices)
    return NodeTemplate(
        pool=spec.name,
        labels={k: v for k, v in spec.node_labels.items() if k not in choices},
        label_choices=choices,
        taints=tuple(NodeTaint(t.key, t.value, t.effect) for t in spec.node_taints),
        allocatable={spec.gpu_resource: spec.gpus_allocatable},
    )


def reached_pools(
    plugin: Mapping[str, Any], accelerator: FlyteAccelerator, pools: Sequence[PoolSpec]
) -> list[str]:
    """The pools whose nodes would take the task's pod."""
    pod = task_pod(plugin, accelerator)
    return [
        spec.name
        for spec in pools
        if not evaluate(
            pod, _node(spec), extended_resource_toleration=spec.extended_resource_toleration
        )
    ]


def _tolerations(pools: Sequence[PoolSpec], keep: Callable[[Taint], bool]) -> list[dict[str, str]]:
    """Tolerations for the pools' taints that `keep` selects, each once, in pool order."""
    found: list[dict[str, str]] = []
    for spec in pools:
        for taint in spec.node_taints:
            if keep(taint) and taint.toleration() not in found:
                found.append(taint.toleration())
    return found


def _indistinguishable(
    plugin: Mapping[str, Any], accelerators: Sequence[FlyteAccelerator], pools: Sequence[PoolSpec]
) -> list[str]:
    """Notes on pools a task for another pool can land on (the scheduler simulator decides)."""
    reach = {a.pool: reached_pools(plugin, a, pools) for a in accelerators}
    notes: list[str] = []
    seen: set[frozenset[str]] = set()
    why = "a task names only device, partition size and interruptible"
    for pool, names in reach.items():
        if pool not in names:
            raise ConsumerError(f"flyte: no task can reach pool {pool}")
        group = frozenset(names)
        if len(group) < 2 or group in seen:
            continue
        seen.add(group)
        if all(set(reach[name]) == group for name in group):
            members = [name for name in reach if name in group]
            notes.append(
                f"pools {and_list(members)} stay indistinguishable to Flyte: a task for one of "
                f"them may land on another ({why}); pick one with a pod_template whose "
                "nodeSelector names the pool"
            )
        else:
            others = [name for name in names if name != pool]
            notes.append(
                f"a task for pool {pool} may also land on {and_list(others)} ({why}); pick one "
                "with a pod_template whose nodeSelector names the pool"
            )
    return notes


def flyte_settings(config: StackConfig, pools: Sequence[PoolSpec]) -> FlyteSettings:
    """propeller's k8s plugin keys for these pools, and each pool's task accelerator."""
    resources = sorted({s.gpu_resource for s in pools})
    if len(resources) != 1:
        raise ConsumerError(f"flyte: pools expose different GPU resources {resources}")
    device_label = _device_label(pools)
    partition_label = _partition_label(pools)
    notes: list[str] = []

    # Spot: the label (and taints) every marked Spot pool has and no other pool has.
    marks = {s.name: spot_marks(config, s) for s in pools if s.spot}
    marked = [name for name, (labels, taints) in marks.items() if labels or taints]
    common = set.intersection(*(set(marks[n][0].items()) for n in marked)) if marked else set()
    spot_label = min(
        (
            (key, value)
            for key, value in common
            if not any(_carries(s, key, value) for s in pools if s.name not in marked)
        ),
        default=None,
    )
    spot_taints = frozenset(t for name in marked for t in marks[name][1])
    if spot_label:
        key, value = spot_label
        for spec in pools:
            if spec.name in marked and spec.label_choices.get(key):
                notes.append(
                    f"pool {spec.name} falls back to on-demand, so its nodes are Spot or not, "
                    f"each labelled {key}: interruptible tasks wait for Spot nodes ({key}={value}) "
                    "and tasks without interruptible=True take its on-demand nodes"
                )
    for name in [n for n in marks if n not in marked]:
        notes.append(
            f"pool {name} is Spot, but its nodes carry no label or taint that marks them Spot, "
            "so Flyte's interruptible settings cannot steer tasks to it or away from it"
        )

    def partition(spec: PoolSpec) -> str | None:
        return spec.node_labels.get(partition_label) if partition_label else None

    partitioned_devices = {s.node_labels[device_label] for s in pools if partition(s)}
    accelerators = []
    for spec in pools:
        device = spec.node_labels[device_label]
        size = partition(spec)
        accelerators.append(
            FlyteAccelerator(
                spec.name,
                device,
                partition=size,
                # Keeps whole-GPU tasks off MIG nodes of the same model (DoesNotExist).
                unpartitioned=size is None and device in partitioned_devices,
                interruptible=spec.name in marked,
            )
        )
        if spec.mig_partition_size and not size:
            notes.append(
                f"pool {spec.name} is MIG-partitioned ({spec.mig_partition_size}) but no node "
                "label carries the bare partition size on this cloud: request it by device "
                "only. To use Flyte's partition selector, give every MIG pool one label holding "
                f"its size (e.g. `labels: {{gpu-partition-size: {spec.mig_partition_size}}}` "
                f"on pool {spec.name}) and run this again"
            )

    plugin: dict[str, Any] = {
        "gpu-resource-name": resources[0],
        "gpu-device-node-label": device_label,
    }
    if partition_label:
        plugin["gpu-partition-size-node-label"] = partition_label
    # The docs write this map as a list of one-key maps; propeller merges them.
    plugin["resource-tolerations"] = [
        {resources[0]: _tolerations(pools, lambda t: t not in spot_taints)}
    ]
    if spot_taints:
        plugin["interruptible-tolerations"] = _tolerations(pools, lambda t: t in spot_taints)
    if spot_label:
        key, value = spot_label
        plugin["interruptible-node-selector-requirement"] = {
            "key": key,
            "operator": "In",
            "values": [value],
        }
        plugin["non-interruptible-node-selector-requirement"] = {
            "key": key,
            "operator": "NotIn",
            "values": [value],
        }

    annotations = keep_running(pools)
    if annotations:
        # Every task pod: a running task is not evicted to consolidate nodes (flyteplugins
        # k8s plugin config `default-annotations`).
        plugin["default-annotations"] = annotations
    notes += _indistinguishable(plugin, accelerators, pools)
    return FlyteSettings(plugin, tuple(accelerators), tuple(notes))


def render_flyte(request: Request) -> str:
    settings = flyte_settings(request.config, request.pools)
    plugin = settings.config
    header = [
        f"Flyte propeller k8s plugin settings for gpufleet stack {request.stack} "
        f"({request.cloud}).",
        "Paste under `configuration.inline` (flyte-binary chart) or `configmap.k8s` "
        "(flyte-core chart).",
        "How propeller applies them: " + FLYTE_GPU_DOC,
        "Keys and defaults: " + FLYTE_CONFIG_DOC,
        "(checked against flyteplugins v1.16.8: " + FLYTE_CONFIG_SOURCE + ")",
        "Every GPU task gets the resource-tolerations below; the device (and partition) node",
        "affinity Flyte adds from the task's accelerator picks the pool.",
    ]
    if "gpu-partition-size-node-label" not in plugin:
        header.append(
            "gpu-partition-size-node-label stays at Flyte's default: on this cloud no node label "
            "holds a bare MIG size."
        )
    if "interruptible-node-selector-requirement" in plugin:
        requirement = plugin["interruptible-node-selector-requirement"]
        spot = f"{requirement['key']}={requirement['values'][0]}"
        header += [
            "Spot pools take only tasks with interruptible=True: those get the",
            f"interruptible-tolerations and interruptible-node-selector-requirement ({spot});",
            "all other tasks get non-interruptible-node-selector-requirement (not on Spot).",
            "Both apply to every Flyte task, CPU-only ones too: an interruptible CPU task then",
            "needs a Spot CPU node (gpufleet's system pool is not Spot), so mark only the tasks",
            "for Spot GPU pools interruptible.",
        ]
    lines = ["Request a pool from a task (from flytekit.extras.accelerators import ...):"]
    for definition in sorted(
        {a.class_definition() for a in settings.accelerators if a.needs_class}
    ):
        lines.append(f"  {definition}")
    lines += [f"  {a.pool}: {a.task()}" for a in settings.accelerators]
    lines += [f"Note: {note}" for note in settings.notes]
    body = to_yaml({"plugins": {"k8s": plugin}})
    return f"{comment(*header)}\n{body}\n{comment(*lines)}"
