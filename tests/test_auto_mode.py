"""EKS Auto Mode: the aws-auto-mode stack asks EKS to run the nodes (compute, block storage and
load balancing together, no self-managed add-ons), gives each GPU pool a NodeClass and a NodePool
with Auto Mode's own labels, installs no device plugin or autoscaler, and refuses what Auto Mode
cannot do."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.aws.model import auto_mode
from components.model.config import ConfigError, parse_config
from components.tooling.diff import diff_plans
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

STACK = "aws-auto-mode"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:eks.amazonaws.com/v1:NodeClass"


def _one(type_: str, suffix: str = "") -> Any:
    (found,) = [r for r in plan_of(STACK).resources if r.type == type_ and r.name.endswith(suffix)]
    return found


def _problems(**changes: Any) -> list[str]:
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    for key, change in changes.items():
        change(raw[key])
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def test_the_cluster_runs_auto_mode_whole() -> None:
    cluster = _one("aws:eks/cluster:Cluster").inputs
    assert cluster["computeConfig"] == {"enabled": True, "nodePools": []}
    assert cluster["storageConfig"] == {"blockStorage": {"enabled": True}}
    assert cluster["kubernetesNetworkConfig"]["elasticLoadBalancing"] == {"enabled": True}
    assert cluster["bootstrapSelfManagedAddons"] is False
    attached = {
        r.inputs["policyArn"].rsplit("/", 1)[1]
        for r in plan_of(STACK).resources
        if r.type == "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
        and r.name.startswith("gpufleet-auto-cluster-")
    }
    assert attached == {"AmazonEKSClusterPolicy", *auto_mode.CLUSTER_POLICIES}


def test_nodes_join_with_their_own_role_and_an_ec2_access_entry() -> None:
    entry = _one("aws:eks/accessEntry:AccessEntry", "auto-mode-nodes-access").inputs
    assert entry["type"] == "EC2"
    association = _one("aws:eks/accessPolicyAssociation:AccessPolicyAssociation").inputs
    assert association["policyArn"].endswith("/AmazonEKSAutoNodePolicy")
    for node_class in (r for r in plan_of(STACK).resources if r.type == NODE_CLASS):
        spec = node_class.inputs["spec"]
        assert spec["role"].startswith("gpufleet-auto-auto-mode-nodes-role")
        assert spec["ephemeralStorage"] == {"size": "100Gi"}
        assert "tags" not in spec  # Auto Mode's managed policies may not tag instances


def test_node_pools_name_auto_modes_node_class_and_skip_the_os_requirement() -> None:
    pools = [r for r in plan_of(STACK).resources if r.type == NODE_POOL]
    assert {p.inputs["metadata"]["name"] for p in pools} == {"l4", "a10g"}
    for pool in pools:
        template = pool.inputs["spec"]["template"]["spec"]
        assert template["nodeClassRef"]["group"] == "eks.amazonaws.com"
        assert template["nodeClassRef"]["kind"] == "NodeClass"
        keys = {r["key"] for r in template["requirements"]}
        assert "kubernetes.io/os" not in keys  # Auto Mode does not support it
        assert {"node.kubernetes.io/instance-type", "karpenter.sh/capacity-type"} <= keys


def test_nothing_of_the_other_provisioners_and_no_gpu_software_from_gpufleet() -> None:
    plan = plan_of(STACK)
    types = {r.type for r in plan.resources}
    assert "aws:autoscaling/group:Group" not in types
    assert "aws:sqs/queue:Queue" not in types  # AWS handles interruptions
    assert not [r for r in plan.resources if r.type == "kubernetes:helm.sh/v3:Release"]
    assert plan.outputs["gpuSoftware"] == "cloud-managed"


def test_the_contract_carries_auto_modes_labels_and_no_guessed_allocatable() -> None:
    pools = {p["name"]: p for p in plan_of(STACK).outputs["gpuPools"]}
    a10g = pools["a10g"]
    assert a10g["nodeLabels"]["eks.amazonaws.com/compute-type"] == "auto"
    assert a10g["nodeLabels"]["eks.amazonaws.com/instance-gpu-manufacturer"] == "nvidia"
    assert a10g["nodeLabels"]["karpenter.sh/capacity-type"] == "on-demand"
    assert "nvidia.com/gpu.present" not in a10g["nodeLabels"]  # nodeadm's, not Auto Mode's
    # AWS does not publish Auto Mode's reservations: only the GPU count is promised.
    assert a10g["allocatablePerNode"] == {"nvidia.com/gpu": 1}


def test_what_auto_mode_cannot_do_is_refused_together() -> None:
    def pools(raw: list[dict[str, Any]]) -> None:
        raw[0]["minNodes"] = 1
        raw[1]["aws"] = {"amiFamily": "bottlerocket"}

    def operator(raw: dict[str, Any]) -> None:
        raw["mode"] = "gpu-operator"

    problems = _problems(gpuPools=pools, gpuSoftware=operator)
    assert any(
        p.startswith("gpuPools[0].minNodes: EKS Auto Mode keeps no minimum") for p in problems
    )
    assert any(p.startswith("gpuPools[1].aws.amiFamily: applies only with") for p in problems)
    assert any(
        p.startswith("gpuSoftware.mode: EKS Auto Mode nodes come with NVIDIA's driver")
        for p in problems
    ), problems


def test_moving_a_stack_to_auto_mode_updates_the_cluster_in_place() -> None:
    """AWS enables Auto Mode on a running cluster (review eks-2.md N9): only a new Auto Mode
    cluster must be created without self-managed add-ons, and gpufleet ignores later changes."""
    raw = copy.deepcopy(dict(load_stack("aws-dev").gpufleet))
    raw["cluster"]["aws"]["provisioner"] = "auto-mode"
    after = plan_of("aws-dev", {f"gpufleet:{k}": v for k, v in raw.items()})
    diff = diff_plans(plan_of("aws-dev").to_json(), after.to_json())
    (cluster,) = [c for c in diff.changed if c.type == "aws:eks/cluster:Cluster"]
    assert not cluster.replace_paths, cluster.replace_paths
    assert not any(c.path == "bootstrapSelfManagedAddons" for c in cluster.changes)
    # The same `up` would remove the autoscaler's GPU groups: refused (review eks-3.md N17,
    # tests/test_eks_refusals.py), but not for anything EKS refuses about the cluster itself.
    (refusal,) = cluster.refusals
    assert refusal.startswith("computeConfig.enabled: gpufleet refuses to turn on EKS Auto Mode")


def test_a_shared_pool_is_refused_once_with_what_to_do() -> None:
    def share(raw: list[dict[str, Any]]) -> None:
        raw[1]["sharing"] = {"strategy": "time-sharing", "maxSharedClientsPerGpu": 4}

    problems = _problems(gpuPools=share)
    assert problems == [
        "gpuPools[1].sharing: EKS Auto Mode runs its own NVIDIA device plugin, which gpufleet "
        "cannot configure for sharing or MIG; use cluster.aws.provisioner karpenter or "
        "cluster-autoscaler for this pool (got 'time-sharing')"
    ], problems
