"""AKS InfiniBand pools (`interconnect: fabric`, issue 32): the facts per ND size, the Network
Operator and its NicClusterPolicy on the fabric pools only, GPUDirect RDMA with either driver,
the pool's one-zone / one-placement-group limits at their edge, day two, and the NCCL test."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from components.azure.model import fabric, rdma
from components.azure.model.catalog import CATALOG
from components.azure.model.cloud import AZURE
from components.model.config import parse_config
from components.model.pools import resolve_pools
from components.model.problems import ConfigError
from components.tooling.diff import diff_plans
from components.tooling.stacks import load_stack
from tests.conftest import PINNED_TODAY, plan_of

STACK = "azure-infiniband"
POLICY = "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy"
RELEASE = "kubernetes:helm.sh/v3:Release"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
AGENT_POOL = "azure-native:containerservice:AgentPool"
FACTS = json.loads((Path(__file__).parent / "data" / "network_operator_facts.json").read_text())


def raw_of() -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(STACK).gpufleet))


def overrides(raw: dict[str, Any]) -> dict[str, Any]:
    return {f"gpufleet:{key}": value for key, value in raw.items()}


def with_plain_pool(fabric_on: bool) -> dict[str, Any]:
    """The example plus a second ND pool, with or without the fabric."""
    raw = raw_of()
    second = {**raw["gpuPools"][0], "name": "h100b"}
    second["interconnect"] = "fabric" if fabric_on else "none"
    raw["gpuPools"].append(second)
    return raw


def policy_of(plan: Any) -> Any:
    (policy,) = plan.of_type(POLICY)
    return policy


def affinity_pools(policy: Any) -> list[str]:
    terms = policy.inputs["spec"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    (term,) = terms["nodeSelectorTerms"]
    (expression,) = term["matchExpressions"]
    assert expression["key"] == "kubernetes.azure.com/agentpool"
    assert expression["operator"] == "In"
    values: list[str] = expression["values"]
    return values


# --- facts ------------------------------------------------------------------------------------


def test_every_nd_size_with_infiniband_has_sourced_facts_and_a_catalog_row() -> None:
    assert set(fabric.FABRIC_FACTS) == {
        "Standard_ND96asr_v4",
        "Standard_ND96amsr_A100_v4",
        "Standard_ND96isr_H100_v5",
        "Standard_ND96isr_H200_v5",
    }
    machines = {m.name for m in CATALOG.rows}
    for size, facts in fabric.FABRIC_FACTS.items():
        assert size in machines
        assert facts.source and facts.interfaces == 8 and facts.resource_per_node == 8
        assert facts.resource == "rdma/ib"
        assert AZURE.fabric_facts(size) == facts
    assert fabric.FABRIC_FACTS["Standard_ND96isr_H100_v5"].bandwidth_gbps == 3200
    assert fabric.FABRIC_FACTS["Standard_ND96asr_v4"].bandwidth_gbps == 1600
    # Sizes without InfiniBand have none.
    assert AZURE.fabric_facts("Standard_NC24ads_A100_v4") is None


# --- what the example builds ------------------------------------------------------------------


def test_the_example_installs_the_network_operator_for_its_fabric_pool_only() -> None:
    plan = plan_of(STACK)
    (release,) = [r for r in plan.of_type(RELEASE) if r.inputs["chart"] == "network-operator"]
    assert release.inputs["version"] == FACTS["chart"]["version"] == "26.4.0"
    assert release.inputs["namespace"] == "network-operator"
    policy = policy_of(plan)
    assert affinity_pools(policy) == ["h100ib"]
    spec = policy.inputs["spec"]
    # AKS's GPU taint is tolerated, or no operand would reach a GPU node.
    assert {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"} in spec[
        "tolerations"
    ]
    # A driver bump must not drain nodes running jobs.
    assert spec["ofedDriver"]["upgradePolicy"] == {"autoUpgrade": False}
    config = json.loads(spec["sriovDevicePlugin"]["config"])
    (resource,) = config["resourceList"]
    assert f"{resource['resourcePrefix']}/{resource['resourceName']}" == "rdma/ib"
    assert resource["selectors"]["isRdma"] is True
    # The pool itself: one zone.
    (pool,) = plan.of_type(AGENT_POOL)
    assert pool.inputs["availabilityZones"] == ["1"]
    # What plan cannot check is said.
    assert any("AKSInfinibandSupport" in w and "not checked" in w for w in plan.warnings)


def test_a_plain_pool_next_to_a_fabric_pool_gets_no_network_operator_pods() -> None:
    plan = plan_of(STACK, overrides(with_plain_pool(fabric_on=False)))
    assert affinity_pools(policy_of(plan)) == ["h100ib"]
    (peermem,) = [d for d in plan.of_type(DAEMONSET) if d.name.endswith("-peermem")]
    node_affinity = peermem.inputs["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
    terms = node_affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == ["h100ib"]


def test_a_stack_without_fabric_pools_installs_nothing_of_it() -> None:
    raw = raw_of()
    raw["gpuPools"][0]["interconnect"] = "none"
    plan = plan_of(STACK, overrides(raw))
    assert not plan.of_type(POLICY)
    assert not [r for r in plan.of_type(RELEASE) if r.inputs["chart"] == "network-operator"]
    assert not any("AKSInfinibandSupport" in w for w in plan.warnings)


# --- GPUDirect RDMA: nvidia-peermem with either driver -----------------------------------------


def test_aks_driver_gets_the_peermem_reloader_and_the_operator_driver_loads_it_itself() -> None:
    plan = plan_of(STACK)
    assert [d for d in plan.of_type(DAEMONSET) if d.name.endswith("-peermem")]
    raw = raw_of()
    raw["gpuSoftware"] = {"mode": "gpu-operator", "operatorDriver": True}
    plan = plan_of(STACK, overrides(raw))
    assert not [d for d in plan.of_type(DAEMONSET) if d.name.endswith("-peermem")]
    (operator,) = [r for r in plan.of_type(RELEASE) if r.inputs["chart"] == "gpu-operator"]
    driver = operator.inputs["values"]["driver"]
    assert driver["enabled"] is True
    assert driver["rdma"] == {"enabled": True, "useHostMofed": False}
    # The pool is created without AKS's driver, so the two never meet on a node.
    (pool,) = plan.of_type(AGENT_POOL)
    assert pool.inputs["gpuProfile"] == {"driver": "None"}


def test_the_operator_on_aks_driver_gets_no_rdma_setting_it_could_not_act_on() -> None:
    raw = raw_of()
    raw["gpuSoftware"] = {"mode": "gpu-operator"}
    plan = plan_of(STACK, overrides(raw))
    (operator,) = [r for r in plan.of_type(RELEASE) if r.inputs["chart"] == "gpu-operator"]
    assert "rdma" not in operator.inputs["values"]["driver"]
    assert [d for d in plan.of_type(DAEMONSET) if d.name.endswith("-peermem")]


# --- objects valid against the pinned chart and CRD --------------------------------------------


def test_the_policy_is_valid_against_the_pinned_crd_and_the_values_keys_exist() -> None:
    schema = copy.deepcopy(FACTS["nicClusterPolicy"]["spec"])

    def strict(node: Any) -> None:
        # Unknown fields would be pruned by the API server: refuse them here.
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                node.setdefault("additionalProperties", False)
            for child in node.values():
                strict(child)
        elif isinstance(node, list):
            for child in node:
                strict(child)

    strict(schema)
    sku = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
    policy = rdma.nic_cluster_policy(["h100ib"], "kubernetes.azure.com/agentpool", [sku])
    assert policy["apiVersion"] == FACTS["nicClusterPolicy"]["apiVersion"]
    jsonschema.validate(policy["spec"], schema)
    broken = copy.deepcopy(policy["spec"])
    broken["ofedDriver"]["upgradePolicy"]["autoUpgrades"] = False
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)

    def missing(sent: dict[str, Any], defaults: dict[str, Any]) -> list[str]:
        # An empty map default ({} for `affinity`) is free-form: anything goes under it.
        return [
            key
            for key, value in sent.items()
            if defaults.get(key) is None
            or (isinstance(value, dict) and defaults[key] and missing(value, defaults[key]))
        ]

    values = rdma.network_operator_values(
        ["h100ib"], "kubernetes.azure.com/agentpool", [sku], False
    )
    assert missing(values, FACTS["chart"]["values"]) == []
    assert missing({**values, "nfd": {"deployNodeFeatureRule": True}}, FACTS["chart"]["values"])


# --- one zone, one placement group: the edges -------------------------------------------------


def problems_of(pool: dict[str, Any], cluster_zones: list[str] | None = None) -> list[str]:
    raw = raw_of()
    raw["gpuPools"][0] = {**raw["gpuPools"][0], **pool}
    if cluster_zones is not None:
        raw["cluster"]["zones"] = cluster_zones
    try:
        parse_config(raw, PINNED_TODAY)
    except ConfigError as error:
        return sorted({p.path for p in error.problems})
    return []


def test_max_nodes_passes_at_the_placement_group_cap_and_is_refused_one_over() -> None:
    assert problems_of({"maxNodes": 100}) == []
    assert problems_of({"maxNodes": 101}) == ["gpuPools[0].maxNodes"]


def test_a_fabric_pool_runs_in_exactly_one_zone() -> None:
    assert problems_of({"zones": ["2"]}) == []
    assert problems_of({"zones": ["1", "2"]}) == ["gpuPools[0].zones"]
    # Without its own zones the pool takes the cluster's three: refused.
    pool = {k: v for k, v in raw_of()["gpuPools"][0].items() if k != "zones"}
    assert problems_of(pool | {"zones": None}) == ["cluster.zones"]
    # A plain pool keeps its zones.
    assert problems_of({"zones": ["1", "2"], "interconnect": "none"}) == []


# --- day two ----------------------------------------------------------------------------------


def test_turning_fabric_on_for_a_running_pool_leaves_the_pool_and_loads_the_driver_in_place() -> (
    None
):
    before = plan_of(STACK, overrides(with_plain_pool(fabric_on=False)))
    after = plan_of(STACK, overrides(with_plain_pool(fabric_on=True)))
    diff = diff_plans(before.to_json(), after.to_json())
    # The agent pool only gains its autoscaler tag, in place: no roll, no replacement.
    (pool,) = [c for c in diff.changed if c.type == AGENT_POOL]
    assert pool.verdict == "update" and not pool.replace_paths
    (policy,) = [c for c in diff.changed if c.type == POLICY]
    assert policy.verdict == "update" and not policy.replace_paths
    (note,) = [n for n in policy.node_notes if "spec.nodeAffinity" in n.paths[0]]
    assert note.effect == "in-place"
    assert "nothing is drained" in note.says


def test_a_driver_version_change_reaches_only_new_nodes() -> None:
    (effect,) = [
        e for e in AZURE.resource_knowledge.node_effects[POLICY] if e.path == "spec.ofedDriver"
    ]
    assert effect.effect == "new-nodes"


# --- the NCCL test ----------------------------------------------------------------------------


def test_the_nccl_test_runs_one_worker_per_node_with_every_gpu_and_hca() -> None:
    config = parse_config(raw_of(), PINNED_TODAY)
    (spec,) = resolve_pools(config)
    (pool_config,) = config.gpu_pools
    facts = AZURE.fabric_facts("Standard_ND96isr_H100_v5")
    assert facts is not None
    pool = dataclasses.replace(spec, fabric=AZURE.pool_fabric(config, pool_config, facts, "1"))
    assert pool.fabric is not None and pool.fabric.placement_max_nodes == 100
    test = AZURE.nccl_test(config, pool, 3)
    assert test is not None
    (job,) = test.manifests
    assert job["kind"] == "MPIJob"
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 3
    (container,) = worker["template"]["spec"]["containers"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 8, "rdma/ib": 8}
    assert worker["template"]["spec"]["nodeSelector"] == {
        "kubernetes.azure.com/agentpool": "h100ib"
    }
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    assert {"name": "NUMBER_OF_PROCESSES", "value": "24"} in launcher["env"]
    # ND H100 v5 is NDR: the guide's HDR-era figure is not its own, the links' rate is said.
    assert test.expected is None
    assert any("400 GB/s" in need for need in test.requires)
    # A pool without the fabric gets no NCCL test.
    assert AZURE.nccl_test(config, dataclasses.replace(spec, fabric=None), 2) is None


# --- what the operator needs on the fabric nodes (review aks-6 A6-1, A6-6, A6-2, A6-13) -------


def spot_raw() -> dict[str, Any]:
    raw = raw_of()
    raw["gpuPools"][0]["spot"] = True
    raw["gpuPools"][0]["taints"] = [{"key": "team", "value": "ml", "effect": "NoSchedule"}]
    return raw


def pool_taints(plan: Any) -> list[dict[str, str]]:
    (pool,) = plan.of_type(AGENT_POOL)
    taints = []
    for text in pool.inputs["nodeTaints"]:
        key_value, effect = text.split(":")
        key, value = key_value.split("=")
        taints.append({"key": key, "operator": "Equal", "value": value, "effect": effect})
    return taints


def network_operator_values_of(plan: Any) -> dict[str, Any]:
    (release,) = [r for r in plan.of_type(RELEASE) if r.inputs["chart"] == "network-operator"]
    values: dict[str, Any] = release.inputs["values"]
    return values


@pytest.mark.parametrize("spot", [False, True], ids=["example", "spot-and-user-taint"])
def test_every_taint_of_the_fabric_pool_is_tolerated_by_everything_that_must_run_there(
    spot: bool,
) -> None:
    raw = spot_raw() if spot else raw_of()
    plan = plan_of(STACK, overrides(raw))
    taints = pool_taints(plan)
    assert len(taints) == (3 if spot else 1)
    (peermem,) = [d for d in plan.of_type(DAEMONSET) if d.name.endswith("-peermem")]
    worker = network_operator_values_of(plan)["node-feature-discovery"]["worker"]
    config = parse_config(raw, PINNED_TODAY)
    (spec,) = resolve_pools(config)
    sample = AZURE.nccl_test(config, spec, 2)
    assert sample is not None
    (job,) = sample.manifests
    for tolerations in (
        policy_of(plan).inputs["spec"]["tolerations"],
        peermem.inputs["spec"]["template"]["spec"]["tolerations"],
        worker["tolerations"],
        job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["tolerations"],
    ):
        assert [t for t in taints if t not in tolerations] == []
    # The chart's own worker tolerations stay (Helm replaces the list).
    assert (
        worker["tolerations"][:3]
        == FACTS["chart"]["values"]["node-feature-discovery"]["worker"]["tolerations"]
    )


def test_nfd_runs_on_the_fabric_pools_only_and_makes_the_nic_label_the_driver_needs() -> None:
    values = network_operator_values_of(plan_of(STACK, overrides(with_plain_pool(False))))
    assert values["nfd"] == {"enabled": True, "deployNodeFeatureRules": True}
    worker = values["node-feature-discovery"]["worker"]
    terms = worker["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["h100ib"]
    # The chart's rule (on with deployNodeFeatureRules) labels Mellanox NICs as the OFED state
    # requires (NFD prefixes rule labels with feature.node.kubernetes.io/).
    rule = FACTS["chart"]["nodeFeatureRule"]
    assert rule["gate"] == "nfd.deployNodeFeatureRules"
    (entry,) = rule["spec"]["rules"]
    (label,) = entry["labels"]
    assert f"feature.node.kubernetes.io/{label}" == rdma.MELLANOX_NIC_LABEL
    (match,) = entry["matchFeatures"]
    assert match["matchExpressions"]["vendor"]["value"] == ["15b3"]
    assert "0207" in match["matchExpressions"]["class"]["value"]  # InfiniBand controller


def test_with_the_gpu_operator_one_nfd_labels_the_fabric_nodes() -> None:
    raw = raw_of()
    raw["gpuSoftware"] = {"mode": "gpu-operator"}
    plan = plan_of(STACK, overrides(raw))
    values = network_operator_values_of(plan)
    assert values["nfd"] == {"enabled": False, "deployNodeFeatureRules": False}
    (operator,) = [r for r in plan.of_type(RELEASE) if r.inputs["chart"] == "gpu-operator"]
    nfd = operator.inputs["values"].get("nfd", {})
    assert nfd.get("enabled", True) is True  # the GPU Operator's NFD (chart default on)
    worker = operator.inputs["values"]["node-feature-discovery"]["worker"]
    assert [t for t in pool_taints(plan) if t not in worker["tolerations"]] == []
    terms = worker["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    selected = {
        v
        for term in terms["nodeSelectorTerms"]
        for e in term["matchExpressions"]
        for v in e["values"]
    }
    assert "h100ib" in selected


def test_the_pool_tells_the_autoscaler_its_rdma_devices_at_zero_and_fit_reads_that() -> None:
    plan = plan_of(STACK)
    (pool,) = plan.of_type(AGENT_POOL)
    assert pool.inputs["minCount"] == 0
    prefix = "k8s.io_cluster-autoscaler_node-template_resources_"
    tagged = {
        key[len(prefix) :].replace("_", "/"): int(value)
        for key, value in pool.inputs["tags"].items()
        if key.startswith(prefix)
    }
    assert tagged == {"rdma/ib": 8}
    (spec,) = resolve_pools(parse_config(raw_of(), PINNED_TODAY))
    # fit's picture at zero is what the tags give the autoscaler, beyond the SKU's GPUs.
    assert {k: v for k, v in spec.autoscaler_resources.items() if k != spec.gpu_resource} == (
        tagged
    )
    # A plain pool carries no such tag.
    raw = raw_of()
    raw["gpuPools"][0]["interconnect"] = "none"
    (plain,) = plan_of(STACK, overrides(raw)).of_type(AGENT_POOL)
    assert not [k for k in plain.inputs["tags"] if k.startswith(prefix)]


def test_the_fabric_pod_fragment_locks_memory_and_has_shared_memory() -> None:
    from components.tooling.consumers.pod import pod_fragment

    (spec,) = resolve_pools(parse_config(raw_of(), PINNED_TODAY))
    fragment = pod_fragment(spec)
    (container,) = fragment["containers"]
    assert container["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    (mount,) = container["volumeMounts"]
    (volume,) = fragment["volumes"]
    assert mount == {"name": volume["name"], "mountPath": "/dev/shm"}
    assert volume["emptyDir"] == {"medium": "Memory"}
    raw = raw_of()
    raw["gpuPools"][0]["interconnect"] = "none"
    (plain,) = resolve_pools(parse_config(raw, PINNED_TODAY))
    assert "volumes" not in pod_fragment(plain)
    assert "securityContext" not in pod_fragment(plain)["containers"][0]


def test_an_adopted_cluster_is_told_an_existing_network_operator_is_not_checked() -> None:
    assert fabric.fabric_warnings(parse_config(raw_of(), PINNED_TODAY).gpu_pools, False)
    (_, existing) = fabric.fabric_warnings(parse_config(raw_of(), PINNED_TODAY).gpu_pools, True)
    assert "Network Operator" in existing and "not checked" in existing


def nccl_test_on(accelerator: str, size: str) -> Any:
    raw = raw_of()
    raw["gpuPools"][0].update(accelerator=accelerator, machineType=size)
    config = parse_config(raw, PINNED_TODAY)
    (pool,) = resolve_pools(config)
    test = AZURE.nccl_test(config, pool, 2)
    assert test is not None
    return test


def all_reduce_of(test: Any) -> str:
    (job,) = test.manifests
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    return str(launcher["command"][-1])


def test_the_guides_figure_is_attached_to_the_hdr_sizes_only() -> None:
    """187.22 GB/s is 94 % of eight HDR links' 200 GB/s and 47 % of eight NDR links' 400 GB/s:
    on an NDR size it would pass a fabric at half speed."""
    for size, facts in fabric.FABRIC_FACTS.items():
        hdr = facts.kind == "InfiniBand HDR"
        assert (facts.expected_busbw == fabric.GUIDE_FIGURE) is hdr, size
    test = nccl_test_on("a100-40gb", "Standard_ND96asr_v4")
    assert test.expected == fabric.GUIDE_FIGURE
    assert fabric.GUIDE_FIGURE.source in test.sources
    assert any("below 180 GB/s" in need for need in test.requires)


def test_the_largest_message_fits_the_gpu_and_keeps_the_figures_8_gib_row() -> None:
    """`-c 0`: two buffers of the largest size per GPU. On A100 40 GB, 16 GiB (32 GiB of
    buffers) leaves no room, so the test stops at 8 GiB, the figure's size; on 80 GB it keeps
    the recipe's 16G (whose last `-f 4` row from 8 B is 8 GiB too)."""
    a100 = all_reduce_of(nccl_test_on("a100-40gb", "Standard_ND96asr_v4"))
    assert " -c 0 -b 8 -e 8G -f 4 " in a100
    h100 = all_reduce_of(nccl_test_on("h100-80gb", "Standard_ND96isr_H100_v5"))
    assert " -c 0 -b 8 -e 16G -f 4 " in h100


def test_each_unchecked_need_says_not_checked_once() -> None:
    test = nccl_test_on("h100-80gb", "Standard_ND96isr_H100_v5")
    assert all("not checked" not in need for need in test.requires), test.requires
    assert any(":latest" in need and "no other tag" in need for need in test.requires)
