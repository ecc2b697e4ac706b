"""Bad config fails before anything is created: every problem at once, with path, value and what is allowed."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.model.config import ConfigError, parse_config
from components.tooling.cli import main as cli_main
from components.tooling.stacks import load_stack

BASE = load_stack("gcp-dev").gpufleet


def config_with(**changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(BASE)
    raw.update(changes)
    return raw


def pool(**fields: Any) -> dict[str, Any]:
    base = {
        "name": "gpu",
        "accelerator": "l4",
        "machineType": "g2-standard-8",
        "zones": ["us-central1-a"],
    }
    base.update(fields)
    return base


def problems_of(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def only_problem(raw: dict[str, Any]) -> str:
    problems = problems_of(raw)
    assert len(problems) == 1, problems
    return problems[0]


def test_shipped_gcp_config_is_valid() -> None:
    config = parse_config(BASE)
    assert config.cloud == "gcp"
    assert [p.name for p in config.gpu_pools] == ["l4-spot", "t4"]


@pytest.mark.parametrize(
    ("pools", "expected"),
    [
        (
            [pool(accelerator="z100")],
            "gpuPools[0].accelerator: unknown accelerator; allowed: a10, a100-40gb",
        ),
        (
            [pool(machineType="n1-standard-8")],
            "gpuPools[0].machineType: cannot carry l4 on gcp (it carries t4, p4, p100, v100); allowed: g2-standard-4",
        ),
        (
            [pool(machineType="g2-potato-8")],
            "gpuPools[0].machineType: cannot carry l4 on gcp (not a GPU machine type we know)",
        ),
        ([pool(minNodes=3, maxNodes=2)], "gpuPools[0].minNodes: must be <= maxNodes (2) (got 3)"),
        (
            [pool(minNodes=-1)],
            "gpuPools[0].minNodes: Input should be greater than or equal to 0 (got -1)",
        ),
        (
            [pool(maxNodes=0)],
            "gpuPools[0].maxNodes: Input should be greater than or equal to 1 (got 0)",
        ),
        (
            [pool(), pool()],
            "gpuPools[1].name: duplicate pool name (also gpuPools[0].name) (got 'gpu')",
        ),
        (
            [pool(name="GPU_Pool")],
            "gpuPools[0].name: not a valid pool name (GKE: 1-40 of a-z 0-9 -, starting with a letter) (got 'GPU_Pool')",
        ),
        ([pool(name="system")], "gpuPools[0].name: is reserved for the CPU system pool"),
        (
            [
                pool(
                    accelerator="a100-40gb", machineType="a2-highgpu-1g", migPartitionSize="1g.10gb"
                )
            ],
            "gpuPools[0].migPartitionSize: a100-40gb supports 1g.5gb, 2g.10gb, 3g.20gb, 7g.40gb (got '1g.10gb')",
        ),
        (
            [pool(migPartitionSize="1g.5gb")],
            "gpuPools[0].migPartitionSize: l4 does not support MIG (got '1g.5gb')",
        ),
        (
            [
                pool(
                    accelerator="a100-40gb",
                    machineType="a2-highgpu-1g",
                    migPartitionSize="1g.5gb",
                    sharing={"strategy": "time-sharing", "maxSharedClientsPerGpu": 2},
                )
            ],
            "gpuPools[0].sharing: sharing and migPartitionSize cannot be combined; pick one",
        ),
        (
            [pool(sharing={"strategy": "time-sharing", "maxSharedClientsPerGpu": 0})],
            "gpuPools[0].sharing.maxSharedClientsPerGpu: must be between 1 and 48 (got 0)",
        ),
        (
            [pool(sharing={"strategy": "time-sharing", "maxSharedClientsPerGpu": -2})],
            "gpuPools[0].sharing.maxSharedClientsPerGpu: must be between 1 and 48 (got -2)",
        ),
        (
            [pool(sharing={"strategy": "round-robin", "maxSharedClientsPerGpu": 2})],
            "gpuPools[0].sharing.strategy: Input should be 'time-sharing' or 'mps' (got 'round-robin')",
        ),
        # MPS on a P4: GKE's own MPS takes it, NVIDIA's software does not
        # (tests/test_gke_settings.py).
        (
            [pool(zones=["europe-west4-a"])],
            "gpuPools[0].zones[0]: zone outside region us-central1; allowed: us-central1-<letter> (got 'europe-west4-a')",
        ),
        (
            [pool(accelerator="t4", machineType="n1-standard-96", gpusPerNode=1)],
            "gpuPools[0].gpusPerNode: n1-standard-96 takes 4 attached t4 GPU(s) (got 1)",
        ),
        (
            [pool(accelerator="h100-80gb", machineType="a3-highgpu-1g")],
            "gpuPools[0].machineType: is sold only as Spot or flex-start on GKE; set spot: true, or capacity: flex-start (or queued) (got 'a3-highgpu-1g')",
        ),
        ([pool(gpusPerNode=2)], "gpuPools[0].gpusPerNode: g2-standard-8 always has 1 GPU(s)"),
        (
            [pool(machineTypes=["g2-standard-8", "g2-standard-4"])],
            "gpuPools[0].machineTypes: several machine types are only supported on aws; use machineType",
        ),
        (
            [pool(labels={"kubernetes.io/role": "gpu"})],
            "gpuPools[0].labels.kubernetes.io/role: label prefix is reserved",
        ),
        ([pool(labels={"team": "ml research"})], "gpuPools[0].labels.team: bad label value"),
        (
            [pool(taints=[{"key": "dedicated", "value": "x", "effect": "NoWay"}])],
            "gpuPools[0].taints[0].effect: Input should be 'NoSchedule', 'PreferNoSchedule' or 'NoExecute' (got 'NoWay')",
        ),
        (
            [pool(acelerator="l4")],
            "gpuPools[0].acelerator: unknown key; allowed here: accelerator, aws, azure",
        ),
        ([{"name": "x", "zones": ["us-central1-a"]}], "gpuPools[0].accelerator: is required"),
    ],
)
def test_each_bad_pool_is_named_with_its_path(pools: list[dict[str, Any]], expected: str) -> None:
    problems = problems_of(config_with(gpuPools=pools))
    assert any(p.startswith(expected) for p in problems), problems


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"cloud": "oci"}, "cloud: must be one of gcp, aws, azure, existing (got 'oci')"),
        ({"gpuPool": []}, "gpuPool: unknown config key; allowed: cloud, cluster, gpuPools"),
        (
            {"gpuSoftware": {"mode": "device-plugin"}},
            "gpuSoftware.mode: NVIDIA's device plugin conflicts with GKE's own",
        ),
        (
            {"gpuSoftware": {"mode": "magic"}},
            "gpuSoftware.mode: Input should be 'auto', 'device-plugin', 'gpu-operator' or 'cloud-managed' (got 'magic')",
        ),
    ],
)
def test_bad_top_level_keys(changes: dict[str, Any], expected: str) -> None:
    problems = problems_of(config_with(**changes))
    assert any(p.startswith(expected) for p in problems), problems


def test_cluster_problems() -> None:
    cluster = copy.deepcopy(BASE["cluster"])
    cluster["kubernetesVersion"] = "1.20"
    cluster["zones"] = ["us-east1-b"]
    cluster["name"] = "Not_Valid"
    cluster["gcp"].pop("project")
    problems = problems_of(config_with(cluster=cluster))
    assert any(
        p.startswith("cluster.kubernetesVersion: Kubernetes 1.20 is not in gpufleet's GKE table")
        for p in problems
    )
    assert any(p.startswith("cluster.zones[0]: zone outside region us-central1") for p in problems)
    assert any(p.startswith("cluster.name: not a valid cluster name") for p in problems)
    assert "cluster.gcp.project: is required on gcp (the GCP project id)" in problems


def test_every_problem_is_reported_at_once() -> None:
    raw = config_with(
        gpuPools=[
            pool(name="a", accelerator="z100"),
            pool(name="b", minNodes=5, maxNodes=1),
            pool(name="b", sharing={"strategy": "mps", "maxSharedClientsPerGpu": 0}),
            {"name": "c", "accelerator": "l4", "spot": "sometimes", "zones": ["us-central1-a"]},
        ]
    )
    raw["cluster"] = {**raw["cluster"], "kubernetesVersion": "0.9"}
    problems = problems_of(raw)
    paths = {p.split(":")[0] for p in problems}
    assert {
        "gpuPools[0].accelerator",
        "gpuPools[1].minNodes",
        "gpuPools[2].name",
        "gpuPools[2].sharing.maxSharedClientsPerGpu",
        "gpuPools[3].spot",
        "cluster.kubernetesVersion",
    } <= paths


def test_zones_are_required_for_gke_gpu_pools() -> None:
    cluster = {k: v for k, v in BASE["cluster"].items() if k != "zones"}
    message = only_problem(
        config_with(cluster=cluster, gpuPools=[{"name": "x", "accelerator": "t4"}])
    )
    assert message.startswith("gpuPools[0].zones: is required")


def test_accelerator_without_machine_type_gets_the_cloud_default() -> None:
    from components.model.pools import resolve_pools

    config = parse_config(
        config_with(
            gpuPools=[{"name": "x", "accelerator": "a100-40gb", "zones": ["us-central1-a"]}]
        )
    )
    (spec,) = resolve_pools(config)
    assert spec.machine_types == ("a2-highgpu-1g",)
    assert spec.gpus_per_node == 1


def test_cli_reports_config_errors_with_exit_2_and_no_traceback(tmp_path: Any, capsys: Any) -> None:
    stack = tmp_path / "Pulumi.broken.yaml"
    stack.write_text(
        "config:\n"
        "  gpufleet:cloud: gcp\n"
        "  gpufleet:cluster: {name: c, region: us-central1, zones: [us-central1-a], gcp: {project: p}}\n"
        "  gpufleet:gpuPools:\n"
        "    - {name: a, accelerator: l4, machineType: n1-standard-4}\n"
        "    - {name: b, accelerator: t4, minNodes: 3, maxNodes: 1}\n"
    )
    assert cli_main(["plan", str(stack)]) == 2
    err = capsys.readouterr().err
    assert "gpuPools[0].machineType: cannot carry l4 on gcp" in err
    assert "gpuPools[1].minNodes: must be <= maxNodes (1) (got 3)" in err
    assert "Traceback" not in err


def test_cli_unknown_stack_exit_2(capsys: Any) -> None:
    assert cli_main(["plan", "no-such-stack"]) == 2
    err = capsys.readouterr().err
    assert "your stacks: " in err and "examples: aws-auto-mode, aws-dev" in err
    assert "`python -m components new --help` writes a new one" in err


@pytest.mark.parametrize("stack", ["gcp-dev", "aws-dev", "azure-dev", "existing-dev"])
def test_another_clouds_section_is_refused_not_ignored(stack: str) -> None:
    from components.model.registry import CLOUDS

    raw = copy.deepcopy(dict(load_stack(stack).gpufleet))
    # `cluster.existing` on gcp, aws and azure adopts a cluster (tests/test_adopted.py).
    adopts = CLOUDS[raw["cloud"]].adopts_clusters
    others = [n for n in CLOUDS if n != raw["cloud"] and not (adopts and n == "existing")]
    # Clouds with a pool section of their own (an existing cluster's pools have none).
    pool_sections = [name for name in others if CLOUDS[name].pool_options is not None]
    for name in others:
        raw["cluster"][name] = {}
    for name in pool_sections:
        raw["gpuPools"][0][name] = {}
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    found = {p.path for p in caught.value.problems}
    assert found == {f"cluster.{n}" for n in others} | {f"gpuPools[0].{n}" for n in pool_sections}
    assert all(f"this stack's cloud is {raw['cloud']}" in p.message for p in caught.value.problems)
