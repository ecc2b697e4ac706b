"""`cloud: existing`: only GPU software, monitoring and samples, on the user's own cluster."""

from __future__ import annotations

from typing import Any

import pytest

from components.model.config import ConfigError, parse_config
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

STACK = "existing-dev"
KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n"


def test_nothing_but_kubernetes_objects_is_created() -> None:
    plan = plan_of(STACK)
    clouds = [
        r.type
        for r in plan.resources
        if r.type.split(":")[0] in ("gcp", "aws", "azure", "azure-native")
    ]
    assert clouds == []
    types = {r.type for r in plan.resources}
    assert "kubernetes:helm.sh/v3:Release" in types
    assert "gpufleet:kubernetes:Samples" in types  # the shipped stack enables them


def test_provider_uses_the_configured_context_and_no_kubeconfig_by_default() -> None:
    plan = plan_of(STACK)
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    assert (
        provider.inputs["context"] == load_stack(STACK).gpufleet["cluster"]["existing"]["context"]
    )
    assert "kubeconfig" not in provider.inputs
    assert plan.outputs["kubeconfig"] == "[secret]"
    for resource in plan.resources:
        if resource.type.startswith("kubernetes:"):
            assert resource.provider and resource.provider.startswith(provider.urn)


def test_a_kubeconfig_given_as_config_stays_secret() -> None:
    plan = plan_of(STACK, {"gpufleet:kubeconfig": KUBECONFIG})
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == "[secret]"
    assert plan.outputs["kubeconfig"] == "[secret]"


def test_gpu_pools_output_is_the_description() -> None:
    plan = plan_of(STACK)
    described = {p["name"]: p for p in load_stack(STACK).gpufleet["gpuPools"]}
    for pool in plan.outputs["gpuPools"]:
        given = described[pool["name"]]
        assert given["labels"].items() <= pool["nodeLabels"].items()
        assert pool["nodeTaints"] == [
            {"key": t["key"], "value": t["value"], "effect": t["effect"]} for t in given["taints"]
        ]
        clients = given.get("sharing", {}).get("maxSharedClientsPerGpu", 1)
        assert pool["allocatablePerNode"] == {"nvidia.com/gpu": given["gpusPerNode"] * clients}
        assert pool["cloud"] == "existing" and pool["machineTypes"] == []


def problems(**changes: Any) -> list[str]:
    raw = {**load_stack(STACK).gpufleet, **changes}
    try:
        parse_config(raw)
    except ConfigError as error:
        return [str(p) for p in error.problems]
    return []


def test_the_shipped_stack_is_valid() -> None:
    assert problems() == []


def test_pools_must_be_described_by_labels_that_tell_them_apart() -> None:
    pools = load_stack(STACK).gpufleet["gpuPools"]
    unlabelled = [{**pools[0], "labels": {}}, pools[1]]
    assert any(p.startswith("gpuPools[0].labels: describe") for p in problems(gpuPools=unlabelled))
    # a10's labels are a subset of the copy's: a selector for a10 would also pick the copy.
    overlapping = [
        pools[0],
        {**pools[0], "name": "a10-more", "labels": {**pools[0]["labels"], "x": "y"}},
    ]
    found = problems(gpuPools=overlapping)
    assert any(
        p.startswith("gpuPools[0].labels: every label also selects gpuPools[1]") for p in found
    )
    assert not any(p.startswith("gpuPools[1].labels") for p in found)


@pytest.mark.parametrize(
    ("mode", "rejected"), [("device-plugin", True), ("gpu-operator", False), ("auto", True)]
)
def test_existing_gke_keeps_its_own_device_plugin(mode: str, rejected: bool) -> None:
    cluster = load_stack(STACK).gpufleet["cluster"]
    gke = {**cluster, "existing": {**cluster["existing"], "distribution": "gke"}}
    found = problems(cluster=gke, gpuSoftware={"mode": mode})
    assert any("conflicts with GKE's own" in p for p in found) is rejected


def test_existing_mig_pools_get_a_plugin_config_with_the_single_strategy() -> None:
    pools = load_stack(STACK).gpufleet["gpuPools"]
    mig = {
        "name": "a100",
        "accelerator": "a100-80gb",
        "gpusPerNode": 8,
        "migPartitionSize": "1g.10gb",
        "labels": {"hardware": "a100"},
    }
    plan = plan_of(STACK, {"gpufleet:gpuPools": [pools[0], mig]})
    output = next(p for p in plan.outputs["gpuPools"] if p["name"] == "a100")
    assert output["nodeLabels"]["nvidia.com/device-plugin.config"] == "a100"
    assert output["allocatablePerNode"] == {"nvidia.com/gpu": 56}
    (release,) = [
        r
        for r in plan.of_type("kubernetes:helm.sh/v3:Release")
        if r.inputs["chart"] == "nvidia-device-plugin"
    ]
    assert "migStrategy: single" in release.inputs["values"]["config"]["map"]["a100"]
