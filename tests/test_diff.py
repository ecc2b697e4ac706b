"""Tests for ``components.tooling.diff`` and the replacement table it relies on.

Plans are built in the tests with the same shape ``python -m components plan --json`` prints,
so each case shows exactly which input changes and what the diff must say about it.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from components.model import resource_index
from components.model.catalog import node_effects
from components.model.catalog.replacements import path_matches
from components.model.resource_index import REPLACEMENT_PATHS, replacement_paths
from components.tooling import diff_nodes
from components.tooling.diff import (
    ABSENT,
    PlanDiff,
    PlanError,
    PropertyChange,
    ResourceChange,
    diff_plans,
    load_plan,
    main,
    render_markdown,
    render_text,
    stacks_note,
)
from components.tooling.diff_cost import CostChange, cost_lines
from components.tooling.diff_paths import parse_property_path
from components.tooling.stacks import shipped_stacks
from tests.conftest import plan_of

STACK = "gcp-dev"
PROJECT = "gpufleet"
GKE_POOL = "gcp:container/nodePool:NodePool"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
AKS_POOL = "azure-native:containerservice:AgentPool"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
PROVIDER = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:providers:gcp::gpufleet-dev-gcp::gcp-id"


def res(
    type_: str,
    name: str,
    inputs: Mapping[str, Any] | None = None,
    *,
    provider: str | None = PROVIDER,
    parent: str | None = None,
    **options: Any,
) -> dict[str, Any]:
    """One resource as the plan command prints it; ``options`` override the defaults."""
    return {
        "urn": f"urn:pulumi:{STACK}::{PROJECT}::{type_}::{name}",
        "type": type_,
        "name": name,
        "parent": parent,
        "custom": True,
        "provider": provider,
        "dependencies": [],
        "inputs": dict(inputs or {}),
        "options": {
            "protect": False,
            "ignoreChanges": [],
            # As gpufleet's pools have it (a same-name replacement is otherwise refused).
            "deleteBeforeReplace": True,
            "dependsOn": [],
            **options,
        },
    }


def make_plan(
    *resources: dict[str, Any], outputs: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A plan document holding ``resources``."""
    return {
        "project": PROJECT,
        "stack": STACK,
        "resources": sorted(resources, key=lambda r: r["urn"]),
        "outputs": dict(outputs or {}),
    }


def l4_pool(**node_config: Any) -> dict[str, Any]:
    """Inputs of a GKE L4 Spot pool, with ``nodeConfig`` keys overridden."""
    return {
        "autoscaling": {"locationPolicy": "ANY", "totalMaxNodeCount": 4, "totalMinNodeCount": 0},
        "cluster": "gpufleet-dev",
        "initialNodeCount": 0,
        "location": "us-central1",
        "name": "l4-spot",
        "nodeConfig": {
            "guestAccelerators": [
                {
                    "count": 1,
                    "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
                    "type": "nvidia-l4",
                }
            ],
            "labels": {"gpufleet.io/pool": "l4-spot"},
            "machineType": "g2-standard-8",
            "spot": True,
            "taints": [{"effect": "NO_SCHEDULE", "key": "nvidia.com/gpu", "value": "present"}],
            **node_config,
        },
        "nodeLocations": ["us-central1-a", "us-central1-b"],
    }


def aks_pool(**overrides: Any) -> dict[str, Any]:
    """Inputs of an AKS spot GPU agent pool."""
    return {
        "agentPoolName": "a100",
        "count": 0,
        "enableAutoScaling": True,
        "gpuProfile": {"driver": "Install"},
        "maxCount": 2,
        "minCount": 0,
        "mode": "User",
        "nodeTaints": ["sku=gpu:NoSchedule"],
        "resourceGroupName": "gpufleet-rg",
        "resourceName": "gpufleet-aks",
        "scaleSetEvictionPolicy": "Delete",
        "scaleSetPriority": "Spot",
        "spotMaxPrice": -1,
        "vmSize": "Standard_NC24ads_A100_v4",
        **overrides,
    }


def one_change(
    type_: str,
    old_inputs: Mapping[str, Any],
    new_inputs: Mapping[str, Any],
    **options: Any,
) -> ResourceChange:
    """Diff one resource whose inputs change, and return its single change entry."""
    diff = diff_plans(
        make_plan(res(type_, "r", old_inputs, **options)),
        make_plan(res(type_, "r", new_inputs, **options)),
    )
    assert not diff.added and not diff.removed
    assert len(diff.changed) == 1, diff
    return diff.changed[0]


def paths(change: ResourceChange) -> list[str]:
    return [item.path for item in change.changes]


# --------------------------------------------------------------------------------------------
# Added / removed / changed
# --------------------------------------------------------------------------------------------


def test_identical_plans_have_no_changes() -> None:
    document = make_plan(res(GKE_POOL, "l4", l4_pool()), res(HELM_RELEASE, "op", {"name": "op"}))
    diff = diff_plans(document, copy.deepcopy(document))
    assert diff.is_empty
    assert diff == PlanDiff(project=PROJECT, stack=STACK)
    assert render_text(diff) == "No changes.\n0 to add, 0 to change (0 replaced), 0 to delete\n"


def test_added_removed_and_changed_are_matched_by_urn() -> None:
    old = make_plan(
        res(GKE_POOL, "kept", l4_pool()),
        res(GKE_POOL, "gone", l4_pool()),
    )
    new = make_plan(
        res(GKE_POOL, "kept", l4_pool(labels={"team": "ml"})),
        res(HELM_RELEASE, "gpu-operator", {"name": "gpu-operator"}),
    )
    diff = diff_plans(old, new)
    assert [(r.type, r.name) for r in diff.added] == [(HELM_RELEASE, "gpu-operator")]
    assert [(r.type, r.name) for r in diff.removed] == [(GKE_POOL, "gone")]
    assert [(c.type, c.name) for c in diff.changed] == [(GKE_POOL, "kept")]
    text = render_text(diff)
    assert f"+ {HELM_RELEASE} gpu-operator\n" in text
    assert f"- {GKE_POOL} gone\n" in text
    assert f"~ {GKE_POOL} kept (update in place)\n" in text
    assert text.endswith("1 to add, 1 to change (0 replaced), 1 to delete\n")


def test_nested_paths_name_the_changed_leaf() -> None:
    old = l4_pool()
    new = l4_pool()
    new["autoscaling"]["totalMaxNodeCount"] = 8
    change = one_change(GKE_POOL, old, new)
    assert change.changes == (PropertyChange("autoscaling.totalMaxNodeCount", 4, 8),)


def test_added_and_removed_keys_show_as_absent() -> None:
    change = one_change(HELM_RELEASE, {"name": "x", "version": "1"}, {"name": "x", "timeout": 600})
    assert change.changes == (
        PropertyChange("timeout", ABSENT, 600),
        PropertyChange("version", "1", ABSENT),
    )
    assert "    timeout: (absent) -> 600" in render_text(diff_of(change))


def diff_of(change: ResourceChange) -> PlanDiff:
    return PlanDiff(changed=(change,))


def test_keys_that_are_not_identifiers_are_bracket_quoted() -> None:
    old = l4_pool(labels={"cloud.google.com/gke-nodepool": "a"})
    new = l4_pool(labels={"cloud.google.com/gke-nodepool": "b"})
    change = one_change(GKE_POOL, old, new)
    assert paths(change) == ['nodeConfig.labels["cloud.google.com/gke-nodepool"]']


def test_lists_are_compared_whole_at_their_path() -> None:
    old = l4_pool()
    new = l4_pool(
        taints=[
            {"effect": "NO_SCHEDULE", "key": "nvidia.com/gpu", "value": "present"},
            {"effect": "NO_SCHEDULE", "key": "team", "value": "ml"},
        ]
    )
    change = one_change(GKE_POOL, old, new)
    assert len(change.changes) == 1
    item = change.changes[0]
    assert item.path == "nodeConfig.taints"
    assert item.old == old["nodeConfig"]["taints"]
    assert item.new == new["nodeConfig"]["taints"]


def test_true_is_not_one() -> None:
    # Python says True == 1; JSON (and the provider) do not.
    change = one_change(HELM_RELEASE, {"name": "x", "atomic": 1}, {"name": "x", "atomic": True})
    assert paths(change) == ["atomic"]


def test_reordered_resources_and_keys_give_the_same_diff() -> None:
    a = res(GKE_POOL, "a", l4_pool())
    b = res(GKE_POOL, "b", l4_pool())
    b_new = res(GKE_POOL, "b", l4_pool(machineType="g2-standard-16"))
    forward = diff_plans(make_plan(a, b), make_plan(a, b_new))
    reordered = {**make_plan(a, b), "resources": [b, a]}
    reversed_keys = json.loads(
        json.dumps(make_plan(b_new, a)), object_pairs_hook=lambda p: dict(p[::-1])
    )
    assert diff_plans(reordered, reversed_keys) == forward
    assert render_text(diff_plans(reordered, reversed_keys)) == render_text(forward)


# --------------------------------------------------------------------------------------------
# Secrets, options, ignoreChanges, provider
# --------------------------------------------------------------------------------------------


def test_secret_masked_on_both_sides_is_unchanged() -> None:
    old = {"name": "x", "values": {"token": "[secret]"}}
    assert diff_plans(
        make_plan(res(HELM_RELEASE, "x", old)),
        make_plan(res(HELM_RELEASE, "x", copy.deepcopy(old))),
    ).is_empty


def test_secret_appearing_or_disappearing_is_a_change() -> None:
    change = one_change(
        HELM_RELEASE,
        {"name": "x", "values": {"token": "plain"}},
        {"name": "x", "values": {"token": "[secret]"}},
    )
    assert change.changes == (PropertyChange("values.token", "plain", "[secret]"),)


def test_options_changes_are_reported_without_replacing() -> None:
    old = make_plan(res(GKE_POOL, "l4", l4_pool()))
    new = make_plan(res(GKE_POOL, "l4", l4_pool(), protect=True, ignoreChanges=["nodeCount"]))
    diff = diff_plans(old, new)
    (change,) = diff.changed
    assert change.changes == (
        PropertyChange("options.ignoreChanges", [], ["nodeCount"]),
        PropertyChange("options.protect", False, True),
    )
    assert not change.replaces
    text = render_text(diff)
    assert "    options.protect: false -> true\n" in text
    assert '    options.ignoreChanges: [] -> ["nodeCount"]\n' in text
    assert "!!" not in text


def test_ignore_changes_hides_the_change_and_its_replacement() -> None:
    # initialNodeCount is ForceNew, but the pools ignore it so updates never fight the
    # autoscaler: Pulumi neither updates nor replaces them.
    old = l4_pool()
    new = {**l4_pool(), "initialNodeCount": 3}
    ignore = ["initialNodeCount", "nodeCount"]
    assert diff_plans(
        make_plan(res(GKE_POOL, "l4", old, ignoreChanges=ignore)),
        make_plan(res(GKE_POOL, "l4", new, ignoreChanges=ignore)),
    ).is_empty
    # Without the option, the same edit recreates the pool.
    assert one_change(GKE_POOL, old, new).replace_paths == ("initialNodeCount",)


def test_ignore_changes_on_a_block_covers_everything_under_it() -> None:
    old = {"name": "c", "nodeConfig": {"machineType": "e2-standard-4", "spot": False}}
    new = {"name": "c", "nodeConfig": {"machineType": "e2-standard-8", "spot": True}}
    diff = diff_plans(
        make_plan(res(GKE_CLUSTER, "c", old, ignoreChanges=["nodeConfig"])),
        make_plan(res(GKE_CLUSTER, "c", new, ignoreChanges=["nodeConfig"])),
    )
    assert diff.is_empty


def test_ignore_changes_below_a_replacement_path_prevents_the_replacement() -> None:
    # remoteAccess is ForceNew as a whole; ignoring one field inside it keeps the old value
    # there, so only the other field's change counts.
    old = {"remoteAccess": {"ec2SshKey": "a", "sourceSecurityGroupIds": ["sg-1"]}}
    new = {"remoteAccess": {"ec2SshKey": "b", "sourceSecurityGroupIds": ["sg-1"]}}
    ignore = ["remoteAccess.ec2SshKey"]
    assert diff_plans(
        make_plan(res(EKS_NODE_GROUP, "g", old, ignoreChanges=ignore)),
        make_plan(res(EKS_NODE_GROUP, "g", new, ignoreChanges=ignore)),
    ).is_empty
    new["remoteAccess"]["sourceSecurityGroupIds"] = ["sg-2"]
    change = one_change(EKS_NODE_GROUP, old, new, ignoreChanges=ignore)
    assert paths(change) == ["remoteAccess.sourceSecurityGroupIds"]
    assert change.replace_paths == ("remoteAccess",)


def test_ignored_path_absent_before_stays_absent() -> None:
    change = one_change(
        HELM_RELEASE,
        {"name": "x"},
        {"name": "x", "version": "2", "timeout": 60},
        ignoreChanges=["version"],
    )
    assert paths(change) == ["timeout"]


def test_ignore_changes_with_a_quoted_key() -> None:
    old = l4_pool(labels={"cloud.google.com/x": "a", "team": "a"})
    new = l4_pool(labels={"cloud.google.com/x": "b", "team": "b"})
    change = one_change(
        GKE_POOL, old, new, ignoreChanges=['nodeConfig.labels["cloud.google.com/x"]']
    )
    assert paths(change) == ["nodeConfig.labels.team"]


def test_explicit_provider_change_replaces() -> None:
    other = PROVIDER.replace("gpufleet-dev-gcp::gcp-id", "gpufleet-other-gcp::other-id")
    diff = diff_plans(
        make_plan(res(GKE_POOL, "l4", l4_pool())),
        make_plan(res(GKE_POOL, "l4", l4_pool(), provider=other)),
    )
    (change,) = diff.changed
    assert change.changes == (PropertyChange("provider", PROVIDER, other),)
    assert change.replace_paths == ("provider",)


def test_default_provider_version_bump_does_not_replace() -> None:
    def default(version: str) -> str:
        return (
            f"urn:pulumi:{STACK}::{PROJECT}::pulumi:providers:gcp::default_{version}::id-{version}"
        )

    diff = diff_plans(
        make_plan(res(GKE_POOL, "l4", l4_pool(), provider=default("9_0_0"))),
        make_plan(res(GKE_POOL, "l4", l4_pool(), provider=default("10_2_0"))),
    )
    (change,) = diff.changed
    assert paths(change) == ["provider"]
    assert not change.replaces


# --------------------------------------------------------------------------------------------
# Replacement detection per provider
# --------------------------------------------------------------------------------------------


def test_gke_guest_accelerator_change_replaces_the_pool() -> None:
    new = l4_pool(guestAccelerators=[{"count": 2, "type": "nvidia-l4"}])
    change = one_change(GKE_POOL, l4_pool(), new)
    assert change.replaces
    assert change.replace_paths == ("nodeConfig.guestAccelerators",)


def test_gke_gpu_driver_version_inside_the_accelerator_replaces() -> None:
    accelerators = l4_pool()["nodeConfig"]["guestAccelerators"]
    accelerators[0]["gpuDriverInstallationConfig"]["gpuDriverVersion"] = "LATEST"
    change = one_change(GKE_POOL, l4_pool(), l4_pool(guestAccelerators=accelerators))
    assert change.replace_paths == ("nodeConfig.guestAccelerators",)


def test_gke_spot_toggle_replaces() -> None:
    change = one_change(GKE_POOL, l4_pool(), l4_pool(spot=False))
    assert change.replace_paths == ("nodeConfig.spot",)


def test_gke_machine_type_change_is_an_in_place_node_upgrade() -> None:
    # terraform-provider-google >= 5.10 updates machineType in place (GKE surges new nodes);
    # the pool resource survives, so no replacement warning.
    change = one_change(GKE_POOL, l4_pool(), l4_pool(machineType="g2-standard-24"))
    assert paths(change) == ["nodeConfig.machineType"]
    assert not change.replaces


def test_gke_machine_type_with_accelerator_count_replaces() -> None:
    # g2-standard-24 carries 2 L4s: the realistic edit changes both, and the count replaces.
    new = l4_pool(
        machineType="g2-standard-24", guestAccelerators=[{"count": 2, "type": "nvidia-l4"}]
    )
    change = one_change(GKE_POOL, l4_pool(), new)
    assert change.replace_paths == ("nodeConfig.guestAccelerators",)


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda p: p["autoscaling"].update(totalMaxNodeCount=8), "autoscaling.totalMaxNodeCount"),
        (lambda p: p.update(nodeLocations=["us-central1-a"]), "nodeLocations"),
        (lambda p: p["nodeConfig"].update(taints=[]), "nodeConfig.taints"),
        (lambda p: p["nodeConfig"]["labels"].update(team="ml"), "nodeConfig.labels.team"),
    ],
    ids=["autoscaling-max", "node-locations", "taints", "labels"],
)
def test_gke_pool_in_place_updates_do_not_warn(
    edit: Callable[[dict[str, Any]], None], path: str
) -> None:
    new = l4_pool()
    edit(new)
    change = one_change(GKE_POOL, l4_pool(), new)
    assert paths(change) == [path]
    assert not change.replaces
    assert "!!" not in render_text(diff_of(change))


def test_adding_a_force_new_block_replaces() -> None:
    # The table path is compared by value, so a change *above* it (the list appearing) counts.
    old = l4_pool()
    del old["nodeConfig"]["guestAccelerators"]
    change = one_change(GKE_POOL, old, l4_pool())
    assert change.replace_paths == ("nodeConfig.guestAccelerators",)


def test_gke_cluster_network_change_replaces_the_cluster() -> None:
    old = {"name": "c", "network": "net-a", "releaseChannel": {"channel": "REGULAR"}}
    new = {"name": "c", "network": "net-b", "releaseChannel": {"channel": "STABLE"}}
    change = one_change(GKE_CLUSTER, old, new)
    assert change.replace_paths == ("network",)
    assert paths(change) == ["network", "releaseChannel.channel"]


@pytest.mark.parametrize(("before", "after", "refused"), [(True, True, True), (True, False, False)])
def test_a_protected_resource_is_replaced_only_once_unprotected(
    before: bool, after: bool, refused: bool
) -> None:
    """Pulumi refuses to replace a resource protected in its state and in the program; dropping
    `protect` in the same `up` is allowed (pulumi/pulumi step_generator.go)."""
    old = res(GKE_CLUSTER, "c", {"name": "c", "network": "net-a"}, protect=before)
    new = res(GKE_CLUSTER, "c", {"name": "c", "network": "net-b"}, protect=after)
    (change,) = diff_plans(make_plan(old), make_plan(new)).changed
    assert change.replace_paths == ("network",)
    protected = [r for r in change.refusals if "marked for protection" in r]
    assert bool(protected) == refused


def test_aks_vm_size_replaces_the_agent_pool() -> None:
    change = one_change(AKS_POOL, aks_pool(), aks_pool(vmSize="Standard_NC48ads_A100_v4"))
    assert change.replace_paths == ("vmSize",)


def test_aks_scale_set_priority_replaces_the_agent_pool() -> None:
    change = one_change(AKS_POOL, aks_pool(), aks_pool(scaleSetPriority="Regular"))
    assert change.replace_paths == ("scaleSetPriority",)


@pytest.mark.parametrize(
    "field",
    ["gpuInstanceProfile", "gpuProfile", "spotMaxPrice", "scaleSetEvictionPolicy", "osDiskSizeGB"],
)
def test_aks_fields_fixed_at_creation_replace(field: str) -> None:
    change = one_change(AKS_POOL, aks_pool(), aks_pool(**{field: "changed"}))
    assert change.replace_paths == (field,)


def test_aks_node_taints_update_in_place() -> None:
    # AKS updates nodeTaints through the agent pool API; azure-native does not force new.
    change = one_change(AKS_POOL, aks_pool(), aks_pool(nodeTaints=["sku=gpu:NoExecute"]))
    assert paths(change) == ["nodeTaints"]
    assert not change.replaces


def test_replace_on_changes_option_forces_replacement() -> None:
    # A component that wants taints to recreate the pool says so; the diff follows the option.
    change = one_change(
        AKS_POOL,
        aks_pool(),
        aks_pool(nodeTaints=["sku=gpu:NoExecute"]),
        replaceOnChanges=["nodeTaints"],
    )
    assert change.replace_paths == ("nodeTaints",)


def test_replace_on_changes_star_and_list_index() -> None:
    star = one_change(
        HELM_RELEASE, {"name": "x", "a": 1}, {"name": "x", "a": 2}, replaceOnChanges=["*"]
    )
    assert star.replace_paths == ("*",)
    indexed = one_change(
        HELM_RELEASE,
        {"name": "x", "set": [{"v": 1}]},
        {"name": "x", "set": [{"v": 2}]},
        replaceOnChanges=["set[*].v"],
    )
    assert indexed.replace_paths == ("set[*].v",)


def test_aks_max_count_is_an_in_place_update() -> None:
    change = one_change(AKS_POOL, aks_pool(), aks_pool(maxCount=4))
    assert paths(change) == ["maxCount"]
    assert not change.replaces


def test_eks_cluster_subnet_change_updates_in_place() -> None:
    # terraform-provider-aws >= 5.25.0 calls UpdateClusterConfig for subnets and SGs.
    old = {"name": "gpufleet", "roleArn": "arn:role", "vpcConfig": {"subnetIds": ["a", "b"]}}
    new = {"name": "gpufleet", "roleArn": "arn:role", "vpcConfig": {"subnetIds": ["a", "b", "c"]}}
    change = one_change(EKS_CLUSTER, old, new)
    assert paths(change) == ["vpcConfig.subnetIds"]
    assert not change.replaces


def test_eks_cluster_role_and_service_cidr_replace() -> None:
    old = {
        "name": "g",
        "roleArn": "arn:a",
        "kubernetesNetworkConfig": {"serviceIpv4Cidr": "10.100.0.0/16"},
    }
    new = {
        "name": "g",
        "roleArn": "arn:b",
        "kubernetesNetworkConfig": {"serviceIpv4Cidr": "172.20.0.0/16"},
    }
    change = one_change(EKS_CLUSTER, old, new)
    assert change.replace_paths == ("kubernetesNetworkConfig.serviceIpv4Cidr", "roleArn")


def test_eks_node_group_instance_types_and_subnets_replace_but_scaling_does_not() -> None:
    base = {
        "amiType": "AL2023_x86_64_NVIDIA",
        "capacityType": "SPOT",
        "instanceTypes": ["g6.xlarge"],
        "scalingConfig": {"desiredSize": 0, "maxSize": 2, "minSize": 0},
        "subnetIds": ["a"],
    }
    replaced = one_change(
        EKS_NODE_GROUP, base, {**base, "instanceTypes": ["g6.2xlarge"], "subnetIds": ["b"]}
    )
    assert replaced.replace_paths == ("instanceTypes", "subnetIds")
    scaled = one_change(
        EKS_NODE_GROUP,
        base,
        {**base, "scalingConfig": {"desiredSize": 0, "maxSize": 5, "minSize": 0}},
    )
    assert not scaled.replaces


def test_helm_release_name_replaces_but_values_do_not() -> None:
    assert one_change(HELM_RELEASE, {"name": "a"}, {"name": "b"}).replace_paths == ("name",)
    values = one_change(
        HELM_RELEASE, {"name": "a", "values": {"x": 1}}, {"name": "a", "values": {"x": 2}}
    )
    assert not values.replaces


def test_unknown_types_never_warn() -> None:
    change = one_change("gcp:compute/network:Network", {"name": "a"}, {"name": "b"})
    assert not change.replaces


# --------------------------------------------------------------------------------------------
# The table itself
# --------------------------------------------------------------------------------------------

_DOTTED_CAMEL = re.compile(r"[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)*\Z")


@pytest.mark.parametrize("type_token", sorted(REPLACEMENT_PATHS))
def test_table_paths_are_dotted_camel_case_without_duplicates(type_token: str) -> None:
    table = REPLACEMENT_PATHS[type_token]
    assert table, type_token
    assert len(set(table)) == len(table)
    assert [p for p in table if not _DOTTED_CAMEL.match(p)] == []


def test_lookup_and_path_matching() -> None:
    assert "nodeConfig.guestAccelerators" in replacement_paths(GKE_POOL)
    assert "nodeConfig.machineType" not in replacement_paths(GKE_POOL)
    assert "vpcConfig.subnetIds" not in replacement_paths(EKS_CLUSTER)
    assert "nodeTaints" not in replacement_paths(AKS_POOL)
    assert replacement_paths("gcp:compute/network:Network") == ()
    # Kubernetes objects not in the table still replace on a new name or namespace ...
    assert replacement_paths("kubernetes:apps/v1:DaemonSet") == (
        "metadata.name",
        "metadata.namespace",
    )
    # ... but Helm charts and YAML components are not objects.
    assert replacement_paths("kubernetes:helm.sh/v4:Chart") == ()
    assert path_matches("nodeConfig.guestAccelerators", "nodeConfig.guestAccelerators")
    assert path_matches("nodeConfig.guestAccelerators", "nodeConfig.guestAccelerators.type")
    assert not path_matches("nodeConfig.spot", "nodeConfig.spotMaxPrice")
    assert not path_matches("nodeConfig.guestAccelerators", "nodeConfig")


# --------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------


def replaced_plan_pair() -> tuple[dict[str, Any], dict[str, Any]]:
    old = make_plan(res(GKE_POOL, "l4-spot", l4_pool()), res(GKE_POOL, "t4", l4_pool()))
    new = make_plan(
        res(GKE_POOL, "l4-spot", l4_pool(guestAccelerators=[{"count": 2, "type": "nvidia-l4"}])),
        res(GKE_POOL, "t4", l4_pool(machineType="n1-standard-16")),
    )
    return old, new


def test_text_rendering_warns_and_summarises() -> None:
    diff = diff_plans(*replaced_plan_pair())
    text = render_text(diff)
    lines = text.splitlines()
    assert lines[-1] == "0 to add, 2 to change (1 replaced; 1 roll running nodes), 0 to delete"
    assert lines[-3] == (
        f"!! REPLACES {GKE_POOL} l4-spot: nodeConfig.guestAccelerators "
        "(the provider recreates this resource; down while it is recreated: every node of "
        "this pool and the pods on it)"
    )
    # A machine type GKE changes in place still recreates every node of the pool.
    assert lines[-2].startswith(
        f"~ ROLLS {GKE_POOL} t4: nodeConfig.machineType (GKE recreates every node of the pool"
    )
    assert f"~ {GKE_POOL} l4-spot (replace)" in lines
    assert f"~ {GKE_POOL} t4 (update in place, rolls running nodes)" in lines
    assert '    nodeConfig.machineType: "g2-standard-8" -> "n1-standard-16"' in lines
    assert '    nodeConfig.guestAccelerators[type="nvidia-l4"].count: 1 -> 2' in lines


def test_long_values_are_truncated_with_the_cut_size() -> None:
    big = {"name": "x", "values": {"blob": "a" * 500}}
    change = one_change(HELM_RELEASE, big, {"name": "x", "values": {"blob": "b" * 500}})
    (line,) = [line for line in render_text(diff_of(change)).splitlines() if "values.blob" in line]
    old_part, new_part = line.split(": ", 1)[1].split(" -> ")
    assert len(old_part) <= 80 and len(new_part) <= 80
    assert re.search(r'^"a+\.\.\. \(\+\d+ chars\)$', old_part)
    assert int(re.findall(r"\+(\d+)", old_part)[0]) + old_part.index(".") == 502


def test_long_lists_of_named_items_show_the_changed_key() -> None:
    accelerators: list[dict[str, Any]] = [
        {
            "count": 1,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
            "gpuSharingConfig": {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4},
            "type": "nvidia-l4",
        }
    ]
    changed = copy.deepcopy(accelerators)
    changed[0]["gpuSharingConfig"]["maxSharedClientsPerGpu"] = 8
    change = one_change(
        GKE_POOL, l4_pool(guestAccelerators=accelerators), l4_pool(guestAccelerators=changed)
    )
    # A list of named items too long for one line is shown item by item, key by key.
    (line,) = render_text(diff_of(change)).splitlines()[1:2]
    assert line == (
        '    nodeConfig.guestAccelerators[type="nvidia-l4"]'
        ".gpuSharingConfig.maxSharedClientsPerGpu: 4 -> 8"
    )


def test_same_name_in_two_parents_is_disambiguated_by_urn() -> None:
    a = res(GKE_POOL, "pool", l4_pool())
    b = {**res(GKE_POOL, "pool", l4_pool()), "urn": f"urn:pulumi:{STACK}::{PROJECT}::x$y::pool"}
    text = render_text(diff_plans(make_plan(), make_plan(a, b)))
    assert f"+ {GKE_POOL} pool ({a['urn']})" in text
    assert f"+ {GKE_POOL} pool ({b['urn']})" in text


def test_markdown_lists_replacements_before_the_diff_block() -> None:
    markdown = render_markdown(diff_plans(*replaced_plan_pair()))
    assert markdown.startswith(f"### Plan diff: {PROJECT} / {STACK}\n")
    assert "**0 to add, 2 to change (1 replaced; 1 roll running nodes), 0 to delete**" in markdown
    warning = markdown.index("> [!WARNING]")
    fence = markdown.index("```diff\n")
    assert warning < fence
    assert f"> - `{GKE_POOL} l4-spot` because of `nodeConfig.guestAccelerators`" in markdown
    rolls = markdown.index("its running nodes** in place")
    assert warning < rolls < fence
    assert f"> - `{GKE_POOL} t4` because of `nodeConfig.machineType`: GKE recreates" in markdown
    assert "!! REPLACES" in markdown[fence:]
    assert markdown.rstrip().endswith("```")


def test_markdown_without_replacements_has_no_warning() -> None:
    old = make_plan(res(GKE_POOL, "l4", l4_pool()))
    new = make_plan(res(GKE_POOL, "l4", l4_pool(labels={"team": "vision"})))
    markdown = render_markdown(diff_plans(old, new))
    assert "[!WARNING]" not in markdown
    assert "running nodes: GKE applies the new Kubernetes labels to the running nodes" in markdown
    assert "```diff" in markdown
    assert "No changes." in render_markdown(diff_plans(old, old))


def test_markdown_fence_survives_backticks_in_values() -> None:
    old = make_plan(res(HELM_RELEASE, "x", {"name": "x", "values": {"s": "a"}}))
    new = make_plan(res(HELM_RELEASE, "x", {"name": "x", "values": {"s": "```\n# not a heading"}}))
    markdown = render_markdown(diff_plans(old, new))
    assert "````diff\n" in markdown
    assert markdown.rstrip().endswith("````")


def test_output_changes_are_listed_but_not_counted() -> None:
    diff = diff_plans(
        make_plan(outputs={"kubeconfig": "[secret]"}),
        make_plan(outputs={"kubeconfig": "[secret]", "n": 2}),
    )
    assert diff.is_empty
    assert diff.outputs == (PropertyChange("n", ABSENT, 2),)
    assert "Outputs:\n    n: (absent) -> 2\n" in render_text(diff)


# --------------------------------------------------------------------------------------------
# Plan validation and the command line
# --------------------------------------------------------------------------------------------


def write(tmp_path: Path, name: str, document: Any) -> str:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return str(path)


def test_main_prints_text_and_exits_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = replaced_plan_pair()
    status = main([write(tmp_path, "old.json", old), write(tmp_path, "new.json", new)])
    out = capsys.readouterr()
    assert status == 0
    assert out.out == render_text(diff_plans(old, new))
    assert out.err == ""


def test_fail_on_replace_exits_one_only_when_something_is_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = replaced_plan_pair()
    old_path, new_path = write(tmp_path, "old.json", old), write(tmp_path, "new.json", new)
    assert main([old_path, new_path, "--fail-on-replace"]) == 1
    assert main([old_path, old_path, "--fail-on-replace"]) == 0
    capsys.readouterr()


def test_markdown_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = replaced_plan_pair()
    main([write(tmp_path, "o.json", old), write(tmp_path, "n.json", new), "--format", "markdown"])
    assert capsys.readouterr().out == render_markdown(diff_plans(old, new))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("{not json", "is not valid JSON"),
        ({"project": "gpufleet"}, 'expected a JSON object with a "resources" list'),
        ({"resources": {"urn": "x"}}, 'expected a JSON object with a "resources" list'),
        ([1, 2], 'expected a JSON object with a "resources" list'),
        ({"resources": [{"type": "x"}]}, 'resources[0] has no "urn"'),
        ({"resources": [{"urn": "u"}, {"urn": "u"}]}, "duplicate urn u"),
    ],
    ids=["missing", "bad-json", "no-resources", "resources-not-list", "array", "no-urn", "dup"],
)
def test_bad_input_exits_two_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: Any, message: str
) -> None:
    good = write(tmp_path, "good.json", make_plan())
    bad = (
        str(tmp_path / "missing.json") if content is None else write(tmp_path, "bad.json", content)
    )
    assert main([good, bad]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.count("\n") == 1 and out.err.startswith("error: ")
    assert message in out.err
    assert "Traceback" not in out.err


def test_usage_errors_exit_two(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["only-one.json"])
    assert exit_info.value.code == 2
    assert "python -m components diff" in capsys.readouterr().err


def test_help_names_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    help_text = capsys.readouterr().out
    assert "usage: python -m components diff" in help_text
    assert "--fail-on-replace" in help_text and "--format" in help_text


def test_diff_plans_rejects_non_plans() -> None:
    with pytest.raises(PlanError, match="old plan is not a plan"):
        diff_plans({"resources": None}, make_plan())


def test_load_plan_reads_stdin(tmp_path: Path) -> None:
    import io

    assert load_plan("-", stdin=io.StringIO(json.dumps(make_plan())))["stack"] == STACK


# --------------------------------------------------------------------------------------------
# Plans of two stacks: matched by logical identity
# --------------------------------------------------------------------------------------------

COMPONENT = "gpufleet:gcp:GpuNodePool"


def component_plan(*pools: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A plan shaped like the real one: pools under a component under the root stack, with an
    explicit provider, URNs carrying the stack in every reference."""
    root = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-{STACK}"
    resources = []
    for name, inputs in pools:
        parent = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:pulumi:Stack${COMPONENT}::{name}"
        component = res(COMPONENT, name, provider=None, parent=root)
        component.update(urn=parent, custom=False)
        pool = res(GKE_POOL, f"{name}-pool", inputs, parent=parent, dependsOn=[PROVIDER])
        pool["urn"] = f"urn:pulumi:{STACK}::{PROJECT}::{COMPONENT}${GKE_POOL}::{name}-pool"
        pool["dependencies"] = [parent]
        resources += [component, pool]
    return make_plan(*resources)


def as_stack(document: dict[str, Any], stack: str) -> dict[str, Any]:
    """The same plan as another stack of the program would print it."""
    text = json.dumps(document)
    text = text.replace(f"urn:pulumi:{STACK}::", f"urn:pulumi:{stack}::")
    text = text.replace(
        f"pulumi:pulumi:Stack::{PROJECT}-{STACK}", f"pulumi:pulumi:Stack::{PROJECT}-{stack}"
    )
    return {**json.loads(text), "stack": stack}


def test_plans_of_two_stacks_are_matched_by_logical_identity() -> None:
    old = component_plan(("l4", l4_pool()), ("t4", l4_pool(machineType="n1-standard-8")))
    same = as_stack(old, "gcp-staging")
    assert "gcp-dev" not in json.dumps(same["resources"])
    diff = diff_plans(old, same)
    assert diff.is_empty, render_text(diff)
    assert diff.stack == "gcp-staging"
    assert stacks_note(old, same) == (
        "Stacks differ (old: gcp-dev, new: gcp-staging, project gpufleet): resources are "
        "matched by logical identity (type, parent chain and name: the URN without its stack)."
    )
    assert stacks_note(old, old) is None


def test_replacement_across_stacks_is_found_and_fails_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = component_plan(("l4", l4_pool()), ("gone", l4_pool()))
    new = as_stack(
        component_plan(
            ("l4", l4_pool(guestAccelerators=[{"count": 2, "type": "nvidia-l4"}])),
            ("added", l4_pool()),
        ),
        "gcp-staging",
    )
    diff = diff_plans(old, new)
    assert [change.name for change in diff.replaced] == ["l4-pool"]
    (change,) = diff.changed
    assert paths(change) == ["nodeConfig.guestAccelerators"]  # parent, provider: unchanged
    assert change.urn.startswith("urn:pulumi:gcp-staging::")
    assert sorted(ref.name for ref in diff.added) == ["added", "added-pool"]
    assert sorted(ref.name for ref in diff.removed) == ["gone", "gone-pool"]
    # A removed resource keeps the URN it has in its own stack.
    assert all(ref.urn.startswith("urn:pulumi:gcp-dev::") for ref in diff.removed)

    old_path, new_path = write(tmp_path, "old.json", old), write(tmp_path, "new.json", new)
    assert main([old_path, new_path, "--fail-on-replace"]) == 1
    text = capsys.readouterr().out
    assert text.splitlines()[0] == stacks_note(old, new)
    assert text.endswith(render_text(diff))
    assert "!! REPLACES gcp:container/nodePool:NodePool l4-pool" in text
    assert main([old_path, new_path]) == 0
    capsys.readouterr()

    assert main([old_path, new_path, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert markdown.startswith(
        f"### Plan diff: {PROJECT} / gcp-staging\n\n> [!NOTE]\n> {stacks_note(old, new)}\n\n"
        "**2 to add, 1 to change (1 replaced), 2 to delete**\n"
    )


def test_same_stack_output_has_no_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = replaced_plan_pair()
    main([write(tmp_path, "o.json", old), write(tmp_path, "n.json", new), "--format", "markdown"])
    assert "[!NOTE]" not in capsys.readouterr().out


def test_plans_of_different_projects_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = component_plan(("l4", l4_pool()))
    other = json.loads(json.dumps(old).replace(f"::{PROJECT}::", "::other::"))
    other["project"] = "other"
    with pytest.raises(PlanError, match="different Pulumi projects"):
        diff_plans(old, other)
    assert main([write(tmp_path, "o.json", old), write(tmp_path, "n.json", other)]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        "error: the plans are of different Pulumi projects (old: gpufleet, new: other); a "
        "resource's identity includes its project, so they share none\n"
    )


def test_a_plan_naming_several_stacks_is_not_a_plan() -> None:
    mixed = component_plan(("l4", l4_pool()))
    mixed["resources"][0]["urn"] = mixed["resources"][0]["urn"].replace(STACK, "elsewhere", 1)
    with pytest.raises(PlanError, match=r"old plan is not a plan: its URNs name several stacks"):
        diff_plans(mixed, mixed)


# --------------------------------------------------------------------------------------------
# Against a real plan of a shipped stack (the contract with ``python -m components plan``)
# --------------------------------------------------------------------------------------------


def test_real_plan_edit_flags_the_pool_it_recreates(plan: Callable[..., Any]) -> None:
    base = plan(STACK)
    pools = json.loads(json.dumps(_stack_pools()))
    for pool in pools:
        if pool["name"] == "t4":
            pool["gpusPerNode"] = 2  # n1 + T4 allows 1, 2 or 4: a new accelerator count
        if pool["name"] == "l4-spot":
            pool["maxNodes"] = 6  # autoscaling bound: in place
    edited = plan(STACK, {"gpufleet:gpuPools": pools})

    old, new = base.to_json(), edited.to_json()
    assert diff_plans(old, old).is_empty
    diff = diff_plans(old, new)
    replaced = {change.name: change.replace_paths for change in diff.replaced}
    assert replaced == {"gpufleet-dev-t4-pool": ("nodeConfig.guestAccelerators",)}
    l4 = next(change for change in diff.changed if change.name == "gpufleet-dev-l4-spot-pool")
    assert paths(l4) == ["autoscaling.totalMaxNodeCount"]
    assert not l4.replaces


def _stack_pools() -> list[dict[str, Any]]:
    from components.tooling.stacks import load_stack

    return list(load_stack(STACK).config["gpufleet:gpuPools"])


def test_real_plans_of_another_stack_name_compare_by_logical_identity(
    plan: Callable[..., Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`plan gcp-dev` against the same program planned as stack gcp-staging, before and after
    an edit that recreates the T4 pool: no spurious deletes, and --fail-on-replace fails."""
    import yaml

    from components.tooling.engine import plan_stack
    from components.tooling.stacks import STACKS_DIR, load_stack

    document = yaml.safe_load((STACKS_DIR / f"Pulumi.{STACK}.yaml").read_text())
    copy_path = tmp_path / "Pulumi.gcp-staging.yaml"
    copy_path.write_text(yaml.safe_dump(document))
    for pool in document["config"]["gpufleet:gpuPools"]:
        if pool["name"] == "t4":
            pool["gpusPerNode"] = 2
    edited_dir = tmp_path / "edited"
    edited_dir.mkdir()
    edited_path = edited_dir / "Pulumi.gcp-staging.yaml"
    edited_path.write_text(yaml.safe_dump(document))

    base = plan(STACK).to_json()
    copy = plan_stack(load_stack(str(copy_path))).to_json()
    edited = plan_stack(load_stack(str(edited_path))).to_json()
    assert (copy["stack"], edited["stack"]) == ("gcp-staging", "gcp-staging")
    assert diff_plans(base, copy).is_empty

    diff = diff_plans(base, edited)
    assert not diff.added and not diff.removed
    assert {c.name: c.replace_paths for c in diff.replaced} == {
        "gpufleet-dev-t4-pool": ("nodeConfig.guestAccelerators",)
    }

    base_path = write(tmp_path, "base.json", base)
    assert main([base_path, write(tmp_path, "copy.json", copy), "--fail-on-replace"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Stacks differ (old: gcp-dev, new: gcp-staging, project gpufleet): resources are matched "
        "by logical identity (type, parent chain and name: the URN without its stack).",
        "No changes.",
        # The copy's warnings (its placeholder project id), none new: both plans carry it.
        "Warnings of the new plan (1):",
        *(f"  - {warning}" for warning in copy["warnings"]),
        # The cost of the stack, which the copy does not change (its figures: tests/test_cost.py).
        *cost_lines(CostChange(base["cost"], copy["cost"])),
        "0 to add, 0 to change (0 replaced), 0 to delete",
    ]
    assert main([base_path, write(tmp_path, "edited.json", edited), "--fail-on-replace"]) == 1
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1] == "0 to add, 1 to change (1 replaced), 0 to delete"


# --------------------------------------------------------------------------------------------
# What an in-place update does to running nodes (each cloud's components/<cloud>/model/node_effects.py)
# --------------------------------------------------------------------------------------------

EKS_GROUP_BASE: dict[str, Any] = {
    "capacityType": "ON_DEMAND",
    "instanceTypes": ["p5.48xlarge"],
    "launchTemplate": {"id": "lt-1", "version": "1"},
    "labels": {"gpufleet.io/pool": "h100"},
    "scalingConfig": {"desiredSize": 0, "maxSize": 2, "minSize": 0},
    "subnetIds": ["a"],
}
ASG = "aws:autoscaling/group:Group"


def test_a_new_launch_template_version_rolls_a_managed_group() -> None:
    """EKS answers a launch template version change with UpdateNodegroupVersion: every node of
    the group is drained and replaced (eks-2 N7)."""
    change = one_change(
        EKS_NODE_GROUP,
        EKS_GROUP_BASE,
        {**EKS_GROUP_BASE, "launchTemplate": {"id": "lt-1", "version": "2"}},
    )
    assert change.verdict == "roll"
    (note,) = change.node_notes
    assert (note.effect, note.paths) == ("rolls", ("launchTemplate",))
    text = render_text(diff_of(change))
    assert f"~ ROLLS {EKS_NODE_GROUP} r: launchTemplate (EKS replaces every node" in text
    assert "running nodes: EKS replaces every node of the group" in text


def test_the_same_change_on_a_self_managed_group_only_shapes_new_instances() -> None:
    old = {"mixedInstancesPolicy": {"launchTemplate": {"version": "1"}}, "maxSize": 2}
    new = {"mixedInstancesPolicy": {"launchTemplate": {"version": "2"}}, "maxSize": 2}
    change = one_change(ASG, old, new)
    assert change.verdict == "update"
    (note,) = change.node_notes
    assert note.effect == "new-nodes"
    assert "running instances keep theirs" in render_text(diff_of(change))


def test_labels_apply_to_running_nodes_and_bounds_touch_none() -> None:
    change = one_change(
        EKS_NODE_GROUP,
        EKS_GROUP_BASE,
        {
            **EKS_GROUP_BASE,
            "labels": {"gpufleet.io/pool": "h100", "team": "llm"},
            "scalingConfig": {"desiredSize": 0, "maxSize": 4, "minSize": 0},
        },
    )
    assert change.verdict == "update"
    assert [(note.effect, note.paths) for note in change.node_notes] == [
        ("in-place", ("labels",)),
        ("none", ("scalingConfig",)),
    ]


def test_the_most_specific_entry_wins_and_a_block_change_finds_entries_inside() -> None:
    # An operator-mode MIG layout is a node label, but changing it reboots the node.
    mig = 'nodeConfig.labels["nvidia.com/mig.config"]'
    old = l4_pool(labels={"nvidia.com/mig.config": "all-1g.10gb"})
    new = l4_pool(labels={"nvidia.com/mig.config": "all-3g.40gb"})
    change = one_change(GKE_POOL, old, new)
    assert change.verdict == "roll"
    assert [(note.effect, note.paths) for note in change.node_notes] == [("rolls", (mig,))]
    other = one_change(GKE_POOL, old, l4_pool(labels={**old["nodeConfig"]["labels"], "a": "b"}))
    assert [(note.effect, note.paths) for note in other.node_notes] == [
        ("in-place", ("nodeConfig.labels",))
    ]
    # The labels block added as a whole: the entry above it and every entry inside it whose
    # value differs are named.
    unlabelled = l4_pool()
    del unlabelled["nodeConfig"]["labels"]
    block = one_change(GKE_POOL, unlabelled, new)
    assert [(note.effect, note.paths) for note in block.node_notes] == [
        ("rolls", (mig,)),
        ("in-place", ("nodeConfig.labels",)),
    ]
    # A replaced pool's nodes are all new: no note.
    replaced = one_change(
        GKE_POOL, old, {**new, "nodeConfig": {**new["nodeConfig"], "spot": False}}
    )
    assert replaced.replaces and replaced.node_notes == ()


def test_a_node_property_without_a_fact_is_said_to_be_unknown() -> None:
    old = {**EKS_GROUP_BASE, "somethingNew": 1}
    change = one_change(EKS_NODE_GROUP, old, {**old, "somethingNew": 2})
    (note,) = change.node_notes
    assert note.effect == "unknown" and note.paths == ("somethingNew",)
    assert "running nodes: not known" in render_text(diff_of(change))


def test_types_without_nodes_get_no_notes() -> None:
    change = one_change(
        HELM_RELEASE, {"name": "a", "values": {"x": 1}}, {"name": "a", "values": {"x": 2}}
    )
    assert change.node_notes == ()


@pytest.mark.parametrize("type_token", sorted(diff_nodes.NODE_EFFECTS))
def test_node_effect_paths_parse_and_are_unique(type_token: str) -> None:
    effects = diff_nodes.NODE_EFFECTS[type_token]
    # One entry per path, or one per `when` (a minor that changes, a minor kept).
    assert len({(effect.path, effect.when) for effect in effects}) == len(effects)
    for effect in effects:
        assert effect.effect in node_effects.EFFECTS
        assert effect.says and effect.source
        # A path the diff can follow: dict keys only (it compares lists whole).
        parsed = parse_property_path(effect.path)
        assert parsed is not None and not parsed[1], effect.path


# --------------------------------------------------------------------------------------------
# Resources that come or go together, and long lists and maps
# --------------------------------------------------------------------------------------------

NTH = "gpufleet:aws:NodeTerminationHandler"


def test_resources_that_go_with_a_component_are_grouped_under_it_with_its_reason() -> None:
    drainer = res(NTH, "spot-drainer")
    queue = res("aws:sqs/queue:Queue", "spot-drainer-queue", parent=drainer["urn"])
    rule = res("aws:cloudwatch/eventRule:EventRule", "spot-drainer-rule", parent=drainer["urn"])
    target = res("aws:cloudwatch/eventTarget:EventTarget", "t", parent=rule["urn"])
    lonely = res("aws:iam/role:Role", "other-role")
    text = render_text(diff_plans(make_plan(drainer, queue, rule, target, lonely), make_plan()))
    lines = text.splitlines()
    assert lines[0] == (
        f"- {NTH} spot-drainer (with the 3 resources under it; exists only while "
        f"{resource_index.role(NTH)})"
    )
    assert "    - aws:sqs/queue:Queue spot-drainer-queue" in lines
    assert "    - aws:cloudwatch/eventTarget:EventTarget t" in lines  # a grandchild too
    assert "- aws:iam/role:Role other-role" in lines
    assert lines[-1] == "0 to add, 0 to change (0 replaced), 5 to delete"


def test_a_child_removed_without_its_parent_stands_alone() -> None:
    drainer = res(NTH, "spot-drainer")
    hook = res("aws:autoscaling/lifecycleHook:LifecycleHook", "hook", parent=drainer["urn"])
    text = render_text(diff_plans(make_plan(drainer, hook), make_plan(drainer)))
    assert text.splitlines()[0] == "- aws:autoscaling/lifecycleHook:LifecycleHook hook"


def test_every_component_in_the_shipped_plans_says_why_it_exists() -> None:
    for stack in shipped_stacks():
        for resource in plan_of(stack).to_json()["resources"]:
            if resource["type"].startswith("gpufleet:"):
                assert resource_index.role(resource["type"]), (stack, resource["type"])


LONG_TAG = {"key": "aws-node-termination-handler/managed", "propagateAtLaunch": True}


def test_a_long_list_of_named_items_is_shown_item_by_item() -> None:
    tags = [
        {"key": f"k8s.io/cluster-autoscaler/node-template/label/n{i}", "value": str(i)}
        for i in range(4)
    ]
    changed = [*tags[:2], {**tags[2], "value": "x"}, {**LONG_TAG, "value": "true"}]
    change = one_change(ASG, {"tags": tags}, {"tags": changed})
    lines = render_text(diff_of(change)).splitlines()
    assert (
        '    tags[key="k8s.io/cluster-autoscaler/node-template/label/n2"].value: "2" -> "x"'
        in lines
    )
    assert (
        '    tags[key="k8s.io/cluster-autoscaler/node-template/label/n3"]: '
        '{"key":"k8s.io/cluster-autoscaler/node-template/label/n3","value":"3"} -> (absent)'
    ) in lines
    assert (
        f'    tags[key="{LONG_TAG["key"]}"]: (absent) -> '
        '{"key":"aws-node-termination-handler/managed","propagateAtLaunch":true,"value":"true"}'
    ) in lines
    assert not any("..." in line for line in lines)


def test_a_long_list_of_plain_items_shows_what_left_and_what_came() -> None:
    old = [f"^gpufleet-dev-t4-spot-us-east-1{zone}$" for zone in "abc"]
    new = [*old[:2], "^gpufleet-dev-t4-spot-us-east-1d$"]
    change = one_change(HELM_RELEASE, {"values": {"p": old}}, {"values": {"p": new}})
    lines = render_text(diff_of(change)).splitlines()
    assert lines[1:4] == [
        "    values.p: 3 items -> 3 items",
        '      - "^gpufleet-dev-t4-spot-us-east-1c$"',
        '      + "^gpufleet-dev-t4-spot-us-east-1d$"',
    ]
    gone = one_change(HELM_RELEASE, {"values": {"p": old}}, {"values": {}})
    assert render_text(diff_of(gone)).splitlines()[1:5] == [
        "    values.p: 3 items -> (absent)",
        *[f'      - "{item}"' for item in old],
    ]


def test_a_long_map_that_appears_is_shown_key_by_key() -> None:
    labels = {f"example.com/label-{i}": f"value-{i}" for i in range(5)}
    change = one_change(HELM_RELEASE, {"values": {}}, {"values": {"labels": labels}})
    lines = render_text(diff_of(change)).splitlines()
    assert lines[1] == "    values.labels: (absent) -> (a map)"
    assert '    values.labels["example.com/label-4"]: (absent) -> "value-4"' in lines
