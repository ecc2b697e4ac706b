"""`python -m components consumers`: every emitted setting, converted back to the pod the tool
would create, fits its pool and does not fit the CPU pool (checked with the `fit` simulator)."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model.config import StackConfig, parse_config
from components.model.pools import resolve_pools
from components.tooling.cli import main
from components.tooling.consumers import FlyteAccelerator, fiftyone_key, flyte_settings
from components.tooling.fit import fit_check
from components.tooling.pool_views import PoolCheck, needs_plan, pool_checks
from components.tooling.stacks import load_stack, shipped_stacks
from tests.conftest import plan_of

FIXTURES = Path(__file__).parent / "fixtures" / "fit"
TOOLS = ("pod", "fiftyone", "flyte", "jupyterhub")


def emitted(capsys: pytest.CaptureFixture[str], stack: str, tool: str, *extra: str) -> str:
    code = main(["consumers", stack, "--for", tool, *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def container(resources: dict[str, Any]) -> dict[str, Any]:
    return {"name": "main", "image": "example.com/app:1", "resources": resources}


# --------------------------------------------------------------------------- back to pods


def pods_from_pod(text: str, pools: list[str]) -> dict[str, dict[str, Any]]:
    documents = list(yaml.safe_load_all(text))
    assert len(documents) == len(pools)
    return dict(zip(pools, documents, strict=True))


def pods_from_fiftyone(text: str, config: StackConfig) -> dict[str, dict[str, Any]]:
    values = yaml.safe_load(text)
    pods = {}
    for spec in resolve_pools(config):
        key = fiftyone_key(spec)
        for section, entries in (
            ("deployments", "delegatedOperatorDeployments"),
            ("jobs", "delegatedOperatorJobTemplates"),
        ):
            entry = values[entries][section][key]
            pods[f"{spec.name}/{section}"] = {
                "nodeSelector": entry["nodeSelector"],
                "tolerations": entry["tolerations"],
                "containers": [container(entry["resources"])],
            }
    return pods


def flyte_pod(config: dict[str, Any], accelerator: FlyteAccelerator) -> dict[str, Any]:
    """The pod flytepropeller builds for `@task(limits=Resources(gpu="1"), accelerator=...)`
    (flyteplugins ApplyGPUNodeSelectors: resource tolerations, device and partition affinity
    and tolerations)."""
    resource = config["gpu-resource-name"]
    tolerations: list[dict[str, str]] = []
    for item in config["resource-tolerations"]:  # the docs' list-of-maps form
        tolerations += item.get(resource, [])
    device_label = config["gpu-device-node-label"]
    partition_label = config.get(
        "gpu-partition-size-node-label", "k8s.amazonaws.com/gpu-partition-size"
    )
    expressions = [{"key": device_label, "operator": "In", "values": [accelerator.device]}]
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
    settings = flyte_settings(resolve_pools(config))
    plugin = yaml.safe_load(text)["plugins"]["k8s"]
    assert plugin == settings.config
    for accelerator in settings.accelerators:
        assert f"#   {accelerator.pool}: @task(" in text and accelerator.python() in text
    return {a.pool: flyte_pod(plugin, a) for a in settings.accelerators}


def pods_from_jupyterhub(text: str) -> dict[str, dict[str, Any]]:
    c = types.SimpleNamespace(KubeSpawner=types.SimpleNamespace())
    exec(compile(text, "jupyterhub_config.py", "exec"), {"c": c})  # our own output
    pods = {}
    for profile in c.KubeSpawner.profile_list:
        override = profile["kubespawner_override"]
        assert set(override) <= {
            "extra_resource_limits",
            "node_selector",
            "tolerations",
            "environment",
        }
        assert all(isinstance(v, str) for v in override["extra_resource_limits"].values())
        # KubeSpawner: node_selector -> spec.nodeSelector, tolerations -> spec.tolerations,
        # extra_resource_limits -> the notebook container's resources.limits.
        pods[profile["slug"].removeprefix("gpu-")] = {
            "nodeSelector": override["node_selector"],
            "tolerations": override["tolerations"],
            "containers": [container({"limits": override["extra_resource_limits"]})],
        }
    return pods


# --------------------------------------------------------------------------- every shipped stack


@pytest.fixture(scope="module")
def stacks() -> dict[str, tuple[StackConfig, dict[str, PoolCheck]]]:
    found = {}
    for stack in shipped_stacks():
        config = parse_config(load_stack(stack).gpufleet)
        resources = plan_of(stack).resources if needs_plan(config) else None
        found[stack] = (config, {c.name: c for c in pool_checks(config, resources)})
    return found


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("stack", shipped_stacks())
def test_every_emitted_setting_fits_its_pool_and_not_the_cpu_pool(
    capsys: pytest.CaptureFixture[str],
    stacks: dict[str, tuple[StackConfig, dict[str, PoolCheck]]],
    stack: str,
    tool: str,
) -> None:
    config, checks = stacks[stack]
    text = emitted(capsys, stack, tool)
    pools = [spec.name for spec in resolve_pools(config)]
    pods = {
        "pod": lambda: pods_from_pod(text, pools),
        "fiftyone": lambda: pods_from_fiftyone(text, config),
        "flyte": lambda: pods_from_flyte(text, config),
        "jupyterhub": lambda: pods_from_jupyterhub(text),
    }[tool]()
    assert {name.split("/")[0] for name in pods} == set(pools)
    for name, pod in pods.items():
        pool = name.split("/")[0]
        verdict = fit_check(pod, checks[pool])
        assert verdict.fits, (tool, name, verdict.reasons, pod)
        if "system" in checks:
            assert not fit_check(pod, checks["system"]).fits, (tool, name)


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


# --------------------------------------------------------------------------- formats


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


def test_fiftyone_values_follow_the_chart_gpu_guide(capsys: pytest.CaptureFixture[str]) -> None:
    text = emitted(capsys, str(FIXTURES / "stacks" / "gke.yaml"), "fiftyone")
    assert "configuring-gpu-workloads.md" in text and "configuring-delegated-operators.md" in text
    values = yaml.safe_load(text)
    assert set(values) == {"delegatedOperatorDeployments", "delegatedOperatorJobTemplates"}
    deployments = values["delegatedOperatorDeployments"]["deployments"]
    jobs = values["delegatedOperatorJobTemplates"]["jobs"]
    assert list(deployments) == list(jobs) == ["gpuL4Shared", "gpuT4", "gpuA100Mig", "gpuH100"]
    for entry in (*deployments.values(), *jobs.values()):
        # Extended resources: requests must equal limits (Kubernetes rejects requests alone).
        assert (
            entry["resources"]["requests"] == entry["resources"]["limits"] == {"nvidia.com/gpu": 1}
        )
        assert entry["env"] == {"LD_LIBRARY_PATH": "/usr/local/nvidia/lib64"}  # GKE's driver path
    assert {d["replicaCount"] for d in deployments.values()} == {1}
    aks = yaml.safe_load(emitted(capsys, str(FIXTURES / "stacks" / "aks.yaml"), "fiftyone"))
    assert "env" not in aks["delegatedOperatorJobTemplates"]["jobs"]["gpuT4spot"]


@pytest.mark.parametrize(
    ("stack", "device_label", "partition_label"),
    [
        ("gke", "cloud.google.com/gke-accelerator", "cloud.google.com/gke-gpu-partition-size"),
        ("eks", "k8s.amazonaws.com/accelerator", None),
        ("aks", "gpufleet.io/accelerator", None),
        ("existing", "gpu-type", None),
    ],
)
def test_flyte_device_and_partition_labels_per_cloud(
    capsys: pytest.CaptureFixture[str], stack: str, device_label: str, partition_label: str | None
) -> None:
    text = emitted(capsys, str(FIXTURES / "stacks" / f"{stack}.yaml"), "flyte")
    plugin = yaml.safe_load(text)["plugins"]["k8s"]
    assert plugin["gpu-resource-name"] == "nvidia.com/gpu"
    assert plugin["gpu-device-node-label"] == device_label
    assert plugin.get("gpu-partition-size-node-label") == partition_label
    assert list(plugin["resource-tolerations"][0]) == ["nvidia.com/gpu"]


def test_flyte_mig_and_whole_gpu_pools_of_one_model_stay_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stack = str(FIXTURES / "stacks" / "gke-a100-mixed.yaml")
    text = emitted(capsys, stack, "flyte")
    assert "accelerator=A100.partition_2g_10gb" in text
    assert "accelerator=A100.unpartitioned" in text
    config = parse_config(load_stack(stack).gpufleet)
    checks = {c.name: c for c in pool_checks(config)}
    pods = pods_from_flyte(text, config)
    assert fit_check(pods["a100-mig"], checks["a100-mig"]).fits
    assert not fit_check(pods["a100-mig"], checks["a100"]).fits
    assert fit_check(pods["a100"], checks["a100"]).fits
    assert not fit_check(pods["a100"], checks["a100-mig"]).fits


def test_flyte_notes_mig_pools_it_can_only_reach_by_device(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = emitted(capsys, str(FIXTURES / "stacks" / "aks.yaml"), "flyte")
    assert "# Note: pool a100mig is MIG-partitioned (1g.10gb)" in text
    assert "gpu-partition-size-node-label stays at Flyte's default" in text


def test_jupyterhub_profiles_are_kubespawner_profile_list_python(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = emitted(capsys, str(FIXTURES / "stacks" / "gke.yaml"), "jupyterhub")
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


def test_unknown_tool_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["consumers", "gcp-dev", "--for", "kubeflow"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'kubeflow'" in capsys.readouterr().err
