"""`python -m components new`: a stack of the user's own from a few choices, which plans cleanly,
with placeholders only where the user gave no value of their own."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml

from components.model.placeholders import find_placeholders
from components.tooling import stacks
from components.tooling.cli import main
from components.tooling.engine import plan_stack
from components.tooling.stacks import load_stack

# (choices, the placeholders the stack keeps, a pool that must come out of it)
CASES = {
    "gke": ("--cloud gcp", ["cluster.gcp.project"], ("l4", "g2-standard-8")),
    "gke-adopted-spot-eu": (
        "--cloud gcp --existing-cluster platform --project acme-ml-4711 --region europe-west4 "
        "--gpu a100-40gb --spot",
        [],
        ("a100-40gb-spot", "a2-highgpu-1g"),
    ),
    "eks": ("--cloud aws --api-cidr 62.157.140.0/28", [], ("l4", "g6.xlarge")),
    "eks-karpenter-spot": (
        "--cloud aws --region us-west-2 --provisioner karpenter --spot --max-nodes 6",
        ["cluster.aws.publicEndpointCidrs[0]"],
        ("l4-spot", "g6.xlarge"),
    ),
    "eks-auto-mode": (
        "--cloud aws --provisioner auto-mode --gpu a10g",
        ["cluster.aws.publicEndpointCidrs[0]"],
        ("a10g", "g5.xlarge"),
    ),
    "aks-spot": ("--cloud azure --spot", ["cluster.azure.apiServerAuthorizedCidrs[0]"], None),
    "aks-adopted": (
        "--cloud azure --existing-cluster research-aks --resource-group rg-research "
        "--region westeurope --gpu a100-80gb",
        [],
        ("a10080gb", "Standard_NC24ads_A100_v4"),
    ),
    "aks-adopted-subscription": (
        "--cloud azure --existing-cluster research-aks --resource-group rg-research "
        "--subscription 1c9a8f2e-5b7d-4e11-9a3c-2f6b8d0e4a71 --gpu t4",
        [],
        ("t4", "Standard_NC4as_T4_v3"),
    ),
    "eks-prod": ("--cloud aws --region us-west-2 --api-cidr 62.157.140.0/28", [], None),
    "existing": ("--cloud existing --gpu a10 --node-label hardware=a10 --context lab", [], None),
}


def new(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["new", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_written_stack_plans_cleanly(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    choices, placeholders, pool = CASES[case]
    path = tmp_path / f"Pulumi.{case}.yaml"
    code, out, err = new(capsys, case, *shlex.split(choices), "--output", str(path))
    # Only what no stack of that choice can avoid: what gpufleet cannot check offline (an
    # account's zone ids, a subscription's zones per VM size) and Auto Mode's node lifetime.
    assert code == 0 and not [line for line in err.splitlines() if not _inherent(line)], err
    assert out.startswith(f"wrote {path}\n")
    assert out.endswith(f"next: .venv/bin/python -m components plan {path}\n")
    stack = load_stack(str(path))
    assert [p.path for p in find_placeholders(stack.gpufleet)] == placeholders
    # The header names every placeholder, so the file says what to fill in by itself.
    text = path.read_text()
    assert text.endswith("\n") and not text.endswith("\n\n")  # a POSIX text file
    header = text.split("\nconfig:", 1)[0]
    for placeholder in placeholders:
        assert f"# - {placeholder}: " in header
    plan = plan_stack(stack)
    (gpu_pool,) = plan.outputs["gpuPools"]
    assert gpu_pool["minNodes"] == 0 and gpu_pool["spot"] == ("--spot" in choices)
    if pool is not None:
        assert (gpu_pool["name"], gpu_pool["machineTypes"]) == (pool[0], [pool[1]])
    warnings = [w for w in plan.warnings if "placeholder" not in w and not _inherent(w)]
    assert warnings == [], warnings


def _inherent(warning: str) -> bool:
    return (
        " not checked" in warning or "EKS Auto Mode replaces every node within 21 days" in warning
    )


def test_it_writes_into_stacks_and_the_stack_is_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(stacks, "STACKS_DIR", tmp_path)
    monkeypatch.setattr("components.tooling.new_stack.STACKS_DIR", tmp_path)
    code, out, _ = new(capsys, "ml-dev", "--cloud", "gcp", "--project", "acme-ml-4711")
    assert code == 0
    assert out.splitlines()[-1] == "next: .venv/bin/python -m components plan ml-dev"
    assert (tmp_path / "Pulumi.ml-dev.yaml").is_file()
    assert stacks.user_stacks() == ["ml-dev"]
    text = (tmp_path / "Pulumi.ml-dev.yaml").read_text()
    assert text.startswith(
        "# ml-dev: written by `python -m components new ml-dev --cloud gcp --project "
        "acme-ml-4711`.\n"
    )
    config = yaml.safe_load(text)["config"]
    assert config["gpufleet:cluster"]["kubernetesVersion"] == "1.36"  # a string, as required
    # A second run does not overwrite it unless asked to.
    code, out, err = new(capsys, "ml-dev", "--cloud", "aws")
    assert (code, out) == (2, "")
    assert "Pulumi.ml-dev.yaml exists; choose another NAME, or --force to overwrite it" in err
    assert new(capsys, "ml-dev", "--cloud", "aws", "--force")[0] == 0
    assert (
        yaml.safe_load((tmp_path / "Pulumi.ml-dev.yaml").read_text())["config"]["gpufleet:cloud"]
        == "aws"
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            "x --cloud gcp --provisioner karpenter --gpu a10g",
            [
                "--provisioner: does not apply to --cloud gcp",
                "--gpu: a10g is not offered on gcp; offered: a100-40gb,",
            ],
        ),
        (
            "x --cloud azure --existing-cluster shared",
            ["--resource-group: required with --existing-cluster on azure"],
        ),
        (
            "x --cloud aws --existing-cluster shared --api-cidr 62.157.140.0/28",
            ["--api-cidr: who reaches an existing cluster's API server is its owner's setting"],
        ),
        ("lab --cloud existing --spot", ["--gpu: required", "--node-label: required", "--spot"]),
        ("x --cloud gcp --region asia-south2 --gpu b200", ["--zones: gpufleet's zone table"]),
        (
            "x --cloud aws --kubernetes-version 1.20",
            ["nothing written", "cluster.kubernetesVersion: Kubernetes 1.20"],
        ),
        ("'my stack' --cloud gcp", ["NAME: 'my stack' is not a stack name"]),
    ],
)
def test_choices_it_cannot_use_exit_2_naming_the_option(
    args: str, said: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = new(capsys, *shlex.split(args), "--output", str(tmp_path / "s.yaml"))
    assert (code, out) == (2, "")
    for text in said:
        assert text in err
    assert "Traceback" not in err
    assert not (tmp_path / "s.yaml").exists()


def test_help_says_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["new", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "Exit status: 0 written; 2 bad input" in out
    assert "--existing-cluster CLUSTER" in out
    # A missing or unknown option is bad input too (argparse's status 2).
    with pytest.raises(SystemExit) as done:
        main(["new", "x"])
    assert done.value.code == 2


NAMES = {
    "prod": True,
    "ml-prod": True,
    "prod-eu": True,
    "Production": True,
    "team.prod.v2": True,
    "ml_production": True,
    "product": False,
    "reprod": False,
    "ml-dev": False,
    "prodigy-ml": False,
}


def test_production_names_are_the_ones_the_policy_pack_treats_as_production() -> None:
    from components.model.production import looks_like_production
    from policy import pack_config

    for name, production in NAMES.items():
        assert looks_like_production(name) == production, name
        assert pack_config.is_production(name, {}) == production, name


@pytest.mark.parametrize(
    ("name", "production"), sorted((n, p) for n, p in NAMES.items() if "." not in n)
)
def test_a_production_name_gets_a_protected_cluster_where_gpufleet_creates_it(
    name: str, production: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "stack.yaml"
    code, _, err = new(capsys, name, "--cloud", "azure", "--output", str(path))
    assert code == 0, err
    cluster = load_stack(str(path)).gpufleet["cluster"]
    assert cluster.get("protect", False) is production
    assert ("cluster.protect: true, as the name looks like production" in path.read_text()) == (
        production
    )


@pytest.mark.parametrize(
    "choices",
    [
        "--cloud azure --existing-cluster shared --resource-group rg",
        "--cloud gcp --existing-cluster shared --project acme-ml-4711",
        "--cloud existing --gpu a10 --node-label hardware=a10",
    ],
)
def test_an_adopted_or_existing_cluster_is_never_protected_by_gpufleet(
    choices: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cluster is its owner's: protect is refused there (check_adopted), and the policy has
    no cluster resource to check."""
    path = tmp_path / "stack.yaml"
    code, _, err = new(capsys, "ml-prod", *shlex.split(choices), "--output", str(path))
    assert code == 0, err
    assert "protect" not in load_stack(str(path)).gpufleet["cluster"]


def test_plan_warns_before_ci_refuses_an_unprotected_production_stack(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from components.tooling.commands import load_validated

    written = load_stack("gcp-dev").path.read_text()
    unprotected = tmp_path / "Pulumi.ml-prod.yaml"
    unprotected.write_text(written)
    load_validated(str(unprotected), name_placeholders=True)
    assert (
        "warning: cluster.protect: stack ml-prod looks like production by its name, and its "
        "cluster is not protected: the policy pack's clusters-protected-in-production refuses "
        "its preview in CI"
    ) in capsys.readouterr().err
    protected = tmp_path / "Pulumi.prod.yaml"
    protected.write_text(
        written.replace("    name: gpufleet-dev\n", "    name: gpufleet-dev\n    protect: true\n")
    )
    load_validated(str(protected), name_placeholders=True)
    assert "cluster.protect" not in capsys.readouterr().err
    dev = tmp_path / "Pulumi.ml-dev.yaml"
    dev.write_text(written)
    load_validated(str(dev), name_placeholders=True)
    assert "cluster.protect" not in capsys.readouterr().err


def test_subscription_is_written_for_azure_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "stack.yaml"
    guid = "1c9a8f2e-5b7d-4e11-9a3c-2f6b8d0e4a71"
    args = ["--existing-cluster", "research-aks", "--resource-group", "rg"]
    assert (
        new(capsys, "r", "--cloud", "azure", *args, "--subscription", guid, "--output", str(path))[
            0
        ]
        == 0
    )
    assert load_stack(str(path)).gpufleet["cluster"]["azure"]["subscriptionId"] == guid
    # Without it, the header says where the adopted cluster is looked up.
    header = new(capsys, "r", "--cloud", "azure", *args, "--output", "-")[1].replace("\n# ", " ")
    assert "no subscription: research-aks is looked up in ARM_SUBSCRIPTION_ID's subscription" in (
        header
    )
    code, out, err = new(capsys, "r", "--cloud", "aws", "--subscription", guid, "--output", "-")
    assert (code, out) == (2, "")
    assert "--subscription: does not apply to --cloud aws" in err
    code, _, err = new(capsys, "r", "--cloud", "azure", "--subscription", "mine", "--output", "-")
    assert code == 2
    assert "cluster.azure.subscriptionId: must be a subscription id (a GUID) (got 'mine')" in err
