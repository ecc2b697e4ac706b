"""Fast image start on EKS (issue 34): SOCI parallel pull where the image supports it and it is
safe by default, a Bottlerocket data volume from a snapshot, each refused where the pool's image
or kind cannot take it; the user data and block device mappings the plans carry; and what `diff`
says turning either on does to running nodes."""

from __future__ import annotations

import base64
import copy
import json
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from components.aws.model import amis, image_start
from components.aws.model.config import AwsPoolOptions
from components.aws.model.kinds import AUTO_MODE, KARPENTER, MANAGED, SELF_MANAGED
from components.aws.user_data import fast_image_pull
from components.model.config import ConfigError, parse_config
from components.tooling.diff import diff_plans, render_text
from components.tooling.engine import Plan
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
FACTS = Path(__file__).resolve().parent / "data" / "karpenter_facts.json"
SNAP_17 = "snap-0123456789abcdef0"
SNAP_8 = "snap-0a1b2c3d"

# aws-dev: t4-spot (self-managed AL2023) opts in; l4 becomes a managed Bottlerocket group that
# opts in and starts its data volume from a snapshot.
DEV_POOLS = {
    "t4-spot": {"fastImagePull": True},
    "l4": {
        "nodeGroup": "managed",
        "amiFamily": "bottlerocket",
        "fastImagePull": True,
        "dataVolumeSnapshot": SNAP_17,
    },
}
# aws-karpenter: l4 on Bottlerocket from a snapshot (fast pull then off by default), h100 on
# Bottlerocket with the default (on).
KARPENTER_POOLS = {
    "l4": {"amiFamily": "bottlerocket", "dataVolumeSnapshot": SNAP_8},
    "h100": {"amiFamily": "bottlerocket", "fastImagePull": True},
}


def _raw(stack: str) -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(stack).gpufleet))


def _with_aws(stack: str, by_pool: dict[str, dict[str, Any]]) -> dict[str, Any]:
    pools = _raw(stack)["gpuPools"]
    for pool in pools:
        pool["aws"] = {**pool.get("aws", {}), **by_pool.get(pool["name"], {})}
    return {"gpufleet:gpuPools": pools}


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def _templates(plan: Plan) -> dict[str, dict[str, Any]]:
    return {r.name: dict(r.inputs) for r in plan.of_type(LAUNCH_TEMPLATE)}


def _data_volume(mappings: list[dict[str, Any]]) -> dict[str, Any]:
    (volume,) = [m for m in mappings if m["deviceName"] == image_start.DATA_VOLUME_DEVICE]
    return dict(volume["ebs"])


# --- the model: defaults per image and kind, the pinned releases ---------------------------


@pytest.mark.parametrize(
    ("kind", "family", "snapshot", "on"),
    [
        (SELF_MANAGED, "al2023", None, False),  # experimental gate: opt in
        # Bound by gpufleet's 125 MiB/s gp3 disk, where it may be slower (review eks-5 E5-1).
        (SELF_MANAGED, "bottlerocket", None, False),
        (KARPENTER, "bottlerocket", None, False),
        (KARPENTER, "al2023", None, False),
        # A new template version rolls a managed group's nodes: upgrading gpufleet must not.
        (MANAGED, "bottlerocket", None, False),
        # The snapshot's images would be dropped by the snapshotter change at first boot.
        (SELF_MANAGED, "bottlerocket", SNAP_8, False),
        (AUTO_MODE, "al2023", None, False),
    ],
)
def test_fast_image_pull_is_on_by_default_only_where_safe(
    kind: Any, family: str, snapshot: str | None, on: bool
) -> None:
    options = AwsPoolOptions.model_validate({"amiFamily": family, "dataVolumeSnapshot": snapshot})
    start = image_start.image_start(
        options.ami_family,
        options,
        cloud_image=kind.cloud_image,
        rolls_nodes=kind.template_change_rolls,
    )
    assert start.fast_image_pull is on, start.reason
    assert start.reason
    # Set, the key decides (Auto Mode refuses it: tests below).
    explicit = AwsPoolOptions.model_validate({"amiFamily": family, "fastImagePull": not on})
    if not kind.cloud_image:
        chosen = image_start.image_start(
            explicit.ami_family, explicit, cloud_image=False, rolls_nodes=kind.template_change_rolls
        )
        assert chosen.fast_image_pull is (not on)


def test_the_pinned_releases_have_soci_parallel_pull(monkeypatch: pytest.MonkeyPatch) -> None:
    assert image_start.pinned_release_has_it("al2023")  # v20261023 >= v20250813
    assert image_start.pinned_release_has_it("bottlerocket")  # 1.66.0 >= 1.44.0
    monkeypatch.setitem(amis.RELEASES, "bottlerocket", "1.44.0")
    assert image_start.pinned_release_has_it("bottlerocket")
    monkeypatch.setitem(amis.RELEASES, "bottlerocket", "1.43.2")
    assert not image_start.pinned_release_has_it("bottlerocket")
    raw = _raw("aws-training")
    raw["gpuPools"][1]["aws"]["fastImagePull"] = True
    assert any(
        p.startswith("gpuPools[1].aws.fastImagePull: gpufleet's pinned bottlerocket release")
        for p in _problems(raw)
    )


# --- refusals: the snapshot id at its edges, the image and kind matrix -------------------


@pytest.mark.parametrize("snapshot", [SNAP_8, SNAP_17])
def test_snapshot_ids_of_both_lengths_pass(snapshot: str) -> None:
    raw = _raw("aws-training")
    raw["gpuPools"][1]["aws"]["dataVolumeSnapshot"] = snapshot
    warnings = parse_config(raw).warnings
    assert any(
        w.startswith(f"gpuPools[1].aws.dataVolumeSnapshot: not checked: {snapshot}")
        and "diskSizeGb (300 GiB)" in w
        for w in warnings
    )


@pytest.mark.parametrize(
    "snapshot",
    [
        "snap-0a1b2c3",  # 7 digits
        "snap-0a1b2c3d4",  # 9
        "snap-0123456789abcdef",  # 16
        "snap-0123456789abcdef01",  # 18
        "snap-0A1B2C3D",  # upper case
        "vol-0a1b2c3d",
        "0123456789abcdef0",
    ],
)
def test_a_malformed_snapshot_id_is_refused(snapshot: str) -> None:
    raw = _raw("aws-training")
    raw["gpuPools"][1]["aws"]["dataVolumeSnapshot"] = snapshot
    (problem,) = [p for p in _problems(raw) if "dataVolumeSnapshot" in p]
    assert problem.startswith("gpuPools[1].aws.dataVolumeSnapshot: is an EBS snapshot id")
    assert repr(snapshot) in problem or snapshot in problem


def test_a_snapshot_on_al2023_is_refused_with_what_to_do() -> None:
    raw = _raw("aws-dev")
    raw["gpuPools"][1]["aws"] = {"dataVolumeSnapshot": SNAP_17}
    (problem,) = _problems(raw)
    assert problem.startswith("gpuPools[1].aws.dataVolumeSnapshot: a data volume with preloaded")
    assert "set aws.amiFamily: bottlerocket" in problem


def test_auto_mode_refuses_both_keys_together() -> None:
    raw = _raw("aws-auto-mode")
    raw["gpuPools"][0]["aws"] = {"fastImagePull": True, "dataVolumeSnapshot": SNAP_17}
    problems = [p for p in _problems(raw) if "NodeClass has no user data" in p]
    assert [p.split(":")[0] for p in problems] == [
        "gpuPools[0].aws.fastImagePull",
        "gpuPools[0].aws.dataVolumeSnapshot",
    ]


def test_opting_in_on_al2023_and_both_on_bottlerocket_are_warned() -> None:
    raw = _raw("aws-training")
    raw["gpuPools"][1]["aws"].update(fastImagePull=True, dataVolumeSnapshot=SNAP_17)
    raw["gpuPools"][0]["aws"]["fastImagePull"] = True
    warnings = parse_config(raw).warnings
    assert any(
        w.startswith("gpuPools[1].aws.fastImagePull: not checked: the snapshot must have been")
        for w in warnings
    )
    assert any(
        w.startswith("gpuPools[0].aws.fastImagePull: AL2023's FastImagePull is experimental")
        for w in warnings
    )


# --- what the plans carry -----------------------------------------------------------------


def test_the_examples_defaults_in_their_plans() -> None:
    """No example pool pulls in parallel by default (gpufleet's gp3 disks are below what it
    needs), and managed groups' launch templates keep having no user data."""
    templates = _templates(plan_of("aws-training"))
    assert not fast_image_pull(templates["gpufleet-training-a100-spot-template"]["userData"])
    assert "userData" not in templates["gpufleet-training-h100-template"]
    assert (
        _data_volume(templates["gpufleet-training-a100-spot-template"]["blockDeviceMappings"])[
            "volumeSize"
        ]
        == 300
    )
    for name, template in _templates(plan_of("aws-dev")).items():
        if "userData" in template:
            assert not fast_image_pull(template["userData"]), name


def test_aws_dev_with_the_keys_carries_them_in_its_launch_templates() -> None:
    templates = _templates(plan_of("aws-dev", _with_aws("aws-dev", DEV_POOLS)))
    al2023 = templates["gpufleet-dev-t4-spot-template"]
    assert fast_image_pull(al2023["userData"])
    assert all(m["deviceName"] != "/dev/xvdb" for m in al2023["blockDeviceMappings"])
    managed = templates["gpufleet-dev-l4-template"]
    assert fast_image_pull(managed["userData"])
    settings = tomllib.loads(base64.b64decode(managed["userData"]).decode())["settings"]
    # A managed Bottlerocket group's user data names the cluster (EKS merges it with its own).
    assert settings["kubernetes"]["cluster-name"] == "gpufleet-dev"
    volume = _data_volume(managed["blockDeviceMappings"])
    assert volume["snapshotId"] == SNAP_17 and volume["encrypted"] == "true"


def test_aws_karpenter_with_the_keys_carries_them_in_its_node_classes() -> None:
    plan = plan_of("aws-karpenter", _with_aws("aws-karpenter", KARPENTER_POOLS))
    classes = {r.inputs["metadata"]["name"]: dict(r.inputs) for r in plan.of_type(NODE_CLASS)}
    l4, h100 = classes["l4"]["spec"], classes["h100"]["spec"]
    assert _data_volume(l4["blockDeviceMappings"])["snapshotID"] == SNAP_8
    assert "userData" not in l4  # the snapshot's images would be dropped by soci
    assert fast_image_pull(h100["userData"])
    # Only the soci tables: Karpenter writes the cluster's own settings.
    assert "settings.kubernetes" not in h100["userData"]
    assert "snapshotID" not in _data_volume(h100["blockDeviceMappings"])
    if FACTS.exists():
        schema = json.loads(FACTS.read_text())["crds"]["EC2NodeClass"]
        for document in classes.values():
            jsonschema.validate(document, schema)
    base = {
        r.inputs["metadata"]["name"]: r.inputs for r in plan_of("aws-karpenter").of_type(NODE_CLASS)
    }
    assert all("userData" not in c["spec"] for c in base.values())  # AL2023: opt in


# --- day two: what `diff` says turning them on does to running nodes ------------------------


def test_turning_fast_image_start_on_says_whether_nodes_roll() -> None:
    before = plan_of("aws-training").to_json()
    pools = _raw("aws-training")["gpuPools"]
    pools[1]["aws"]["dataVolumeSnapshot"] = SNAP_17  # self-managed Bottlerocket
    pools[0]["aws"]["fastImagePull"] = True  # managed AL2023
    diff = diff_plans(before, plan_of("aws-training", {"gpufleet:gpuPools": pools}).to_json())
    verdicts = {c.name: c.verdict for c in diff.changed}
    text = render_text(diff)
    assert verdicts["gpufleet-training-h100-us-west-2a"] == "roll"
    assert "~ ROLLS aws:eks/nodeGroup:NodeGroup gpufleet-training-h100-us-west-2a" in text
    a100 = [n for n in verdicts if n.startswith("gpufleet-training-a100-spot-us-west-2")]
    assert a100 and all(verdicts[n] != "roll" for n in a100)
    assert "running instances keep theirs" in text


def test_karpenter_node_classes_drift_without_replacing_running_nodes() -> None:
    before = plan_of("aws-karpenter").to_json()
    after = plan_of("aws-karpenter", _with_aws("aws-karpenter", KARPENTER_POOLS)).to_json()
    diff = diff_plans(before, after)
    changed = {c.name: c for c in diff.changed if c.type == NODE_CLASS}
    assert changed and all(c.verdict != "roll" for c in changed.values())
    text = render_text(diff)
    assert "keep the user data they booted with" in text  # h100: userData added
    assert "a data volume snapshot applies at launch" in text  # l4: snapshotID added
