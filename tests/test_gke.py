"""The GKE stacks' whole graph under mocks: what `pulumi up` would create is what GPU pods need."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from components.model.catalog import index as gpus
from components.model.config import parse_config
from components.model.pools import resolve_pools
from components.tooling.engine import Plan, RecordedResource
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

GKE_STACKS = ["gcp-dev", "gcp-a100-mig"]
NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"


def gpu_node_pools(plan: Plan) -> dict[str, RecordedResource]:
    return {
        r.inputs["name"]: r
        for r in plan.of_type(NODE_POOL)
        if r.inputs["nodeConfig"].get("guestAccelerators")
    }


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_every_configured_pool_is_an_explicitly_named_gpu_node_pool(stack: str) -> None:
    config = parse_config(load_stack(stack).gpufleet)
    pools = gpu_node_pools(plan_of(stack))
    assert sorted(pools) == sorted(p.name for p in config.gpu_pools)
    for spec in config.gpu_pools:
        node_pool = pools[spec.name]
        node_config = node_pool.inputs["nodeConfig"]
        machine = gpus.MACHINE_TYPES[("gcp", spec.accelerator, node_config["machineType"])]
        (accelerator,) = node_config["guestAccelerators"]
        assert accelerator["type"] == machine.gke_accelerator
        expected_count = spec.gpus_per_node or 1 if machine.attach_counts else machine.gpus
        assert accelerator["count"] == expected_count
        assert accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"] in (
            "DEFAULT",
            "LATEST",
        )
        assert node_config["spot"] is spec.spot
        assert node_pool.inputs["nodeLocations"] == spec.zones
        assert "https://www.googleapis.com/auth/devstorage.read_only" in node_config["oauthScopes"]


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_gpu_pools_scale_to_zero_and_pulumi_never_resets_the_autoscaler(stack: str) -> None:
    for node_pool in gpu_node_pools(plan_of(stack)).values():
        autoscaling = node_pool.inputs["autoscaling"]
        assert autoscaling["totalMinNodeCount"] == 0
        assert "minNodeCount" not in autoscaling  # total_* and per-zone limits never mix
        assert node_pool.inputs["initialNodeCount"] == 0
        assert {"initialNodeCount", "nodeCount"} <= set(node_pool.ignore_changes)
        # ...and a refresh does not read every instance group for a count it ignores.
        assert node_pool.inputs["ignoreNodeCountChanges"] is True
        spot = node_pool.inputs["nodeConfig"]["spot"]
        machine_type = node_pool.inputs["nodeConfig"]["machineType"]
        scarce = any(m.scarce for m in gpus.MACHINE_TYPES.values() if m.name == machine_type)
        assert autoscaling["locationPolicy"] == ("ANY" if spot or scarce else "BALANCED")


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_gpu_taint_is_declared_explicitly(stack: str) -> None:
    for node_pool in gpu_node_pools(plan_of(stack)).values():
        taints = node_pool.inputs["nodeConfig"]["taints"]
        assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"} in taints


def test_time_sharing_and_mig_reach_the_accelerator_config() -> None:
    l4 = gpu_node_pools(plan_of("gcp-dev"))["l4-spot"]
    (accelerator,) = l4.inputs["nodeConfig"]["guestAccelerators"]
    assert accelerator["gpuSharingConfig"] == {
        "gpuSharingStrategy": "TIME_SHARING",
        "maxSharedClientsPerGpu": 4,
    }
    assert "gpuPartitionSize" not in accelerator

    mig = gpu_node_pools(plan_of("gcp-a100-mig"))["a100-mig"]
    (accelerator,) = mig.inputs["nodeConfig"]["guestAccelerators"]
    assert accelerator["gpuPartitionSize"] == "1g.5gb"
    assert "gpuSharingConfig" not in accelerator


def test_allocatable_reports_shared_and_partitioned_capacity() -> None:
    def gpus(pool: dict[str, Any]) -> dict[str, int]:
        return {k: v for k, v in pool["allocatablePerNode"].items() if isinstance(v, int)}

    dev = {p["name"]: p for p in plan_of("gcp-dev").outputs["gpuPools"]}
    assert gpus(dev["l4-spot"]) == {"nvidia.com/gpu": 4}  # 1 GPU x 4 clients
    assert gpus(dev["t4"]) == {"nvidia.com/gpu": 1}
    mig = {p["name"]: p for p in plan_of("gcp-a100-mig").outputs["gpuPools"]}
    assert gpus(mig["a100-mig"]) == {"nvidia.com/gpu": 7}  # 7 x 1g.5gb
    assert mig["a100-mig"]["nodeLabels"]["cloud.google.com/gke-gpu-partition-size"] == "1g.5gb"
    assert gpus(mig["a100-80-spot"]) == {"nvidia.com/gpu": 8}
    # n1-standard-8 (8 vCPU, 30 GiB): GKE keeps 60+10+10+10 = 90m, and 25% of 4 GiB, 20% of
    # the next 4, 10% of the next 8 and 6% of the last 14 (3522.56 MiB) + 100 MiB eviction;
    # image streaming 10% of 4 GiB, 8% of the next 4, 4% of the next 8 and 2.4% of the last 14
    # (1409.02 MiB); then GKE's device plugin DaemonSet takes 50m, 100Mi and one of the 110 pods.
    assert {k: v for k, v in dev["t4"]["allocatablePerNode"].items() if k != "nvidia.com/gpu"} == {
        "cpu": "7860m",
        # floor(30720 - 613.76 kernel - 1024 - 819.2 - 819.2 - 860.16 - 100 - 1409.02) - 100
        "memory": "24974Mi",
        "pods": "109",
    }


def test_gpu_operator_mode_disables_gke_driver_and_default_plugin() -> None:
    plan = plan_of("gcp-dev", {"gpufleet:gpuSoftware": {"mode": "gpu-operator"}})
    for node_pool in gpu_node_pools(plan).values():
        config = node_pool.inputs["nodeConfig"]
        (accelerator,) = config["guestAccelerators"]
        assert (
            accelerator["gpuDriverInstallationConfig"]["gpuDriverVersion"]
            == "INSTALLATION_DISABLED"
        )
        assert config["labels"]["gke-no-default-nvidia-gpu-device-plugin"] == "true"
        # GKE's own sharing needs GKE's device plugin; with the operator it is NVIDIA's config.
        assert "gpuSharingConfig" not in accelerator


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_cluster_is_private_vpc_native_with_workload_identity(stack: str) -> None:
    plan = plan_of(stack)
    (cluster,) = plan.of_type(CLUSTER)
    inputs = cluster.inputs
    assert inputs["privateClusterConfig"]["enablePrivateNodes"] is True
    assert inputs["networkingMode"] == "VPC_NATIVE"
    assert inputs["ipAllocationPolicy"]["clusterSecondaryRangeName"]
    assert inputs["workloadIdentityConfig"]["workloadPool"].endswith(".svc.id.goog")
    assert inputs["removeDefaultNodePool"] is True
    assert inputs["releaseChannel"]["channel"] in ("RAPID", "REGULAR", "STABLE", "EXTENDED")
    config = parse_config(load_stack(stack).gpufleet)
    assert cluster.protect is config.cluster.protect
    assert inputs["deletionProtection"] is config.cluster.protect
    # GKE's default profile unless the stack asks for another (GKE does not recommend
    # OPTIMIZE_UTILIZATION for serving); node auto-provisioning never adds pools gpufleet did
    # not plan.
    assert inputs["clusterAutoscaling"] == {
        "enabled": False,
        "autoscalingProfile": "BALANCED",
    }


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_system_pool_keeps_at_least_one_cpu_node(stack: str) -> None:
    plan = plan_of(stack)
    (system,) = [r for r in plan.of_type(NODE_POOL) if r.inputs["name"] == "system"]
    assert "guestAccelerators" not in system.inputs["nodeConfig"]
    assert system.inputs["autoscaling"]["totalMinNodeCount"] >= 1
    # GPU pools wait for the system pool so GKE never sees a GPU pool as the first pool.
    for pool in plan.of_type("gpufleet:gcp:GpuNodePool"):
        assert system.urn in pool.depends_on


def test_changing_a_gpu_pool_never_touches_the_cluster() -> None:
    base = plan_of("gcp-dev")
    raw = load_stack("gcp-dev").config["gpufleet:gpuPools"]
    changed_pools = [dict(raw[0], maxNodes=9, machineType="g2-standard-16"), *raw[1:]]
    changed = plan_of("gcp-dev", {"gpufleet:gpuPools": changed_pools})
    (before,) = base.of_type(CLUSTER)
    (after,) = changed.of_type(CLUSTER)
    assert before.inputs == after.inputs
    assert gpu_node_pools(changed)["l4-spot"].inputs["autoscaling"]["totalMaxNodeCount"] == 9


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_gpu_pools_output_is_exactly_the_contract_and_kubeconfig_is_secret(stack: str) -> None:
    plan = plan_of(stack)
    keys = {
        "name", "cloud", "accelerator", "machineTypes", "gpusPerNode", "gpuResource", "allocatablePerNode",
        "minNodes", "maxNodes", "spot", "zones", "nodeLabels", "nodeTaints", "podScheduling",
        "interconnect",
    }  # fmt: skip
    config = parse_config(load_stack(stack).gpufleet)
    assert plan.outputs["gpuPools"] == [p.to_output() for p in resolve_pools(config)]
    for entry in plan.outputs["gpuPools"]:
        assert set(entry) == keys
        assert set(entry["podScheduling"]) == {"nodeSelector", "tolerations", "resources"}
        for taint in entry["nodeTaints"]:
            assert set(taint) == {"key", "value", "effect"}
            assert taint["effect"] in ("NoSchedule", "PreferNoSchedule", "NoExecute")
    assert plan.outputs["kubeconfig"] == "[secret]"


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_node_labels_match_what_the_node_pool_registers(stack: str) -> None:
    plan = plan_of(stack)
    pools = gpu_node_pools(plan)
    for entry in plan.outputs["gpuPools"]:
        node_pool = pools[entry["name"]]
        labels = entry["nodeLabels"]
        assert labels["cloud.google.com/gke-nodepool"] == node_pool.inputs["name"]
        (accelerator,) = node_pool.inputs["nodeConfig"]["guestAccelerators"]
        assert labels["cloud.google.com/gke-accelerator"] == accelerator["type"]
        for key, value in node_pool.inputs["nodeConfig"]["labels"].items():
            assert labels[key] == value
        if node_pool.inputs["nodeConfig"]["spot"]:
            assert labels["cloud.google.com/gke-spot"] == "true"
        assert all(k in labels for k in entry["podScheduling"]["nodeSelector"])


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_kubernetes_provider_is_explicit_and_built_from_the_cluster(stack: str) -> None:
    plan = plan_of(stack)
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == "[secret]"
    (cluster,) = plan.of_type(CLUSTER)
    assert cluster.urn in provider.dependencies
    for resource in plan.resources:
        if resource.type.startswith("kubernetes:"):
            assert resource.provider and resource.provider.startswith(provider.urn)


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_a_replaced_node_pool_frees_its_fixed_name_first(stack: str) -> None:
    # GKE answers 409 to a second pool of the same name; the name is the pool's node label.
    pools = plan_of(stack).of_type(NODE_POOL)
    assert pools and all(p.delete_before_replace for p in pools)


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_disk_type_is_left_to_gke_so_hyperdisk_only_series_work(stack: str) -> None:
    for pool in plan_of(stack).of_type(NODE_POOL):
        assert "diskType" not in pool.inputs["nodeConfig"], pool.name


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_the_default_pool_never_uses_the_compute_engine_default_account(stack: str) -> None:
    plan = plan_of(stack)
    (cluster,) = plan.of_type(CLUSTER)
    accounts = {p.inputs["nodeConfig"]["serviceAccount"] for p in plan.of_type(NODE_POOL)}
    assert cluster.inputs["nodeConfig"]["serviceAccount"] in accounts
    assert len(accounts) == 1 and not next(iter(accounts)).endswith(
        "-compute@developer.gserviceaccount.com"
    )
    roles = {
        r.inputs["role"]: r.urn
        for r in plan.resources
        if r.type == "gcp:projects/iAMMember:IAMMember"
    }
    assert "roles/container.defaultNodeServiceAccount" in roles
    # The cluster (and so its temporary default pool) waits for the account's roles.
    assert set(roles.values()) <= set(cluster.depends_on)


def test_scarce_gpus_on_demand_take_any_zone_with_capacity() -> None:
    pools = gpu_node_pools(plan_of("gcp-a100-mig"))
    policies = {name: p.inputs["autoscaling"]["locationPolicy"] for name, p in pools.items()}
    # A2 and A3 are scarce whether Spot or not (FACTS.md: ANY for Spot and scarce GPUs).
    assert set(policies.values()) == {"ANY"}, policies
    t4 = gpu_node_pools(plan_of("gcp-dev"))["t4"]
    assert t4.inputs["autoscaling"]["locationPolicy"] == "BALANCED"


def test_reservation_only_machines_need_a_reservation_or_spot() -> None:
    from datetime import date

    from components.model.config import ConfigError

    TODAY = date(2026, 11, 22)  # the clouds' calendar day the tables are read on

    raw = load_stack("gcp-dev").gpufleet
    raw = {**raw, "cluster": {**raw["cluster"], "kubernetesVersion": "1.35"}}
    h200 = {"name": "h200", "accelerator": "h200-141gb", "zones": ["us-central1-b"]}
    with pytest.raises(ConfigError) as caught:
        parse_config({**raw, "gpuPools": [h200]}, today=TODAY)
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.startswith("gpuPools[0].spot: a3-ultragpu-8g is sold on demand only from")
    assert problem.endswith("(default False)")
    parse_config({**raw, "gpuPools": [{**h200, "spot": True}]}, today=TODAY)
    reserved = {**h200, "gcp": {"reservation": "h200-block-1"}}
    parse_config({**raw, "gpuPools": [reserved]}, today=TODAY)
    plan = plan_of("gcp-dev", {"gpufleet:cluster": raw["cluster"], "gpufleet:gpuPools": [reserved]})
    affinity = gpu_node_pools(plan)["h200"].inputs["nodeConfig"]["reservationAffinity"]
    assert affinity == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["h200-block-1"],
    }


def test_mps_pools_tell_pods_to_share_the_hosts_ipc_namespace() -> None:
    from components.kubernetes.sample_manifests import manifests

    raw = load_stack("gcp-dev").gpufleet
    mps = {**raw["gpuPools"][0], "sharing": {"strategy": "mps", "maxSharedClientsPerGpu": 4}}
    time_sharing = raw["gpuPools"][0]
    for pool, host_ipc in ((mps, True), (time_sharing, None)):
        (spec,) = resolve_pools(parse_config({**raw, "gpuPools": [pool]}))
        assert spec.pod_scheduling.get("hostIPC") is host_ipc
        pods = [
            m["spec"]["template"]["spec"] for m in manifests([spec]) if m["kind"] != "Namespace"
        ]
        assert pods and all(pod.get("hostIPC") is host_ipc for pod in pods)


def test_operator_pools_get_googles_driver_installer_from_the_program() -> None:
    """INSTALLATION_DISABLED pools and the operator's driver off: without Google's installer no
    GPU would ever appear (review gke.md S2-1). The manifest is vendored, pinned by commit and
    sent inline: no preview downloads it (review gke-2.md N7)."""
    import hashlib

    from components.gcp.model import driver_installer

    plan = plan_of("gcp-dev", {"gpufleet:gpuSoftware": {"mode": "gpu-operator"}})
    assert plan.of_type("kubernetes:yaml/v2:ConfigFile") == []
    (group,) = plan.of_type("kubernetes:yaml/v2:ConfigGroup")
    assert set(group.inputs) == {"yaml"}
    (daemonset,) = yaml.safe_load_all(group.inputs["yaml"])
    assert daemonset["kind"] == "DaemonSet"
    assert (daemonset["metadata"]["namespace"], daemonset["metadata"]["name"]) == (
        "kube-system",
        "gpufleet-nvidia-driver-installer",
    )
    vendored = driver_installer.VENDORED.read_bytes()
    assert hashlib.sha256(vendored).hexdigest() == driver_installer.VENDORED_SHA256
    assert b"Licensed under the Apache License, Version 2.0" in vendored
    assert len(driver_installer.COMMIT) == 40  # a commit, not a branch
    # GKE-managed drivers need no installer.
    assert plan_of("gcp-dev").of_type("kubernetes:yaml/v2:ConfigGroup") == []


def test_the_installer_lands_only_on_the_stacks_gpu_pools() -> None:
    """Google's selection (a GPU node without GKE's driver label) plus gpufleet.io/pool: another
    team's GPU nodes on an adopted cluster are left alone (review gke-2.md N7)."""
    from components.tooling.scheduling import NodeTemplate
    from components.tooling.scheduling.node_affinity import label_reasons

    plan = plan_of("gcp-existing", {"gpufleet:gpuSoftware": {"mode": "gpu-operator"}})
    (group,) = plan.of_type("kubernetes:yaml/v2:ConfigGroup")
    pod = yaml.safe_load(group.inputs["yaml"])["spec"]["template"]["spec"]
    for pool in plan.outputs["gpuPools"]:
        node = NodeTemplate(pool=pool["name"], labels=pool["nodeLabels"])
        assert label_reasons(pod, node) == [], pool["name"]
    owners = NodeTemplate(
        pool="owners-gpus",
        labels={
            "cloud.google.com/gke-accelerator": "nvidia-l4",
            "cloud.google.com/gke-nodepool": "owners-gpus",
        },
    )
    assert label_reasons(pod, owners)


def test_the_installer_reaches_operator_pools_and_skips_gke_managed_ones() -> None:
    """The pinned manifest's DaemonSet requires `cloud.google.com/gke-accelerator` and the
    absence of `cloud.google.com/gke-gpu-driver-version` (container-engine-accelerators,
    daemonset-preloaded.yaml at driver_installer.COMMIT): operator pools must lack the label,
    pools whose driver GKE installs must carry it."""
    operator_pools = plan_of("gcp-dev", {"gpufleet:gpuSoftware": {"mode": "gpu-operator"}})
    for pool in operator_pools.outputs["gpuPools"]:
        assert "cloud.google.com/gke-accelerator" in pool["nodeLabels"]
        assert "cloud.google.com/gke-gpu-driver-version" not in pool["nodeLabels"]
    for pool in plan_of("gcp-dev").outputs["gpuPools"]:
        assert "cloud.google.com/gke-gpu-driver-version" in pool["nodeLabels"]


def test_operator_sharing_on_gke_is_seen_by_the_autoscaler_as_the_physical_gpus() -> None:
    raw = load_stack("gcp-a100-mig").gpufleet
    for mode, expected in (("gpu-operator", "physical"), ("auto", "shared")):
        config = parse_config({**raw, "gpuSoftware": {"mode": mode}})
        for spec in resolve_pools(config):
            at_zero = spec.autoscaler_resources[spec.gpu_resource]
            allocatable = spec.allocatable_per_node[spec.gpu_resource]
            if spec.mig_partition_size and expected == "physical":
                assert at_zero == spec.gpus_per_node < allocatable, spec.name
            else:
                assert at_zero == allocatable, spec.name


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_upgrades_wait_for_the_window_and_never_surge_a_gpu_vm(stack: str) -> None:
    plan = plan_of(stack)
    (cluster,) = plan.of_type(CLUSTER)
    window = cluster.inputs["maintenancePolicy"]["recurringWindow"]
    assert window["recurrence"] == "FREQ=WEEKLY;BYDAY=SA"
    assert window["startTime"] == "2024-01-06T02:00:00Z"  # a Saturday, 02:00 UTC
    assert window["endTime"] == "2024-01-06T14:00:00Z"  # 12 hours: 4 x 12 h >= GKE's 48 h
    for pool in gpu_node_pools(plan).values():
        if pool.inputs["nodeConfig"].get("flexStart"):
            # GKE's short-lived upgrades: nothing sent, GKE's own strategy never fought.
            assert "upgradeSettings" not in pool.inputs
            assert "upgradeSettings" in pool.ignore_changes
            continue
        assert pool.inputs["upgradeSettings"] == {
            "maxSurge": 0,
            "maxUnavailable": 1,
            "strategy": "SURGE",
        }
        assert "upgradeSettings" not in pool.ignore_changes


def test_a_gke_window_too_short_for_gkes_48_hours_is_refused() -> None:
    from components.model.config import ConfigError

    raw = load_stack("gcp-dev").gpufleet
    short = {**raw, "cluster": {**raw["cluster"], "maintenance": {"durationHours": 8}}}
    with pytest.raises(ConfigError) as caught:
        parse_config(short)
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.startswith("cluster.maintenance.durationHours: GKE needs 48 hours")
    assert problem.endswith("(got 8)")


def test_mps_takes_several_shares_on_a_one_gpu_node_but_not_on_a_multi_gpu_node() -> None:
    """GKE's device plugin refuses a container more than one shared GPU under time-sharing, and
    under MPS only on multi-GPU nodes; on a one-GPU MPS node it scales the thread and memory
    limits to the shares asked for (container-engine-accelerators gpusharing.go ValidateRequest,
    manager.go Envs; review gke-2.md N8)."""
    from components.tooling.fit import fit_check
    from components.tooling.pool_views import pool_checks

    raw = load_stack("gcp-dev").gpufleet
    l4 = {**raw["gpuPools"][0], "sharing": {"strategy": "mps", "maxSharedClientsPerGpu": 4}}
    t4 = {
        **raw["gpuPools"][1],
        "name": "t4-mps",
        "gpusPerNode": 4,
        "machineType": "n1-standard-16",
        "sharing": {"strategy": "mps", "maxSharedClientsPerGpu": 2},
    }
    timeshared = {**raw["gpuPools"][0], "name": "l4-ts"}
    config = parse_config({**raw, "gpuPools": [l4, t4, timeshared]})
    checks = {check.name: check for check in pool_checks(config, None)}
    for pool, fits in (("l4-spot", True), ("t4-mps", False), ("l4-ts", False)):
        spec = next(s for s in resolve_pools(config) if s.name == pool)
        pod = {
            **spec.pod_scheduling,
            "containers": [
                {"name": "cuda", "resources": {"limits": {"nvidia.com/gpu": 2}}},
            ],
        }
        pod.pop("resources")
        verdict = fit_check(pod, checks[pool])
        assert verdict.fits is fits, (pool, verdict.reasons)
        if not fits:
            assert any("at most 1 shared GPU" in reason for reason in verdict.reasons)
