"""AKS node auto-provisioning (cluster.azure.provisioner: node-auto-provisioning): what the
azure-nap stack builds (the cluster in Auto mode with a fixed system pool, a NodePool and an
AKSNodeClass per GPU pool, validated against their CRDs), what it refuses at each edge, what an
adopted cluster must run, and the day-two verdicts of moving a running stack to it and back."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from components.azure.model import nap
from components.azure.model.adopted import AksClusterFacts, provisioning_problems
from components.model import karpenter_pool
from components.model.config import ConfigError, parse_config
from components.model.pools import resolve_pools
from components.tooling.diff import diff_plans
from components.tooling.engine import Plan
from components.tooling.fit import fit_templates
from components.tooling.pool_views import pool_checks
from components.tooling.scheduling.workloads import read_workloads
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

STACK = "azure-nap"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.azure.com/v1beta1:AKSNodeClass"
DATA = Path(__file__).resolve().parent / "data"
pytestmark = pytest.mark.xdist_group("azure-nap")


def _objects(plan: Plan, kind: str) -> dict[str, dict[str, Any]]:
    return {r.inputs["metadata"]["name"]: dict(r.inputs) for r in plan.resources if r.type == kind}


def _one(plan: Plan, type_: str) -> dict[str, Any]:
    (found,) = [r for r in plan.resources if r.type == type_]
    return dict(found.inputs)


def _raw(stack: str = STACK) -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(stack).gpufleet))


def _overrides(raw: dict[str, Any]) -> dict[str, Any]:
    return {f"gpufleet:{key}": value for key, value in raw.items()}


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def test_the_cluster_runs_auto_mode_with_a_fixed_system_pool_and_no_gpu_agent_pool() -> None:
    plan = plan_of(STACK)
    cluster = _one(plan, "azure-native:containerservice:ManagedCluster")
    assert cluster["nodeProvisioningProfile"] == {"mode": "Auto", "defaultNodePools": "Auto"}
    # What NAP needs of the network (node-auto-provisioning-networking.md): Azure CNI Overlay,
    # no Calico network policy.
    network = cluster["networkProfile"]
    assert (network["networkPlugin"], network["networkPluginMode"]) == nap.CLUSTER_NETWORK
    assert "networkPolicy" not in network
    assert cluster["identity"]["type"] != "None"
    (system,) = cluster["agentPoolProfiles"]
    assert system["enableAutoScaling"] is False
    assert system["count"] == 2
    assert "minCount" not in system and "maxCount" not in system
    deployment = _one(plan, "azure-native:resources:Deployment")
    pool = deployment["properties"]["template"]["resources"]["systemPool"]["properties"]
    assert (pool["enableAutoScaling"], pool["count"]) == (False, 2)
    types = {r.type for r in plan.resources}
    assert "azure-native:containerservice:AgentPool" not in types
    assert set(_objects(plan, NODE_POOL)) == set(_objects(plan, NODE_CLASS)) == {"t4", "a100"}


def test_a_cluster_on_agent_pools_sends_no_provisioning_profile() -> None:
    cluster = _one(plan_of("azure-dev"), "azure-native:containerservice:ManagedCluster")
    assert "nodeProvisioningProfile" not in cluster
    assert cluster["agentPoolProfiles"][0]["enableAutoScaling"] is True


def _schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((DATA / name).read_text())
    return schema


def test_node_pools_and_node_classes_validate_against_their_crds() -> None:
    plan = plan_of(STACK)
    node_pool_schema = _schema("karpenter_facts.json")["crds"]["NodePool"]
    node_class_schema = _schema("aks_node_class_schema.json")["schema"]
    for document in _objects(plan, NODE_POOL).values():
        jsonschema.validate(document, node_pool_schema)
    for document in _objects(plan, NODE_CLASS).values():
        jsonschema.validate(document, node_class_schema)
        assert document["apiVersion"] == nap.NODE_CLASS_API_VERSION


def test_the_node_class_schema_is_the_pinned_release_and_catches_a_violation() -> None:
    from scripts import aks_node_class_facts

    assert aks_node_class_facts.TAG in nap.PROVIDER_RELEASE
    assert aks_node_class_facts.COMMIT[:7] in nap.PROVIDER_RELEASE
    schema = _schema("aks_node_class_schema.json")
    assert aks_node_class_facts.COMMIT in schema["source"]
    document = copy.deepcopy(_objects(plan_of(STACK), NODE_CLASS)["t4"])
    # Microsoft's docs write `driver`; the CRD's enum is capitalised.
    document["spec"]["gpu"]["mode"] = "driver"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, schema["schema"])


def test_node_pools_keep_the_agent_pools_contract() -> None:
    plan = plan_of(STACK)
    pools = {p["name"]: p for p in plan.outputs["gpuPools"]}
    for name, document in _objects(plan, NODE_POOL).items():
        pool = pools[name]
        spec = document["spec"]
        template = spec["template"]["spec"]
        assert template["nodeClassRef"] == {
            "group": nap.NODE_CLASS_GROUP,
            "kind": nap.NODE_CLASS_KIND,
            "name": name,
        }
        labels = spec["template"]["metadata"]["labels"]
        assert {k: pool["nodeLabels"][k] for k in labels} == labels
        assert [(t["key"], t.get("value"), t["effect"]) for t in template["taints"]] == [
            (t["key"], t.get("value"), t["effect"]) for t in pool["nodeTaints"]
        ]
        assert {"key": "sku", "value": "gpu", "effect": "NoSchedule"} in template["taints"]
        gpus = pool["maxNodes"] * pool["allocatablePerNode"]["nvidia.com/gpu"]
        assert spec["limits"]["nvidia.com/gpu"] == str(gpus)
        assert pool["minNodes"] == 0
        assert spec["disruption"]["consolidationPolicy"] == "WhenEmpty"
    requirements = {
        name: {r["key"]: r["values"] for r in doc["spec"]["template"]["spec"]["requirements"]}
        for name, doc in _objects(plan, NODE_POOL).items()
    }
    assert requirements["a100"][karpenter_pool.CAPACITY_TYPE_LABEL] == ["spot", "on-demand"]
    assert requirements["t4"][karpenter_pool.CAPACITY_TYPE_LABEL] == ["on-demand"]
    assert requirements["a100"]["topology.kubernetes.io/zone"] == [
        "eastus2-1",
        "eastus2-2",
        "eastus2-3",
    ]
    # A pool that may land on Spot asks its pods to tolerate Spot, as a Spot agent pool does.
    assert ("kubernetes.azure.com/scalesetpriority", "spot") in {
        (t["key"], t["value"]) for t in pools["a100"]["nodeTaints"]
    }
    assert "kubernetes.azure.com/scalesetpriority" not in {
        t["key"] for t in pools["t4"]["nodeTaints"]
    }
    classes = _objects(plan, NODE_CLASS)
    assert classes["t4"]["spec"]["gpu"] == {"mode": "Driver"}
    assert classes["t4"]["spec"]["vnetSubnetID"].endswith("/subnets/nodes")


def test_fit_sees_karpenter_scaling_each_pool_from_zero() -> None:
    specs = [s for s in resolve_pools(parse_config(_raw())) if s.kind == "gpu"]
    assert specs
    for spec in specs:
        assert spec.provisioner == "AKS node auto-provisioning"
        assert spec.scale_from_zero == "pool"
        assert spec.zone_max_nodes is None
        assert spec.min_nodes == 0
        assert spec.node_labels[karpenter_pool.NODEPOOL_LABEL] == spec.name
    a100 = next(s for s in specs if s.name == "a100")
    assert a100.label_choices[karpenter_pool.CAPACITY_TYPE_LABEL] == ("spot", "on-demand")
    assert a100.label_choices[nap.SCALE_SET_PRIORITY_LABEL] == ("spot", "regular")


def _refused(edit: Any) -> list[str]:
    raw = _raw()
    edit(raw)
    return _problems(raw)


def test_what_azures_karpenter_cannot_build_is_refused_together() -> None:
    def edit(raw: dict[str, Any]) -> None:
        t4, a100 = raw["gpuPools"]
        t4["capacity"] = ["reserved", "on-demand"]
        t4["minNodes"] = 1
        t4["labels"] = {"karpenter.azure.com/sku-name": "x"}
        a100["capacity"] = "queued"
        a100["azure"] = {"capacityReservationGroupId": "/subscriptions/x", "reservedNodes": 2}
        a100["sharing"] = {"strategy": "time-sharing", "maxSharedClientsPerGpu": 2}
        raw["cluster"]["azure"]["autoscalerExpander"] = "priority"

    problems = _refused(edit)
    expected = (
        "gpuPools[0].capacity:",
        "gpuPools[0].minNodes: AKS node auto-provisioning keeps no minimum",
        "gpuPools[0].labels: Karpenter reserves these keys",
        "gpuPools[1].capacity:",
        "gpuPools[1].azure.capacityReservationGroupId: node auto-provisioning places no node",
        "gpuPools[1].azure.reservedNodes:",
        "gpuPools[1].sharing: AKS's managed Karpenter plans nodes",
        "cluster.azure.autoscalerExpander: is the cluster autoscaler's",
    )
    for start in expected:
        assert any(p.startswith(start) for p in problems), (start, problems)
    reserved = next(p for p in problems if p.startswith("gpuPools[0].capacity:"))
    assert "labels.go" in reserved and "cluster-autoscaler" in reserved


def test_the_system_pool_must_be_fixed_at_the_edge() -> None:
    def one_over(raw: dict[str, Any]) -> None:
        raw["cluster"]["systemPool"]["maxNodes"] = 3

    (problem,) = _refused(one_over)
    assert problem.startswith("cluster.systemPool.maxNodes: node auto-provisioning")
    parse_config(_raw())  # min == max (2, 2): accepted


@pytest.mark.parametrize(("disk", "ok"), [(30, True), (2048, True), (2049, False)])
def test_the_os_disk_within_the_node_class_bounds(disk: int, ok: bool) -> None:
    raw = _raw()
    raw["gpuPools"][0]["diskSizeGb"] = disk
    if ok:
        parse_config(raw)
    else:
        (problem,) = _problems(raw)
        assert problem.startswith("gpuPools[0].diskSizeGb: an AKSNodeClass's osDiskSizeGB")


def test_agent_pool_capacity_words_stay_with_agent_pools() -> None:
    raw = _raw()
    raw["cluster"]["azure"].pop("provisioner")
    raw["cluster"]["systemPool"]["maxNodes"] = 3
    raw["gpuPools"][1]["capacity"] = "spot"
    parse_config(raw)  # the same pools as agent pools (no [spot, on-demand] there)


def _facts(mode: str | None) -> AksClusterFacts:
    return AksClusterFacts(
        name="platform-prod",
        kubernetes_version="1.35",
        entra_id=True,
        system_subnet_id=None,
        oidc_issuer_url="",
        kubelet_object_id="",
        skips_nodes_with_local_storage=False,
        auto_upgrade_channel=None,
        has_auto_upgrade_window=True,
        node_provisioning_mode=mode,
    )


def _existing(provisioner: str | None) -> dict[str, Any]:
    raw = _raw("azure-existing")
    if provisioner:
        raw["cluster"]["azure"]["provisioner"] = provisioner
    return raw


@pytest.mark.parametrize(
    ("mode", "provisioner", "refused"),
    [
        ("Auto", "node-auto-provisioning", False),
        (None, "node-auto-provisioning", True),
        ("Manual", None, False),
        ("Auto", None, True),
    ],
)
def test_an_adopted_cluster_must_run_the_provisioner_named(
    mode: str | None, provisioner: str | None, refused: bool
) -> None:
    config = parse_config(_existing(provisioner))
    problems = provisioning_problems(_facts(mode), config.cluster)
    assert bool(problems) == refused
    if refused:
        assert problems[0].path == "cluster.azure.provisioner"


def test_an_adopted_nap_cluster_is_read_and_gets_only_node_pools() -> None:
    plan = plan_of("azure-existing", _overrides(_existing("node-auto-provisioning")))
    types = {r.type for r in plan.resources}
    assert not any(t.startswith("azure-native:") for t in types - {"pulumi:providers:azure-native"})
    assert set(_objects(plan, NODE_POOL)) == {"t4", "t4spot"}
    # No subnet written: the adopted cluster's own default is NAP's.
    assert "vnetSubnetID" not in _objects(plan, NODE_CLASS)["t4"]["spec"]
    # The owner's NodePools and AKSNodeClasses are not read offline: plan says so, per pool.
    unchecked = [w for w in plan.warnings if "not checked: NodePool/AKSNodeClass names" in w]
    assert [w.split(" ")[0] for w in unchecked] == ["gpuPools[0]", "gpuPools[1]"]


def _nap_variant(stack: str) -> Plan:
    raw = _raw(stack)
    raw["cluster"]["azure"]["provisioner"] = "node-auto-provisioning"
    raw["cluster"]["systemPool"]["maxNodes"] = raw["cluster"]["systemPool"]["minNodes"]
    return plan_of(stack, _overrides(raw))


def test_moving_running_agent_pools_to_nap_in_one_up_is_refused_with_the_two_step_way() -> None:
    diff = diff_plans(plan_of("azure-dev").to_json(), _nap_variant("azure-dev").to_json())
    (cluster,) = [c for c in diff.changed if c.type.endswith("ManagedCluster")]
    # Auto mode is an in-place update of the cluster (az aks update), never a replacement...
    assert not cluster.replace_paths
    # ...refused only because the same `up` deletes the autoscaling GPU agent pools.
    (refusal,) = cluster.refusals
    assert refusal.startswith("nodeProvisioningProfile.mode: AKS refuses Auto mode")
    assert "two `up`s" in refusal
    removed = {r.type for r in diff.removed}
    assert "azure-native:containerservice:AgentPool" in removed


def test_turning_nap_on_with_no_gpu_agent_pool_left_is_accepted_in_place() -> None:
    def without_pools(stack: str, nap_on: bool) -> Plan:
        raw = _raw(stack)
        raw["gpuPools"] = raw["gpuPools"][:0]
        if nap_on:
            raw["cluster"]["azure"]["provisioner"] = "node-auto-provisioning"
            raw["cluster"]["systemPool"]["maxNodes"] = raw["cluster"]["systemPool"]["minNodes"]
        return plan_of(stack, _overrides(raw))

    diff = diff_plans(
        without_pools("azure-dev", False).to_json(), without_pools("azure-dev", True).to_json()
    )
    (cluster,) = [c for c in diff.changed if c.type.endswith("ManagedCluster")]
    assert not cluster.replace_paths and not cluster.refusals
    assert not diff.rejected


def test_moving_nap_pools_back_to_agent_pools_in_one_up_is_refused() -> None:
    diff = diff_plans(_nap_variant("azure-dev").to_json(), plan_of("azure-dev").to_json())
    assert any(
        r.startswith("moving GPU pools from node auto-provisioning's NodePools back")
        for r in diff.refusals
    ), diff.refusals


def test_a_node_class_edit_only_changes_new_nodes() -> None:
    raw = _raw()
    raw["gpuPools"][0]["diskSizeGb"] = 200
    diff = diff_plans(plan_of(STACK).to_json(), plan_of(STACK, _overrides(raw)).to_json())
    (node_class,) = [c for c in diff.changed if c.type == NODE_CLASS]
    assert not node_class.replace_paths
    assert [n.effect for n in node_class.node_notes] == ["new-nodes"]
    assert "budget for Drifted is 0" in node_class.node_notes[0].says


SPOT_JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {gpufleet.io/pool: a100}
      tolerations:
        - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}
%s
      containers:
        - name: c
          image: x
          resources: {limits: {nvidia.com/gpu: 1}}
"""
SPOT_TOLERATION = (
    "        - {key: kubernetes.azure.com/scalesetpriority, operator: Equal, value: spot, "
    "effect: NoSchedule}"
)


@pytest.mark.parametrize(("toleration", "fits"), [(SPOT_TOLERATION, True), ("", False)])
def test_fit_lets_only_a_job_that_tolerates_spot_onto_a_spot_fallback_pool(
    toleration: str, fits: bool
) -> None:
    config = parse_config(_raw())
    templates = read_workloads(SPOT_JOB % toleration).templates
    (verdict,) = fit_templates(templates, pool_checks(config))
    (a100,) = [pool for pool in verdict.pools if pool.pool == "a100"]
    assert a100.fits == fits, a100.reasons
