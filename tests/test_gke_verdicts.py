"""`diff` verdicts for GKE day-two edits the second review found wrong or incomplete (review
gke-2.md N6), on the whole graph: a project edit, a MIG layout change under the GPU Operator,
a move between GKE's drivers and the operator, and image streaming turned on or off."""

from __future__ import annotations

import copy
from typing import Any

from components.tooling.diff import diff_plans, render_text
from components.tooling.diff_model import PlanDiff
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

POOL = "gcp:container/nodePool:NodePool"
GRANT = "gcp:projects/iAMMember:IAMMember"
ACCOUNT = "gcp:serviceaccount/account:Account"
OPERATOR = {"gpufleet:gpuSoftware": {"mode": "gpu-operator"}}


def _raw(stack: str) -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(stack).gpufleet))


def _diff(stack: str, before: dict[str, Any], after: dict[str, Any]) -> PlanDiff:
    return diff_plans(plan_of(stack, before).to_json(), plan_of(stack, after).to_json())


def _by_type(diff: PlanDiff, type_token: str) -> dict[str, Any]:
    return {change.name: change for change in diff.changed if change.type == type_token}


def test_a_project_edit_replaces_the_image_streaming_api_service() -> None:
    """google_project_service's `project` is ForceNew: the API is enabled in the new project
    (and, never disabled on delete, stays on in the old one)."""
    raw = _raw("gcp-dev")
    moved = {**raw["cluster"], "gcp": {**raw["cluster"]["gcp"], "project": "other-project-1"}}
    diff = _diff("gcp-dev", {}, {"gpufleet:cluster": moved})
    (service,) = _by_type(diff, "gcp:projects/service:Service").values()
    assert "project" in service.replace_paths


def test_a_project_edit_replaces_the_grants_the_account_and_the_pools() -> None:
    """IAM grants name their project (ForceNew); the account and the pools take the provider's
    (terraform-provider-google DefaultProviderProject makes it ForceNew); the adopted cluster's
    identity names the project, so the Kubernetes resources go with it."""
    raw = _raw("gcp-existing")
    moved = {**raw["cluster"], "gcp": {**raw["cluster"]["gcp"], "project": "other-project-1"}}
    diff = _diff("gcp-existing", {}, {"gpufleet:cluster": moved})
    grants = _by_type(diff, GRANT)
    assert len(grants) == 7  # GKE's node roles and image streaming's
    assert all("project" in change.replace_paths for change in grants.values())
    (account,) = _by_type(diff, ACCOUNT).values()
    assert account.replace_paths == ("provider.project",)
    pools = _by_type(diff, POOL)
    assert len(pools) == 2
    assert all("provider.project" in change.replace_paths for change in pools.values())
    text = render_text(diff)
    assert 'provider.project: "platform-prod-project" -> "other-project-1"' in text
    assert "the resource is recreated in the new project" in text
    assert "note: a new project moves the stack" in text


def test_a_mig_layout_change_under_the_operator_rolls_the_pool() -> None:
    """The pool is updated in place (a node label), then the MIG manager stops the GPU pods,
    re-partitions and reboots every node (NVIDIA gpu-operator-mig.rst, WITH_REBOOT on GKE)."""
    raw = _raw("gcp-a100-mig")
    resized = copy.deepcopy(raw["gpuPools"])
    (mig,) = [pool for pool in resized if pool.get("migPartitionSize") == "1g.5gb"]
    mig["migPartitionSize"] = "2g.10gb"
    diff = _diff("gcp-a100-mig", OPERATOR, {**OPERATOR, "gpufleet:gpuPools": resized})
    (pool,) = _by_type(diff, POOL).values()
    assert pool.verdict == "roll"
    assert "~ ROLLS" in render_text(diff)
    assert "re-partitions its GPUs and reboots it" in render_text(diff)


def test_moving_to_the_operator_says_every_pool_is_replaced_in_the_same_up() -> None:
    diff = _diff("gcp-dev", {}, OPERATOR)
    pools = _by_type(diff, POOL)
    gpu_pools = {name: change for name, change in pools.items() if "system" not in name}
    assert len(gpu_pools) == 2
    for change in gpu_pools.values():
        assert change.verdict == "replace"
        (note,) = change.notes
        assert "deleted and recreated in the same `up` that installs or removes the operator" in (
            note
        )
    assert {ref.type for ref in diff.added} >= {"kubernetes:helm.sh/v3:Release"}


def test_image_streaming_set_on_an_existing_pool_rolls_it_and_the_default_changes_nothing() -> None:
    """By default a pool gets image streaming when it is created, and a pool an earlier
    gpufleet created keeps its setting (ignoreChanges); setting the key applies it, which
    recreates the pool's nodes."""
    raw = _raw("gcp-dev")
    before = plan_of("gcp-dev").to_json()
    older = copy.deepcopy(before)
    for resource in older["resources"]:
        if resource["type"] == POOL and "gcfsConfig" in resource["inputs"].get("nodeConfig", {}):
            resource["inputs"]["nodeConfig"]["gcfsConfig"] = {"enabled": False}
            resource["options"]["ignoreChanges"].remove("nodeConfig.gcfsConfig")
    upgraded = diff_plans(older, before)
    # Only the new ignoreChanges differs: Pulumi records it and sends the pools nothing.
    assert not [c for c in upgraded.changed if c.type == POOL and c.verdict != "none"]
    applied = [item.path for c in upgraded.changed for item in c.changes if "gcfs" in item.path]
    assert applied == []
    pools = copy.deepcopy(raw["gpuPools"])
    pools[0]["gcp"] = {**pools[0].get("gcp", {}), "imageStreaming": False}
    diff = diff_plans(before, plan_of("gcp-dev", {"gpufleet:gpuPools": pools}).to_json())
    (pool,) = _by_type(diff, POOL).values()
    assert pool.verdict == "roll", pool.node_notes


def test_a_cluster_zones_edit_moves_only_the_system_pool_and_the_pools_that_follow_it() -> None:
    """GKE moves every node pool to a cluster's new `desiredLocations` (review gke-3.md R3-1):
    the Cluster's own list is fixed at creation, so adding a zone to `cluster.zones` moves the
    system pool and the pools without zones of their own, each through its own nodeLocations
    (shown by `diff`), and never a GPU pool that names its zones."""
    raw = _raw("gcp-dev")
    pools = copy.deepcopy(raw["gpuPools"])
    (t4,) = [pool for pool in pools if pool["name"] == "t4"]
    del t4["zones"]  # the T4 pool takes cluster.zones; l4-spot keeps [a, b]
    wider = {**raw["cluster"], "zones": [*raw["cluster"]["zones"], "us-central1-f"]}
    diff = _diff(
        "gcp-dev",
        {"gpufleet:gpuPools": pools},
        {"gpufleet:gpuPools": pools, "gpufleet:cluster": wider},
    )
    assert not _by_type(diff, "gcp:container/cluster:Cluster")
    moved = _by_type(diff, POOL)
    assert sorted(moved) == ["gpufleet-dev-system", "gpufleet-dev-t4-pool"]
    for change in moved.values():
        assert [item.path for item in change.changes] == ["nodeLocations"]
        assert change.changes[0].new[-1] == "us-central1-f"
        assert change.verdict == "update"
        (note,) = change.node_notes
        assert "a zone added gets nodes only as the autoscaler adds them" in note.says
    assert not diff.added and not diff.removed


def _moved(stack: str) -> PlanDiff:
    raw = _raw(stack)
    moved = {**raw["cluster"], "gcp": {**raw["cluster"]["gcp"], "project": "other-project-1"}}
    return _diff(stack, {}, {"gpufleet:cluster": moved})


def test_a_project_edit_replaces_the_cluster_through_its_network_and_protect_stops_it() -> None:
    """The Cluster takes no project from the provider (no DefaultProviderProject in TPG), but its
    network is recreated in the new project and `network` is ForceNew on the Cluster: it is
    replaced, created in the new project, where its name is free (review gke-3.md R3-7). A
    protected cluster stops the `up` (Pulumi refuses to replace it)."""
    (cluster,) = _by_type(_moved("gcp-dev"), "gcp:container/cluster:Cluster").values()
    assert set(cluster.replace_paths) >= {"network", "subnetwork"}
    # A new project: no same-name conflict, but the replacement would be created with the
    # state's node config (the old project's node service account): refused (review gke-4 N1).
    assert not [r for r in cluster.refusals if "replacement under the same" in r]
    assert cluster.verdict == "reject"
    (stale,) = cluster.refusals
    assert "replacement in another project with the old project's nodeConfig" in stale
    assert "instead: a new stack in the new project" in stale
    (protected,) = _by_type(_moved("gcp-a100-mig"), "gcp:container/cluster:Cluster").values()
    assert protected.verdict == "reject"
    assert any("currently marked for protection" in r for r in protected.refusals)


def test_a_system_machine_change_says_the_system_pools_own_upgrade_strategy() -> None:
    """The system pool sends no upgradeSettings, so GKE's default surge (one extra node, none
    unavailable) rolls it, not the GPU pools' surge 0 (review gke-3.md R3-6)."""
    raw = _raw("gcp-dev")
    bigger = copy.deepcopy(raw["cluster"])
    bigger["systemPool"]["machineType"] = "e2-standard-8"
    diff = _diff("gcp-dev", {}, {"gpufleet:cluster": bigger})
    (system,) = _by_type(diff, POOL).values()
    assert system.verdict == "roll"
    (sent,) = [p for p in plan_of("gcp-dev").of_type(POOL) if p.inputs["name"] == "system"]
    assert "upgradeSettings" not in sent.inputs  # GKE's default applies
    (note,) = system.node_notes
    assert "the system pool: GKE's default, one extra node at a time and none unavailable" in (
        note.says
    )


def test_a_minor_bump_says_when_the_control_plane_and_the_nodes_move() -> None:
    """TPG asks for the new master version at once; the pools follow by auto-upgrade inside the
    maintenance window; a minor the channel does not offer fails the `up` (review gke-3.md
    R3-9)."""
    raw = _raw("gcp-dev")
    diff = _diff(
        "gcp-dev", {}, {"gpufleet:cluster": {**raw["cluster"], "kubernetesVersion": "1.36"}}
    )
    (cluster,) = _by_type(diff, "gcp:container/cluster:Cluster").values()
    assert cluster.verdict == "update"
    (note,) = cluster.node_notes
    assert note.paths == ("minMasterVersion",) and note.effect == "none"
    assert "GKE upgrades the control plane at once" in note.says
    assert "by auto-upgrade inside the maintenance window" in note.says
    assert "does not offer yet is refused" in note.says
    assert not _by_type(diff, POOL)
