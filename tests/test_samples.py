"""Sample CUDA workloads: each pod schedules on its own pool only, manifests are valid and safe,
and `python -m components samples STACK` prints exactly what the program deploys."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest
import yaml

from components.kubernetes import sample_manifests as samples
from components.model.catalog import charts
from components.model.config import parse_config
from components.model.pools import resolve_pools, system_pool
from components.tooling import placement, samples_command
from components.tooling.cli import main as cli_main
from components.tooling.engine import Plan
from components.tooling.scheduling import extract_pod_templates
from components.tooling.stacks import load_stack, shipped_stacks
from tests.conftest import over_every_stack, plan_of

# Every test here on one worker (pyproject.toml: --dist loadgroup): spread over both, each
# worker planned every stack with samples on.
pytestmark = pytest.mark.xdist_group("software-plans")

ENABLED = {"gpufleet:samples": {"enabled": True}}
WORKLOADS = ("kubernetes:batch/v1:Job", "kubernetes:apps/v1:Deployment")


def sample_objects(plan: Plan) -> list[dict[str, Any]]:
    return [dict(r.inputs) for r in plan.resources if r.type in WORKLOADS]


def pod_spec(manifest: dict[str, Any]) -> dict[str, Any]:
    return dict(manifest["spec"]["template"]["spec"])


def stack_pools(stack: str) -> tuple[Any, list[Any], Any]:
    config = parse_config({**load_stack(stack).gpufleet, "samples": {"enabled": True}})
    return config, resolve_pools(config), system_pool(config)


@over_every_stack
def test_every_sample_pod_schedules_on_its_pool_and_no_other(stack: str) -> None:
    plan = plan_of(stack, ENABLED)
    _, pools, cpu = stack_pools(stack)
    objects = sample_objects(plan)
    # Not a pool whose nodes come only through ProvisioningRequests (an unqueued Job gets none).
    expected = {p.name for p in pools if samples.has_samples(p)}
    assert {o["metadata"]["labels"]["gpufleet.io/pool"] for o in objects} == expected
    nodes = placement.targets(pools, cpu)
    for manifest in objects:
        own = manifest["metadata"]["labels"]["gpufleet.io/pool"]
        result = placement.place(pod_spec(manifest), nodes)
        assert result.fits == [own], (manifest["metadata"]["name"], result.reasons)


@over_every_stack
def test_sample_pods_use_exactly_the_pools_pod_scheduling(stack: str) -> None:
    plan = plan_of(stack, ENABLED)
    outputs = {p["name"]: p["podScheduling"] for p in plan.outputs["gpuPools"]}
    for manifest in sample_objects(plan):
        scheduling = outputs[manifest["metadata"]["labels"]["gpufleet.io/pool"]]
        spec = pod_spec(manifest)
        assert spec.get("nodeSelector", {}) == scheduling["nodeSelector"]
        assert spec.get("tolerations", []) == scheduling["tolerations"]
        (container,) = spec["containers"]
        for name, amount in scheduling["resources"]["limits"].items():
            assert container["resources"]["limits"][name] == amount


@over_every_stack
def test_sample_workloads_are_bounded_pinned_and_unprivileged(stack: str) -> None:
    plan = plan_of(stack, ENABLED)
    jobs = [o for o in sample_objects(plan) if o["kind"] == "Job"]
    assert jobs
    for job in jobs:
        spec = job["spec"]
        assert 0 < spec["backoffLimit"] <= 3
        assert spec["ttlSecondsAfterFinished"] > 0 and spec["activeDeadlineSeconds"] > 0
        assert pod_spec(job)["restartPolicy"] == "Never"
    for manifest in sample_objects(plan):
        (container,) = pod_spec(manifest)["containers"]
        assert container["image"] in (charts.CUDA_VECTORADD_IMAGE, charts.CUDA_BASE_IMAGE)
        assert ":" in container["image"] and "latest" not in container["image"]
        limits = container["resources"]["limits"]
        assert {"cpu", "memory", "nvidia.com/gpu"} <= set(limits)
        security = container["securityContext"]
        assert security["allowPrivilegeEscalation"] is False
        assert security["capabilities"] == {"drop": ["ALL"]}
        assert pod_spec(manifest)["automountServiceAccountToken"] is False
    images = {pod_spec(j)["containers"][0]["image"]: j for j in jobs}
    assert charts.CUDA_VECTORADD_IMAGE == "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0"
    assert charts.CUDA_VECTORADD_IMAGE in images
    smi = [j for j in jobs if pod_spec(j)["containers"][0].get("command") == ["nvidia-smi"]]
    _, pools, _ = stack_pools(stack)
    assert len(smi) == len([p for p in pools if samples.has_samples(p)])


@over_every_stack
def test_shared_pools_get_a_deployment_that_needs_more_gpus_than_the_node_has(stack: str) -> None:
    plan = plan_of(stack, ENABLED)
    deployments = {
        o["metadata"]["labels"]["gpufleet.io/pool"]: o
        for o in sample_objects(plan)
        if o["kind"] == "Deployment"
    }
    for pool in plan.outputs["gpuPools"]:
        shared = pool["allocatablePerNode"]["nvidia.com/gpu"] > pool["gpusPerNode"]
        assert (pool["name"] in deployments) == shared
        if not shared:
            continue
        spec = deployments[pool["name"]]["spec"]
        # More replicas than physical GPUs, all on one node, each holding one GPU slot.
        assert (
            pool["gpusPerNode"] < spec["replicas"] <= pool["allocatablePerNode"]["nvidia.com/gpu"]
        )
        (term,) = spec["template"]["spec"]["affinity"]["podAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]
        assert term["topologyKey"] == "kubernetes.io/hostname"
        assert (
            term["labelSelector"]["matchLabels"].items()
            <= spec["template"]["metadata"]["labels"].items()
        )


@over_every_stack
def test_sample_manifests_validate_against_the_clusters_kubernetes_schema(stack: str) -> None:
    config, pools, _ = stack_pools(stack)
    plan = plan_of(stack, ENABLED)
    objects = [*sample_objects(plan), *samples.manifests(pools)]
    for manifest in objects:
        kubernetes_validate.validate(manifest, config.cluster.kubernetes_version, strict=True)


def test_samples_wait_for_the_gpu_software_and_use_the_clusters_provider() -> None:
    plan = plan_of("aws-dev" if "aws-dev" in shipped_stacks() else "existing-dev", ENABLED)
    (software,) = [r for r in plan.resources if r.type == "gpufleet:kubernetes:GpuSoftware"]
    software_releases = {r.urn for r in plan.children(software.urn) if r.type.endswith(":Release")}
    assert software_releases
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    for resource in plan.resources:
        if resource.type in WORKLOADS:
            # A depends_on on the component waits for all of its children.
            assert software_releases <= set(resource.depends_on)
            assert resource.provider and resource.provider.startswith(provider.urn)
            assert resource.delete_before_replace


def test_no_samples_unless_enabled() -> None:
    plan = plan_of("gcp-dev")
    assert not [r for r in plan.resources if r.type == "gpufleet:kubernetes:Samples"]


# --- python -m components samples STACK -----------------------------------------------------------


def test_samples_command_prints_what_the_program_deploys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert samples_command.main(["gcp-dev"]) == 0
    printed = capsys.readouterr().out
    assert "&id" not in printed  # plain YAML for kubectl, no anchors
    documents = [d for d in yaml.safe_load_all(printed) if d]
    deployed = sample_objects(plan_of("gcp-dev", ENABLED))
    workloads = [d for d in documents if d["kind"] != "Namespace"]
    assert sorted(workloads, key=lambda d: d["metadata"]["name"]) == sorted(
        deployed, key=lambda d: d["metadata"]["name"]
    )
    assert documents[0] == samples.namespace_manifest()
    # The fit checker reads the same output.
    templates = extract_pod_templates(printed, ignore_other_kinds=True)
    assert len(templates) == len(workloads)


def test_samples_command_can_pick_pools(capsys: pytest.CaptureFixture[str]) -> None:
    assert samples_command.main(["gcp-dev", "--pool", "t4"]) == 0
    documents = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    pools = {
        d["metadata"]["labels"].get("gpufleet.io/pool")
        for d in documents
        if d["kind"] != "Namespace"
    }
    assert pools == {"t4"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["no-such-stack"], "no stack config"),
        (["gcp-dev", "--pool", "nope"], "no GPU pool nope"),
    ],
)
def test_samples_command_rejects_bad_input_with_status_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["samples", *argv]) == 2
    assert message in capsys.readouterr().err


def test_samples_command_reports_config_errors(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "Pulumi.bad.yaml"
    document = yaml.safe_load(load_stack("gcp-dev").path.read_text())
    document["config"]["gpufleet:gpuSoftware"] = {"mode": "device-plugin"}
    bad.write_text(yaml.safe_dump(document))
    assert cli_main(["samples", str(bad)]) == 2
    assert "gpuSoftware.mode" in capsys.readouterr().err
