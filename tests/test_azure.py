"""The AKS stacks' whole graph under mocks: separate GPU agent pools that scale to zero.

Each test reads what `pulumi up` would send to Azure (the recorded inputs and options) and fails
if an AKS rule breaks: GPU pools inline in the cluster, a fought autoscaler, missing Spot
settings, MIG on a size without it, the wrong driver mode, or a GPU pool change that touches
the cluster.
"""

from __future__ import annotations

from typing import Any

import pytest

from components.azure.model.catalog import AKS_MIG_PROFILES
from components.model.catalog import index as gpus
from components.model.config import parse_config
from components.model.pools import resolve_pools
from components.tooling.engine import Plan, RecordedResource
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

AKS_STACKS = ["azure-dev", "azure-a100-mig"]
CLUSTER = "azure-native:containerservice:ManagedCluster"
AGENT_POOL = "azure-native:containerservice:AgentPool"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
SPOT_KEY = "kubernetes.azure.com/scalesetpriority"
GPU_TAINT = "sku=gpu:NoSchedule"
SPOT_TAINT = f"{SPOT_KEY}=spot:NoSchedule"


def agent_pools(plan: Plan) -> dict[str, RecordedResource]:
    return {r.inputs["agentPoolName"]: r for r in plan.of_type(AGENT_POOL)}


def cluster_of(plan: Plan) -> RecordedResource:
    (cluster,) = plan.of_type(CLUSTER)
    return cluster


def raw_pools(stack: str) -> list[dict[str, Any]]:
    return [dict(p) for p in load_stack(stack).config["gpufleet:gpuPools"]]


@pytest.mark.parametrize("stack", AKS_STACKS)
def test_every_gpu_pool_is_a_separate_user_agent_pool_never_inline(stack: str) -> None:
    plan = plan_of(stack)
    config = parse_config(load_stack(stack).gpufleet)
    cluster = cluster_of(plan)
    (system,) = cluster.inputs["agentPoolProfiles"]
    assert system["name"] == "system" and system["mode"] == "System"
    pools = agent_pools(plan)
    assert sorted(pools) == sorted(p.name for p in config.gpu_pools)
    for spec in config.gpu_pools:
        pool = pools[spec.name]
        assert pool.inputs["mode"] == "User"
        assert pool.inputs["resourceName"] == cluster.inputs["resourceName"]
        assert pool.inputs["resourceGroupName"] == cluster.inputs["resourceGroupName"]
        assert pool.inputs["vnetSubnetID"] == system["vnetSubnetID"]
        machine = gpus.MACHINE_TYPES[("azure", spec.accelerator, pool.inputs["vmSize"])]
        assert machine.name == (
            spec.machine_type or gpus.DEFAULT_MACHINE_TYPES[("azure", spec.accelerator)]
        )
        assert pool.inputs["osDiskSizeGB"] == spec.disk_size_gb
        assert pool.inputs.get("availabilityZones", []) == (
            spec.zones or config.cluster.zones or []
        )
        assert pool.inputs["enableNodePublicIP"] is False


@pytest.mark.parametrize("stack", AKS_STACKS)
def test_gpu_pools_scale_from_zero_and_pulumi_never_resets_the_autoscaler(stack: str) -> None:
    plan = plan_of(stack)  # a first `up`: nothing exists yet
    for pool in agent_pools(plan).values():
        assert pool.inputs["enableAutoScaling"] is True
        assert pool.inputs["minCount"] == 0
        assert pool.inputs["count"] == 0  # what AKS starts a new pool at
        assert pool.ignore_changes == ("count",)
    # The System pool is created at minNodes like them; afterwards its size is the
    # autoscaler's (test_aks_upgrades.test_no_update_sends_a_node_count).
    (system,) = cluster_of(plan).inputs["agentPoolProfiles"]
    assert system["count"] == system["minCount"]
    assert cluster_of(plan).ignore_changes == ("agentPoolProfiles[0].count",)


def test_agent_pools_are_created_one_after_another() -> None:
    pools = list(agent_pools(plan_of("azure-a100-mig")).values())
    by_urn = {p.urn: p for p in pools}
    firsts = [p for p in pools if not set(p.depends_on) & set(by_urn)]
    assert len(firsts) == 1  # AKS rejects concurrent agent pool operations
    for pool in pools:
        assert len(set(pool.depends_on) & set(by_urn)) <= 1


@pytest.mark.parametrize("stack", AKS_STACKS)
def test_gpu_taint_extras_and_spot_settings(stack: str) -> None:
    config = parse_config(load_stack(stack).gpufleet)
    pools = agent_pools(plan_of(stack))
    assert any(p.spot for p in config.gpu_pools), "each AKS stack ships a Spot pool"
    for spec in config.gpu_pools:
        inputs = pools[spec.name].inputs
        extras = [f"{t.key}={t.value}:{t.effect}" for t in spec.taints]
        if spec.spot:
            assert inputs["nodeTaints"] == [GPU_TAINT, *extras, SPOT_TAINT]
            assert inputs["nodeLabels"][SPOT_KEY] == "spot"
            assert inputs["scaleSetPriority"] == "Spot"
            assert inputs["scaleSetEvictionPolicy"] == "Delete"
            assert inputs["spotMaxPrice"] == -1
        else:
            assert inputs["nodeTaints"] == [GPU_TAINT, *extras]
            assert SPOT_KEY not in inputs["nodeLabels"]
            assert inputs["scaleSetPriority"] == "Regular"
            assert "scaleSetEvictionPolicy" not in inputs and "spotMaxPrice" not in inputs
        for key, value in spec.labels.items():
            assert inputs["nodeLabels"][key] == value


def test_mig_profile_only_on_mig_pools_of_mig_capable_sizes() -> None:
    config = parse_config(load_stack("azure-a100-mig").gpufleet)
    pools = agent_pools(plan_of("azure-a100-mig"))
    mig_pools = [p for p in config.gpu_pools if p.mig_partition_size]
    assert mig_pools, "the realistic stack ships a MIG pool"
    for spec in config.gpu_pools:
        inputs = pools[spec.name].inputs
        if spec.mig_partition_size:
            slices = spec.mig_partition_size.split(".")[0]
            assert inputs["gpuInstanceProfile"] == AKS_MIG_PROFILES[slices]
            assert gpus.MACHINE_TYPES[("azure", spec.accelerator, inputs["vmSize"])].mig_capable
        else:
            assert "gpuInstanceProfile" not in inputs
    for pool in agent_pools(plan_of("azure-dev")).values():
        assert "gpuInstanceProfile" not in pool.inputs


def test_gpu_driver_follows_the_gpu_software_choice() -> None:
    # Device plugin: AKS installs the driver.
    for pool in agent_pools(plan_of("azure-dev")).values():
        assert pool.inputs["gpuProfile"] == {"driver": "Install"}
    # GPU Operator with its own driver: AKS must not install one.
    own = {"gpufleet:gpuSoftware": {"mode": "gpu-operator", "operatorDriver": True}}
    for pool in agent_pools(plan_of("azure-dev", own)).values():
        assert pool.inputs["gpuProfile"] == {"driver": "None"}
    # MIG pools stay on AKS's driver: AKS partitions the GPUs only when it installs it.
    for pool in agent_pools(plan_of("azure-a100-mig")).values():
        assert pool.inputs["gpuProfile"] == {"driver": "Install"}
    # GPU Operator on AKS's driver.
    operator = plan_of("azure-dev", {"gpufleet:gpuSoftware": {"mode": "gpu-operator"}})
    for pool in agent_pools(operator).values():
        assert pool.inputs["gpuProfile"] == {"driver": "Install"}


def test_changing_gpu_pools_never_touches_the_cluster() -> None:
    base = plan_of("azure-dev")
    pools = raw_pools("azure-dev")
    pools[0]["maxNodes"] = 9
    pools[1]["machineType"] = "Standard_NC16as_T4_v3"
    pools.append({"name": "t4big", "accelerator": "t4", "machineType": "Standard_NC64as_T4_v3"})
    changed = plan_of("azure-dev", {"gpufleet:gpuPools": pools})
    before, after = cluster_of(base), cluster_of(changed)
    assert before.inputs == after.inputs
    assert before.ignore_changes == after.ignore_changes
    assert before.protect == after.protect
    assert sorted(before.dependencies) == sorted(after.dependencies)
    changed_pools = agent_pools(changed)
    assert changed_pools["t4"].inputs["maxCount"] == 9
    assert changed_pools["t4spot"].inputs["vmSize"] == "Standard_NC16as_T4_v3"
    assert "t4big" in changed_pools


@pytest.mark.parametrize("stack", AKS_STACKS)
def test_cluster_identity_network_and_autoscaler_profile(stack: str) -> None:
    config = parse_config(load_stack(stack).gpufleet)
    aks = config.cluster.azure
    inputs = cluster_of(plan_of(stack)).inputs
    assert inputs["resourceName"] == config.cluster.name
    assert inputs["location"] == config.cluster.region
    assert inputs["identity"] == {"type": "SystemAssigned"}
    assert inputs["oidcIssuerProfile"] == {"enabled": True}
    assert inputs["securityProfile"]["workloadIdentity"] == {"enabled": True}
    network = inputs["networkProfile"]
    assert (network["networkPlugin"], network["networkPluginMode"]) == ("azure", "overlay")
    assert (network["podCidr"], network["serviceCidr"]) == (aks.pod_cidr, aks.service_cidr)
    assert inputs["autoScalerProfile"] == {
        "balanceSimilarNodeGroups": "true",
        "skipNodesWithSystemPods": "false",
        "skipNodesWithLocalStorage": "false",
        # DaemonSet pods on every GPU node must not keep an idle node "used" (review aks.md N3).
        "ignoreDaemonsetsUtilization": True,
        "expander": aks.autoscaler_expander,
        "scaleDownUnneededTime": aks.scale_down_unneeded_time,
        "scaleDownDelayAfterAdd": aks.scale_down_delay_after_add,
    }
    # Entra ID sign-in with Azure RBAC; no static credentials.
    assert inputs["disableLocalAccounts"] is True
    assert inputs["aadProfile"]["managed"] is True
    assert inputs["aadProfile"]["enableAzureRBAC"] is True
    assert inputs["autoUpgradeProfile"]["upgradeChannel"] == "patch"


@pytest.mark.parametrize("stack", AKS_STACKS)
def test_system_pool_keeps_an_untainted_cpu_node(stack: str) -> None:
    config = parse_config(load_stack(stack).gpufleet)
    (system,) = cluster_of(plan_of(stack)).inputs["agentPoolProfiles"]
    assert system["minCount"] >= 1
    assert system["maxCount"] == config.cluster.system_pool.max_nodes
    assert system["enableAutoScaling"] is True
    # The only CPU pool: controllers and CPU pods must schedule here.
    assert "nodeTaints" not in system
    assert system["vmSize"] not in {m.name for m in gpus.machine_types_for("azure", "t4")}


@pytest.mark.parametrize("stack", AKS_STACKS)
def test_gpu_pools_output_is_the_contract_with_the_labels_and_taints_aks_adds(stack: str) -> None:
    plan = plan_of(stack)
    config = parse_config(load_stack(stack).gpufleet)
    assert plan.outputs["gpuPools"] == [p.to_output() for p in resolve_pools(config)]
    pools = agent_pools(plan)
    keys = {
        "name", "cloud", "accelerator", "machineTypes", "gpusPerNode", "gpuResource", "allocatablePerNode",
        "minNodes", "maxNodes", "spot", "zones", "nodeLabels", "nodeTaints", "podScheduling",
        "interconnect",
    }  # fmt: skip
    for entry in plan.outputs["gpuPools"]:
        assert set(entry) == keys
        pool = pools[entry["name"]].inputs
        labels = entry["nodeLabels"]
        assert labels["kubernetes.azure.com/agentpool"] == pool["agentPoolName"]
        assert labels["kubernetes.azure.com/accelerator"] == "nvidia"
        # AgentBaker's legacy keys, predicted at zero by the autoscaler (review aks-5 H5-4).
        assert (labels["agentpool"], labels["accelerator"]) == (pool["agentPoolName"], "nvidia")
        assert labels["node.kubernetes.io/instance-type"] == pool["vmSize"]
        assert entry["machineTypes"] == [pool["vmSize"]]
        assert (entry["minNodes"], entry["maxNodes"]) == (pool["minCount"], pool["maxCount"])
        for key, value in pool["nodeLabels"].items():
            assert labels[key] == value
        # Every taint a node carries is one the pool declares (AKS adds only the Spot taint).
        taints = [f"{t['key']}={t['value']}:{t['effect']}" for t in entry["nodeTaints"]]
        assert taints == pool["nodeTaints"]
        if entry["spot"]:
            assert labels[SPOT_KEY] == "spot" and SPOT_TAINT in taints
        tolerations = entry["podScheduling"]["tolerations"]
        assert len(tolerations) == len(taints)
        assert entry["podScheduling"]["nodeSelector"] == {
            "kubernetes.azure.com/agentpool": entry["name"]
        }
    assert plan.outputs["kubeconfig"] == "[secret]"


@pytest.mark.parametrize("stack", AKS_STACKS)
def test_kubernetes_provider_is_explicit_secret_and_waits_for_access(stack: str) -> None:
    plan = plan_of(stack)
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == "[secret]"
    cluster = cluster_of(plan)
    assert cluster.urn in provider.dependencies
    grants = {r.name: r for r in plan.of_type(ROLE_ASSIGNMENT)}
    deployer = grants[f"{cluster.inputs['resourceName']}-deployer-cluster-admin"]
    assert deployer.urn in provider.dependencies
    assert deployer.inputs["scope"].endswith(f"/managedClusters/{cluster.inputs['resourceName']}")
    assert deployer.inputs["roleDefinitionId"].endswith("/b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b")
    for resource in plan.resources:
        if resource.type.startswith("kubernetes:"):
            assert resource.provider and resource.provider.startswith(provider.urn)


@pytest.mark.parametrize("stack", AKS_STACKS)
def test_every_azure_resource_uses_the_explicit_azure_provider(stack: str) -> None:
    plan = plan_of(stack)
    (azure,) = plan.of_type("pulumi:providers:azure-native")
    assert azure.inputs["location"] == parse_config(load_stack(stack).gpufleet).cluster.region
    for resource in plan.resources:
        if resource.type.startswith("azure-native:"):
            assert resource.provider and resource.provider.startswith(azure.urn), resource.urn


def test_cluster_identity_may_manage_the_node_subnet() -> None:
    plan = plan_of("azure-dev")
    cluster = cluster_of(plan)
    (subnet,) = plan.of_type("azure-native:network:Subnet")
    assert subnet.inputs["defaultOutboundAccess"] is False  # private subnet
    grants = {r.name: r for r in plan.of_type(ROLE_ASSIGNMENT)}
    grant = grants["gpufleet-dev-subnet-network-contributor"]
    assert grant.inputs["scope"] == cluster.inputs["agentPoolProfiles"][0]["vnetSubnetID"]
    assert grant.inputs["principalType"] == "ServicePrincipal"
    assert cluster.urn in grant.dependencies  # the principal is the cluster's identity


def test_existing_network_and_protection_in_the_production_stack() -> None:
    plan = plan_of("azure-a100-mig")
    aks = parse_config(load_stack("azure-a100-mig").gpufleet).cluster.azure
    cluster = cluster_of(plan)
    assert cluster.protect is True
    assert cluster.inputs["resourceGroupName"] == aks.resource_group_name
    assert cluster.inputs["agentPoolProfiles"][0]["vnetSubnetID"] == aks.vnet_subnet_id
    assert plan.of_type("azure-native:resources:ResourceGroup") == []
    assert plan.of_type("azure-native:network:VirtualNetwork") == []
    assert (
        cluster.inputs["apiServerAccessProfile"]["authorizedIPRanges"]
        == aks.api_server_authorized_cidrs
    )
    assert cluster.inputs["sku"]["tier"] == "Standard"
    assert cluster.inputs["aadProfile"]["adminGroupObjectIDs"] == aks.admin_group_object_ids
    # No principal type is guessed from the sign-in mode: ARM works it out (review aks.md F3).
    (deployer,) = [
        r for r in plan.of_type(ROLE_ASSIGNMENT) if r.name.endswith("-deployer-cluster-admin")
    ]
    assert "principalType" not in deployer.inputs


def test_local_accounts_and_no_role_assignments_when_asked() -> None:
    cluster_config = dict(load_stack("azure-dev").config["gpufleet:cluster"])
    cluster_config["azure"] = {
        **cluster_config["azure"],
        "authentication": "local-accounts",
        "roleAssignments": False,
    }
    plan = plan_of("azure-dev", {"gpufleet:cluster": cluster_config})
    inputs = cluster_of(plan).inputs
    assert inputs["disableLocalAccounts"] is False
    assert "aadProfile" not in inputs
    assert plan.of_type(ROLE_ASSIGNMENT) == []
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == "[secret]"


@pytest.mark.parametrize("stack", ["azure-dev", "azure-a100-mig"])
def test_aks_upgrades_wait_for_the_window_and_never_surge_a_gpu_vm(stack: str) -> None:
    plan = plan_of(stack)
    windows = {
        r.inputs["configName"]: r.inputs["maintenanceWindow"]
        for r in plan.resources
        if r.type == "azure-native:containerservice:MaintenanceConfiguration"
    }
    assert set(windows) == {"aksManagedAutoUpgradeSchedule", "aksManagedNodeOSUpgradeSchedule"}
    for window in windows.values():
        assert window["schedule"] == {"weekly": {"dayOfWeek": "Saturday", "intervalWeeks": 1}}
        assert (window["startTime"], window["durationHours"], window["utcOffset"]) == (
            "02:00",
            12,
            "+00:00",
        )
    pools = [r for r in plan.resources if r.type == "azure-native:containerservice:AgentPool"]
    assert pools
    for pool in pools:
        settings = pool.inputs["upgradeSettings"]
        assert (settings["maxSurge"], settings["maxUnavailable"]) == ("0", "1")
        # No surge node to quarantine a blocked node with: a PDB-protected node is left as it
        # is (Cordon needs a surge node per blocked node; review aks-2.md A-P1).
        assert settings["undrainableNodeBehavior"] == "Schedule"


@pytest.mark.parametrize("stack", ["azure-dev", "azure-a100-mig"])
def test_a_gpu_pool_aks_cannot_change_in_place_is_replaced_name_first(stack: str) -> None:
    for pool in agent_pools(plan_of(stack)).values():
        assert pool.delete_before_replace
        assert {"vmSize", "gpuInstanceProfile", "gpuProfile", "scaleSetPriority"} <= set(
            pool.replace_on_changes
        )
        assert {"spotMaxPrice", "osDiskType", "availabilityZones"} <= set(pool.replace_on_changes)


def test_the_deployer_grant_can_be_pinned_to_the_ci_identity() -> None:
    cluster = dict(load_stack("azure-dev").config["gpufleet:cluster"])
    ci = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
    cluster["azure"] = {
        **cluster["azure"],
        "deployerObjectId": ci,
        "deployerPrincipalType": "ServicePrincipal",
    }
    plan = plan_of("azure-dev", {"gpufleet:cluster": cluster})
    (grant,) = [
        r for r in plan.of_type(ROLE_ASSIGNMENT) if r.name.endswith("deployer-cluster-admin")
    ]
    assert grant.inputs["principalId"] == ci
    assert grant.inputs["principalType"] == "ServicePrincipal"


def test_service_and_pod_ranges_are_checked_against_a_given_subnets_vnet() -> None:
    """The VNet a given subnet is in is looked up: AKS refuses a service range inside it
    (review aks.md N4); one it cannot read is said not to be checked."""
    from components.mock_world import World
    from components.tooling.commands import BadInput
    from components.tooling.engine import plan_stack

    corporate = World(exists=False, vnet_address_space=("10.0.0.0/8",))
    with pytest.raises(BadInput, match=r"cluster.azure.serviceCidr: overlaps the address space"):
        plan_stack(load_stack("azure-a100-mig"), world=corporate)
    assert not [w for w in plan_of("azure-a100-mig").warnings if "serviceCidr" in w]


def test_the_priority_expander_gets_the_priorities_it_reads() -> None:
    """With `autoscalerExpander: priority` AKS's autoscaler ranks pools by a kube-system
    ConfigMap gpufleet now writes: Spot pools first, the on-demand ones as the fallback."""
    cluster = dict(load_stack("azure-dev").gpufleet["cluster"])
    cluster["azure"] = {**cluster["azure"], "autoscalerExpander": "priority"}
    plan = plan_of("azure-dev", {"gpufleet:cluster": cluster})
    (config_map,) = plan.of_type("kubernetes:core/v1:ConfigMap")
    assert config_map.inputs["metadata"] == {
        "name": "cluster-autoscaler-priority-expander",
        "namespace": "kube-system",
    }
    assert config_map.inputs["data"]["priorities"] == "20:\n  - .*-t4spot-.*\n10:\n  - .*-t4-.*\n"
    assert not plan_of("azure-dev").of_type("kubernetes:core/v1:ConfigMap")
