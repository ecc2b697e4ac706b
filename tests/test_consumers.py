"""`python -m components consumers`: every emitted setting, converted back to the pod the tool
would create, fits its pool and does not fit the CPU pool (checked with the `fit` simulator).

The conversions are written here from the tools' own source, independently of the module:
FiftyOne Enterprise chart 2.22.1 (templates/delegated-operator-job-configmap.yaml,
delegated-operator-instance-deployment.yaml, values.yaml), flyteplugins v1.16.8
(flytek8s/pod_helper.go, k8s_resource_adds.go), Zero to JupyterHub 4.4.0
(jupyterhub/files/hub/jupyterhub_config.py) with KubeSpawner 7.1.0 (spawner.py
`_apply_overrides`, utils.py `recursive_update`, objects.py `make_pod`).
"""

from __future__ import annotations

import copy
import dataclasses
import types
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from components.model.config import StackConfig, parse_config
from components.model.pools import PoolSpec, resolve_pools
from components.model.registry import cloud_of
from components.tooling.capacity_fit import Workload
from components.tooling.cli import main
from components.tooling.consumers.fiftyone import fiftyone_key, fiftyone_share
from components.tooling.consumers.flyte import FlyteAccelerator, flyte_settings
from components.tooling.consumers.sizing import (
    GIB,
    MIB,
    cpu_reserve_millis,
    memory_reserve_bytes,
    pod_share,
)
from components.tooling.fit import fit_check
from components.tooling.pool_views import PoolCheck, needs_plan, pool_checks
from components.tooling.stacks import load_stack
from tests.conftest import every_stack, over_every_stack, plan_of

FIXTURES = Path(__file__).parent / "fixtures" / "fit"
OWN_FIXTURES = Path(__file__).parent / "fixtures" / "consumers"
# Each tool with the options it is tested with.
TOOLS = {
    "pod": (),
    "fiftyone": (),
    "fiftyone --always-on": ("--always-on",),
    "flyte": (),
    "jupyterhub": (),
    "jupyterhub --format python": ("--format", "python"),
}


def emitted(capsys: pytest.CaptureFixture[str], stack: str, tool: str, *extra: str) -> str:
    code = main(["consumers", stack, "--for", tool, *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def container(resources: dict[str, Any], name: str = "main") -> dict[str, Any]:
    return {"name": name, "image": "example.com/app:1", "resources": resources}


def config_of(stack: str) -> StackConfig:
    return parse_config(load_stack(stack).gpufleet)


# --------------------------------------------------------------------------- back to pods


def pods_from_pod(text: str, pools: list[str]) -> dict[str, dict[str, Any]]:
    documents = list(yaml.safe_load_all(text))
    assert len(documents) == len(pools)
    return dict(zip(pools, documents, strict=True))


# FiftyOne chart 2.22.1 values.yaml: telemetry.enabled true, telemetry.sidecar.resources.
TELEMETRY_SIDECAR = {
    "requests": {"cpu": "200m", "memory": "512Mi"},
    "limits": {"cpu": "200m", "memory": "512Mi"},
}


def fiftyone_pod(entry: dict[str, Any], section: str) -> dict[str, Any]:
    """The executor pod the chart renders from one entry: a Job template's telemetry sidecar is
    a native sidecar (init container, restartPolicy Always), a Deployment's a second container."""
    pod: dict[str, Any] = {
        "nodeSelector": entry["nodeSelector"],
        "tolerations": entry["tolerations"],
        "containers": [container(entry["resources"], "executor")],
    }
    sidecar = container(TELEMETRY_SIDECAR, "telemetry-sidecar")
    if section == "jobs":
        pod["initContainers"] = [{**sidecar, "restartPolicy": "Always"}]
    else:
        pod["containers"].append(sidecar)
    return pod


def kept_for_the_queue(pools: list[PoolSpec]) -> list[PoolSpec]:
    """Queued pools a tool's unlabelled pods must not take: GKE's, whose nodes come only through
    ProvisioningRequests, and those with a taint no other pool has, which keeps pods Kueue did
    not admit off them (AKS's gpufleet.io/queued)."""

    def own_taint(spec: PoolSpec) -> bool:
        others = {t for o in pools if o.name != spec.name for t in o.node_taints}
        return bool(set(spec.node_taints) - others)

    return [
        spec
        for spec in pools
        if spec.queue is not None and (spec.queue.only_requested or own_taint(spec))
    ]


def tool_pools(config: StackConfig) -> list[PoolSpec]:
    """The pools a tool's settings cover: all but the queued ones kept for the queue."""
    every_pool = resolve_pools(config)
    left = kept_for_the_queue(every_pool)
    return [spec for spec in every_pool if spec not in left]


def pods_from_fiftyone(text: str, config: StackConfig) -> dict[str, dict[str, Any]]:
    values = yaml.safe_load(text)
    sections = {
        "delegatedOperatorJobTemplates": "jobs",
        "delegatedOperatorDeployments": "deployments",
    }
    pods = {}
    for spec in tool_pools(config):
        for values_key, section in sections.items():
            if values_key in values:
                entry = values[values_key][section][fiftyone_key(spec)]
                pods[f"{spec.name}/{section}"] = fiftyone_pod(entry, section)
    return pods


def flyte_pod(config: dict[str, Any], accelerator: FlyteAccelerator) -> dict[str, Any]:
    """The pod flytepropeller builds for `@task(limits=Resources(gpu="1"), accelerator=...,
    interruptible=...)`: GetPodTolerations (resource tolerations, then interruptible ones),
    ApplyInterruptibleNodeAffinity (the (non-)interruptible requirement) and
    ApplyGPUNodeSelectors (device and partition affinity and tolerations)."""
    resource = config["gpu-resource-name"]
    tolerations: list[dict[str, str]] = []
    for item in config["resource-tolerations"]:  # the docs' list-of-maps form
        tolerations += item.get(resource, [])
    if accelerator.interruptible:
        tolerations += config.get("interruptible-tolerations", [])
    device_label = config["gpu-device-node-label"]
    partition_label = config.get(
        "gpu-partition-size-node-label", "k8s.amazonaws.com/gpu-partition-size"
    )
    expressions = [{"key": device_label, "operator": "In", "values": [accelerator.device]}]
    key = ("" if accelerator.interruptible else "non-") + "interruptible-node-selector-requirement"
    if key in config:
        expressions.append(config[key])
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
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": expressions}]
                }
            }
        },
        "tolerations": tolerations,
        "containers": [container({"limits": {resource: 1}})],
    }


def pods_from_flyte(text: str, config: StackConfig) -> dict[str, dict[str, Any]]:
    settings = flyte_settings(config, tool_pools(config))
    plugin = yaml.safe_load(text)["plugins"]["k8s"]
    assert plugin == settings.config
    for accelerator in settings.accelerators:
        assert f"#   {accelerator.pool}: {accelerator.task()}" in text
        assert ("interruptible=True" in accelerator.task()) == accelerator.interruptible
    return {a.pool: flyte_pod(plugin, a) for a in settings.accelerators}


# KubeSpawner 7.1.0 traits a profile may override here (spawner.py), and their kinds.
KUBESPAWNER_TRAITS = {
    "extra_resource_limits": dict,
    "node_selector": dict,
    "tolerations": list,
    "environment": dict,
    "node_affinity_required": list,
    "extra_pod_config": dict,
    # Pod metadata annotations (a fabric pool's multi-network annotations on GKE).
    "extra_annotations": dict,
}
NODE_PURPOSE_TERM = {
    "matchExpressions": [
        {"key": "hub.jupyter.org/node-purpose", "operator": "In", "values": ["user"]}
    ]
}


def recursive_update(target: dict[str, Any], new: dict[str, Any]) -> None:
    """kubespawner.utils.recursive_update: dicts merged key by key, None deletes a key."""
    for key, value in new.items():
        if isinstance(value, dict):
            recursive_update(target.setdefault(key, {}), value)
        elif value is None:
            target.pop(key, None)
        else:
            target[key] = value


def kubespawner_pod(
    profile: dict[str, Any],
    *,
    match_node_purpose: str = "prefer",
    node_selector: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The notebook pod for a profile under Zero to JupyterHub 4.4.0 with these chart settings
    (scheduling.userPods.nodeAffinity.matchNodePurpose, singleuser.nodeSelector; other values
    at the chart's defaults)."""
    # jupyterhub_config.py: singleuser.* -> c.KubeSpawner.*, the node-purpose term, the
    # userPods tolerations; values.yaml: singleuser.memory.guarantee 1G.
    traits: dict[str, Any] = {
        "node_selector": dict(node_selector or {}),
        "node_affinity_required": [],
        "node_affinity_preferred": [],
        "tolerations": [
            {"key": "hub.jupyter.org/dedicated", "operator": "Equal", "value": "user"}
            | {"effect": "NoSchedule"}
        ],
        "extra_resource_limits": {},
        "environment": {},
        "extra_pod_config": {},
        "extra_annotations": {},
    }
    if match_node_purpose == "require":
        traits["node_affinity_required"].append(copy.deepcopy(NODE_PURPOSE_TERM))
    elif match_node_purpose == "prefer":
        traits["node_affinity_preferred"].append({"weight": 100, "preference": NODE_PURPOSE_TERM})
    # KubeSpawner._apply_overrides: a dict merges into a dict setting, anything else replaces.
    for key, value in profile.get("kubespawner_override", {}).items():
        assert isinstance(value, KUBESPAWNER_TRAITS[key]), (key, value)
        if isinstance(value, dict) and isinstance(traits[key], dict):
            recursive_update(traits[key], copy.deepcopy(value))
        else:
            traits[key] = copy.deepcopy(value)
    # make_pod: selector, affinity, tolerations, the notebook container; extra_pod_config last,
    # each field it names replacing the pod's.
    resources = {"limits": traits["extra_resource_limits"], "requests": {"memory": "1G"}}
    pod: dict[str, Any] = {
        "nodeSelector": traits["node_selector"],
        "tolerations": traits["tolerations"],
        "containers": [container(resources, "notebook")],
    }
    node_affinity: dict[str, Any] = {}
    if traits["node_affinity_required"]:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": traits["node_affinity_required"]
        }
    if traits["node_affinity_preferred"]:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = traits[
            "node_affinity_preferred"
        ]
    if node_affinity:
        pod["affinity"] = {"nodeAffinity": node_affinity}
    pod.update(traits["extra_pod_config"])
    return pod


# The two Zero to JupyterHub settings that keep GPU profiles off GPU nodes unless handled.
HOSTILE_Z2JH = {"match_node_purpose": "require", "node_selector": {"node-role": "notebooks"}}


def jupyterhub_profiles(text: str) -> list[dict[str, Any]]:
    if text.lstrip().startswith("#") and "c.KubeSpawner.profile_list" in text:
        c = types.SimpleNamespace(KubeSpawner=types.SimpleNamespace())
        exec(compile(text, "jupyterhub_config.py", "exec"), {"c": c})  # our own output
        profiles: list[dict[str, Any]] = c.KubeSpawner.profile_list
        return profiles
    return list(yaml.safe_load(text)["singleuser"]["profileList"])


def pods_from_jupyterhub(text: str) -> dict[str, dict[str, Any]]:
    return {
        p["slug"].removeprefix("gpu-"): kubespawner_pod(p, **HOSTILE_Z2JH)
        for p in jupyterhub_profiles(text)
    }


# --------------------------------------------------------------------------- every stack in stacks/


@pytest.fixture(scope="module")
def stacks() -> dict[str, tuple[StackConfig, dict[str, PoolCheck]]]:
    found = {}
    for stack in every_stack():
        config = config_of(stack)
        resources = plan_of(stack).resources if needs_plan(config) else None
        found[stack] = (config, {c.name: c for c in pool_checks(config, resources)})
    return found


@pytest.mark.parametrize("tool", TOOLS)
@over_every_stack
def test_every_emitted_setting_fits_its_pool_and_not_the_cpu_pool(
    capsys: pytest.CaptureFixture[str],
    stacks: dict[str, tuple[StackConfig, dict[str, PoolCheck]]],
    stack: str,
    tool: str,
) -> None:
    config, checks = stacks[stack]
    text = emitted(capsys, stack, tool.split()[0], *TOOLS[tool])
    specs = {spec.name: spec for spec in resolve_pools(config)}
    covered = specs.values() if tool == "pod" else tool_pools(config)
    pools = [spec.name for spec in covered]
    pods = {
        "pod": lambda: pods_from_pod(text, pools),
        "fiftyone": lambda: pods_from_fiftyone(text, config),
        "flyte": lambda: pods_from_flyte(text, config),
        "jupyterhub": lambda: pods_from_jupyterhub(text),
    }[tool.split()[0]]()
    assert {name.split("/")[0] for name in pods} == set(pools)
    for name, pod in pods.items():
        pool = name.split("/")[0]
        queue = specs[pool].queue
        # A Job around the pod fragment carries the queue label its comment names.
        workload = Workload(labels=queue.label) if queue is not None and tool == "pod" else None
        verdict = fit_check(pod, checks[pool], workload)
        assert verdict.fits, (tool, name, verdict.reasons, pod)
        if "system" in checks:
            assert not fit_check(pod, checks["system"]).fits, (tool, name)
        if tool != "pod":
            # No tool's pod gets onto a queued pool outside its queue: Flyte's tolerations go
            # to every GPU task, so one queued pool's taint there let every task land on it.
            # (`fit` of a pod without the queue label: AKS lets it bypass the queue.) A queued
            # pool with no taint of its own (an adopted cluster's) is covered, with a warning.
            guarded = [s.name for s in kept_for_the_queue(list(specs.values()))]
            assert not [q for q in guarded if fit_check(pod, checks[q]).fits], (tool, name)
        if tool == "flyte":
            # A task that can land on another pool is named in a note with it.
            for other in pools:
                if other != pool and fit_check(pod, checks[other]).fits:
                    notes = [line for line in text.splitlines() if line.startswith("# Note:")]
                    assert any(pool in n and other in n for n in notes), (name, other, text)


def test_pod_fragments_pass_the_fit_command_end_to_end(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    stack = str(FIXTURES / "stacks" / "gke.yaml")
    manifest = tmp_path / "pods.yaml"
    manifest.write_text(emitted(capsys, stack, "pod"))
    assert main(["fit", stack, str(manifest), "--json"]) == 0
    document = yaml.safe_load(capsys.readouterr().out)
    fitting = [[p["pool"] for p in t["pools"] if p["fits"]] for t in document["templates"]]
    assert fitting == [["l4-shared"], ["t4"], ["a100-mig"], ["h100"]]


# --------------------------------------------------------------------------- pod


def test_pod_fragment_names_the_pool_and_the_kubernetes_doc(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = emitted(capsys, str(FIXTURES / "stacks" / "aks.yaml"), "pod", "--pool", "t4spot")
    assert text.startswith("# gpufleet stack aks (azure), GPU pool t4spot: NVIDIA T4")
    assert "https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/" in text
    (fragment,) = yaml.safe_load_all(text)
    assert fragment["nodeSelector"] == {"kubernetes.azure.com/agentpool": "t4spot"}
    assert {(t["key"], t["value"]) for t in fragment["tolerations"]} == {
        ("sku", "gpu"),
        ("kubernetes.azure.com/scalesetpriority", "spot"),
    }


# --------------------------------------------------------------------------- FiftyOne

# Keys of a delegated-operator entry this output uses, as the chart 2.22.1 values.yaml has them
# under delegatedOperatorJobTemplates.template / delegatedOperatorDeployments.template
# (podAnnotations: values.yaml lines 787 and 988 at tag fiftyone-teams-app-2.22.1).
FIFTYONE_ENTRY_KEYS = {"nodeSelector", "tolerations", "resources", "env", "podAnnotations"}


def test_fiftyone_defaults_to_on_demand_job_templates_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["consumers", "azure-a100-mig", "--for", "fiftyone"])
    text, err = capsys.readouterr()
    values = yaml.safe_load(text)
    assert set(values) == {"delegatedOperatorJobTemplates"}
    jobs = values["delegatedOperatorJobTemplates"]["jobs"]
    assert list(jobs) == ["gpuA100mig", "gpuA100spot", "gpuH100"]
    assert all(set(entry) <= FIFTYONE_ENTRY_KEYS for entry in jobs.values())
    assert "replicaCount" not in text and "--always-on adds them" in text
    # No cost warning without --always-on (the config's own warnings aside).
    config = parse_config(load_stack("azure-a100-mig").gpufleet)
    own = [f"warning: {w}" for w in config.warnings]
    assert [line for line in err.splitlines() if line not in own] == []


def test_fiftyone_always_on_is_explicit_and_names_what_keeps_running(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["consumers", "azure-a100-mig", "--for", "fiftyone", "--always-on"])
    text, err = capsys.readouterr()
    assert code == 0
    values = yaml.safe_load(text)
    deployments = values["delegatedOperatorDeployments"]["deployments"]
    jobs = values["delegatedOperatorJobTemplates"]["jobs"]
    assert list(deployments) == list(jobs)
    # replicaCount is explicit: the chart's deployment template defaults it to 3.
    assert {d["replicaCount"] for d in deployments.values()} == {1}
    assert all(set(d) <= {"replicaCount", *FIFTYONE_ENTRY_KEYS} for d in deployments.values())
    expected = (
        "gpuH100: one Standard_ND96isr_H100_v5 node of pool h100 (8 x NVIDIA H100 80 GB) "
        "running around the clock"
    )
    assert f"#   {expected}" in text  # in the values file's header
    assert f"warning:   {expected}" in err  # and on stderr, where it is seen
    assert "ALWAYS ON" in text


def test_fiftyone_values_follow_the_chart_gpu_guide(capsys: pytest.CaptureFixture[str]) -> None:
    text = emitted(capsys, str(FIXTURES / "stacks" / "gke.yaml"), "fiftyone", "--always-on")
    assert "configuring-gpu-workloads.md" in text and "configuring-delegated-operators.md" in text
    assert "fiftyone-teams-app-2.22.1" in text  # the docs of the chart version checked
    values = yaml.safe_load(text)
    deployments = values["delegatedOperatorDeployments"]["deployments"]
    jobs = values["delegatedOperatorJobTemplates"]["jobs"]
    assert list(deployments) == list(jobs) == ["gpuL4Shared", "gpuT4", "gpuA100Mig", "gpuH100"]
    for entry in (*deployments.values(), *jobs.values()):
        resources = entry["resources"]
        # Extended resources: requests must equal limits; the guide's examples set cpu and
        # memory limits equal to the requests too.
        assert resources["requests"] == resources["limits"]
        assert set(resources["requests"]) == {"cpu", "memory", "nvidia.com/gpu"}
        assert resources["requests"]["nvidia.com/gpu"] == 1
        assert entry["env"] == {"LD_LIBRARY_PATH": "/usr/local/nvidia/lib64"}  # GKE's driver path
    aks = yaml.safe_load(emitted(capsys, str(FIXTURES / "stacks" / "aks.yaml"), "fiftyone"))
    assert "env" not in aks["delegatedOperatorJobTemplates"]["jobs"]["gpuT4spot"]


def test_fiftyone_requests_are_a_gpu_share_of_the_node(capsys: pytest.CaptureFixture[str]) -> None:
    jobs = yaml.safe_load(emitted(capsys, "gcp-dev", "fiftyone"))["delegatedOperatorJobTemplates"]
    # g2-standard-8 (8 vCPU, 32 GiB) shared 4 ways, from GKE's allocatable less GKE's device
    # plugin (7860m; 32 GiB - 649 MiB kernel - 3.6 GiB kube-reserved - 100 MiB - 1.42 GiB
    # image streaming - 100Mi = 26815Mi): (7860m - 500m DaemonSets) / 4 - 200m sidecar =
    # 1640m -> 1600m; (26815Mi - 1 GiB) / 4 - 512 MiB = 5935 MiB -> 5888Mi (steps of 256 MiB).
    # n1-standard-8 (7860m, 24974Mi), one GPU: 7360m -> 7; 24974Mi - 1 GiB - 512 MiB = 22.9 GiB
    # -> 22Gi.
    assert jobs["jobs"]["gpuL4Spot"]["resources"]["requests"]["cpu"] == "1600m"
    assert jobs["jobs"]["gpuL4Spot"]["resources"]["requests"]["memory"] == "5888Mi"
    assert jobs["jobs"]["gpuT4"]["resources"]["requests"]["cpu"] == 7
    assert jobs["jobs"]["gpuT4"]["resources"]["requests"]["memory"] == "22Gi"


def test_the_reserve_is_the_largest_the_clouds_document() -> None:
    # AKS's kube-reserved CPU table (1, 2, 4, 8, 16, 32, 64 cores).
    assert [cpu_reserve_millis(c) for c in (1, 2, 4, 8, 16, 32, 64)] == [
        60,
        100,
        140,
        180,
        260,
        420,
        740,
    ]
    # GKE's memory tiers for 32 GiB (1 + 0.8 + 0.8 + 0.96 GiB) plus a 750 MiB eviction threshold.
    assert memory_reserve_bytes(32 * GIB) == int(3.56 * GIB) + 750 * MIB


@over_every_stack
def test_a_node_takes_one_fiftyone_pod_per_gpu_share(
    stacks: dict[str, tuple[StackConfig, dict[str, PoolCheck]]], stack: str
) -> None:
    """N executors (with their sidecars) of a pool whose nodes have N GPU shares fit on one
    node, also with the DaemonSet allowance running there (checked with `fit`)."""
    config, checks = stacks[stack]
    for spec in tool_pools(config):
        share = fiftyone_share(spec)
        if share is None:
            assert spec.vcpus == 0 and not spec.machine_types, spec.name  # unknown shape only
            continue
        amounts = {"cpu": f"{share.cpu_millis}m", "memory": str(share.memory_bytes)}
        executor = {"limits": {**amounts, "nvidia.com/gpu": 1}, "requests": amounts}
        pods = [container(executor, f"executor-{i}") for i in range(share.shares)] + [
            container(TELEMETRY_SIDECAR, f"sidecar-{i}") for i in range(share.shares)
        ]
        daemonsets = container({"requests": {"cpu": "500m", "memory": "1Gi"}}, "daemonsets")
        node = {
            "nodeSelector": spec.pod_scheduling["nodeSelector"],
            "tolerations": spec.pod_scheduling["tolerations"],
            "containers": [*pods, daemonsets],
        }
        verdict = fit_check(node, checks[spec.name])
        assert verdict.fits, (spec.name, verdict.reasons)


def test_fiftyone_sizes_from_allocatable_cpu_and_memory_when_known() -> None:
    (resolved, *_) = resolve_pools(config_of("gcp-dev"))  # l4-spot: 4 shares per node
    # Without the cloud's figures (an unknown machine): the machine minus the conservative reserve.
    spec = dataclasses.replace(resolved, allocatable_per_node=resolved.extended_resources)
    from_machine = fiftyone_share(spec)
    assert from_machine and (from_machine.cpu, from_machine.memory) == ("1600m", "6Gi")
    assert fiftyone_share(resolved).room.source == "allocatable cpu and memory"  # type: ignore[union-attr]
    known = dataclasses.replace(
        spec, allocatable_per_node={**spec.allocatable_per_node, "cpu": "7910m", "memory": "26.5Gi"}
    )
    share = fiftyone_share(known)
    # (7910m - 500m) / 4 - 200m = 1652m -> 1600m; (26.5 - 1) GiB / 4 - 512 MiB = 5.875 GiB,
    # under 8 GiB so in 256 MiB steps: 5888Mi.
    assert share and (share.cpu, share.memory) == ("1600m", "5888Mi")
    assert share.room.source == "allocatable cpu and memory"
    only_cpu = dataclasses.replace(
        spec, allocatable_per_node={**spec.allocatable_per_node, "cpu": "3"}
    )
    share = fiftyone_share(only_cpu)
    assert share and (share.cpu, share.memory) == ("400m", "6Gi")  # (3000 - 500) / 4 - 200
    tiny = dataclasses.replace(spec, allocatable_per_node={**spec.allocatable_per_node, "cpu": "1"})
    assert fiftyone_share(tiny) is None  # (1000 - 500) / 4 - 200 < 100m: not worth setting
    assert pod_share(tiny) is not None  # without the sidecar it is


def test_fiftyone_without_a_machine_shape_asks_only_for_the_gpu(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = emitted(capsys, "existing-dev", "fiftyone")
    jobs = yaml.safe_load(text)["delegatedOperatorJobTemplates"]["jobs"]
    assert jobs["gpuA10"]["resources"]["requests"] == {"nvidia.com/gpu": 1}
    assert "no cpu/memory set: this pool's machine shape is unknown" in text


# --------------------------------------------------------------------------- Flyte

# The `plugins.k8s` keys this output may set: json tags of K8sPluginConfig in flyteplugins
# v1.16.8 go/tasks/pluginmachinery/flytek8s/config/config.go.
FLYTE_K8S_KEYS = {
    "gpu-resource-name",
    "gpu-device-node-label",
    "gpu-partition-size-node-label",
    "resource-tolerations",
    "interruptible-tolerations",
    "interruptible-node-selector-requirement",
    "non-interruptible-node-selector-requirement",
    "default-annotations",
}


def flyte_pods_and_checks(
    capsys: pytest.CaptureFixture[str], stack: str
) -> tuple[str, dict[str, dict[str, Any]], dict[str, PoolCheck]]:
    text = emitted(capsys, stack, "flyte")
    config = config_of(stack)
    return text, pods_from_flyte(text, config), {c.name: c for c in pool_checks(config)}


def reached(pod: dict[str, Any], checks: dict[str, PoolCheck]) -> list[str]:
    return [name for name, check in checks.items() if fit_check(pod, check).fits]


@pytest.mark.parametrize(
    ("stack", "device_label", "partition_label"),
    [
        ("gke", "cloud.google.com/gke-accelerator", "cloud.google.com/gke-gpu-partition-size"),
        ("eks", "k8s.amazonaws.com/accelerator", None),
        ("aks", "gpufleet.io/accelerator", "gpufleet.io/gpu-partition-size"),
        ("existing", "gpu-type", None),
    ],
)
def test_flyte_device_and_partition_labels_per_cloud(
    capsys: pytest.CaptureFixture[str], stack: str, device_label: str, partition_label: str | None
) -> None:
    text = emitted(capsys, str(FIXTURES / "stacks" / f"{stack}.yaml"), "flyte")
    plugin = yaml.safe_load(text)["plugins"]["k8s"]
    assert set(plugin) <= FLYTE_K8S_KEYS
    assert plugin["gpu-resource-name"] == "nvidia.com/gpu"
    assert plugin["gpu-device-node-label"] == device_label
    assert plugin.get("gpu-partition-size-node-label") == partition_label
    assert list(plugin["resource-tolerations"][0]) == ["nvidia.com/gpu"]


def test_flyte_mig_and_whole_gpu_pools_of_one_model_stay_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stack = str(FIXTURES / "stacks" / "gke-a100-mixed.yaml")
    text, pods, checks = flyte_pods_and_checks(capsys, stack)
    assert "accelerator=A100.partition_2g_10gb" in text
    assert "accelerator=A100.unpartitioned" in text
    assert reached(pods["a100-mig"], checks) == ["a100-mig"]
    assert reached(pods["a100"], checks) == ["a100"]


def test_flyte_reaches_aks_mig_pools_by_gpufleets_partition_label(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # AKS sets no partition label; gpufleet declares gpufleet.io/gpu-partition-size on MIG pools.
    text = emitted(capsys, str(FIXTURES / "stacks" / "aks.yaml"), "flyte")
    plugin = yaml.safe_load(text)["plugins"]["k8s"]
    assert plugin["gpu-partition-size-node-label"] == "gpufleet.io/gpu-partition-size"
    assert 'a100mig: @task(limits=Resources(gpu="1"), accelerator=' in text
    assert '.partitioned("1g.10gb")' in text
    assert "# Note: pool a100mig is MIG-partitioned" not in text


def test_flyte_tells_spot_and_on_demand_pools_of_one_model_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text, pods, checks = flyte_pods_and_checks(capsys, "azure-dev")  # t4 and t4spot
    plugin = yaml.safe_load(text)["plugins"]["k8s"]
    spot = {
        "key": "kubernetes.azure.com/scalesetpriority",
        "operator": "Equal",
        "value": "spot",
        "effect": "NoSchedule",
    }
    # Only interruptible tasks tolerate Spot nodes, and only they may (must) go there.
    assert spot not in plugin["resource-tolerations"][0]["nvidia.com/gpu"]
    assert plugin["interruptible-tolerations"] == [spot]
    assert plugin["interruptible-node-selector-requirement"] == {
        "key": "kubernetes.azure.com/scalesetpriority",
        "operator": "In",
        "values": ["spot"],
    }
    assert plugin["non-interruptible-node-selector-requirement"]["operator"] == "NotIn"
    assert (
        '#   t4spot: @task(limits=Resources(gpu="1"), accelerator=GPUAccelerator("t4"), interruptible=True)'
        in text
    )
    assert '#   t4: @task(limits=Resources(gpu="1"), accelerator=GPUAccelerator("t4"))\n' in text
    assert reached(pods["t4"], checks) == ["t4"]
    assert reached(pods["t4spot"], checks) == ["t4spot"]
    assert "indistinguishable" not in text
    assert "an interruptible CPU task then" in text  # the cluster-wide side effect is stated


def test_flyte_reaches_aks_mig_pools_by_a_partition_label(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stack = str(OWN_FIXTURES / "aks-same-models.yaml")
    text, pods, checks = flyte_pods_and_checks(capsys, stack)
    plugin = yaml.safe_load(text)["plugins"]["k8s"]
    # gpufleet labels AKS MIG pools with their partition size (preferred over a user label).
    assert plugin["gpu-partition-size-node-label"] == "gpufleet.io/gpu-partition-size"
    definition = 'class A100_80GB_DEVICE(MultiInstanceGPUAccelerator): device = "a100-80gb"'
    assert f"#   {definition}\n" in text
    compile(definition, "task.py", "exec")
    assert 'accelerator=A100_80GB_DEVICE.partitioned("1g.10gb"))' in text
    assert "accelerator=A100_80GB_DEVICE().unpartitioned)" in text
    for pool, pod in pods.items():
        assert reached(pod, checks) == [pool], pool
    assert "Note:" not in text


def test_flyte_steers_eks_spot_tasks_by_gpufleets_spot_label(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # AWS labels no self-managed node Spot: gpufleet's label (kubelet flag and node-template
    # tag) tells the Spot group apart, also when it is at zero.
    fixture = "eks-spot-and-on-demand.yaml"
    config = config_of(str(OWN_FIXTURES / fixture))
    text = emitted(capsys, str(OWN_FIXTURES / fixture), "flyte")
    plugin = yaml.safe_load(text)["plugins"]["k8s"]
    assert plugin["interruptible-node-selector-requirement"] == {
        "key": "gpufleet.io/capacity-type",
        "operator": "In",
        "values": ["spot"],
    }
    assert plugin["non-interruptible-node-selector-requirement"]["operator"] == "NotIn"
    checks = {c.name: c for c in pool_checks(config, plan_of_fixture(config, fixture))}
    for accelerator in flyte_settings(config, resolve_pools(config)).accelerators:
        assert accelerator.interruptible == (accelerator.pool == "t4-spot")
        assert reached(flyte_pod(plugin, accelerator), checks) == [accelerator.pool]
    assert "Note:" not in text


def test_flyte_on_a_karpenter_pool_that_falls_back_uses_the_per_node_capacity_type(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # aws-karpenter's l4 pool launches Spot, and on-demand when Spot has no capacity: each node's
    # karpenter.sh/capacity-type says which. Interruptible tasks wait for Spot nodes; the others
    # take its on-demand nodes (and never Spot ones); the H100 pool is on demand only.
    text, pods, checks = flyte_pods_and_checks(capsys, "aws-karpenter")
    plugin = yaml.safe_load(text)["plugins"]["k8s"]
    assert plugin["interruptible-node-selector-requirement"]["key"] == "karpenter.sh/capacity-type"
    assert 'accelerator=GPUAccelerator("nvidia-l4"), interruptible=True)' in text
    assert reached(pods["l4"], checks) == ["l4"]
    assert reached(pods["h100"], checks) == ["h100"]
    steady = flyte_pod(plugin, FlyteAccelerator("l4", "nvidia-l4"))
    assert reached(steady, checks) == ["l4"]  # its on-demand nodes
    assert "pool l4 falls back to on-demand" in text
    assert "carry no label or taint that marks them Spot" not in text


@pytest.mark.parametrize(
    ("fixture", "pools", "spot_note"),
    [("eks-twin-pools.yaml", ["t4-a", "t4-b"], False)],
)
def test_flyte_says_which_pools_stay_indistinguishable(
    capsys: pytest.CaptureFixture[str], fixture: str, pools: list[str], spot_note: bool
) -> None:
    config = config_of(str(OWN_FIXTURES / fixture))
    text = emitted(capsys, str(OWN_FIXTURES / fixture), "flyte")
    plugin = yaml.safe_load(text)["plugins"]["k8s"]
    checks = {c.name: c for c in pool_checks(config, plan_of_fixture(config, fixture))}
    for accelerator in flyte_settings(config, resolve_pools(config)).accelerators:
        assert sorted(reached(flyte_pod(plugin, accelerator), checks)) == sorted(pools)
    first, second = pools
    assert f"# Note: pools {first} and {second} stay indistinguishable to Flyte" in text
    assert text.count("indistinguishable") == 1  # one note for the pair
    assert ("carry no label or taint that marks them Spot" in text) == spot_note


def plan_of_fixture(config: StackConfig, fixture: str) -> Any:
    if not needs_plan(config):
        return None
    from components.tooling.engine import plan_stack

    return plan_stack(load_stack(str(OWN_FIXTURES / fixture))).resources


# --------------------------------------------------------------------------- JupyterHub

# Written from jupyterhub/zero-to-jupyterhub-k8s, jupyterhub/values.schema.yaml at tag 4.4.0
# (not copied): the root and `singleuser` allow only their listed properties
# (additionalProperties: false); singleuser.profileList is `type: array` with no schema for
# its items, which go to KubeSpawner.profile_list unchanged. The chart's own values.yaml fills
# the root's required keys, so a values file holding only this fragment is complete.
Z2JH_FRAGMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "singleuser": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"profileList": {"type": "array"}},
        }
    },
}
# KubeSpawner 7.1.0's profile_list help: the keys of a profile, and kubespawner_override's
# values as the traits overridden here take them.
KUBESPAWNER_PROFILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["display_name", "kubespawner_override"],
    "properties": {
        "display_name": {"type": "string"},
        "slug": {"type": "string", "pattern": "^[a-z0-9-]+$"},
        "description": {"type": "string"},
        "default": {"type": "boolean"},
        "profile_options": {"type": "object"},
        "kubespawner_override": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "extra_resource_limits": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                },
                "node_selector": {"type": "object", "additionalProperties": {"type": "string"}},
                "tolerations": {"type": "array", "items": {"type": "object"}},
                "environment": {"type": "object", "additionalProperties": {"type": "string"}},
                "node_affinity_required": {"type": "array", "maxItems": 0},
                "extra_pod_config": {
                    "type": "object",
                    "required": ["nodeSelector"],
                    "properties": {"nodeSelector": {"type": "object"}},
                },
            },
        },
    },
}


def test_jupyterhub_default_is_z2jh_values_valid_for_the_chart_schema(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = emitted(capsys, str(FIXTURES / "stacks" / "gke.yaml"), "jupyterhub")
    assert "jupyterhub chart 4.4.0" in text and "--format python" in text
    values = yaml.safe_load(text)
    jsonschema.validate(values, Z2JH_FRAGMENT_SCHEMA)
    profiles = values["singleuser"]["profileList"]
    for profile in profiles:
        jsonschema.validate(profile, KUBESPAWNER_PROFILE_SCHEMA)
        override = profile["kubespawner_override"]
        assert override["extra_pod_config"]["nodeSelector"] == override["node_selector"]
    assert [p["slug"] for p in profiles] == ["gpu-l4-shared", "gpu-t4", "gpu-a100-mig", "gpu-h100"]
    python = emitted(
        capsys, str(FIXTURES / "stacks" / "gke.yaml"), "jupyterhub", "--format", "python"
    )
    assert jupyterhub_profiles(python) == profiles  # the same profiles in either format
    # The schema check can fail: a key the chart does not know is refused.
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"singleuser": {"profile_list": profiles}}, Z2JH_FRAGMENT_SCHEMA)


def test_jupyterhub_python_format_is_kubespawner_profile_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stack = str(FIXTURES / "stacks" / "gke.yaml")
    text = emitted(capsys, stack, "jupyterhub", "--format", "python")
    assert "jupyterhub-kubespawner.readthedocs.io" in text
    c = types.SimpleNamespace(KubeSpawner=types.SimpleNamespace())
    exec(compile(text, "jupyterhub_config.py", "exec"), {"c": c})  # our own output
    profiles = c.KubeSpawner.profile_list
    assert [p["slug"] for p in profiles] == ["gpu-l4-shared", "gpu-t4", "gpu-a100-mig", "gpu-h100"]
    assert all(
        set(p) == {"display_name", "slug", "description", "kubespawner_override"} for p in profiles
    )
    assert profiles[0]["display_name"] == "GPU: NVIDIA L4 24 GB (l4-shared)"
    assert "(time-sharing)" in profiles[0]["description"] and "Spot" in profiles[0]["description"]


@pytest.mark.parametrize(
    ("setting", "neutraliser", "reason"),
    [
        ({"match_node_purpose": "require"}, "node_affinity_required", "node-purpose"),
        ({"node_selector": {"node-role": "notebooks"}}, "extra_pod_config", "node-role"),
    ],
    ids=["matchNodePurpose-require", "singleuser-nodeSelector"],
)
def test_jupyterhub_profiles_survive_z2jh_settings_that_hide_gpu_nodes(
    capsys: pytest.CaptureFixture[str],
    setting: dict[str, Any],
    neutraliser: str,
    reason: str,
) -> None:
    stack = str(FIXTURES / "stacks" / "aks.yaml")
    text = emitted(capsys, stack, "jupyterhub")
    assert "matchNodePurpose: require" in text and "singleuser.nodeSelector" in text
    checks = {c.name: c for c in pool_checks(config_of(stack))}
    for profile in jupyterhub_profiles(text):
        pool = profile["slug"].removeprefix("gpu-")
        verdict = fit_check(kubespawner_pod(profile, **setting), checks[pool])
        assert verdict.fits, (pool, verdict.reasons)
        # Without the setting that neutralises it, the chart setting keeps the pod off its pool.
        bare = copy.deepcopy(profile)
        del bare["kubespawner_override"][neutraliser]
        verdict = fit_check(kubespawner_pod(bare, **setting), checks[pool])
        assert not verdict.fits and any(reason in r for r in verdict.reasons), verdict.reasons


# --------------------------------------------------------------------------- command line


def test_pool_option_restricts_and_orders_the_output(capsys: pytest.CaptureFixture[str]) -> None:
    stack = str(FIXTURES / "stacks" / "gke.yaml")
    text = emitted(capsys, stack, "pod", "--pool", "h100", "--pool", "t4")
    selectors = [
        d["nodeSelector"]["cloud.google.com/gke-nodepool"] for d in yaml.safe_load_all(text)
    ]
    assert selectors == ["h100", "t4"]


@pytest.mark.parametrize(
    ("stack", "args", "message"),
    [
        (
            "gke.yaml",
            ("--for", "pod", "--pool", "v100"),
            "no GPU pool v100 in gke (pools: l4-shared, t4, a100-mig, h100)",
        ),
        ("no-gpu-pools.yaml", ("--for", "jupyterhub"), "stack no-gpu-pools has no GPU pools"),
        ("existing-unlabelled.yaml", ("--for", "flyte"), "share no node label naming their GPU"),
        ("invalid.yaml", ("--for", "pod"), "invalid gpufleet config"),
    ],
)
def test_bad_input_exits_2_with_a_message(
    capsys: pytest.CaptureFixture[str], stack: str, args: tuple[str, ...], message: str
) -> None:
    code = main(["consumers", str(FIXTURES / "stacks" / stack), *args])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert message in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--for", "kubeflow"), "invalid choice: 'kubeflow'"),
        (("--for", "pod", "--format", "python"), "--format applies to --for jupyterhub only"),
        (("--for", "flyte", "--always-on"), "--always-on applies to --for fiftyone only"),
        (("--for", "jupyterhub", "--format", "yaml"), "invalid choice: 'yaml'"),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["consumers", "gcp-dev", *args])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_flyte_tells_an_aks_mig_pool_from_a_whole_gpu_pool_of_one_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fixture = "aks-mig-and-whole.yaml"
    config = config_of(str(OWN_FIXTURES / fixture))
    text = emitted(capsys, str(OWN_FIXTURES / fixture), "flyte")
    plugin = yaml.safe_load(text)["plugins"]["k8s"]
    checks = {c.name: c for c in pool_checks(config, plan_of_fixture(config, fixture))}
    for accelerator in flyte_settings(config, resolve_pools(config)).accelerators:
        assert reached(flyte_pod(plugin, accelerator), checks) == [accelerator.pool]
    assert "indistinguishable" not in text


# --------------------------------------------------------------------------- queued pools


@pytest.mark.parametrize("tool", ["flyte", "jupyterhub", "fiftyone"])
def test_a_queued_pool_with_its_own_taint_is_left_out_of_a_tools_settings(
    capsys: pytest.CaptureFixture[str], tool: str
) -> None:
    """azure-reserved's `train` is queued: its gpufleet.io/queued taint keeps every pod Kueue did
    not admit off its nodes. Tolerating it in Flyte's resource-tolerations, which every GPU task
    gets, sent tasks for `a100` to `train` outside Kueue; the other tools' profiles for it
    started pods outside the queue. GKE's queued pools were already left out."""
    out = emitted(capsys, "azure-reserved", tool)
    assert "gpufleet.io/queued" not in out and "train" not in out
    main(["consumers", "azure-reserved", "--for", tool])
    _, err = capsys.readouterr()
    assert (
        f"warning: pool train: no {tool} settings: it is queued, and its taint "
        "gpufleet.io/queued=train:NoSchedule keeps off its nodes every pod Kueue did not admit"
    ) in err
    # `--for pod` still gives the queued pool's Job its fragment and the label it needs.
    assert "kueue.x-k8s.io/queue-name: train" in emitted(capsys, "azure-reserved", "pod")


# --------------------------------------------------------------------------- GPUDirect pods

DEVICE_ANNOTATION = "devices.gke.io/container."


def test_gpudirect_pod_fragment_has_every_container_its_device_annotation_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The fragment's header says the pod carries `devices.gke.io/container.<name>`: the
    container <name> is in the fragment (TCPXO, built as the NCCL sample builds it), or the
    header names the file to copy it from (TCPX, which gpufleet does not build)."""
    stack = yaml.safe_load(Path(load_stack("gcp-gpudirect").path).read_text())
    stack["config"]["gpufleet:gpuPools"].append(
        {
            **stack["config"]["gpufleet:gpuPools"][0],
            "name": "a3-high",
            "machineType": "a3-highgpu-8g",
            "maxNodes": 2,
        }
    )
    path = tmp_path / "Pulumi.gd-high.yaml"
    path.write_text(yaml.safe_dump(stack))
    text = emitted(capsys, str(path), "pod")
    checked = set()
    for document in text.split("\n---\n"):
        header = [line for line in document.splitlines() if line.startswith("#")]
        fragment = yaml.safe_load(document)
        names = [c["name"] for c in fragment["containers"]]
        volumes = {v["name"] for v in fragment.get("volumes", [])}
        for line in header:
            if DEVICE_ANNOTATION not in line:
                continue
            sidecar = line.split(DEVICE_ANNOTATION, 1)[1].split(":", 1)[0]
            checked.add(sidecar)
            if sidecar not in names:
                assert any(
                    f"copy the container `{sidecar}` of https://github.com/" in h for h in header
                ), header
                continue
            # Every volume a container mounts is in the fragment.
            for container in fragment["containers"]:
                assert {m["name"] for m in container.get("volumeMounts", [])} <= volumes
            if sidecar == "tcpxo-daemon":
                # The same sidecar, volumes and env as the NCCL sample's pod.
                sample = sample_pod("gcp-gpudirect")
                assert [c for c in fragment["containers"] if c["name"] == sidecar] == [
                    c for c in sample["containers"] if c["name"] == sidecar
                ]
                assert fragment["volumes"] == sample["volumes"]
                (nccl,) = [c for c in sample["containers"] if c["name"] == "nccl-test"]
                (main_container,) = [c for c in fragment["containers"] if c["name"] == "main"]
                assert main_container["env"] == nccl["env"]
                assert main_container["volumeMounts"] == nccl["volumeMounts"]
    assert checked == {"tcpxo-daemon", "tcpx-daemon"}


def sample_pod(stack: str) -> dict[str, Any]:
    """The first Pod of the NCCL test `samples` prints for the stack's first pool."""
    config = config_of(stack)
    (spec, *_) = resolve_pools(config)
    test = cloud_of(config).nccl_test(config, spec, 2)
    assert test is not None
    (pod, *_) = [m for m in test.manifests if m["kind"] == "Pod"]
    return dict(pod["spec"])
