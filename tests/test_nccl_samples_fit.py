"""The NCCL tests `samples` prints for fabric pools, as `fit` reads them (issue 32).

- `fit` reads a Kubeflow MPIJob (kubeflow.org/v2beta1): its Launcher is one pod, its Worker
  replicas all run at once (kubeflow/mpi-operator @caa3c47f pkg/apis/kubeflow/v2beta1/types.go).
- Every NCCL test object carries its pool's name, so two fabric pools' tests never collide, and
  the pool label like the other samples, in their own namespace.
- The NCCL pods need root, host paths or added capabilities (EFA, GPUDirect-TCPXO, InfiniBand):
  they run in `gpufleet-nccl`, which `samples` prints at the level they pass (Kubernetes docs,
  "Pod Security Standards"); the CUDA samples' namespace stays restricted.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model import pod_security
from components.model.catalog.charts import NCCL_NAMESPACE, SAMPLES_NAMESPACE
from components.model.config import parse_config
from components.model.fabric import (
    DNS_LABEL_MAX,
    MPI_NAME_RESERVE,
    NcclFigure,
    figure_size_note,
    largest_message_bytes,
    nccl_name,
)
from components.model.labels import POOL_LABEL
from components.tooling import fit, samples_command

STACKS = Path(__file__).parent.parent / "stacks"
FABRIC_EXAMPLES = ("aws-efa", "gcp-gpudirect", "azure-infiniband")
MAX_NODES = 4  # the aws-efa example's pool h100 (plain GPUs in these MPIJobs: no fabric cap)


def mpijob(workers: int) -> str:
    """An MPIJob whose workers take one p5.48xlarge each (8 GPUs), without the fabric: only
    the MPIJob says they run at once."""
    worker = {
        "nodeSelector": {POOL_LABEL: "h100"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        "containers": [{"name": "w", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 8}}}],
    }
    launcher = {"containers": [{"name": "l", "image": "x"}]}
    job = {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": "ranks"},
        "spec": {
            "mpiReplicaSpecs": {
                "Launcher": {"template": {"spec": launcher}},
                "Worker": {"replicas": workers, "template": {"spec": worker}},
            }
        },
    }
    return yaml.safe_dump(job)


def fit_json(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, stack: str, text: str
) -> tuple[int, dict[str, Any]]:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    code = fit.main([stack, "-", "--json"])
    return code, json.loads(capsys.readouterr().out)


def on_pool(template: dict[str, Any], pool: str) -> dict[str, Any]:
    verdict: dict[str, Any] = next(p for p in template["pools"] if p["pool"] == pool)
    return verdict


def test_fit_judges_an_mpijobs_workers_as_one_gang_at_the_pools_max_nodes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, at_edge = fit_json(capsys, monkeypatch, "aws-efa", mpijob(MAX_NODES))
    assert code == 0
    launcher, worker = at_edge["templates"]
    assert launcher["source"] == "MPIJob/ranks Launcher"
    assert worker["source"] == "MPIJob/ranks Worker"
    assert on_pool(worker, "h100")["fits"], on_pool(worker, "h100")["reasons"]

    code, over = fit_json(capsys, monkeypatch, "aws-efa", mpijob(MAX_NODES + 1))
    assert code == 1
    refused = on_pool(over["templates"][1], "h100")
    assert not refused["fits"]
    (reason,) = refused["reasons"]
    assert reason.startswith(f"MPIJob ranks runs its {MAX_NODES + 1} workers (MPI ranks) at once")
    assert f"maxNodes {MAX_NODES}" in reason
    # The launcher is one pod on its own, whatever the workers.
    assert on_pool(over["templates"][0], "system")["fits"]


def test_an_mpijob_without_replica_specs_is_bad_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: e}\nspec: {}\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(empty))
    assert fit.main(["aws-efa", "-"]) == 2
    assert "MPIJob/e has no spec.mpiReplicaSpecs (Launcher, Worker)" in capsys.readouterr().err


def two_fabric_pools(example: str) -> Path:
    """The example with its first fabric pool twice, the copy named `<pool>x`."""
    document = yaml.safe_load((STACKS / f"Pulumi.{example}.yaml").read_text())
    pools = document["config"]["gpufleet:gpuPools"]
    first = next(p for p in pools if p.get("interconnect") == "fabric")
    pools.append({**first, "name": f"{first['name']}x"})
    path = Path("/tmp/i32-fit") / f"Pulumi.{example}-two.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document))
    return path


def nccl_objects(printed: str) -> list[dict[str, Any]]:
    """The objects after the first NCCL test header (they follow the usual samples)."""
    tail = printed[printed.index("# NCCL test of fabric pool") :]
    return [d for d in yaml.safe_load_all(tail) if d]


@pytest.mark.parametrize("example", FABRIC_EXAMPLES)
def test_two_fabric_pools_tests_have_distinct_names_labels_and_namespace(
    capsys: pytest.CaptureFixture[str], example: str
) -> None:
    assert samples_command.main([str(two_fabric_pools(example))]) == 0
    printed = capsys.readouterr().out
    objects = nccl_objects(printed)
    names = [(o["kind"], o["metadata"]["name"]) for o in objects]
    assert len(names) == len(set(names)), names
    pools = {o["metadata"]["labels"][POOL_LABEL] for o in objects}
    assert len(pools) >= 2, pools
    for o in objects:
        metadata = o["metadata"]
        assert metadata["name"].startswith(f"{metadata['labels'][POOL_LABEL]}-nccl-")
        assert metadata["namespace"] == NCCL_NAMESPACE
        assert len(metadata["name"]) <= DNS_LABEL_MAX
        for replica in o.get("spec", {}).get("mpiReplicaSpecs", {}).values():
            template_labels = replica["template"]["metadata"]["labels"]
            assert template_labels[POOL_LABEL] == metadata["labels"][POOL_LABEL]
    # Each pool's result command names that pool's own object.
    commands = [line for line in printed.splitlines() if line.startswith("#   kubectl")]
    assert len(commands) == len(pools)
    for command, pool in zip(commands, sorted(pools, key=printed.index), strict=True):
        assert f" {pool}-nccl-" in command or f"job/{pool}-nccl-" in command
        assert f"-n {NCCL_NAMESPACE}" in command


def test_names_stay_dns_labels_at_the_edge() -> None:
    suffix = "nccl-test-host-1"
    fits = "p" * (DNS_LABEL_MAX - len(suffix) - 1)
    assert nccl_name(fits, suffix) == f"{fits}-{suffix}"
    assert len(nccl_name(fits, suffix)) == DNS_LABEL_MAX
    assert len(nccl_name(f"{fits}q", suffix)) == DNS_LABEL_MAX
    # The MPI Operator appends `-launcher` (and `-worker-<i>`) to the MPIJob's name.
    mpi = nccl_name("p" * 80, "nccl-allreduce", MPI_NAME_RESERVE)
    assert len(f"{mpi}-launcher") == DNS_LABEL_MAX
    # A cut never leaves a dash before the suffix's own.
    assert nccl_name("ab-" + "c" * 60, "x" * 59) == "ab-" + "x" * 59


def pod_specs_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod specs a printed object runs, read straight from the manifest."""
    if document["kind"] == "Pod":
        return [document["spec"]]
    if document["kind"] == "MPIJob":
        replicas = document["spec"]["mpiReplicaSpecs"].values()
        return [replica["template"]["spec"] for replica in replicas]
    return []


@pytest.mark.parametrize("example", FABRIC_EXAMPLES)
def test_nccl_pods_pass_the_pod_security_of_the_namespace_they_are_printed_into(
    capsys: pytest.CaptureFixture[str], example: str
) -> None:
    """`kubectl apply` of what `samples` prints admits every pod: each object's namespace is a
    printed Namespace whose enforced level admits its pods, and the CUDA samples' namespace
    stays restricted although the NCCL pods would not pass it."""
    assert samples_command.main([example]) == 0
    documents = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    enforced = {
        d["metadata"]["name"]: pod_security.enforced(d["metadata"]["labels"])
        for d in documents
        if d["kind"] == "Namespace"
    }
    assert enforced[SAMPLES_NAMESPACE] == "restricted"
    nccl_pods = 0
    for d in documents:
        if d["kind"] == "Namespace":
            continue
        level = enforced[d["metadata"]["namespace"]]
        assert level is not None
        for spec in pod_specs_of(d):
            assert pod_security.violations(spec, level) == [], (d["metadata"]["name"], level)
            if d["metadata"]["namespace"] == NCCL_NAMESPACE:
                nccl_pods += 1
                # The NCCL pods are why they have their own namespace.
                assert pod_security.violations(spec, "restricted"), d["metadata"]["name"]
    assert nccl_pods >= 2
    # The least privileged level that admits them, no looser.
    level = enforced[NCCL_NAMESPACE]
    assert level is not None
    stricter = pod_security.LEVELS[pod_security.LEVELS.index(level) + 1]
    nccl = [d for d in documents if d["metadata"].get("namespace") == NCCL_NAMESPACE]
    assert any(pod_security.violations(s, stricter) for d in nccl for s in pod_specs_of(d))


def test_the_largest_message_is_the_largest_whose_buffers_fit_at_the_edge() -> None:
    """Three 16 GiB buffers in three quarters of the GPU need 68.72 GB: 69 GB takes 16 GiB,
    68 GB one step less; two buffers (data check off) of 16 GiB need 45.81 GB."""
    sixteen = 16 << 30
    assert largest_message_bytes(69, 3) == sixteen
    assert largest_message_bytes(68, 3) == sixteen // 2
    assert largest_message_bytes(46, 2) == sixteen
    assert largest_message_bytes(45, 2) == sixteen // 2


def test_a_figure_at_a_larger_size_than_the_test_reaches_is_said() -> None:
    figure = NcclFigure("all_reduce", 487.1, 16 << 30, 2, "src")
    assert figure_size_note(figure, 16 << 30) == ()
    (note,) = figure_size_note(figure, 8 << 30)
    assert "16GB" in note and "8GB" in note
    assert figure_size_note(None, 1) == ()


def efa_stack(max_nodes: int) -> Path:
    """aws-efa with its on-demand fabric pool at `max_nodes`."""
    document = yaml.safe_load((STACKS / "Pulumi.aws-efa.yaml").read_text())
    document["config"]["gpufleet:gpuPools"][0]["maxNodes"] = max_nodes
    path = Path("/tmp/s6-11") / f"Pulumi.efa{max_nodes}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document))
    return path


def test_a_one_node_fabric_pool_is_warned_and_gets_no_nccl_test(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A fabric links nodes: maxNodes 1 buys nothing and the two-node test cannot schedule;
    maxNodes 2 (the example's h100-block, and h100 set to 2) gets its test."""
    one = efa_stack(1)
    raw = yaml.safe_load(one.read_text())["config"]
    config = parse_config({k.split(":", 1)[1]: v for k, v in raw.items()})
    assert [w for w in config.warnings if w.startswith("gpuPools[0].maxNodes: 1: ")]
    assert samples_command.main([str(one)]) == 0
    printed = capsys.readouterr().out
    assert "# no NCCL test for fabric pool h100: maxNodes 1, and the test needs 2 nodes" in printed
    assert "# NCCL test of fabric pool h100 " not in printed
    assert "# NCCL test of fabric pool h100-block " in printed
    two = efa_stack(2)
    raw = yaml.safe_load(two.read_text())["config"]
    config = parse_config({k.split(":", 1)[1]: v for k, v in raw.items()})
    assert not [w for w in config.warnings if "maxNodes" in w and "fabric" in w]
    assert samples_command.main([str(two)]) == 0
    printed = capsys.readouterr().out
    assert "# NCCL test of fabric pool h100 " in printed
    assert "no NCCL test" not in printed


def test_every_fabric_types_test_fits_its_gpus() -> None:
    """Every machine type with a fabric, on every cloud: the largest message of its NCCL test
    reaches the published figure's size, and GKE's fixed one fits. GKE's recipe runs all_gather to a fixed 8G
    (cluster-toolkit), whose receive and expected buffers are 8 GiB each: taken as three to be
    safe, on every GKE fabric type's GPU."""
    from components.aws.model.catalog import CATALOG as AWS_CATALOG
    from components.aws.model.fabric import EFA_TYPES
    from components.azure.model.catalog import CATALOG as AZURE_CATALOG
    from components.azure.model.fabric import FABRIC_FACTS as ND_FACTS
    from components.gcp.model.catalog import CATALOG as GCP_CATALOG
    from components.gcp.model.fabric import FABRICS
    from components.model.catalog.gpus import GPU_MODELS

    def memory(catalog: Any, machine: str) -> int:
        (gpu,) = set(catalog.carriers_of(machine))
        return GPU_MODELS[gpu].memory_gb

    for machine, efa in EFA_TYPES.items():
        # Where AWS published a figure, the test still reaches its message size.
        if efa.nccl is not None:
            largest = largest_message_bytes(memory(AWS_CATALOG, machine), 3)
            assert efa.nccl.message_bytes <= largest, machine
    for machine in ND_FACTS:
        assert largest_message_bytes(memory(AZURE_CATALOG, machine), 2) >= 8 << 30, machine
    for machine in FABRICS:
        assert largest_message_bytes(memory(GCP_CATALOG, machine), 3) >= 8 << 30, machine
