"""GPU software on the whole mocked graph: placement, pinned chart keys, presets, sharing, quotas.

Every stack in stacks/ (the examples and the user's own) is planned in every GPU-software mode
its cloud supports (with the DCGM
exporter and the samples on, so one plan serves several checks). Placement is evaluated with the
scheduling simulator on the chart defaults from the pinned values.yaml merged with the values the
program really sends, against each pool's labels and taints.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import kubernetes_validate
import pytest
import yaml

from components.kubernetes import chart_values, targeting
from components.model.catalog import charts, images
from components.model.config import ConfigError, parse_config
from components.model.labels import POOL_LABEL
from components.model.pools import PoolSpec, resolve_pools, system_pool
from components.tooling import placement
from components.tooling.engine import Plan
from components.tooling.stacks import load_stack, shipped_stacks
from scripts import chart_facts
from tests.conftest import chart_defaults, every_stack, plan_of

# On one worker with test_software and test_chart_facts, which plan the same variants
# (pyproject.toml: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("software-plans")

MODES = ("device-plugin", "gpu-operator", "cloud-managed")
RELEASE = "kubernetes:helm.sh/v3:Release"


def software_overrides(stack: str, mode: str) -> dict[str, Any]:
    return chart_facts.software_overrides(load_stack(stack).config, mode)


def resolved(stack: str, overrides: dict[str, Any]) -> tuple[Any, list[PoolSpec], PoolSpec | None]:
    raw = {**load_stack(stack).gpufleet}
    raw.update({k.split(":", 1)[1]: v for k, v in overrides.items()})
    config = parse_config(raw)
    return config, resolve_pools(config), system_pool(config)


def supported(stacks: list[str]) -> list[tuple[str, str]]:
    """(stack, mode) for every mode the stack's cloud accepts."""
    cases = []
    for stack in stacks:
        for mode in MODES:
            try:
                resolved(stack, software_overrides(stack, mode))
            except ConfigError:
                continue
            cases.append((stack, mode))
    return cases


# Every stack in stacks/: what the GPU software must do on any valid stack.
CASES = supported(every_stack())
# gpufleet's examples: what tests/data/chart_facts.json was generated from (its chart defaults
# cover the Helm value paths these send), and which cases the examples must cover.
EXAMPLE_CASES = supported(shipped_stacks())


def eks_stacks_with_node_images() -> list[str]:
    """EKS stacks whose GPU nodes run an image gpufleet picks (not EKS Auto Mode's own)."""
    return [
        s
        for s in shipped_stacks()
        if load_stack(s).gpufleet["cloud"] == "aws"
        and load_stack(s).gpufleet["cluster"].get("aws", {}).get("provisioner") != "auto-mode"
    ]


def releases(plan: Plan) -> dict[str, Any]:
    """The GPU software's Helm releases by chart (other stages may install charts too)."""
    return {
        r.inputs["chart"]: r
        for r in plan.of_type(RELEASE)
        if r.parent and r.parent.split("::")[-2].endswith("gpufleet:kubernetes:GpuSoftware")
    }


def merged(chart: str, values: dict[str, Any]) -> dict[str, Any]:
    return chart_values.merge(chart_defaults(chart), values)


def test_every_cloud_has_a_case_per_supported_mode() -> None:
    clouds = {(load_stack(s).gpufleet["cloud"], m) for s, m in EXAMPLE_CASES}
    # GKE: its own plugin or the operator; the others: NVIDIA's plugin or the operator.
    for cloud in {c for c, _ in clouds}:
        wanted = {"gpu-operator", "cloud-managed" if cloud == "gcp" else "device-plugin"}
        assert wanted <= {m for c, m in clouds if c == cloud}, cloud


@pytest.mark.every_stack
@pytest.mark.parametrize(("stack", "mode"), CASES)
def test_mode_installs_what_it_promises(stack: str, mode: str) -> None:
    plan = plan_of(stack, software_overrides(stack, mode))
    charts_installed = set(releases(plan))
    expected = {
        "device-plugin": {"nvidia-device-plugin", "dcgm-exporter"},
        "gpu-operator": {"gpu-operator"},
        "cloud-managed": {"dcgm-exporter"},
    }[mode]
    assert charts_installed == expected
    assert plan.outputs["gpuSoftware"] == mode


@pytest.mark.every_stack
@pytest.mark.parametrize(("stack", "mode"), CASES)
def test_daemonsets_land_on_every_gpu_pool_and_no_cpu_pool(stack: str, mode: str) -> None:
    overrides = software_overrides(stack, mode)
    plan = plan_of(stack, overrides)
    _config, pools, cpu = resolved(stack, overrides)
    installed = releases(plan)
    gpu_names = {p.name for p in pools}
    # Pools whose image runs its own device plugin (Bottlerocket) are not ours to serve.
    served = {p.name for p in targeting.nvidia_pools(pools)}
    nodes = placement.targets(pools, cpu)
    cpu_name = nodes[-1].node.pool
    checked = 0

    if "nvidia-device-plugin" in installed:
        values = merged("nvidia-device-plugin", installed["nvidia-device-plugin"].inputs["values"])
        result = placement.place(placement.daemonset_pod(values, values.get("resources")), nodes)
        assert set(result.fits) == served, result.reasons
        checked += 1
    if "dcgm-exporter" in installed:
        values = merged("dcgm-exporter", installed["dcgm-exporter"].inputs["values"])
        result = placement.place(placement.daemonset_pod(values, values.get("resources")), nodes)
        assert set(result.fits) == gpu_names, result.reasons
        checked += 1
    if "gpu-operator" in installed:
        values = merged("gpu-operator", installed["gpu-operator"].inputs["values"])
        worker = values["node-feature-discovery"]["worker"]
        nfd_pod = placement.daemonset_pod(worker)
        # NFD's worker must reach every GPU node, or the operator never sees its GPUs.
        assert gpu_names <= set(placement.place(nfd_pod, nodes).fits)
        labelled = [placement.operator_node(n, nfd_pod) for n in nodes]
        operands = ["device-plugin", "container-toolkit", "gpu-feature-discovery"]
        if values["dcgmExporter"]["enabled"]:
            operands.append("dcgm-exporter")
        for operand in operands:
            result = placement.place(placement.operand_pod(values, operand), labelled)
            assert set(result.fits) == served, (operand, result.reasons)
            assert cpu_name in result.reasons
        checked += 1
    assert checked == len(installed) > 0


@pytest.mark.parametrize("stack", [s for s, m in EXAMPLE_CASES if m == "device-plugin"][:1])
def test_chart_default_affinity_alone_reaches_only_nodes_nodeadm_labels(stack: str) -> None:
    # Why we override it: without NFD the chart's own affinity matches only nodes carrying
    # nvidia.com/gpu.present, which nodeadm sets from Kubernetes 1.35 (AL2023 images only).
    defaults = chart_defaults("nvidia-device-plugin")
    pod = placement.daemonset_pod(defaults)
    overrides = software_overrides(stack, "device-plugin")
    _, pools, cpu = resolved(stack, overrides)
    labelled = [p.name for p in pools if p.node_labels.get("nvidia.com/gpu.present") == "true"]
    assert labelled and placement.place(pod, placement.targets(pools, cpu)).fits == labelled
    cluster = {**load_stack(stack).gpufleet["cluster"], "kubernetesVersion": "1.34"}
    _, pools, cpu = resolved(stack, {**overrides, "gpufleet:cluster": cluster})
    assert placement.place(pod, placement.targets(pools, cpu)).fits == []


@pytest.mark.parametrize(("stack", "mode"), EXAMPLE_CASES)
def test_helm_values_use_only_keys_of_the_pinned_charts(stack: str, mode: str) -> None:
    plan = plan_of(stack, software_overrides(stack, mode))
    for chart, release in releases(plan).items():
        defaults = chart_defaults(chart)
        passthrough = chart_values.PASSTHROUGH.get(chart, ())
        assert (
            chart_values.unknown_keys(release.inputs["values"], defaults, passthrough=passthrough)
            == []
        ), chart


@pytest.mark.every_stack
@pytest.mark.parametrize(("stack", "mode"), CASES)
def test_releases_are_pinned_real_helm_releases_on_the_clusters_provider(
    stack: str, mode: str
) -> None:
    plan = plan_of(stack, software_overrides(stack, mode))
    # The stack's provider; the sibling that adopts queue namespaces serves no release.
    providers = {
        r.urn
        for r in plan.of_type("pulumi:providers:kubernetes")
        if "upsertExistingObjects" not in r.inputs
    }
    assert len(providers) == 1
    (provider,) = providers
    gpu_pool_urns = {
        r.urn for r in plan.resources if r.custom and r.parent and "GpuNodePool" in r.parent
    }
    for chart, release in releases(plan).items():
        pin = charts.CHARTS[chart]
        inputs = release.inputs
        assert (inputs["version"], inputs["repositoryOpts"]["repo"]) == (pin.version, pin.repo)
        assert inputs["namespace"] == pin.namespace != "default"
        assert inputs["atomic"] is True and inputs["timeout"] >= 600
        assert release.provider is not None and release.provider.startswith(provider)
        assert chart_values.find_strings(inputs["values"], "latest") == []
        # Pool resources exist before the software and are deleted after it.
        assert gpu_pool_urns <= set(release.depends_on)
        # Image tags come from the pinned chart version (or are pinned by us), never floating.
        values = merged(chart, inputs["values"])
        tags = [values.get("image", {}).get("tag")] if "image" in values else []
        assert all(tag is None or (tag and "latest" not in tag) for tag in tags)
    for resource in plan.resources:
        if resource.type.startswith("kubernetes:"):
            assert resource.provider and resource.provider.startswith(provider), resource.name


def test_plugin_image_tag_matches_the_pinned_chart() -> None:
    stack = next(s for s, m in EXAMPLE_CASES if m == "device-plugin")
    plan = plan_of(stack, software_overrides(stack, "device-plugin"))
    values = releases(plan)["nvidia-device-plugin"].inputs["values"]
    # The chart's appVersion, pinned by its digest (components/model/catalog/images.py).
    pin = images.pin_of(
        "nvcr.io/nvidia/k8s-device-plugin", f"v{charts.NVIDIA_DEVICE_PLUGIN.version}"
    )
    assert pin.digest and values["image"]["tag"] == f"{pin.tag}@{pin.digest}"


@pytest.mark.every_stack
@pytest.mark.parametrize(("stack", "mode"), CASES)
def test_rendered_kubernetes_objects_validate_against_the_clusters_schema(
    stack: str, mode: str
) -> None:
    overrides = software_overrides(stack, mode)
    plan = plan_of(stack, overrides)
    config, _, _ = resolved(stack, overrides)
    version = config.cluster.kubernetes_version
    # Kubernetes objects themselves: not Helm releases, nor components (a yaml/v2 ConfigFile).
    objects = [
        r
        for r in plan.resources
        if r.custom
        and r.type.startswith("kubernetes:")
        and r.type != RELEASE
        # Karpenter's and Auto Mode's custom resources: checked in test_karpenter.py; Kueue's
        # against its CRDs in test_kueue.py, test_gke_capacity.py and test_aks_capacity.py; the
        # Network Operator's NicClusterPolicy against its CRD in test_aks_infiniband.py; GKE's
        # multi-network objects against cluster-toolkit's templates in test_gke_gpudirect.py; GKE's
        # ComputeClass in test_gke_compute_class.py.
        and not r.type.startswith(
            (
                "kubernetes:karpenter",
                "kubernetes:eks.amazonaws.com",
                "kubernetes:kueue.x-k8s.io",
                "kubernetes:mellanox.com",
                "kubernetes:networking.gke.io",
                "kubernetes:cloud.google.com",
            )
        )
    ]
    assert objects
    for resource in objects:
        kubernetes_validate.validate(dict(resource.inputs), version, strict=True)


# --- sharing ----------------------------------------------------------------------------------


def plugin_configs(plan: Plan) -> tuple[dict[str, Any], str]:
    installed = releases(plan)
    if "nvidia-device-plugin" in installed:
        config = installed["nvidia-device-plugin"].inputs["values"]["config"]
        return {k: yaml.safe_load(v) for k, v in config["map"].items()}, config["default"]
    config = installed["gpu-operator"].inputs["values"]["devicePlugin"]["config"]
    assert config["create"] is True and config["name"]
    return {k: yaml.safe_load(v) for k, v in config["data"].items()}, config["default"]


def _with_plugin_config_pools() -> list[tuple[str, str]]:
    """NVIDIA-software cases whose stack has a shared or MIG pool (a per-pool plugin config)."""
    return [
        (stack, mode)
        for stack, mode in CASES
        if mode != "cloud-managed"
        and any(
            "nvidia.com/device-plugin.config" in pool.node_labels
            for pool in resolved(stack, software_overrides(stack, mode))[1]
        )
    ]


@pytest.mark.every_stack
@pytest.mark.parametrize(("stack", "mode"), _with_plugin_config_pools())
def test_shared_and_mig_pools_get_their_own_plugin_config(stack: str, mode: str) -> None:
    overrides = software_overrides(stack, mode)
    plan = plan_of(stack, overrides)
    _, pools, _ = resolved(stack, overrides)
    outputs = {p["name"]: p for p in plan.outputs["gpuPools"]}
    selecting = [p for p in pools if "nvidia.com/device-plugin.config" in p.node_labels]
    assert selecting
    entries, default = plugin_configs(plan)
    assert default == "default" and set(entries) == {"default", *(p.name for p in selecting)}
    for pool in selecting:
        # Each node picks its entry by this label, which the pool's nodes carry.
        assert outputs[pool.name]["nodeLabels"]["nvidia.com/device-plugin.config"] == pool.name
        entry = entries[pool.name]
        assert entry["version"] == "v1"
        if pool.mig_partition_size:
            assert entry["flags"]["migStrategy"] == "single"
            continue
        strategy = "mps" if pool.sharing_strategy == "mps" else "timeSlicing"
        sharing = entry["sharing"][strategy]
        assert sharing["renameByDefault"] is False
        assert sharing["failRequestsGreaterThanOne"] is True
        assert sharing["resources"] == [
            {"name": "nvidia.com/gpu", "replicas": pool.max_shared_clients_per_gpu}
        ]
        # The gpuPools output reports the shared capacity.
        assert outputs[pool.name]["allocatablePerNode"]["nvidia.com/gpu"] == (
            pool.gpus_per_node * sharing["resources"][0]["replicas"]
        )


def test_gke_operator_mig_pools_get_the_mig_config_label_and_single_strategy() -> None:
    overrides = software_overrides("gcp-a100-mig", "gpu-operator")
    plan = plan_of("gcp-a100-mig", overrides)
    values = releases(plan)["gpu-operator"].inputs["values"]
    assert values["mig"]["strategy"] == "single"
    mig = next(p for p in plan.outputs["gpuPools"] if p["name"] == "a100-mig")
    assert mig["nodeLabels"]["nvidia.com/mig.config"] == "all-1g.5gb"
    assert mig["allocatablePerNode"]["nvidia.com/gpu"] == 7


# --- operator presets ---------------------------------------------------------------------------


def operator_values(stack: str, **software: Any) -> dict[str, Any]:
    overrides = {"gpufleet:gpuSoftware": {"mode": "gpu-operator", **software}}
    return releases(plan_of(stack, overrides))["gpu-operator"].inputs["values"]


@pytest.mark.every_stack
@pytest.mark.parametrize(
    "stack", [s for s in every_stack() if load_stack(s).gpufleet["cloud"] == "gcp"]
)
def test_gke_operator_preset(stack: str) -> None:
    overrides = {"gpufleet:gpuSoftware": {"mode": "gpu-operator"}}
    plan = plan_of(stack, overrides)
    config, _, _ = resolved(stack, overrides)
    values = releases(plan)["gpu-operator"].inputs["values"]
    assert values["driver"] == {"enabled": False}
    assert values["hostPaths"]["driverInstallDir"] == "/home/kubernetes/bin/nvidia"
    assert values["toolkit"]["installDir"] == "/home/kubernetes/bin/nvidia"
    assert values["cdi"] == {"enabled": True}
    # Whatever the configured minimum: a release channel upgrades the cluster past it.
    assert {"name": "RUNTIME_CONFIG_SOURCE", "value": "file"} in values["toolkit"]["env"]
    mig = any(pool.mig_partition_size for pool in config.gpu_pools)
    reboot = {"name": "WITH_REBOOT", "value": "true"}
    assert (reboot in values.get("migManager", {}).get("env", [])) == mig
    # Pools: no GKE driver, no GKE device plugin.
    gpu_node_pools = [
        p
        for p in plan.of_type("gcp:container/nodePool:NodePool")
        if p.inputs["nodeConfig"].get("guestAccelerators")
    ]
    # One node pool per GPU pool, or per capacity of a pool that is a GKE compute class.
    assert {p.inputs["nodeConfig"]["labels"][POOL_LABEL] for p in gpu_node_pools} == {
        pool["name"] for pool in plan.outputs["gpuPools"]
    }
    for pool in gpu_node_pools:
        node_config = pool.inputs["nodeConfig"]
        assert node_config["labels"]["gke-no-default-nvidia-gpu-device-plugin"] == "true"
        driver = node_config["guestAccelerators"][0]["gpuDriverInstallationConfig"]
        assert driver["gpuDriverVersion"] == "INSTALLATION_DISABLED"
    # The namespace and its quota for node-critical pods, as real resources.
    (namespace,) = [
        r
        for r in plan.of_type("kubernetes:core/v1:Namespace")
        if r.inputs["metadata"]["name"] == "gpu-operator"
    ]
    (quota,) = plan.of_type("kubernetes:core/v1:ResourceQuota")
    assert quota.inputs["metadata"]["namespace"] == "gpu-operator"
    expression = quota.inputs["spec"]["scopeSelector"]["matchExpressions"][0]
    assert expression["scopeName"] == "PriorityClass" and expression["operator"] == "In"
    assert set(expression["values"]) == {"system-node-critical", "system-cluster-critical"}
    nodes = (
        sum(p["maxNodes"] for p in plan.outputs["gpuPools"]) + config.cluster.system_pool.max_nodes
    )
    assert int(quota.inputs["spec"]["hard"]["pods"]) >= 8 * nodes
    assert namespace.urn in quota.dependencies
    release = releases(plan)["gpu-operator"]
    assert quota.urn in release.depends_on and namespace.urn in release.dependencies


def test_eks_operator_uses_the_amis_driver_and_toolkit() -> None:
    values = operator_values("aws-dev")
    assert values["driver"] == {"enabled": False} and values["toolkit"] == {"enabled": False}


@pytest.mark.parametrize("operator_driver", [True, False])
def test_aks_operator_driver_choice(operator_driver: bool) -> None:
    # azure-dev: no MIG pool (AKS partitions MIG only on its own driver, so MIG refuses it).
    values = operator_values("azure-dev", operatorDriver=operator_driver)
    assert values["driver"]["enabled"] is operator_driver
    assert values["toolkit"]["enabled"] is operator_driver
    # AKS partitions MIG itself; the MIG manager would reset it.
    assert values["migManager"] == {"enabled": False}
    # On AKS's driver the operands run on AKS's only GPU runtime (no `nvidia` handler there).
    runtime = values.get("operator", {}).get("runtimeClass")
    assert runtime == (None if operator_driver else "nvidia-container-runtime")
    # The pinned chart turns CDI on by default; with the toolkit off (AKS's driver and runtime)
    # nothing installs the CDI hook or turns CDI on in AKS's containerd (review aks-3 N-2).
    assert chart_defaults("gpu-operator")["cdi"]["enabled"] is True
    assert values.get("cdi") == (None if operator_driver else {"enabled": False})


def test_operator_tolerates_every_gpu_taint_on_operands_and_nfd_workers() -> None:
    stack = "azure-dev"  # an example with a Spot pool, so AKS's Spot taint is among them
    values = operator_values(stack)
    _, pools, _ = resolved(stack, {"gpufleet:gpuSoftware": {"mode": "gpu-operator"}})
    needed = {tuple(sorted(t.toleration().items())) for p in pools for t in p.node_taints}
    assert any(
        t.key == "kubernetes.azure.com/scalesetpriority" for p in pools for t in p.node_taints
    )
    for tolerations in (
        values["daemonsets"]["tolerations"],
        values["node-feature-discovery"]["worker"]["tolerations"],
    ):
        assert needed <= {tuple(sorted(t.items())) for t in tolerations}


# --- monitoring -------------------------------------------------------------------------------


def test_no_monitoring_and_no_service_monitor_unless_asked() -> None:
    plan = plan_of("gcp-dev", {"gpufleet:gpuSoftware": {"mode": "gpu-operator"}})
    values = releases(plan)["gpu-operator"].inputs["values"]
    # The operator chart enables both ServiceMonitor and exporter by default.
    assert values["dcgmExporter"] == {"enabled": False, "serviceMonitor": {"enabled": False}}
    asked = {"mode": "gpu-operator", "monitoring": {"dcgmExporter": True, "serviceMonitor": True}}
    values = releases(plan_of("gcp-dev", {"gpufleet:gpuSoftware": asked}))["gpu-operator"].inputs[
        "values"
    ]
    exporter = {key: v for key, v in values["dcgmExporter"].items() if key != "version"}
    assert exporter == {"enabled": True, "serviceMonitor": {"enabled": True}}


def test_standalone_dcgm_exporter_service_monitor_only_when_asked() -> None:
    dcgm_only = {"gpufleet:gpuSoftware": {"monitoring": {"dcgmExporter": True}}}
    values = releases(plan_of("gcp-dev", dcgm_only))["dcgm-exporter"].inputs["values"]
    assert values["serviceMonitor"] == {"enabled": False}
    with_monitor = {
        "gpufleet:gpuSoftware": {"monitoring": {"dcgmExporter": True, "serviceMonitor": True}}
    }
    values = releases(plan_of("gcp-dev", with_monitor))["dcgm-exporter"].inputs["values"]
    assert values["serviceMonitor"] == {"enabled": True}


def test_gke_dcgm_exporter_mounts_gkes_driver_and_gets_a_critical_pods_quota() -> None:
    plan = plan_of("gcp-dev", {"gpufleet:gpuSoftware": {"monitoring": {"dcgmExporter": True}}})
    values = merged("dcgm-exporter", releases(plan)["dcgm-exporter"].inputs["values"])
    assert {"name": "nvidia-install-dir-host", "hostPath": "/home/kubernetes/bin/nvidia"} in values[
        "extraHostVolumes"
    ]
    mounts = {m["name"]: m for m in values["extraVolumeMounts"]}
    assert mounts["nvidia-install-dir-host"]["mountPath"] == "/usr/local/nvidia"
    # Our list replaces the chart's: its metrics-list mount must still be there.
    assert set(mounts) >= {v["name"] for v in values["extraConfigMapVolumes"]}
    (quota,) = plan.of_type("kubernetes:core/v1:ResourceQuota")
    assert quota.inputs["metadata"]["namespace"] == charts.DCGM_EXPORTER.namespace


def test_cloud_managed_gke_without_monitoring_installs_nothing() -> None:
    plan = plan_of("gcp-dev")
    assert [r.type for r in plan.resources if r.type.startswith("kubernetes:")] == []


# --- config rules ------------------------------------------------------------------------------


def problems(stack: str, **changes: Any) -> list[str]:
    raw = {**load_stack(stack).gpufleet, **changes}
    try:
        parse_config(raw)
    except ConfigError as error:
        return [str(p) for p in error.problems]
    return []


def test_a_shared_pool_named_default_is_rejected_where_nvidia_software_configures_it() -> None:
    pools = load_stack("existing-dev").gpufleet["gpuPools"]
    renamed = [{**pools[1], "name": "default"}, pools[0]]
    found = problems("existing-dev", gpuPools=renamed)
    assert any("gpuPools[0].name" in p and "default config entry" in p for p in found)


def test_bottlerocket_pools_are_rejected_with_the_operator_and_skipped_by_the_plugin() -> None:
    stacks = eks_stacks_with_node_images()
    stack = stacks[0]
    pools = load_stack(stack).gpufleet["gpuPools"]
    bottlerocket = [
        {**pools[0], "aws": {"amiFamily": "bottlerocket", "nodeGroup": "managed"}},
        *pools[1:],
    ]
    found = problems(stack, gpuPools=bottlerocket, gpuSoftware={"mode": "gpu-operator"})
    assert any(
        "gpuPools[0].aws.amiFamily" in p and "does not support Bottlerocket" in p for p in found
    )
    # With the device plugin, the Bottlerocket pool keeps its own plugin and ours skips it.
    overrides = {
        "gpufleet:gpuPools": bottlerocket,
        "gpufleet:gpuSoftware": {"mode": "device-plugin"},
    }
    plan = plan_of(stack, overrides)
    values = releases(plan)["nvidia-device-plugin"].inputs["values"]
    _, resolved_pools, cpu = resolved(stack, overrides)
    pod = placement.daemonset_pod(values)
    fits = placement.place(pod, placement.targets(resolved_pools, cpu)).fits
    assert fits == [p.name for p in resolved_pools[1:]]


def test_the_operator_never_reaches_gpu_nodes_of_an_adopted_clusters_owner() -> None:
    """Review gke-3 N16: NFD's worker runs on gpufleet's pools only, so the operator (which
    serves the GPUs NFD labelled) installs nothing on the owner's GPU nodes; what an NFD the
    cluster already runs would label is said at plan (not checked)."""
    overrides = {"gpufleet:gpuSoftware": {"mode": "gpu-operator"}}
    plan = plan_of("gcp-existing", overrides)
    values = merged("gpu-operator", releases(plan)["gpu-operator"].inputs["values"])
    _, pools, cpu = resolved("gcp-existing", overrides)
    nodes = placement.targets(pools, cpu)
    owners = []
    for target in (t for t in nodes if t.gpu):
        labels = {k: v for k, v in target.node.labels.items() if not k.startswith("gpufleet.io/")}
        labels["cloud.google.com/gke-nodepool"] = f"owner-{target.node.pool}"
        node = dataclasses.replace(target.node, pool=f"owner-{target.node.pool}", labels=labels)
        owners.append(dataclasses.replace(target, node=node))
    nfd = placement.daemonset_pod(values["node-feature-discovery"]["worker"])
    assert set(placement.place(nfd, nodes + owners).fits) == {p.name for p in pools}
    labelled = [placement.operator_node(n, nfd) for n in nodes + owners]
    for operand in ("device-plugin", "container-toolkit", "gpu-feature-discovery"):
        fits = placement.place(placement.operand_pod(values, operand), labelled).fits
        assert set(fits) == {p.name for p in pools}, operand
    (notice,) = [w for w in plan.warnings if "nvidia.com/gpu.deploy.operands=false" in w]
    assert "not checked" in notice
    created = plan_of("gcp-dev", overrides)
    assert not any("gpu.deploy.operands" in w for w in created.warnings)
