"""GKE fast image start and GPU health on the whole graph: a pool preloaded from a disk image
(`gpuPools[].gcp.secondaryBootDisk`) sends GKE's container image cache, every bad input is
refused at once at its edge, what cannot be checked offline is said, `diff` says adding the disk
replaces the pool, and each pool's repair setting is stated with its reason.

Facts and sources: components/gcp/model/image_start.py and gpu_health.py.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.gcp.model import gpu_health, image_start
from components.gcp.model.capacity import node_pool_capacity
from components.model.capacity import ON_DEMAND, QUEUED
from components.model.config import ConfigError, parse_config
from components.tooling.diff import diff_plans, render_text
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

pytestmark = pytest.mark.xdist_group("gke-image-start")

STACK = "gcp-dev"
NODE_POOL = "gcp:container/nodePool:NodePool"
IMAGE = "projects/ml-images-prod/global/images/pytorch-cache"


def _raw() -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(STACK).gpufleet))


def _preloaded(disk: str = IMAGE, **gcp: Any) -> dict[str, Any]:
    """gcp-dev with its L4 pool preloaded from `disk`."""
    pools = _raw()["gpuPools"]
    pools[0]["gcp"] = {"secondaryBootDisk": disk, **gcp}
    return {"gpufleet:gpuPools": pools}


def _problems(config: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(config)
    return [str(p) for p in caught.value.problems]


def _pool(overrides: dict[str, Any], name: str) -> dict[str, Any]:
    (pool,) = [r for r in plan_of(STACK, overrides).of_type(NODE_POOL) if r.inputs["name"] == name]
    return {"inputs": pool.inputs, "ignore": pool.ignore_changes}


def test_a_preloaded_pool_sends_gkes_image_cache_disk_with_streaming_applied() -> None:
    preloaded = _pool(_preloaded(), "l4-spot")
    node_config = preloaded["inputs"]["nodeConfig"]
    assert node_config["secondaryBootDisks"] == [
        {"diskImage": IMAGE, "mode": "CONTAINER_IMAGE_CACHE"}
    ]
    assert node_config["gcfsConfig"] == {"enabled": True}
    # A new pool must stream: an old pool's setting is never carried over by ignoreChanges.
    assert "nodeConfig.gcfsConfig" not in preloaded["ignore"]
    other = _pool(_preloaded(), "t4")
    assert "secondaryBootDisks" not in other["inputs"]["nodeConfig"]
    assert "nodeConfig.gcfsConfig" in other["ignore"]


def test_every_bad_preload_input_is_refused_at_once_with_key_value_and_what_to_do() -> None:
    config = _raw()
    config["cluster"]["kubernetesVersion"] = "1.28"
    config["gpuPools"][0]["gcp"] = {"secondaryBootDisk": "images/PyTorch", "imageStreaming": False}
    found = _problems(config)
    assert (
        "gpuPools[0].gcp.secondaryBootDisk: must be a disk image: global/images/NAME (an image "
        "of the cluster's project) or projects/PROJECT/global/images/NAME (NAME: 1-63 of a-z 0-9 "
        "-, starting with a letter) (got 'images/PyTorch')"
    ) in found, found
    assert any(
        p.startswith("gpuPools[0].gcp.imageStreaming: must be true with gcp.secondaryBootDisk")
        for p in found
    ), found
    assert any(
        p.startswith(
            "cluster.kubernetesVersion: gpuPools[0].gcp.secondaryBootDisk needs GKE "
            "1.28.3-gke.1067000 or later on COS_CONTAINERD nodes"
        )
        for p in found
    ), found


@pytest.mark.parametrize(
    ("disk", "valid"),
    [
        ("global/images/pytorch-cache", True),
        (IMAGE, True),
        ("projects/ml-images-prod/global/images/Pytorch", False),
        ("https://www.googleapis.com/compute/v1/global/images/x", False),
        ("global/images/", False),
        ("projects/x/global/images/pytorch", False),  # a project id has 6-30 characters
    ],
)
def test_the_disk_image_form(disk: str, valid: bool) -> None:
    config = _raw()
    config["gpuPools"][0]["gcp"] = {"secondaryBootDisk": disk}
    if valid:
        parse_config(config)
    else:
        assert any(p.startswith("gpuPools[0].gcp.secondaryBootDisk") for p in _problems(config))


def test_the_version_floor_at_its_exact_edge() -> None:
    floor = image_start.FLOORS[image_start.POOL_IMAGE_TYPE].version
    assert floor == "1.28.3-gke.1067000"  # Standard clusters' (review gke-5 R5-2)
    assert image_start.meets("1.28.3-gke.1067000", floor)
    assert not image_start.meets("1.28.3-gke.1066999", floor)
    assert not image_start.meets("1.28.2-gke.9999999", floor)
    # A bare minor may run its earliest patch: 1.28 is refused, 1.29 passes.
    assert not image_start.meets("1.28", floor) and image_start.meets("1.29", floor)
    assert not image_start.meets("latest", floor)
    # The oldest minor GKE still creates (Extended channel) passes.
    config = _raw()
    config["cluster"]["kubernetesVersion"] = "1.32"
    config["cluster"]["gcp"]["releaseChannel"] = "EXTENDED"
    config["gpuPools"][0]["gcp"] = {"secondaryBootDisk": IMAGE}
    parse_config(config)


def test_what_gpufleet_cannot_check_offline_is_said_with_the_grant() -> None:
    config = _raw()
    config["gpuPools"][0]["gcp"] = {"secondaryBootDisk": IMAGE}
    said = [w for w in parse_config(config).warnings if "secondaryBootDisk" in w]
    assert any(f"not checked offline: that {IMAGE} exists" in w for w in said), said
    (grant,) = [w for w in said if "imageUser" in w]
    # The MIG creates the disks as the Google APIs service agent (review gke-5 R5-1), per image.
    assert "gcloud compute images add-iam-policy-binding" in grant
    assert "--project ml-images-prod --role roles/compute.imageUser" in grant
    assert "@cloudservices.gserviceaccount.com" in grant and "not checked" in grant
    # The GKE service agent builds the instance template from the image (review fix-5 F5-1).
    assert "@container-engine-robot.iam.gserviceaccount.com" in grant
    assert "trustedImageProjects" in grant
    config["gpuPools"][0]["gcp"] = {"secondaryBootDisk": "global/images/pytorch-cache"}
    assert not [w for w in parse_config(config).warnings if "imageUser" in w]


def test_diff_says_adding_the_preloaded_disk_replaces_the_pool() -> None:
    diff = diff_plans(plan_of(STACK).to_json(), plan_of(STACK, _preloaded()).to_json())
    (pool,) = [c for c in diff.changed if c.type == NODE_POOL]
    assert pool.name == "gpufleet-dev-l4-spot-pool"
    assert pool.verdict == "replace"
    assert "nodeConfig.secondaryBootDisks" in pool.replace_paths
    assert pool.downtime == "every node of this pool and the pods on it"
    (note,) = pool.notes
    assert "set when a node pool is created" in note
    assert "REPLACE" in render_text(diff)


def test_each_pool_states_its_repair_and_why() -> None:
    on_demand = gpu_health.pool_repair(node_pool_capacity(ON_DEMAND, None, None))
    queued = gpu_health.pool_repair(node_pool_capacity(QUEUED, None, None))
    assert on_demand.auto_repair and "not documented" in on_demand.why
    assert not queued.auto_repair and "without auto-repair" in queued.why
    assert gpu_health.XID_CONDITION == "XidCriticalError"
    assert set(gpu_health.UNHEALTHY_GPU_XIDS) <= set(gpu_health.CONDITION_XIDS)
    pools = {
        r.inputs["name"]: r.inputs["management"]["autoRepair"]
        for r in plan_of("gcp-flex-start").of_type(NODE_POOL)
    }
    assert pools == {"system": True, "l4-reserved": True, "h100-flex": False, "a3-queued": False}
