"""Every stack walked through the edits users make on day two, and the verdict of each.

For each stack and each kind of edit, the stack is planned before and after under mocks and the
two plans are compared by `diff`, which says per changed resource whether the cloud updates it in
place, replaces it (with downtime for that pool) or refuses the change. The test pins what the
clouds do (from `components.model.catalog.replacements` and `rejections`, whose sources are the
reviews), and the promises gpufleet makes on top:

* no edit of a pool ever replaces (or even changes) the cluster, nor does a GKE cluster.zones
  edit (GKE would move every pool to the new list);
* every replacement gpufleet causes can be carried out: none is refused for taking the name of
  the resource it replaces (GKE's 409, azure-native's "already existing");
* the refusals that remain are the documented ones, each saying what to do instead.

The walk runs on every stack in stacks/, the user's own too; for gpufleet's examples it also pins
which edits gpufleet refuses before planning (a user's stack may hit such a refusal too, and then
it must say what is wrong as bad input, like any refused config).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import pytest

from components.model.registry import CLOUDS
from components.tooling.commands import BadInput
from components.tooling.diff import diff_plans
from components.tooling.diff_model import PlanDiff
from components.tooling.stacks import EXAMPLE_STACKS, load_stack, shipped_stacks
from tests.conftest import every_stack, plan_of

Raw = dict[str, Any]


def _first_pool(change: Callable[[Raw], None]) -> Callable[[Raw], bool]:
    def edit(raw: Raw) -> bool:
        if not raw.get("gpuPools"):
            return False
        change(raw["gpuPools"][0])
        return True

    return edit


def _toggle_spot(pool: Raw) -> None:
    pool["spot"] = not pool.get("spot", False)
    if not pool["spot"]:
        # Karpenter's Spot fallback means nothing on an on-demand pool (config refuses it).
        pool.get("aws", {}).pop("onDemandFallback", None)


def _other_machine(raw: Raw) -> bool:
    """The first pool on another machine type that carries as many of the same GPU."""
    if not raw.get("gpuPools"):
        return False
    cloud = CLOUDS[raw["cloud"]]
    pool = raw["gpuPools"][0]
    names = pool.get("machineTypes") or [pool.get("machineType")]
    current = cloud.catalog.machine(pool["accelerator"], names[0])
    if current is None:
        return False
    others = [
        machine.name
        for machine in cloud.catalog.machines_for(pool["accelerator"])
        if machine.name not in names
        and machine.gpus == current.gpus
        and not (machine.spot_only or machine.reservation_only)
        and (machine.mig_capable or "migPartitionSize" not in pool)
    ]
    if not others:
        return False
    if "machineTypes" in pool:
        pool["machineTypes"] = [others[0]]
    else:
        pool["machineType"] = others[0]
    return True


def _change_zones(raw: Raw) -> bool:
    """Add a cluster zone the first pool lacks, or else drop the pool's last zone."""
    pools = raw.get("gpuPools") or []
    if not pools or not pools[0].get("zones"):
        return False
    zones = pools[0]["zones"]
    missing = [zone for zone in raw["cluster"].get("zones") or [] if zone not in zones]
    pools[0]["zones"] = [*zones, missing[0]] if missing else zones[:-1]
    return True


def _drop_a_cluster_zone(raw: Raw) -> bool:
    """GKE: drop the cluster's last zone. GKE moves every node pool to a cluster's new
    locations, so gpufleet fixes the Cluster's own list at creation (review gke-3.md R3-1): the
    edit moves only the system pool and the pools that take their zones from cluster.zones."""
    zones = raw["cluster"].get("zones") or []
    if raw["cloud"] != "gcp" or len(zones) < 2:
        return False
    raw["cluster"]["zones"] = zones[:-1]
    return True


def _grow_system_pool(raw: Raw) -> bool:
    system = raw["cluster"].setdefault("systemPool", {})
    system["maxNodes"] = system.get("maxNodes", 3) + 2
    return True


def _other_reservation_group(raw: Raw) -> bool:
    """Move the first pool that names an AKS capacity reservation group to another group."""
    for pool in raw.get("gpuPools") or []:
        group = (pool.get("azure") or {}).get("capacityReservationGroupId")
        if group:
            pool["azure"]["capacityReservationGroupId"] = f"{group}-next"
            return True
    return False


def _next_minor(raw: Raw) -> bool:
    if raw["cluster"].get("kubernetesVersion") != "1.35":
        return False
    raw["cluster"]["kubernetesVersion"] = "1.36"
    return True


EDITS: dict[str, Callable[[Raw], bool]] = {
    "kubernetes-minor": _next_minor,
    "spot": _first_pool(_toggle_spot),
    "machine-type": _other_machine,
    "zones": _change_zones,
    "cluster-zones": _drop_a_cluster_zone,
    "disk-size": _first_pool(lambda pool: pool.__setitem__("diskSizeGb", 333)),
    "min-nodes": _first_pool(lambda pool: pool.__setitem__("minNodes", 1)),
    "system-pool-size": _grow_system_pool,
    "reservation-group": _other_reservation_group,
}

CLUSTERS = {
    "gcp:container/cluster:Cluster",
    "aws:eks/cluster:Cluster",
    "azure-native:containerservice:ManagedCluster",
}

# What each cloud does with each edit, per resource type that carries GPU or system nodes.
EXPECTED: dict[str, dict[str, str]] = {
    "gcp:container/nodePool:NodePool": {
        # nodeConfig.spot is ForceNew; machine type (same GPUs) and disk update in place, but
        # GKE recreates every node of the pool for them; zones and sizes update in place.
        "spot": "replace",
        "machine-type": "roll",
        "zones": "update",
        "disk-size": "roll",
        "min-nodes": "update",
        "system-pool-size": "update",
        # The system pool (and any pool without zones of its own) through its nodeLocations.
        "cluster-zones": "update",
    },
    "azure-native:containerservice:AgentPool": {
        # A minor bump upgrades each GPU pool after the control plane (review aks-2.md A-F1).
        "kubernetes-minor": "roll",
        # AKS fixes Spot priority, VM size, zones and the OS disk at creation: gpufleet
        # replaces the pool, deleting first.
        "spot": "replace",
        "machine-type": "replace",
        "zones": "replace",
        "disk-size": "replace",
        "min-nodes": "update",
        # AKS fixes a pool's capacity reservation group at creation (API 2025-09-01).
        "reservation-group": "replace",
    },
    "azure-native:containerservice:ManagedCluster": {
        # The control plane alone: each pool follows with its own update.
        "kubernetes-minor": "update",
        # The system pool's size applies through the cluster and its agent pool deployment.
        "system-pool-size": "update",
    },
    # The system pool through the agent pool API (components/azure/system_pool.py).
    "azure-native:resources:Deployment": {"kubernetes-minor": "roll", "system-pool-size": "update"},
    "aws:autoscaling/group:Group": {
        # Self-managed groups (one per zone): Spot, machine type and disk are a new mixed
        # instances policy or launch template version, applied in place; a zone is a group
        # added or removed; AWS raises desired to a new minimum itself.
        "spot": "update",
        "machine-type": "update",
        "disk-size": "update",
        "min-nodes": "update",
    },
    # Karpenter's NodePool and EC2NodeClass take every edit in place; nodes already running
    # stay as they are (drift budget 0) and new nodes come up as edited.
    "kubernetes:karpenter.sh/v1:NodePool": {
        "spot": "update",
        "machine-type": "update",
        "zones": "update",
    },
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": {"disk-size": "update"},
    "kubernetes:eks.amazonaws.com/v1:NodeClass": {"disk-size": "update"},
    "kubernetes:karpenter.azure.com/v1beta1:AKSNodeClass": {"disk-size": "update"},
    "aws:eks/nodeGroup:NodeGroup": {
        # A new version is UpdateNodegroupVersion: every node of the group is replaced.
        "kubernetes-minor": "roll",
        # capacityType and instanceTypes are ForceNew: gpufleet replaces, deleting first.
        "spot": "replace",
        "machine-type": "replace",
        # A new launch template version: UpdateNodegroupVersion replaces every node.
        "disk-size": "roll",
        # gpufleet sends the live desired size raised to the new minimum, so EKS takes it
        # (review eks.md S1-1; tests/test_eks_live_sizes.py).
        "min-nodes": "update",
        "system-pool-size": "update",
    },
}


def _gpufleet_overrides(raw: Raw) -> dict[str, Any]:
    return {f"gpufleet:{key}": value for key, value in raw.items()}


def _diff_after(stack: str, edit: str) -> PlanDiff | None:
    raw = copy.deepcopy(dict(load_stack(stack).gpufleet))
    if not EDITS[edit](raw):
        return None
    before = plan_of(stack).to_json()
    after = plan_of(stack, _gpufleet_overrides(raw)).to_json()
    return diff_plans(before, after)


def _applicable() -> list[tuple[str, str]]:
    """(stack, edit) for every edit a stack has something to apply to (no pools, no zones or
    no second machine type for the GPU: nothing to edit)."""
    return [
        (stack, edit)
        for stack in every_stack()
        for edit, apply in EDITS.items()
        if apply(copy.deepcopy(dict(load_stack(stack).gpufleet)))
    ]


# Edits gpufleet refuses before planning, with the reason the refusal names.
REFUSED_AT_PLAN_TIME = {
    ("aws-karpenter", "min-nodes"): "Karpenter keeps no minimum",
    ("aws-auto-mode", "min-nodes"): "EKS Auto Mode keeps no minimum",
    ("aws-reserved", "min-nodes"): "Karpenter keeps no minimum",
    # spot: true on a pool whose capacity is [reserved, on-demand].
    ("aws-reserved", "spot"): "contradicts gpuPools\\[0\\].capacity",
    # A third zone for the 2-node h100 pool would be a node group of maxSize 0 (review eks-2 N2).
    ("aws-training", "zones"): "must be at least the number of zones",
    # An adopted cluster's CPU nodes are its owner's.
    ("gcp-existing", "system-pool-size"): "belongs to the existing cluster",
    ("aws-existing", "system-pool-size"): "belongs to the existing cluster",
    ("azure-existing", "system-pool-size"): "belongs to the existing cluster",
    # AKS node auto-provisioning: NodePools keep no minimum, and Auto mode runs no autoscaling
    # agent pool, so the system pool is fixed (components/azure/model/nap.py).
    ("azure-nap", "min-nodes"): "AKS node auto-provisioning keeps no minimum",
    ("azure-nap", "system-pool-size"): "creates no autoscaling agent pool",
    # A pool on a specific reservation: Spot consumes none, nor another machine type, nor
    # another zone than the reservation's (GKE; components/gcp/model/capacity.py).
    ("gcp-flex-start", "spot"): "contradicts gpuPools\\[0\\].capacity \\(reserved\\)",
    ("gcp-flex-start", "machine-type"): "consumes a specific reservation only with VMs of its",
    ("gcp-flex-start", "zones"): "a specific reservation is zonal",
    # A fabric pool's placement and GPU network are one zone's (components/model/fabric_checks.py).
    ("gcp-gpudirect", "zones"): "a fabric pool runs in exactly one zone",
    ("aws-efa", "zones"): "a fabric pool runs in exactly one zone",
    ("azure-infiniband", "zones"): "a fabric pool runs in exactly one zone",
    # A compute class whose first priority is a specific reservation: the same two refusals.
    ("gcp-compute-class", "spot"): "contradicts gpuPools\\[0\\].capacity \\(\\[reserved",
    ("gcp-compute-class", "machine-type"): "consumes a specific reservation only with VMs of",
    ("gcp-compute-class", "zones"): "a specific reservation is zonal",
    # A pool in a capacity reservation group is on-demand: Spot VMs use no reservation.
    ("azure-reserved", "spot"): "spot: true means capacity: spot exactly",
}


# An example whose edit changes more than EXPECTED's: gcp-gpudirect's other machine type
# (a3-highgpu-8g) has another accelerator and another GPUDirect mode, so GKE makes a new pool
# (guestAccelerators and the extra NICs are ForceNew; components/gcp/model/change_rules.py).
STACK_EXPECTED = {("gcp-gpudirect", "machine-type", "gcp:container/nodePool:NodePool"): "replace"}


def _adopted(stack: str) -> bool:
    return "existing" in load_stack(stack).gpufleet["cluster"]


@pytest.mark.every_stack
@pytest.mark.parametrize(("stack", "edit"), _applicable())
def test_every_edit_has_the_clouds_verdict(stack: str, edit: str) -> None:
    if (stack, edit) in REFUSED_AT_PLAN_TIME:
        with pytest.raises(BadInput, match=REFUSED_AT_PLAN_TIME[stack, edit]):
            _diff_after(stack, edit)
        return
    if stack not in EXAMPLE_STACKS:
        try:
            diff = _diff_after(stack, edit)
        except BadInput as refused:
            # Refused before anything is planned, naming the key path and what is wrong.
            assert re.search(r"- (cluster|gpuPools|gpuSoftware)\b\S*: ", str(refused)), refused
            return
    else:
        diff = _diff_after(stack, edit)
    assert diff is not None
    # On an adopted cluster a minor bump says which minor the owner upgraded to: the pools
    # (no version of their own) follow the control plane, so nothing of gpufleet's changes.
    unchanged = load_stack(stack).gpufleet["cloud"] == "existing" or (
        _adopted(stack) and edit in ("kubernetes-minor", "cluster-zones")
    )
    assert not diff.is_empty or unchanged, diff.summary()
    for change in diff.changed:
        # Every replacement can be carried out: no refusal for a name still in use.
        assert not any(
            "same" in reason and "deleteBeforeReplace" in reason for reason in (change.refusals)
        ), (change.name, change.refusals)
        if change.type in CLUSTERS and edit != "kubernetes-minor":
            assert change.verdict != "replace", (change.name, change.replace_paths)
            if edit != "system-pool-size":
                pytest.fail(f"a pool or zone edit ({edit}) changes the cluster {change.name}")
        # The examples pin each verdict; on a user's stack the same edit may meet another
        # verdict (another GPU type behind the machine swapped in), under the promises above.
        expected = EXPECTED.get(change.type, {}).get(edit) if stack in EXAMPLE_STACKS else None
        expected = STACK_EXPECTED.get((stack, edit, change.type), expected)
        if expected == "roll" and any("Capacity Block group" in r for r in change.refusals):
            expected = "reject"  # EKS updates a Capacity Block group only at 0 nodes
        if expected is not None:
            assert change.verdict == expected, (change.type, change.name, change.replace_paths)
        if change.verdict == "reject":
            assert all("instead:" in reason for reason in change.refusals)
        # What an in-place update does to the running nodes is known for every edit here.
        unknown = [note.paths for note in change.node_notes if note.effect == "unknown"]
        assert not unknown, (change.type, change.name, unknown)
    assert not [ref for ref in diff.removed if ref.type in CLUSTERS]


def test_the_walk_covers_every_verdict_on_every_cloud() -> None:
    """The walk is only worth something if each verdict really occurs somewhere."""
    seen: dict[str, set[str]] = {}
    for stack in shipped_stacks():
        for edit in EDITS:
            if (stack, edit) in REFUSED_AT_PLAN_TIME:
                continue
            diff = _diff_after(stack, edit)
            for change in diff.changed if diff else ():
                seen.setdefault(change.type, set()).add(change.verdict)
    assert seen["gcp:container/nodePool:NodePool"] >= {"update", "roll", "replace"}
    assert seen["azure-native:containerservice:AgentPool"] >= {"update", "replace"}
    assert seen["azure-native:containerservice:AgentPool"] >= {"roll"}
    assert seen["azure-native:containerservice:ManagedCluster"] >= {"update"}
    assert seen["azure-native:resources:Deployment"] >= {"update", "roll"}
    assert seen["aws:eks/nodeGroup:NodeGroup"] >= {"update", "roll", "replace", "reject"}
    assert seen["aws:autoscaling/group:Group"] >= {"update"}


def test_a_pool_replaced_without_delete_first_is_refused() -> None:
    """Without deleteBeforeReplace, GKE would answer 409 to the pool's replacement."""
    stack = "gcp-dev"
    raw = copy.deepcopy(dict(load_stack(stack).gpufleet))
    _toggle_spot(raw["gpuPools"][0])
    before = plan_of(stack).to_json()
    after = plan_of(stack, _gpufleet_overrides(raw)).to_json()
    for document in (before, after):
        for resource in document["resources"]:
            resource["options"]["deleteBeforeReplace"] = False
    (pool,) = [c for c in diff_plans(before, after).changed if c.verdict != "update"]
    assert pool.verdict == "reject"
    assert "replacement under the same name 'l4-spot'" in pool.refusals[0]
