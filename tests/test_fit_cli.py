"""`python -m components fit`: exit status 0/1/2, the text report and the stable JSON document."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from components.tooling import fit, samples_command
from components.tooling.cli import main
from tests.conftest import over_every_stack

FIXTURES = Path(__file__).parent / "fixtures" / "fit"
GKE = str(FIXTURES / "stacks" / "gke.yaml")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["fit", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_exit_0_when_every_template_fits_some_pool(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, GKE, str(FIXTURES / "gke-gpu-pod.yaml"))
    assert code == 0, err
    assert "Pod/cuda-smoke" in out
    assert "  ✓ l4-shared" in out and "fits (gpu pool, autoscaler template at zero)" in out
    assert "  ✗ system" in out
    assert "      - requests nvidia.com/gpu: 1 but the node offers none" in out
    assert "  => schedules on: l4-shared" in out
    assert out.rstrip().splitlines()[-1].startswith("✓ every pod template (1) fits")


def test_exit_1_when_a_template_fits_no_pool(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, GKE, str(FIXTURES / "too-many-gpus-job.yaml"))
    assert code == 1
    assert "  => fits no pool" in out
    assert "requests nvidia.com/gpu: 16 but a node offers 8" in out
    assert out.rstrip().splitlines()[-1] == (
        "✗ 1 of 1 pod template(s) fit no pool of stack gke (gcp): Job/big-train"
    )


def test_json_document_is_stable_and_complete(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, GKE, str(FIXTURES / "affinity-cronjob.yaml"), "--json")
    assert code == 0
    document = json.loads(out)
    assert list(document) == ["stack", "cloud", "templates", "ok"]
    assert (document["stack"], document["cloud"], document["ok"]) == ("gke", "gcp", True)
    (template,) = document["templates"]
    assert (template["source"], template["fits"]) == ("CronJob/nightly-eval", True)
    assert [p["pool"] for p in template["pools"]] == [
        "l4-shared",
        "t4",
        "a100-mig",
        "h100",
        "system",
    ]
    for pool in template["pools"]:
        assert set(pool) == {"pool", "kind", "fits", "via", "reasons", "notes"}
        assert pool["fits"] == (not pool["reasons"])
    t4 = template["pools"][1]
    assert (t4["kind"], t4["fits"], t4["via"]) == ("gpu", True, "autoscaler template at zero")
    assert template["pools"][4]["via"] == "running nodes"
    _, second, _ = run(capsys, GKE, str(FIXTURES / "affinity-cronjob.yaml"), "--json")
    assert second == out


def test_several_documents_and_kinds_in_one_manifest(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, GKE, str(FIXTURES / "app-with-service.yaml"), "--skip-other-kinds")
    assert code == 0
    assert "Deployment/inference" in out and "Service" not in out


@pytest.mark.parametrize("options", [(), ("--json",)], ids=["text", "json"])
def test_kinds_without_pods_are_skipped_and_named_on_stderr(
    capsys: pytest.CaptureFixture[str], options: tuple[str, ...]
) -> None:
    code, out, err = run(capsys, GKE, str(FIXTURES / "app-with-service.yaml"), *options)
    assert code == 0, err
    assert err == (
        "note: skipped 2 objects that run no pods: Service/inference (document 1), "
        "ConfigMap/inference-config (document 2)\n"
    )
    if options:
        document = json.loads(out)  # the report on stdout stays one valid JSON document
        assert [t["source"] for t in document["templates"]] == ["Deployment/inference"]
        assert document["ok"] is True
    else:
        assert out.startswith("Deployment/inference\n") and "Service" not in out


def test_unknown_kind_is_bad_input_unless_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = str(FIXTURES / "unknown-kind.yaml")
    code, out, err = run(capsys, GKE, manifest)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"error: {manifest}: document 1 (RayCluster/ray): fit does not know kind RayCluster "
        "(apiVersion ray.io/v1), so it cannot check the pods it may run; it reads CronJob, "
        "DaemonSet, Deployment, Job, JobSet, MPIJob, Pod, PodTemplate, ReplicaSet, ReplicationController, "
        "StatefulSet, List or a bare pod spec, and skips kinds that run no pods (Namespace, "
        "Service, ConfigMap, ...)",
        "hint: --skip-other-kinds skips objects of kinds fit does not know (RayCluster); their "
        "pods are then not checked",
    ]

    code, out, err = run(capsys, GKE, manifest, "--skip-other-kinds", "--json")
    assert code == 0, err
    assert [t["source"] for t in json.loads(out)["templates"]] == ["Pod/cuda-smoke"]
    assert err == (
        "note: skipped 1 object of a kind fit does not know (--skip-other-kinds); its pods, "
        "if any, were not checked: RayCluster/ray (document 1)\n"
    )


@pytest.mark.parametrize("options", [(), ("--json",)], ids=["text", "json"])
def test_resources_the_api_server_rejects_are_bad_input_all_at_once(
    capsys: pytest.CaptureFixture[str], options: tuple[str, ...]
) -> None:
    manifest = str(FIXTURES / "invalid-resources.yaml")
    code, out, err = run(capsys, GKE, manifest, *options)
    assert code == 2
    assert out == ""  # no pool was checked, and nothing half-written for --json readers
    assert "Traceback" not in err
    assert err.splitlines() == [
        f"error: {manifest}: 6 problems; no pod template was checked:",
        "  - document 2 (Pod/not-a-number), container cuda: "
        'resources.limits[nvidia.com/gpu]: "abc" is not a Kubernetes quantity; nvidia.com/gpu '
        "is an extended resource, which takes a whole number such as 1 or 2",
        "  - document 3 (Job/half-a-gpu), container trainer: "
        "resources.limits[nvidia.com/gpu]: 0.5 is not a whole number; nvidia.com/gpu is an "
        "extended resource, which takes a whole number such as 1 or 2 (Kubernetes hands out "
        "extended resources whole; to share a GPU, use a pool with GPU sharing)",
        "  - document 4 (Deployment/request-only), container server: "
        "resources.requests[nvidia.com/gpu]: 1 has no resources.limits[nvidia.com/gpu]; "
        "nvidia.com/gpu cannot be overcommitted, so Kubernetes requires a limit for it (set "
        "limits only: the request defaults to the limit)",
        "  - document 5 (StatefulSet/unequal), init container warmup: "
        "resources.requests[nvidia.com/gpu]: 1 differs from resources.limits[nvidia.com/gpu]: 2; "
        "nvidia.com/gpu cannot be overcommitted, so requests must equal limits (or set limits "
        "only)",
        "  - document 5 (StatefulSet/unequal), container worker: resources.requests[cpu]: "
        '"two" is not a Kubernetes quantity; cpu takes cores, e.g. 2, 1.5 or 500m',
        "  - document 5 (StatefulSet/unequal), container worker: resources.requests[memory]: "
        '"1 Gi" is not a Kubernetes quantity; memory takes bytes: a number with an optional '
        "suffix and no space, e.g. 512Mi, 1Gi, 1G or 1e9",
    ]


def test_one_rejected_value_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(
        (FIXTURES / "gke-gpu-pod.yaml")
        .read_text()
        .replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 0.5")
    )
    code, out, err = run(capsys, GKE, str(manifest))
    assert (code, out) == (2, "")
    assert err == (
        f"error: {manifest}: document 1 (Pod/cuda-smoke), container cuda: "
        "resources.limits[nvidia.com/gpu]: 0.5 is not a whole number; nvidia.com/gpu is an "
        "extended resource, which takes a whole number such as 1 or 2 (Kubernetes hands out "
        "extended resources whole; to share a GPU, use a pool with GPU sharing)\n"
    )


@over_every_stack
def test_samples_piped_into_fit_schedule_on_their_own_pools(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, stack: str
) -> None:
    """`python -m components samples STACK | python -m components fit STACK -`, in process.

    Every pod template fits its own pool: a Job's or Pod's, and an MPIJob's Worker (the NCCL
    test of a fabric pool; its Launcher is one pod without GPUs, so any pool that takes it).
    Objects that run no pods (the samples' Namespace, the NCCL tests' own Namespace, GKE's NCCL
    Services) are skipped, each named."""
    assert samples_command.main([stack]) == 0
    printed = capsys.readouterr().out
    documents = [d for d in yaml.safe_load_all(printed) if d]
    pools: dict[str, str] = {}
    launchers: set[str] = set()
    no_pods: list[str] = []
    for number, d in enumerate(documents, start=1):
        source = f"{d['kind']}/{d['metadata']['name']}"
        if d["kind"] in ("Namespace", "Service", "ConfigMap"):
            no_pods.append(f"{source} (document {number})")
        elif d["kind"] == "MPIJob":
            pools[f"{source} Worker"] = d["metadata"]["labels"]["gpufleet.io/pool"]
            launchers.add(f"{source} Launcher")
        else:
            pools[source] = d["metadata"]["labels"]["gpufleet.io/pool"]
    assert pools, "the stack prints no sample workloads"
    if launchers or "# NCCL test of fabric pool" in printed:
        assert any(n.startswith("Namespace/gpufleet-nccl ") for n in no_pods), no_pods

    monkeypatch.setattr("sys.stdin", io.StringIO(printed))
    code = fit.main([stack, "-", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    document = json.loads(out)
    assert document["ok"] is True
    by_source = {t["source"]: t for t in document["templates"]}
    assert set(by_source) == set(pools) | launchers
    for source, pool in pools.items():
        verdict = next(p for p in by_source[source]["pools"] if p["pool"] == pool)
        assert verdict["fits"], (source, verdict["reasons"])
    objects = "object that runs" if len(no_pods) == 1 else "objects that run"
    assert f"note: skipped {len(no_pods)} {objects} no pods: {', '.join(no_pods)}" in err

    monkeypatch.setattr("sys.stdin", io.StringIO(printed))
    assert fit.main([stack, "-"]) == 0
    text = capsys.readouterr().out
    assert (
        text.rstrip().splitlines()[-1].startswith(f"✓ every pod template ({len(by_source)}) fits")
    )


def test_manifest_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO((FIXTURES / "gke-mig-pod.yaml").read_text()))
    code, out, _ = run(capsys, GKE, "-", "--json")
    assert code == 0
    fitting = [p["pool"] for p in json.loads(out)["templates"][0]["pools"] if p["fits"]]
    assert fitting == ["a100-mig"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((GKE, str(FIXTURES / "broken.yaml")), "broken.yaml: cannot read YAML at line 9, column 1"),
        (
            (GKE, str(FIXTURES / "unknown-kind.yaml")),
            "document 1 (RayCluster/ray): fit does not know kind RayCluster",
        ),
        ((GKE, str(FIXTURES / "no-such-file.yaml")), "cannot read manifest"),
        (("no-such-stack", str(FIXTURES / "gke-gpu-pod.yaml")), "no stack config at"),
        (
            (str(FIXTURES / "stacks" / "invalid.yaml"), str(FIXTURES / "gke-gpu-pod.yaml")),
            "invalid gpufleet config",
        ),
    ],
    ids=["unreadable-yaml", "unknown-kind", "missing-file", "unknown-stack", "bad-config"],
)
def test_exit_2_on_bad_input_with_a_clear_message(
    capsys: pytest.CaptureFixture[str], args: tuple[str, str], message: str
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2
    assert out == ""
    assert message in err
    assert "Traceback" not in err


def test_empty_manifest_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("---\n---\n")
    code, _, err = run(capsys, GKE, str(empty))
    assert code == 2
    assert "no workloads found" in err


def test_manifest_of_only_skipped_kinds_is_bad_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("kind: Namespace\nmetadata: {name: ns}\n"))
    code, out, err = run(capsys, GKE, "-")
    assert (code, out) == (2, "")
    assert err.endswith(
        "no workloads found: expected a pod spec or one of CronJob, DaemonSet, "
        "Deployment, Job, JobSet, MPIJob, Pod, PodTemplate, ReplicaSet, ReplicationController, StatefulSet, "
        "List; skipped Namespace/ns (document 1)\n"
    )
    assert err.startswith("error: standard input: ")
