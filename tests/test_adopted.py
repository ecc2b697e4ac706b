"""GPU pools on a GKE, EKS or AKS cluster gpufleet adopts (`cluster.existing`, issue 15).

The adopted stacks plan offline against the mock cloud's lookups: no cluster resource, no
system pool, the pools attached to the looked-up cluster and equal to those of a created
cluster; what keeps the pools from joining is refused before anything is created.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

import pytest

from components.aws.model import autoscaler_tags
from components.mock_world import World
from components.model.config import parse_config
from components.model.problems import ConfigError
from components.tooling.cli import main as cli_main
from components.tooling.commands import BadInput
from components.tooling.engine import Plan, RecordedResource, plan_stack
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

ADOPTED = ("gcp-existing", "aws-existing", "azure-existing")
CLUSTER_TYPES = {
    "gcp:container/cluster:Cluster",
    "aws:eks/cluster:Cluster",
    "azure-native:containerservice:ManagedCluster",
    "aws:eks/addon:Addon",
    "aws:eks/nodeGroup:NodeGroup",
    "aws:ec2/vpc:Vpc",
    "aws:ec2/subnet:Subnet",
    "aws:ec2/tag:Tag",
    "gcp:compute/network:Network",
    "azure-native:network:VirtualNetwork",
    "azure-native:resources:ResourceGroup",
}
# The resources that carry a GPU pool's nodes, per cloud.
POOL_TYPES = {
    "gcp:container/nodePool:NodePool",
    "azure-native:containerservice:AgentPool",
    "aws:autoscaling/group:Group",
    "aws:ec2/launchTemplate:LaunchTemplate",
    "kubernetes:karpenter.sh/v1:NodePool",
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
}


def gpufleet(stack: str) -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(stack).gpufleet))


@pytest.mark.parametrize("stack", ADOPTED)
def test_an_adopted_cluster_is_looked_up_never_created(stack: str) -> None:
    plan = plan_of(stack)
    created = sorted({r.type for r in plan.resources} & CLUSTER_TYPES)
    assert created == [], f"{stack} creates {created}"
    assert plan.outputs["clusterName"] == "platform-prod"
    assert plan.outputs["clusterEndpoint"].startswith("https://")
    # No system pool of gpufleet's: the cluster's CPU nodes are its owner's.
    assert [p["name"] for p in plan.outputs["gpuPools"]] == [
        p["name"] for p in gpufleet(stack)["gpuPools"]
    ]
    assert not [r for r in plan.resources if "system" in r.name]


def pool_inputs(plan: Plan, cluster_name: str) -> dict[str, Any]:
    """Each pool resource's inputs by its type and name, with the cluster's identity (name,
    network, endpoint) replaced, since those are what differs between the two clusters."""

    def scrub(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: scrub(v) for k, v in value.items() if k not in NETWORK_KEYS}
        if isinstance(value, list):
            # The discovery tags differ by design (test_adopted_eks.py pins them): the
            # autoscaler's pair on a created cluster, gpufleet's own tag on an adopted one.
            return [scrub(v) for v in value if not _discovery_tag(v, cluster_name)]
        if isinstance(value, str):
            return value.replace(cluster_name, "CLUSTER")
        return value

    return {
        f"{r.type} {r.name.replace(cluster_name, 'CLUSTER')}": scrub(r.inputs)
        for r in plan.resources
        if r.type in POOL_TYPES and not r.name.endswith("-system")
    }


def _discovery_tag(value: Any, cluster_name: str) -> bool:
    key = value.get("key") if isinstance(value, Mapping) else None
    pair = (autoscaler_tags.ENABLED_TAG, autoscaler_tags.owner_tag(cluster_name))
    return isinstance(key, str) and (key.startswith(autoscaler_tags.GPUFLEET_PREFIX) or key in pair)


# Where the two clusters differ by nature: subnets (created vs looked up) and user data (the
# node joins the cluster's endpoint).
NETWORK_KEYS = {
    "vpcZoneIdentifiers",
    "vnetSubnetID",
    "userData",
    "subnetSelectorTerms",
    "securityGroupSelectorTerms",
}

# A created stack and the same stack adopting a cluster of the same name.
PAIRS = {
    "gcp-dev": {"existing": {}, "gcp": ["project"]},
    "aws-dev": {"existing": {}, "aws": []},
    "aws-karpenter": {"existing": {}, "aws": ["provisioner"]},
    "azure-dev": {"existing": {}, "azure": []},
    "azure-a100-mig": {"existing": {}, "azure": []},
}


def adopted_variant(stack: str) -> dict[str, Any]:
    raw = gpufleet(stack)
    cluster = raw["cluster"]
    pair = PAIRS[stack]
    adopted: dict[str, Any] = {
        key: cluster[key]
        for key in ("name", "kubernetesVersion", "region", "zones")
        if key in cluster
    }
    adopted["existing"] = pair["existing"]
    for cloud in ("gcp", "aws", "azure"):
        if cloud in pair:
            kept = {k: v for k, v in cluster.get(cloud, {}).items() if k in pair[cloud]}
            if cloud == "azure":
                # The group the created cluster is in: the given one, or the one it creates.
                kept["resourceGroupName"] = cluster.get("azure", {}).get(
                    "resourceGroupName", f"{cluster['name']}-rg"
                )
            if kept:
                adopted[cloud] = kept
    return {"gpufleet:cluster": adopted}


@pytest.mark.parametrize("stack", sorted(PAIRS))
def test_pools_on_an_adopted_cluster_equal_those_on_a_created_one(stack: str) -> None:
    name = gpufleet(stack)["cluster"]["name"]
    created = pool_inputs(plan_of(stack), name)
    adopted = pool_inputs(plan_of(stack, adopted_variant(stack)), name)
    assert created, stack
    assert adopted == created


def test_the_adopted_pools_join_the_looked_up_cluster() -> None:
    gke = plan_of("gcp-existing").of_type("gcp:container/nodePool:NodePool")
    assert {r.inputs["cluster"] for r in gke} == {"platform-prod"}
    assert {r.inputs["location"] for r in gke} == {"us-central1"}
    assert all("version" not in r.inputs for r in gke), "a pool follows the control plane"
    aks = plan_of("azure-existing").of_type("azure-native:containerservice:AgentPool")
    assert {r.inputs["resourceName"] for r in aks} == {"platform-prod"}
    assert {r.inputs["resourceGroupName"] for r in aks} == {"platform-prod-rg"}
    # The first System pool's subnet, as the lookup reports it.
    assert {r.inputs["vnetSubnetID"].rsplit("/", 3)[-3] for r in aks} == {"platform-prod-vnet"}
    # The minor the cluster runs (the config must name it): a bump after the owner's upgrade
    # moves gpufleet's pools too, even when the owner upgraded the control plane alone.
    assert {r.inputs["orchestratorVersion"] for r in aks} == {"1.35"}
    eks = plan_of("aws-existing")
    groups = eks.of_type("aws:autoscaling/group:Group")
    zones = {g.name.rsplit("-", 1)[-1][-1] for g in groups}
    assert zones == {"a", "b", "c"}
    assert all(len(g.inputs["vpcZoneIdentifiers"]) == 1 for g in groups)
    (entry,) = eks.of_type("aws:eks/accessEntry:AccessEntry")
    assert entry.inputs["clusterName"] == "platform-prod"
    assert entry.inputs["type"] == "EC2_LINUX"


def test_controllers_on_an_adopted_eks_cluster_run_on_its_cpu_nodes() -> None:
    for release in plan_of("aws-existing").of_type("kubernetes:helm.sh/v3:Release"):
        selector = release.inputs.get("values", {}).get("nodeSelector")
        if (
            release.inputs["chart"] == "cluster-autoscaler"
            or "termination" in release.inputs["chart"]
        ):
            assert selector == {"kubernetes.io/os": "linux"}, release.name


def eks_variant(**cluster: Any) -> dict[str, Any]:
    raw = gpufleet("aws-existing")
    for key, value in cluster.items():
        raw["cluster"][key] = value
    raw["gpuPools"] = [
        {
            "name": "l4",
            "accelerator": "l4",
            "machineTypes": ["g6.xlarge", "g6.2xlarge"],
            "zones": ["us-east-1a", "us-east-1b"],
        }
    ]
    return {f"gpufleet:{k}": v for k, v in raw.items()}


def of_types(plan: Plan, *types: str) -> list[RecordedResource]:
    return [r for r in plan.resources if r.type in types]


def test_karpenter_on_an_adopted_cluster_selects_its_network_by_id_and_tags_nothing() -> None:
    plan = plan_of("aws-existing", eks_variant(aws={"provisioner": "karpenter"}))
    assert of_types(plan, "gpufleet:aws:Karpenter")
    assert not plan.of_type("aws:ec2/tag:Tag")
    (node_class,) = plan.of_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    spec = node_class.inputs["spec"]
    assert all(set(term) == {"id"} for term in spec["subnetSelectorTerms"])
    assert spec["securityGroupSelectorTerms"] == [{"id": "sg-0c1a5e7e4c1a5e7e4"}]
    (karpenter,) = [
        r
        for r in plan.of_type("kubernetes:helm.sh/v3:Release")
        if r.inputs["chart"].endswith("karpenter")
    ]
    assert karpenter.inputs["values"]["replicas"] == 1


def test_a_running_karpenter_gets_node_pools_only() -> None:
    role = "KarpenterNodeRole-platform-prod"
    plan = plan_of(
        "aws-existing",
        eks_variant(
            aws={"provisioner": "karpenter"},
            existing={"autoscalerInstalled": True, "karpenterNodeRole": role},
        ),
    )
    assert not of_types(
        plan, "gpufleet:aws:Karpenter", "aws:iam/role:Role", "aws:eks/accessEntry:AccessEntry"
    )
    assert not plan.of_type("kubernetes:helm.sh/v3:Release") or all(
        "karpenter" not in r.inputs["chart"] for r in plan.of_type("kubernetes:helm.sh/v3:Release")
    )
    (node_class,) = plan.of_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    assert node_class.inputs["spec"]["role"] == role
    assert plan.of_type("kubernetes:karpenter.sh/v1:NodePool")
    assert plan.outputs["nodeIdentity"] == role


def test_a_running_cluster_autoscaler_is_not_doubled() -> None:
    plan = plan_of("aws-existing", eks_variant(existing={"autoscalerInstalled": True}))
    assert not plan.of_type("gpufleet:aws:ClusterAutoscaler")
    groups = plan.of_type("aws:autoscaling/group:Group")
    assert groups
    for group in groups:
        tags = {t["key"] for t in group.inputs["tags"]}
        # What a running autoscaler's auto-discovery finds the groups by.
        assert {
            "k8s.io/cluster-autoscaler/enabled",
            "k8s.io/cluster-autoscaler/platform-prod",
        } <= tags


def test_auto_mode_on_an_adopted_cluster_that_runs_it() -> None:
    plan = plan_stack(
        load_stack("aws-existing"),
        eks_variant(aws={"provisioner": "auto-mode"}),
        world=World("1.35.4", auto_mode=True),
    )
    (node_class,) = plan.of_type("kubernetes:eks.amazonaws.com/v1:NodeClass")
    assert all(set(term) == {"id"} for term in node_class.inputs["spec"]["subnetSelectorTerms"])
    assert not plan.of_type("aws:ec2/tag:Tag")
    (entry,) = plan.of_type("aws:eks/accessEntry:AccessEntry")
    assert entry.inputs["type"] == "EC2"


REFUSALS = [
    (
        "gcp-existing",
        World("1.34.7", workload_identity=False),
        [
            "cluster.kubernetesVersion: the existing cluster platform-prod runs Kubernetes "
            "1.34.7-gke.1047000; set the minor it runs (1.34)",
            "has no Workload Identity",
        ],
    ),
    (
        # GKE refuses node pools on Autopilot and a pool name the cluster has (review gke-2.md
        # N2): both said with the rest, before anything is created.
        "gcp-existing",
        World("1.35.2", autopilot=True, node_pools=("default-pool", "t4")),
        [
            "is an Autopilot cluster: GKE manages its nodes and accepts no node pools",
            "gpuPools[1].name: cluster platform-prod already has a node pool named t4 (not "
            "gpufleet's): GKE refuses a second one; choose another name (got 't4')",
        ],
    ),
    (
        "aws-existing",
        World("1.35.2", authentication_mode="CONFIG_MAP", oidc_provider=False),
        ["authenticates with CONFIG_MAP only", "has no IAM OIDC provider", "associate-iam-oidc"],
    ),
    ("azure-existing", World("1.36.1"), ["runs Kubernetes 1.36.1; set the minor it runs (1.36)"]),
    # gpufleet's pools, allocatable and fit assume Azure CNI Overlay (review aks-2.md A-P2).
    (
        "azure-existing",
        World("1.35.1", network_plugin="kubenet", network_plugin_mode=None),
        ["uses kubenet (retiring on 2028-03-31): a new pool there runs at most 110 pods"],
    ),
    (
        "azure-existing",
        World("1.35.1", network_plugin_mode=None),
        ["uses Azure CNI on the node subnet", "at most 30 pods"],
    ),
    (
        "azure-existing",
        World("1.35.1", network_plugin_mode=None, pod_subnet=True),
        ["uses Azure CNI with a pod subnet, which every new pool needs"],
    ),
    # BYO CNI is named as such, not as Azure CNI on the node subnet (review aks-3 N-8).
    (
        "azure-existing",
        World("1.35.1", network_plugin="none", network_plugin_mode=None),
        ["runs a CNI of its own (networkPlugin none", "adopt a cluster on Azure CNI Overlay"],
    ),
]


@pytest.mark.parametrize(("stack", "world", "said"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_a_cluster_that_cannot_take_the_pools_is_refused_before_anything_is_created(
    stack: str, world: World, said: list[str]
) -> None:
    with pytest.raises(BadInput) as caught:
        plan_stack(load_stack(stack), world=world)
    message = str(caught.value)
    assert "the existing cluster platform-prod cannot take gpufleet's GPU pools" in message
    for text in said:
        assert text in message


def test_auto_mode_needs_a_cluster_that_runs_it() -> None:
    with pytest.raises(BadInput, match=re.escape("does not run EKS Auto Mode")):
        plan_stack(load_stack("aws-existing"), eks_variant(aws={"provisioner": "auto-mode"}))


def test_subnets_missing_in_a_zone_are_named() -> None:
    given = "subnet-0bcc3edcc1ecf38f7"  # the mock VPC's us-east-1a subnet
    with pytest.raises(
        BadInput,
        match=re.escape("cluster.aws.privateSubnetIds: the given subnets have none in us-east-1b"),
    ):
        plan_stack(load_stack("aws-existing"), eks_variant(aws={"privateSubnetIds": [given]}))


def test_gke_pools_from_an_earlier_up_and_a_channel_upgrade_do_not_stop_the_stack() -> None:
    """The pools gpufleet created (their nodes carry gpufleet.io/pool) are its own, not a name
    clash; a release channel that moved the cluster to a newer minor is a warning on GKE
    (review gke-2.md N12): the pools follow the control plane whatever the key says."""
    world = World("1.36.2", gpufleet_pools=("l4-spot", "t4"))
    plan = plan_stack(load_stack("gcp-existing"), world=world)
    assert len(plan.of_type("gcp:container/nodePool:NodePool")) == 2
    (warning,) = [w for w in plan.warnings if "newer than" in w]
    assert "runs Kubernetes 1.36.2-gke.1047000 (REGULAR release channel)" in warning
    assert 'set kubernetesVersion: "1.36"' in warning


def test_warnings_name_what_the_owner_should_set() -> None:
    gke = plan_stack(load_stack("gcp-existing"), world=World("1.35.1", maintenance_window=False))
    assert any("has no maintenance window" in w for w in gke.warnings)
    aks = plan_stack(load_stack("azure-existing"), world=World("1.35.1", maintenance_window=False))
    assert any("no aksManagedAutoUpgradeSchedule window" in w for w in aks.warnings)
    # The node OS channel reimages weekly on a window of its own (review aks-2.md A-P2).
    assert any(
        "updates node images (NodeImage) with no aksManagedNodeOSUpgradeSchedule" in w
        for w in aks.warnings
    )


def test_keys_that_would_configure_the_cluster_are_refused_all_at_once() -> None:
    raw = gpufleet("gcp-existing")
    raw["cluster"]["systemPool"] = {"minNodes": 2}
    raw["cluster"]["protect"] = True
    raw["cluster"]["gcp"]["releaseChannel"] = "STABLE"
    raw["cluster"]["existing"] = {"context": "prod", "autoscalerInstalled": True}
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    found = {p.path: p.message for p in caught.value.problems}
    assert set(found) == {
        "cluster.systemPool",
        "cluster.protect",
        "cluster.gcp.releaseChannel",
        "cluster.existing.context",
        "cluster.existing.autoscalerInstalled",
    }
    assert "belongs to the existing cluster" in found["cluster.systemPool"]
    (system,) = [p for p in caught.value.problems if p.path == "cluster.systemPool"]
    assert system.value == {"minNodes": 2}  # as written, not with the defaults
    assert "allowed with cluster.existing: project" in found["cluster.gcp.releaseChannel"]
    assert "does not apply to cloud gcp" in found["cluster.existing.context"]


def test_eks_existing_keys_need_their_provisioner() -> None:
    raw = gpufleet("aws-existing")
    raw["cluster"]["aws"] = {"provisioner": "karpenter"}
    raw["cluster"]["existing"] = {"autoscalerInstalled": True}
    with pytest.raises(
        ConfigError, match=re.escape("cluster.existing.karpenterNodeRole: is required")
    ):
        parse_config(raw)
    raw["cluster"]["aws"] = {"provisioner": "cluster-autoscaler"}
    raw["cluster"]["existing"] = {"karpenterNodeRole": "r"}
    with pytest.raises(
        ConfigError, match=re.escape("applies only with cluster.aws.provisioner karpenter")
    ):
        parse_config(raw)


def test_an_adopted_aks_cluster_needs_its_resource_group() -> None:
    raw = gpufleet("azure-existing")
    del raw["cluster"]["azure"]
    with pytest.raises(
        ConfigError,
        match=re.escape("cluster.azure.resourceGroupName: is required with cluster.existing"),
    ):
        parse_config(raw)


def test_cloud_existing_keeps_its_own_keys_only() -> None:
    raw = gpufleet("existing-dev")
    raw["cluster"].setdefault("existing", {})["autoscalerInstalled"] = True
    with pytest.raises(
        ConfigError,
        match=re.escape("cluster.existing.autoscalerInstalled: does not apply to cloud existing"),
    ):
        parse_config(raw)


@pytest.mark.parametrize("stack", ADOPTED)
def test_fit_and_consumers_work_offline_on_adopted_stacks(
    stack: str, capsys: Any, tmp_path: Any
) -> None:
    pool = gpufleet(stack)["gpuPools"][0]["name"]
    assert cli_main(["consumers", stack, "--for", "pod", "--pool", pool]) == 0
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(capsys.readouterr().out)
    assert cli_main(["fit", stack, str(manifest)]) == 0
    assert "fits" in capsys.readouterr().out


def test_the_mock_cluster_runs_the_minor_the_stack_names_unless_a_test_says_otherwise() -> None:
    raw = gpufleet("gcp-existing")
    raw["cluster"]["kubernetesVersion"] = "1.36"
    plan = plan_of("gcp-existing", {"gpufleet:cluster": raw["cluster"]})
    (_cluster,) = plan.of_type("gpufleet:gcp:AdoptedCluster")
    assert plan.outputs["gpuPools"]
    with pytest.raises(BadInput, match=re.escape("runs Kubernetes 1.35.3-gke.1047000")):
        plan_stack(
            load_stack("gcp-existing"), {"gpufleet:cluster": raw["cluster"]}, World("1.35.3")
        )


@pytest.mark.parametrize("stack", ADOPTED)
def test_a_cluster_that_cannot_be_read_is_named_with_the_providers_reason(stack: str) -> None:
    with pytest.raises(BadInput) as caught:
        plan_stack(load_stack(stack), world=World(exists=False))
    message = str(caught.value)
    assert "cluster.name: no cluster platform-prod could be read in " in message
    assert "not found" in message
    assert "Traceback" not in message


def test_an_adopted_aks_cluster_names_the_kubelet_identity_its_gpu_nodes_share() -> None:
    """Review security-1 SEC-16: any pod on an AKS node can read the kubelet identity's token
    from IMDS, and on an adopted cluster that identity is the owner's."""
    (shared,) = [w for w in plan_of("azure-existing").warnings if "kubelet identity" in w]
    assert "object id" in shared and "not checked" in shared and "IMDS" in shared.upper()
