"""AKS stacks for years (issue 21): what `pulumi up` sends on day two, planned on the whole graph.

Most plans here are of a *deployed* stack: the mock cloud answers the program's look-up of its
own cluster with the cluster the first `up` created (every pool as the creation plan made it),
so they show what an update sends. Each test says the behaviour it pins:

* a minor bump moves the control plane, then the system pool, then every GPU pool, each with
  its version named and nothing ignored that must move (review aks-2.md A-F1);
* what AKS refuses is refused at plan time, by `diff` (exit 1) and by the program itself on
  the running cluster (A-F2);
* no update sends a stale or too-small node count, and a system pool edit applies (A-F3, D4,
  A-P4);
* an existing stack's first `up` after upgrading gpufleet replaces and deletes nothing.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from components.azure.gpu_pool import DRAIN_TIMEOUT_MINUTES, MAX_SURGE, MAX_UNAVAILABLE
from components.mock_world import World
from components.tooling.commands import BadInput
from components.tooling.diff import diff_plans
from components.tooling.diff import main as diff_main
from components.tooling.diff_paths import apply_ignores, ignore_prefixes, options_of
from components.tooling.engine import Plan, plan_stack
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

AKS_STACKS = ("azure-dev", "azure-a100-mig")
CLUSTER = "azure-native:containerservice:ManagedCluster"
AGENT_POOL = "azure-native:containerservice:AgentPool"
DEPLOYMENT = "azure-native:resources:Deployment"
SYSTEM = "properties.template.resources.systemPool.properties"
BEFORE_ISSUE_21 = Path(__file__).parent / "data" / "aks_before_issue21"


def edited(stack: str, **cluster: Any) -> dict[str, Any]:
    """Config overrides: the stack's cluster section with some keys replaced."""
    raw = copy.deepcopy(dict(load_stack(stack).gpufleet))
    for key, value in cluster.items():
        raw["cluster"][key] = value
    return {"gpufleet:cluster": raw["cluster"]}


def created_pools(plan: Plan) -> tuple[dict[str, Any], ...]:
    """The cluster's agent pools as AKS reports them after the creation `plan` ran."""
    (cluster,) = plan.of_type(CLUSTER)
    pools = [dict(cluster.inputs["agentPoolProfiles"][0])]
    for pool in plan.of_type(AGENT_POOL):
        pools.append({**pool.inputs, "name": pool.inputs["agentPoolName"]})
    return tuple(pools)


@functools.cache
def _deployed(stack: str, overrides_json: str, running: str) -> Plan:
    world = World(running, exists=True, agent_pools=created_pools(plan_of(stack)))
    return plan_stack(load_stack(stack), json.loads(overrides_json) or None, world)


def deployed(stack: str, overrides: Mapping[str, Any] | None = None, running: str = "") -> Plan:
    """The stack planned once its first `up` created it (running its minor, or `running`)."""
    minor = load_stack(stack).gpufleet["cluster"]["kubernetesVersion"]
    return _deployed(stack, json.dumps(overrides or {}, sort_keys=True), running or f"{minor}.4")


def sent(old: Plan, new: Plan, resource_type: str) -> dict[str, dict[str, Any]]:
    """What `pulumi up` sends for each resource of a type: the new inputs, ignoreChanges
    applied against the old ones (Pulumi keeps an ignored property's recorded value)."""
    before = {r.urn: r for r in old.of_type(resource_type)}
    result = {}
    for resource in new.of_type(resource_type):
        document = resource.to_json()
        previous = before[resource.urn].inputs if resource.urn in before else {}
        result[resource.name] = apply_ignores(
            previous, resource.inputs, ignore_prefixes(options_of(document))
        )
    return result


# --------------------------------------------------------------------------- A-F1: upgrades


@pytest.mark.parametrize("stack", AKS_STACKS)
def test_a_minor_bump_moves_the_control_plane_then_the_system_pool_then_every_gpu_pool(
    stack: str,
) -> None:
    before = deployed(stack)
    after = deployed(stack, edited(stack, kubernetesVersion="1.36"), running="1.35.4")
    (cluster,) = after.of_type(CLUSTER)
    (system,) = after.of_type(DEPLOYMENT)
    pools = after.of_type(AGENT_POOL)
    assert cluster.inputs["kubernetesVersion"] == "1.36"
    assert (
        system.inputs["properties"]["template"]["resources"]["systemPool"]["properties"][
            "orchestratorVersion"
        ]
        == "1.36"
    )
    assert pools and {p.inputs["orchestratorVersion"] for p in pools} == {"1.36"}
    # Nothing that must move is ignored, anywhere.
    assert cluster.ignore_changes == () and system.ignore_changes == ()
    assert all("orchestratorVersion" not in p.ignore_changes for p in pools)
    # The order AKS needs (no pool newer than the control plane; one pool operation at a
    # time): cluster, system pool, then the GPU pools one after another.
    assert cluster.urn in system.dependencies
    chain = {p.urn: p for p in pools}
    first = [p for p in pools if system.urn in p.dependencies]
    assert len(first) == 1
    assert all(len(set(p.dependencies) & (set(chain) | {system.urn})) == 1 for p in pools)
    # `diff` shows the control plane and every pool, and what happens to running nodes.
    diff = diff_plans(before.to_json(), after.to_json())
    verdicts = {c.type: set() for c in diff.changed}
    for change in diff.changed:
        verdicts[change.type].add(change.verdict)
    assert verdicts == {CLUSTER: {"update"}, DEPLOYMENT: {"roll"}, AGENT_POOL: {"roll"}}
    assert not diff.added and not diff.removed
    for change in diff.changed:
        (note,) = change.node_notes
        if change.type == AGENT_POOL:
            # The sentence says what the pool's own upgrade settings do.
            assert (MAX_SURGE, MAX_UNAVAILABLE) == ("0", "1")
            assert note.effect == "rolls" and "no surge node" in note.says
            assert f"up to {DRAIN_TIMEOUT_MINUTES} minutes" in note.says and "PDB" in note.says
            assert "not in the maintenance window" in note.says
        if change.type == CLUSTER:
            assert note.effect == "none" and "control plane only" in note.says


def test_naming_the_minor_a_pool_runs_upgrades_nothing() -> None:
    """gpufleet now names each pool's minor: the first `up` after upgrading gpufleet names the
    one the pools run (they ran the control plane's), which AKS does not count as an upgrade."""
    old = json.loads((BEFORE_ISSUE_21 / "azure-dev.json").read_text())
    diff = diff_plans(old, deployed("azure-dev").to_json())
    pools = [c for c in diff.changed if c.type == AGENT_POOL]
    assert pools and all(c.verdict == "update" for c in pools)
    for change in pools:
        notes = {note.paths: note for note in change.node_notes}
        assert notes[("orchestratorVersion",)].effect == "none"


# --------------------------------------------------------------------------- A-F2: refusals


@pytest.mark.parametrize(
    ("cluster", "refused"),
    [
        ({"kubernetesVersion": "1.34"}, "can't downgrade"),
        ({"kubernetesVersion": "1.37"}, "can't skip Kubernetes minor versions"),
        ({"azure": {"apiServerAuthorizedCidrs": ["203.0.113.0/24"], "authentication": "local-accounts"}}, "Entra integration can't be disabled"),
    ],
    ids=["downgrade", "skipped-minor", "entra-id-off"],
)  # fmt: skip
def test_diff_refuses_what_aks_refuses_and_exits_1(
    cluster: dict[str, Any], refused: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(plan_of("azure-dev").to_json()))
    new.write_text(json.dumps(plan_of("azure-dev", edited("azure-dev", **cluster)).to_json()))
    assert diff_main([str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert "REJECTED azure-native:containerservice:ManagedCluster" in out and refused in out
    assert "instead:" in out


@pytest.mark.parametrize(
    ("cluster", "problem"),
    [
        ({"kubernetesVersion": "1.34"}, "AKS can't downgrade a cluster"),
        ({"kubernetesVersion": "1.37"}, "skips minors: cluster gpufleet-dev runs 1.35.4"),
        ({"azure": {"apiServerAuthorizedCidrs": ["203.0.113.0/24"], "authentication": "local-accounts"}}, "can't turn off"),
        # Review aks-3 N4: what AKS fixes in the system pool, refused before `up` sends it.
        ({"systemPool": {"machineType": "Standard_D8s_v5"}}, "cluster.systemPool.machineType: cluster gpufleet-dev's system pool runs Standard_D4s_v5: AKS cannot resize"),
        ({"zones": ["1", "2"]}, "cluster.zones: cluster gpufleet-dev's system pool runs in 1, 2, 3: AKS cannot change an existing pool's zones"),
    ],
    ids=["downgrade", "skipped-minor", "entra-id-off", "system-vm-size", "system-zones"],
)  # fmt: skip
def test_the_program_refuses_them_on_the_running_cluster(
    cluster: dict[str, Any], problem: str
) -> None:
    """`pulumi preview` reads the running cluster: no stack gets past it with such a change,
    whether or not anyone ran `diff`."""
    with pytest.raises(BadInput, match="exists, and AKS would refuse this change") as error:
        deployed("azure-dev", edited("azure-dev", **cluster))
    assert problem in str(error.value)


# ---------------------------------------------------------------- A-F3, D4, A-P4: no stale state


def test_no_update_sends_a_node_count() -> None:
    """An existing pool gets no count: AKS keeps the autoscaler's; a creation sends minNodes."""
    first = plan_of("azure-a100-mig")
    assert {p.inputs["count"] for p in first.of_type(AGENT_POOL)} == {0}
    # The cluster's creation starts its System pool at minNodes (review aks-3 N6: whether AKS
    # takes an autoscaled System pool without a count is disputed)...
    (created,) = first.of_type(CLUSTER)
    system = created.inputs["agentPoolProfiles"][0]
    assert system["count"] == system["minCount"] == 2
    assert created.ignore_changes == ("agentPoolProfiles[0].count",)
    # ...and a running cluster's updates send none, nor keep the creation count by ignoring it.
    later = deployed("azure-a100-mig")
    (cluster,) = later.of_type(CLUSTER)
    assert "count" not in cluster.inputs["agentPoolProfiles"][0]
    assert cluster.ignore_changes == ()
    for pool in later.of_type(AGENT_POOL):
        assert "count" not in pool.inputs and "count" not in pool.ignore_changes


@pytest.mark.parametrize("stack", AKS_STACKS)
def test_no_agent_pool_ever_sends_a_count_below_min_count(stack: str) -> None:
    raw = copy.deepcopy(dict(load_stack(stack).gpufleet))
    for pool in raw["gpuPools"]:
        pool["minNodes"] = 1
    overrides = {"gpufleet:gpuPools": raw["gpuPools"]}
    # A creation starts the pool at minNodes...
    for pool in plan_of(stack, overrides).of_type(AGENT_POOL):
        assert pool.inputs["count"] == pool.inputs["minCount"] == 1
    # ...and raising minNodes on a running stack sends no count at all (not the 0 recorded
    # at creation, which AKS would refuse below minCount), and no other update sends one.
    for name, inputs in sent(deployed(stack), deployed(stack, overrides), AGENT_POOL).items():
        assert inputs["minCount"] == 1 and "count" not in inputs, name


def test_a_replaced_pool_is_created_with_a_count() -> None:
    """A pool AKS must recreate (another VM size) is a creation: AKS needs its count."""
    raw = copy.deepcopy(dict(load_stack("azure-dev").gpufleet))
    raw["gpuPools"][0]["machineType"] = "Standard_NC8as_T4_v3"
    plan = deployed("azure-dev", {"gpufleet:gpuPools": raw["gpuPools"]})
    pools = {p.inputs["agentPoolName"]: p for p in plan.of_type(AGENT_POOL)}
    assert pools["t4"].inputs["count"] == 0 and pools["t4"].ignore_changes == ("count",)
    assert "count" not in pools["t4spot"].inputs


def test_a_system_pool_edit_applies_and_one_aks_refuses_is_refused() -> None:
    before = deployed("azure-dev")
    grown = deployed("azure-dev", edited("azure-dev", systemPool={"machineType": "Standard_D4s_v5", "minNodes": 2, "maxNodes": 5}))  # fmt: skip
    diff = diff_plans(before.to_json(), grown.to_json())
    assert {c.type: c.verdict for c in diff.changed} == {CLUSTER: "update", DEPLOYMENT: "update"}
    (cluster,) = grown.of_type(CLUSTER)
    (system,) = cluster.inputs["agentPoolProfiles"]
    assert (system["minCount"], system["maxCount"]) == (2, 5)
    # The program refuses the resize on the running cluster (the test above); `diff` does too,
    # given the plan of the edited stack.
    resized = plan_of("azure-dev", edited("azure-dev", systemPool={"machineType": "Standard_D8s_v5"}))  # fmt: skip
    diff = diff_plans(before.to_json(), resized.to_json())
    system = [c for c in diff.changed if c.type in (CLUSTER, DEPLOYMENT)]
    assert {c.type: c.verdict for c in system} == {CLUSTER: "reject", DEPLOYMENT: "reject"}
    assert all(any("vmSize" in reason for reason in c.refusals) for c in system)


@pytest.mark.parametrize("stack", AKS_STACKS)
def test_upgrading_gpufleet_replaces_and_deletes_nothing_on_an_existing_stack(stack: str) -> None:
    """The plan gpufleet made before issue 21 (tests/data/aks_before_issue21, from main at
    6642161), against today's plan of the same stack once it runs: updates and one added
    resource (the system pool's deployment), nothing replaced, deleted or refused."""
    old = json.loads((BEFORE_ISSUE_21 / f"{stack}.json").read_text())
    diff = diff_plans(old, deployed(stack).to_json())
    azure = [c for c in diff.changed if c.type.startswith("azure-native:")]
    assert not diff.removed and not diff.rejected
    assert not [c.name for c in azure if c.replaces or c.rolls]
    assert [r.type for r in diff.added] == [DEPLOYMENT]
    assert {c.type for c in azure} >= {CLUSTER, AGENT_POOL}


def test_diff_help_names_the_aks_refusals_and_no_spot_toggle(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A Spot toggle replaces gpufleet's pool (it is not refused: review aks-2.md A-N2)."""
    with pytest.raises(SystemExit):
        diff_main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "a Kubernetes minor lowered or skipped on AKS" in text and "Entra ID" in text
    assert "Spot" not in text
