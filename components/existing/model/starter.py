"""A new stack for a cluster gpufleet did not create (`python -m components new NAME --cloud
existing`): GPU software on nodes that already exist, selected by a label they carry."""

from __future__ import annotations

from typing import Any

from components.model.catalog.gpus import GPU_MODELS
from components.model.cloud import Cloud
from components.model.starter import (
    DEFAULT_KUBERNETES_VERSION,
    Starter,
    StarterChoices,
    StarterError,
    stack_config,
    unused,
)

READS = frozenset({"gpu", "max_nodes", "kubernetes_version", "node_label", "context"})


def starter(choices: StarterChoices, cloud: Cloud) -> Starter:
    problems = unused(choices, READS, "existing")
    if not choices.gpu:
        problems.append(
            f"--gpu: required on --cloud existing: the GPU model of the nodes; one of "
            f"{', '.join(sorted(GPU_MODELS))}"
        )
    key, equals, value = (choices.node_label or "").partition("=")
    if not (key and equals and value):
        problems.append(
            "--node-label: required on --cloud existing as KEY=VALUE: a label the GPU nodes "
            "already carry and no other node does (`kubectl get nodes --show-labels`)"
        )
    if problems:
        raise StarterError(problems)
    assert choices.gpu is not None
    existing: dict[str, Any] = {"context": choices.context} if choices.context else {}
    cluster: dict[str, Any] = {
        "name": choices.name,
        "kubernetesVersion": choices.kubernetes_version or DEFAULT_KUBERNETES_VERSION,
        "existing": existing,
    }
    name = choices.gpu if cloud.pool_name_rule.accepts(choices.gpu) else "gpu"
    pool = {
        "name": name,
        "accelerator": choices.gpu,
        "gpusPerNode": 1,
        "maxNodes": choices.max_nodes,
        "labels": {key: value},
    }
    return Starter(stack_config("existing", cluster, [pool]))
