"""`python -m components fit`: exit status 0/1/2, the text report and the stable JSON document."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from components.tooling.cli import main

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
            (GKE, str(FIXTURES / "app-with-service.yaml")),
            "(Service/inference) holds no pod template",
        ),
        ((GKE, str(FIXTURES / "no-such-file.yaml")), "cannot read manifest"),
        (("no-such-stack", str(FIXTURES / "gke-gpu-pod.yaml")), "no stack config at"),
        (
            (str(FIXTURES / "stacks" / "invalid.yaml"), str(FIXTURES / "gke-gpu-pod.yaml")),
            "invalid gpufleet config",
        ),
    ],
    ids=["unreadable-yaml", "not-a-workload", "missing-file", "unknown-stack", "bad-config"],
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
