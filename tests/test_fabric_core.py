"""`gpuPools[].interconnect: fabric`, the part every cloud shares: the config checks, the
resolved pool (allocatable, autoscaler view, `gpuPools` output, plan's table), `fit` (a fabric
pod on a plain pool, a gang against one placement) and the NCCL sample.

The clouds' fabric tables land with their own work; here the EKS cloud's hooks are replaced by
a p5.48xlarge EFA fact (research-32 section 1.1: 32 EFA, 3200 Gbps) with a placement cap, so
the shared code is tested through the interface alone.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from components.model.config import parse_config
from components.model.fabric import FabricFacts, NcclFigure, NcclTest, PoolFabric
from components.model.pool_spec import PoolSpec
from components.model.pools import resolve_pools
from components.model.problems import ConfigError
from components.model.registry import CLOUDS
from components.model.schema import GpuPoolConfig, StackConfig
from components.tooling.fit import TemplateVerdict, fit_templates
from components.tooling.nccl_sample import nccl_tests
from components.tooling.pool_views import pool_checks
from components.tooling.render import render_pool_table
from components.tooling.scheduling.workloads import read_workloads

EFA = "vpc.amazonaws.com/efa"
PLACEMENT_CAP = 3
FIGURE = NcclFigure(
    collective="all_reduce",
    busbw_gbytes_per_s=487.1,
    message_bytes=17179869184,
    nodes=2,
    source="aws-samples/awsome-distributed-training micro-benchmarks/nccl-tests/README.md",
)
FACTS = {
    "p5.48xlarge": FabricFacts(
        "p5.48xlarge", "EFA", 32, 3200, EFA, 32, "aws-efa-k8s-device-plugin", FIGURE, "test"
    ),
    # Two types of one GPU count on different fabric kinds, for the one-transport rule.
    "g5.12xlarge": FabricFacts("g5.12xlarge", "EFA", 1, 40, EFA, 1, "plugin", None, "test"),
    "g5.24xlarge": FabricFacts("g5.24xlarge", "other", 1, 50, EFA, 1, "plugin", None, "test"),
}


@pytest.fixture(autouse=True)
def efa_on_eks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    cloud = type(CLOUDS["aws"])

    def pool_fabric(
        self: Any, config: StackConfig, pool: GpuPoolConfig, facts: FabricFacts, zone: str
    ) -> PoolFabric:
        return PoolFabric(facts, zone, "cluster placement group", PLACEMENT_CAP)

    def nccl_test(self: Any, config: StackConfig, pool: PoolSpec, nodes: int) -> NcclTest:
        worker = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{pool.name}-nccl"}}
        return NcclTest(
            (worker,),
            f"kubectl logs {pool.name}-nccl",
            requires=("the MPI Operator (kubeflow.org/v2beta1 MPIJob)",),
            expected=FIGURE,
        )

    monkeypatch.setattr(cloud, "fabric_facts", lambda self, name: FACTS.get(name))
    monkeypatch.setattr(cloud, "pool_fabric", pool_fabric)
    monkeypatch.setattr(cloud, "nccl_test", nccl_test)
    yield


def pool(name: str = "train", **keys: Any) -> dict[str, Any]:
    return {
        "name": name,
        "accelerator": "h100-80gb",
        "machineTypes": ["p5.48xlarge"],
        "maxNodes": 4,
        "zones": ["us-west-2a"],
        "interconnect": "fabric",
        "aws": {"nodeGroup": "managed"},
        **keys,
    }


def raw(*pools: dict[str, Any], zones: list[str] | None = None) -> dict[str, Any]:
    return {
        "cloud": "aws",
        "cluster": {
            "name": "fabric",
            "kubernetesVersion": "1.35",
            "region": "us-west-2",
            "zones": zones or ["us-west-2a", "us-west-2b"],
            "aws": {"publicEndpointCidrs": []},
        },
        "gpuPools": list(pools),
        "gpuSoftware": {"mode": "auto"},
        "samples": {"enabled": False},
    }


def problems(config: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(config)
    return [str(p) for p in caught.value.problems]


def test_a_type_without_a_fabric_is_refused_naming_the_types_that_have_one() -> None:
    (problem,) = problems(raw(pool(accelerator="a100-40gb", machineTypes=["p4d.24xlarge"])))
    assert problem.startswith("gpuPools[0].interconnect: fabric needs a machine type with a GPU")
    assert "p4d.24xlarge has none (machine types with one on aws: " in problem
    assert "g5.12xlarge, g5.24xlarge, p5.48xlarge)" in problem and "'fabric'" in problem


def test_a_fabric_pool_runs_in_exactly_one_zone() -> None:
    parse_config(raw(pool()))  # one zone: the edge passes
    (own,) = problems(raw(pool(zones=["us-west-2a", "us-west-2b"])))
    assert own.startswith("gpuPools[0].zones: a fabric pool runs in exactly one zone: ")
    assert "set gpuPools[0].zones to one zone where p5.48xlarge is offered" in own
    # Inherited from the cluster, the problem is the cluster's zones.
    inherited = pool()
    del inherited["zones"]
    (problem,) = problems(raw(inherited))
    assert problem.startswith("cluster.zones: a fabric pool runs in exactly one zone (the pool")
    # A pool on the default network keeps its zones.
    parse_config(raw(pool(zones=["us-west-2a", "us-west-2b"], interconnect="none")))


def test_mixed_fabric_kinds_in_one_pool_are_refused() -> None:
    mixed = pool(accelerator="a10g", machineTypes=["g5.12xlarge", "g5.24xlarge"], aws={})
    found = problems(raw(mixed))
    assert any(
        p.startswith("gpuPools[0].machineTypes: the machine types of a fabric pool must share")
        and "one NCCL transport" in p
        for p in found
    ), found


def test_the_fabric_resource_is_in_allocatable_and_the_autoscaler_view() -> None:
    (spec,) = resolve_pools(parse_config(raw(pool())))
    assert spec.fabric is not None and spec.fabric.zone == "us-west-2a"
    assert spec.allocatable_per_node[EFA] == 32
    assert spec.scale_from_zero == "pool"
    assert spec.autoscaler_resources[EFA] == 32
    plain = parse_config(raw(pool(interconnect="none")))
    (spec,) = resolve_pools(plain)
    assert spec.fabric is None and EFA not in spec.allocatable_per_node


def test_output_carries_interconnect_and_the_fabric() -> None:
    config = parse_config(raw(pool(), pool("plain", interconnect="none")))
    fabric, plain = (spec.to_output() for spec in resolve_pools(config))
    assert plain["interconnect"] == "none" and "fabric" not in plain
    assert fabric["interconnect"] == "fabric"
    assert fabric["fabric"] == {
        "kind": "EFA",
        "interfaces": 32,
        "bandwidthGbps": 3200,
        "resource": EFA,
        "zone": "us-west-2a",
        "placement": "cluster placement group",
        "placementMaxNodes": PLACEMENT_CAP,
    }
    table = render_pool_table([fabric, plain])
    header, fabric_row, plain_row = table.splitlines()[:3]
    assert header.split()[-1] == "fabric"
    summary = resolve_pools(config)[0].fabric
    assert summary is not None
    assert fabric_row.endswith(
        f"{summary.summary()} (us-west-2a, cluster placement group, <= {PLACEMENT_CAP} nodes)"
    )
    assert plain_row.endswith(" -")
    # A stack without fabric pools keeps its table.
    assert "fabric" not in render_pool_table([plain])


def job(parallelism: int, gpus: int, efa: int, kind: str = "Job") -> str:
    limits = {"nvidia.com/gpu": gpus, **({EFA: efa} if efa else {})}
    pod = {
        "restartPolicy": "Never",
        "tolerations": [{"operator": "Exists"}],
        "containers": [{"name": "rank", "resources": {"limits": limits}}],
    }
    count = "parallelism" if kind == "Job" else "replicas"
    document = {
        "apiVersion": "batch/v1" if kind == "Job" else "apps/v1",
        "kind": kind,
        "metadata": {"name": "nccl"},
        "spec": {count: parallelism, "template": {"spec": pod}},
    }
    return yaml.safe_dump(document)


def fit(config: dict[str, Any], manifest: str) -> TemplateVerdict:
    checks = pool_checks(parse_config(config), None)
    (verdict,) = fit_templates(read_workloads(manifest).templates, checks)
    return verdict


def test_a_fabric_pod_does_not_fit_a_plain_pool() -> None:
    stack = raw(pool("plain", interconnect="none"), pool())
    verdict = fit(stack, job(1, 8, 32))
    plain, fabric = verdict.pools[0], verdict.pools[1]
    assert fabric.fits, fabric.reasons
    assert not plain.fits
    assert (
        "no GPU fabric: set gpuPools[0].interconnect: fabric on a p5.48xlarge pool" in plain.reasons
    )
    # The same pod without the fabric fits both.
    assert all(p.fits for p in fit(stack, job(1, 8, 0)).pools[:2])


def test_a_fabric_gang_fits_one_placement_at_its_edge() -> None:
    """One pod per p5.48xlarge (8 GPUs, 32 EFA); the placement holds 3 nodes, maxNodes 4."""
    stack = raw(pool())
    assert fit(stack, job(PLACEMENT_CAP, 8, 32)).pools[0].fits
    over = fit(stack, job(PLACEMENT_CAP + 1, 8, 32)).pools[0]
    assert not over.fits
    (reason,) = over.reasons
    assert "they need 4 nodes" in reason
    assert "cluster placement group in us-west-2a holds at most 3 nodes" in reason
    assert "fit the job in 3 nodes" in reason
    # Without the fabric, the same 4 pods fit maxNodes 4: only the fabric's placement caps.
    assert fit(stack, job(PLACEMENT_CAP + 1, 8, 0)).pools[0].fits


def test_the_nccl_sample_prints_the_test_and_how_to_read_it() -> None:
    config = parse_config(raw(pool(), pool("plain", interconnect="none")))
    (text,) = nccl_tests(config, resolve_pools(config))
    lines = text.splitlines()
    assert lines[0] == "# NCCL test of fabric pool train (2 nodes): kubectl apply, then"
    assert lines[1] == "#   kubectl logs train-nccl"
    assert lines[2].startswith("# published: all_reduce busbw 487.1 GB/s at 16 GiB messages on 2")
    assert "# not checked: the MPI Operator (kubeflow.org/v2beta1 MPIJob)" in lines
    (manifest,) = yaml.safe_load_all(text)
    assert manifest["metadata"]["name"] == "train-nccl"


def test_a_cloud_without_a_test_prints_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(type(CLOUDS["aws"]), "nccl_test", lambda self, c, p, n: None)
    config = parse_config(raw(pool()))
    assert nccl_tests(config, resolve_pools(config)) == []


def test_consumers_ask_for_the_gpus_share_of_the_fabric() -> None:
    from components.tooling.consumers.pod import pod_fragment

    (spec,) = resolve_pools(parse_config(raw(pool())))
    limits = pod_fragment(spec)["containers"][0]["resources"]["limits"]
    assert limits == {"nvidia.com/gpu": 1, EFA: 4}
    untouched = copy.deepcopy(pool(interconnect="none"))
    (plain,) = resolve_pools(parse_config(raw(untouched)))
    assert pod_fragment(plain)["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": 1}}


def test_fabric_pods_are_a_gang_even_where_the_object_does_not_say_so() -> None:
    """A Deployment's replicas run on their own, but ranks on the fabric need each other."""
    over = fit(raw(pool()), job(PLACEMENT_CAP + 1, 8, 32, kind="Deployment")).pools[0]
    assert not over.fits
    (reason,) = over.reasons
    assert reason.startswith("its 4 pods use the GPU fabric (NCCL ranks run together), but ")
