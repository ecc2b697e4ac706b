"""`fit` names the machine types that would take a pod no pool takes (or says none would).

For each GPU pool's accelerator, every machine type of the cloud's catalog is tried as that
pool's machine (with the node's real allocatable less its DaemonSets); where the cloud's
offerings table knows the stack's region, a machine it does not sell there is named apart.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model.config import parse_config
from components.tooling.cli import main
from components.tooling.machine_fit import machine_hints
from components.tooling.stacks import load_stack

TOLERATE_GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def pod(gpus: int, selector: dict[str, str] | None = None, **requests: str) -> dict[str, Any]:
    return {
        "nodeSelector": selector or {},
        "tolerations": [TOLERATE_GPU],
        "containers": [
            {
                "name": "train",
                "resources": {"requests": requests, "limits": {"nvidia.com/gpu": gpus}},
            }
        ],
    }


def aws(region: str, pools: list[dict[str, Any]]) -> dict[str, Any]:
    raw = copy.deepcopy(load_stack("aws-dev").gpufleet)
    raw["cluster"].update(region=region, zones=[f"{region}b", f"{region}c"])
    raw["gpuPools"] = pools
    return raw


def hints_text(raw: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    return [hint.text() for hint in machine_hints(parse_config(raw), spec)]


def test_a_pod_wanting_four_gpus_is_told_the_machine_types_that_have_them() -> None:
    raw = copy.deepcopy(load_stack("aws-dev").gpufleet)
    assert hints_text(raw, pod(4)) == [
        "t4 (pool t4-spot): g4dn.12xlarge, g4dn.metal would fit",
        "l4 (pool l4): g6.12xlarge, g6.24xlarge, g6.48xlarge would fit",
    ]


def test_cpu_and_memory_are_judged_on_the_allocatable_left_to_pods() -> None:
    # g6.12xlarge has 48 vCPU: less than 48 are left to pods, so 48 whole CPUs need g6.24xlarge.
    raw = copy.deepcopy(load_stack("aws-dev").gpufleet)
    (_, l4) = hints_text(raw, pod(4, cpu="48"))
    assert l4 == "l4 (pool l4): g6.24xlarge, g6.48xlarge would fit"


def test_machines_the_region_does_not_sell_are_named_apart() -> None:
    # us-west-1 sells p5.48xlarge and not p5.4xlarge (the offerings table).
    raw = aws("us-west-1", [{"name": "h100", "accelerator": "h100-80gb"}])
    (hint,) = machine_hints(parse_config(raw), pod(1, {"team": "vision"}))
    assert (hint.fitting, hint.not_offered, hint.region_checked) == (
        ("p5.48xlarge",),
        ("p5.4xlarge",),
        True,
    )
    assert hint.text() == (
        "h100-80gb (pool h100): p5.48xlarge would fit; p5.4xlarge would too, but not sold in "
        "us-west-1"
    )


def test_a_region_the_table_does_not_cover_is_said_not_checked() -> None:
    raw = aws("sa-east-1", [{"name": "h100", "accelerator": "h100-80gb"}])
    (hint,) = hints_text(raw, pod(1, {"team": "vision"}))
    assert hint == (
        "h100-80gb (pool h100): p5.48xlarge, p5.4xlarge would fit (sold in sa-east-1: not checked)"
    )


def test_gke_machines_that_attach_gpus_are_tried_with_each_count() -> None:
    raw = copy.deepcopy(load_stack("gcp-dev").gpufleet)
    (_, t4) = hints_text(raw, pod(4, cpu="40"))
    assert t4.startswith("t4 (pool t4): n1-standard-64 with 4 GPU(s), ")
    assert "n1-standard-8 with 4 GPU(s)" not in t4


def test_pools_of_one_gpu_with_one_answer_share_a_line_and_none_is_said() -> None:
    raw = copy.deepcopy(load_stack("azure-dev").gpufleet)
    assert hints_text(raw, pod(16)) == [
        "t4 (pools t4, t4spot): none of the 4 machine type choices would fit"
    ]


def test_an_existing_cluster_has_no_catalog_to_name() -> None:
    raw = copy.deepcopy(load_stack("existing-dev").gpufleet)
    (first, *_) = hints_text(raw, pod(64))
    assert first.endswith(": the existing catalog names no machine type for it")


def test_fit_prints_and_returns_the_hints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The whole command on a stack whose self-managed groups it plans: text, then --json.
    manifest = tmp_path / "jobs.yaml"
    big = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"}, "spec": pod(4)}
    small = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "small"}, "spec": pod(1)}
    manifest.write_text(yaml.safe_dump_all([big, small]))
    assert main(["fit", "aws-dev", str(manifest)]) == 1
    out = capsys.readouterr().out
    assert (
        "  => fits no pool\n"
        "  machine types of the pools' GPUs whose allocatable would take it:\n"
        "    - t4 (pool t4-spot): g4dn.12xlarge, g4dn.metal would fit\n"
        "    - l4 (pool l4): g6.12xlarge, g6.24xlarge, g6.48xlarge would fit\n"
    ) in out
    assert out.count("machine types of the pools' GPUs") == 1  # the pod that fits gets none
    assert main(["fit", "aws-dev", str(manifest), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert list(document) == ["stack", "cloud", "templates", "ok"]
    big_doc, small_doc = document["templates"]
    assert list(big_doc) == [
        "source",
        "fits",
        "pools",
        "machine_hints",
        "pods",
        "together",
        "notes",
    ]  # keys only added, after the earlier ones
    assert small_doc["machine_hints"] == []
    assert big_doc["machine_hints"][0] == {
        "accelerator": "t4",
        "pools": ["t4-spot"],
        "fitting": ["g4dn.12xlarge", "g4dn.metal"],
        "fitting_not_offered_in_region": [],
        "region": "us-east-1",
        "region_checked": True,
        "note": None,
    }
