"""`python -m components consumers STACK --for TOOL`: ready-to-paste settings for GPU pools.

Each tool gets the pools' scheduling (node selector, tolerations, GPU resource) in the format
its own documentation gives; the doc page is cited next to each format. Every emitted setting
is what `fit` accepts for its pool (the tests convert each one back to a pod and check it).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from components.model.catalog import gpus
from components.model.pools import ACCELERATOR_LABEL, PoolSpec, resolve_pools
from components.tooling.commands import EXIT_BAD_INPUT, EXIT_OK, load_validated, select_gpu_pools

FIFTYONE_DOC = (
    "https://github.com/voxel51/fiftyone-teams-app-deploy/blob/main/helm/docs/"
    "configuring-gpu-workloads.md"
)
FIFTYONE_MERGE_DOC = (
    "https://github.com/voxel51/fiftyone-teams-app-deploy/blob/main/helm/docs/"
    "configuring-delegated-operators.md"
)
FLYTE_GPU_DOC = (
    "https://docs.flyte.org/en/latest/user_guide/productionizing/configuring_access_to_gpus.html"
)
FLYTE_CONFIG_DOC = (
    "https://docs.flyte.org/en/latest/deployment/configuration/generated/flytepropeller_config.html"
)
KUBESPAWNER_DOC = (
    "https://jupyterhub-kubespawner.readthedocs.io/en/latest/spawner.html"
    "#kubespawner.KubeSpawner.profile_list"
)
K8S_GPU_DOC = "https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/"


class ConsumerError(ValueError):
    """The pools cannot be expressed in the tool's settings; the message says why."""


# --------------------------------------------------------------------------- shared pieces


def gpu_request(spec: PoolSpec) -> dict[str, int]:
    """The GPU resource a workload on this pool asks for (what `podScheduling` puts in limits)."""
    limits: dict[str, int] = spec.pod_scheduling["resources"].get("limits", {})
    return dict(limits)


def describe(spec: PoolSpec) -> str:
    """One line for humans: GPU model, share per pod, machine, Spot, scale-to-zero."""
    model = gpus.GPU_MODELS.get(spec.accelerator)
    name = model.description if model else spec.accelerator
    per_node = spec.allocatable_per_node.get(spec.gpu_resource, 0)
    if spec.sharing_strategy:
        share = f"1 of {per_node} {spec.gpu_resource} per node ({spec.sharing_strategy})"
    elif spec.mig_partition_size:
        share = f"1 of {per_node} MIG {spec.mig_partition_size} slices per node"
    else:
        share = f"1 of {per_node} {spec.gpu_resource} per node"
    parts = [name, share]
    if spec.machine_types:
        parts.append("/".join(spec.machine_types))
    if spec.spot:
        parts.append("Spot")
    if spec.min_nodes == 0:
        parts.append("scales from zero (the first pod waits for a node)")
    return ", ".join(parts)


def _camel(*words: str) -> str:
    parts = [p for word in words for p in word.replace("_", "-").split("-") if p]
    return parts[0].lower() + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def _yaml(document: Any) -> str:
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False).rstrip("\n")


def _comment(*lines: str) -> str:
    return "\n".join(f"# {line}" if line else "#" for line in lines)


# --------------------------------------------------------------------------- pod


def pod_fragment(spec: PoolSpec) -> dict[str, Any]:
    """A pod spec fragment placing one container on the pool."""
    scheduling = spec.pod_scheduling
    return {
        "nodeSelector": dict(scheduling["nodeSelector"]),
        "tolerations": list(scheduling["tolerations"]),
        "containers": [{"name": "main", "resources": scheduling["resources"]}],
    }


def render_pod(stack: str, cloud: str, pools: Sequence[PoolSpec]) -> str:
    documents = []
    for spec in pools:
        header = _comment(
            f"gpufleet stack {stack} ({cloud}), GPU pool {spec.name}: {describe(spec)}",
            "Merge into a pod spec (`spec:` of a Pod, `spec.template.spec:` of a Deployment "
            "or Job);",
            "`resources` belongs to the container that uses the GPU. Format: " + K8S_GPU_DOC,
        )
        documents.append(f"{header}\n{_yaml(pod_fragment(spec))}")
    return "\n---\n".join(documents)


# --------------------------------------------------------------------------- FiftyOne


def fiftyone_entry(spec: PoolSpec) -> dict[str, Any]:
    """One delegated-operator deployment or job template (keys as in the chart's GPU guide)."""
    scheduling = spec.pod_scheduling
    request = gpu_request(spec)
    entry: dict[str, Any] = {
        "nodeSelector": dict(scheduling["nodeSelector"]),
        "tolerations": list(scheduling["tolerations"]),
        "resources": {"limits": dict(request), "requests": dict(request)},
    }
    if spec.container_env:
        entry["env"] = dict(spec.container_env)
    return entry


def fiftyone_key(spec: PoolSpec) -> str:
    return _camel("gpu", spec.name)


def fiftyone_values(pools: Sequence[PoolSpec]) -> dict[str, Any]:
    deployments = {fiftyone_key(s): {"replicaCount": 1, **fiftyone_entry(s)} for s in pools}
    jobs = {fiftyone_key(s): fiftyone_entry(s) for s in pools}
    return {
        "delegatedOperatorDeployments": {"deployments": deployments},
        "delegatedOperatorJobTemplates": {"jobs": jobs},
    }


def render_fiftyone(stack: str, cloud: str, pools: Sequence[PoolSpec]) -> str:
    header = _comment(
        f"FiftyOne Enterprise Helm values (fiftyone-teams-app chart) for gpufleet stack {stack} "
        f"({cloud}).",
        "Format: " + FIFTYONE_DOC,
        *(f"  {fiftyone_key(s)}: pool {s.name}: {describe(s)}" for s in pools),
        "Each deployment replica keeps one GPU node running (and billed) around the clock; the",
        "job templates start a GPU pod only while an operation runs, so the pool can stay at zero.",
        "A `template:` next to `deployments:`/`jobs:` merges maps (nodeSelector, resources) into",
        "these entries and is overridden by their lists (tolerations): " + FIFTYONE_MERGE_DOC,
    )
    return f"{header}\n{_yaml(fiftyone_values(pools))}"


# --------------------------------------------------------------------------- Flyte

# flytekit.extras.accelerators constants whose device string matches GKE's label values.
FLYTEKIT_MIG_CONSTANTS: Mapping[str, str] = {
    "nvidia-tesla-a100": "A100",
    "nvidia-a100-80gb": "A100_80GB",
}


@dataclass(frozen=True)
class FlyteAccelerator:
    """What a task asks for to land on one pool: device, and partition size / unpartitioned."""

    pool: str
    device: str
    partition: str | None = None
    unpartitioned: bool = False

    def python(self) -> str:
        """The flytekit `accelerator=` argument."""
        constant = FLYTEKIT_MIG_CONSTANTS.get(self.device)
        if self.partition:
            if constant:
                return f"{constant}.partition_{self.partition.replace('.', '_')}"
            return f'MultiInstanceGPUAccelerator subclass with device = "{self.device}", .partitioned("{self.partition}")'
        if self.unpartitioned:
            if constant:
                return f"{constant}.unpartitioned"
            return f'MultiInstanceGPUAccelerator subclass with device = "{self.device}", .unpartitioned'
        return f'GPUAccelerator("{self.device}")'


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


def flyte_settings(pools: Sequence[PoolSpec]) -> FlyteSettings:
    """propeller's k8s plugin keys for these pools, and each pool's task accelerator."""
    resources = sorted({s.gpu_resource for s in pools})
    if len(resources) != 1:
        raise ConsumerError(f"flyte: pools expose different GPU resources {resources}")
    device_label = _device_label(pools)
    # Only GKE labels nodes with the bare MIG partition size that Flyte matches.
    partition_label = pools[0].partition_label
    notes: list[str] = []

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
            )
        )
        if spec.mig_partition_size and not size:
            siblings = [
                s.name for s in pools if s is not spec and s.node_labels[device_label] == device
            ]
            also = f"; that also matches pool(s) {', '.join(siblings)}" if siblings else ""
            notes.append(
                f"pool {spec.name} is MIG-partitioned ({spec.mig_partition_size}) but no node "
                f"label carries the bare partition size on this cloud: request it by device "
                f"only{also}"
            )
    tolerations: list[dict[str, str]] = []
    for spec in pools:
        for toleration in spec.pod_scheduling["tolerations"]:
            if toleration not in tolerations:
                tolerations.append(toleration)
    config: dict[str, Any] = {
        "gpu-resource-name": resources[0],
        "gpu-device-node-label": device_label,
    }
    if partition_label:
        config["gpu-partition-size-node-label"] = partition_label
    # The docs write this map as a list of one-key maps; propeller merges them.
    config["resource-tolerations"] = [{resources[0]: tolerations}]
    return FlyteSettings(config, tuple(accelerators), tuple(notes))


def render_flyte(stack: str, cloud: str, pools: Sequence[PoolSpec]) -> str:
    settings = flyte_settings(pools)
    header = _comment(
        f"Flyte propeller k8s plugin settings for gpufleet stack {stack} ({cloud}).",
        "Paste under `configuration.inline` (flyte-binary chart) or `configmap.k8s` "
        "(flyte-core chart).",
        "How propeller applies them: " + FLYTE_GPU_DOC,
        "Keys and defaults: " + FLYTE_CONFIG_DOC,
        "Every GPU task gets all tolerations below; the device (and partition) node affinity",
        "Flyte adds from the task's accelerator picks the pool.",
    )
    if "gpu-partition-size-node-label" not in settings.config:
        header += "\n" + _comment(
            "gpu-partition-size-node-label stays at Flyte's default: on this cloud no node label "
            "holds a bare MIG size."
        )
    tasks = _comment(
        "Request a pool from a task (from flytekit.extras.accelerators import ...):",
        *(
            f'  {a.pool}: @task(limits=Resources(gpu="1"), accelerator={a.python()})'
            for a in settings.accelerators
        ),
        *(f"Note: {note}" for note in settings.notes),
    )
    body = _yaml({"plugins": {"k8s": settings.config}})
    return f"{header}\n{body}\n{tasks}"


# --------------------------------------------------------------------------- JupyterHub


def jupyterhub_profile(spec: PoolSpec) -> dict[str, Any]:
    """One KubeSpawner profile; override keys are KubeSpawner traits."""
    scheduling = spec.pod_scheduling
    override: dict[str, Any] = {
        # KubeSpawner puts these into the notebook container's resources.limits.
        "extra_resource_limits": {name: str(count) for name, count in gpu_request(spec).items()},
        "node_selector": dict(scheduling["nodeSelector"]),
        "tolerations": list(scheduling["tolerations"]),
    }
    if spec.container_env:
        override["environment"] = dict(spec.container_env)
    model = gpus.GPU_MODELS.get(spec.accelerator)
    return {
        "display_name": f"GPU: {model.description if model else spec.accelerator} ({spec.name})",
        "slug": f"gpu-{spec.name}",
        "description": describe(spec),
        "kubespawner_override": override,
    }


def render_jupyterhub(stack: str, cloud: str, pools: Sequence[PoolSpec]) -> str:
    header = _comment(
        f"JupyterHub KubeSpawner profiles for gpufleet stack {stack} ({cloud}).",
        "Format: " + KUBESPAWNER_DOC,
        "Put this in jupyterhub_config.py (Zero to JupyterHub: under hub.extraConfig, or the same",
        "entries as YAML under singleuser.profileList). Add your CPU profiles to the list.",
    )
    return f"{header}\nc.KubeSpawner.profile_list = {python_literal([jupyterhub_profile(s) for s in pools])}"


def python_literal(value: Any) -> str:
    """Indented Python source for plain data (str, int, list, dict): JSON layout is valid Python
    as long as no true/false/null appears, which the round trip checks."""
    text = json.dumps(value, indent=4, ensure_ascii=False)
    if ast.literal_eval(text) != value:
        raise ConsumerError(f"cannot write {value!r} as a Python literal")
    return text


# --------------------------------------------------------------------------- command

RENDERERS: Mapping[str, Callable[[str, str, Sequence[PoolSpec]], str]] = {
    "pod": render_pod,
    "fiftyone": render_fiftyone,
    "flyte": render_flyte,
    "jupyterhub": render_jupyterhub,
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m components consumers",
        description="Print ready-to-paste settings that place workloads on STACK's GPU pools: a "
        "pod spec fragment (pod), FiftyOne Enterprise Helm values for delegated operators "
        "(fiftyone), Flyte propeller k8s plugin settings (flyte), or JupyterHub KubeSpawner "
        "profiles (jupyterhub).",
    )
    parser.add_argument(
        "stack", metavar="STACK", help="stack name in stacks/ or path to a stack YAML"
    )
    parser.add_argument(
        "--for", dest="tool", required=True, choices=sorted(RENDERERS), help="the tool"
    )
    parser.add_argument(
        "--pool",
        action="append",
        metavar="NAME",
        help="only this GPU pool (repeatable); default: every GPU pool",
    )
    return parser


def main(argv: Sequence[str]) -> int:
    options = _parser().parse_args(list(argv))
    stack, config = load_validated(options.stack)
    pools = select_gpu_pools(resolve_pools(config), options.pool, stack.name)
    try:
        print(RENDERERS[options.tool](stack.name, config.cloud, pools))
    except ConsumerError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return EXIT_OK
