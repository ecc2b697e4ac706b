"""EKS config rules: what the autoscaler and one-group-per-zone cannot express fails before any
resource exists, with the key path, the bad value and what is allowed."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.model.config import ConfigError, parse_config
from components.tooling.stacks import load_stack

BASE = load_stack("aws-dev").gpufleet


def config_with(pools: list[dict[str, Any]] | None = None, **cluster: Any) -> dict[str, Any]:
    raw = copy.deepcopy(BASE)
    if pools is not None:
        raw["gpuPools"] = pools
    raw["cluster"] = {**raw["cluster"], **cluster}
    return raw


def pool(**fields: Any) -> dict[str, Any]:
    return {"name": "gpu", "accelerator": "t4", "zones": ["us-east-1a"], "maxNodes": 2, **fields}


def problems_of(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def test_shipped_aws_stacks_are_valid() -> None:
    for stack in ("aws-dev", "aws-training"):
        config = parse_config(load_stack(stack).gpufleet)
        assert config.cloud == "aws"
        assert all(p.zones or config.cluster.zones for p in config.gpu_pools)


def test_instance_types_with_different_gpu_counts_are_rejected() -> None:
    # g4dn.xlarge has 1 T4, g4dn.12xlarge 4: the autoscaler would size the group from the first.
    problems = problems_of(config_with([pool(machineTypes=["g4dn.xlarge", "g4dn.12xlarge"])]))
    (problem,) = [p for p in problems if p.startswith("gpuPools[0].machineTypes:")]
    assert "same GPU count" in problem
    assert "'g4dn.xlarge': 1" in problem and "'g4dn.12xlarge': 4" in problem


def test_different_vcpu_or_memory_is_a_warning_naming_the_type_the_autoscaler_uses() -> None:
    config = parse_config(config_with([pool(machineTypes=["g4dn.2xlarge", "g4dn.xlarge"])]))
    (warning,) = config.warnings
    assert warning.startswith("gpuPools[0].machineTypes: vCPU or memory differ")
    assert warning.endswith("from the first type, g4dn.2xlarge")
    same_shape = parse_config(config_with([pool(machineTypes=["g4dn.xlarge"])]))
    assert same_shape.warnings == ()


def test_instance_type_of_another_gpu_is_rejected() -> None:
    problems = problems_of(config_with([pool(machineTypes=["g4dn.xlarge", "g6.xlarge"])]))
    assert any(
        p.startswith("gpuPools[0].machineTypes[1]: cannot carry t4 on aws (it carries l4)")
        for p in problems
    ), problems


def test_unknown_kubernetes_minor_is_rejected_because_no_autoscaler_matches_it() -> None:
    problems = problems_of(config_with(kubernetesVersion="1.31"))
    assert any(
        p.startswith("cluster.kubernetesVersion: unsupported Kubernetes minor") for p in problems
    )


def test_every_zone_group_gets_at_least_one_node_of_max() -> None:
    three_zones = ["us-east-1a", "us-east-1b", "us-east-1c"]
    problems = problems_of(config_with([pool(zones=three_zones, maxNodes=2)]))
    assert any(
        p.startswith("gpuPools[0].maxNodes: must be at least the number of zones (3)")
        for p in problems
    ), problems
    # A managed node group spans its zones as one group: no per-zone share.
    managed = pool(zones=three_zones, maxNodes=2, aws={"nodeGroup": "managed"})
    assert parse_config(config_with([managed])).gpu_pools[0].max_nodes == 2


def test_taint_keys_must_be_unique_because_each_is_one_asg_tag() -> None:
    problems = problems_of(
        config_with([pool(taints=[{"key": "nvidia.com/gpu", "value": "x", "effect": "NoExecute"}])])
    )
    assert any(p.startswith("gpuPools[0].taints: taint keys must be unique") for p in problems)


@pytest.mark.parametrize(
    ("aws", "expected"),
    [
        ({"vpcCidr": "10.0.0.0/24"}, "cluster.aws.vpcCidr: must be an IPv4 CIDR from /12 to /20"),
        ({"vpcCidr": "banana"}, "cluster.aws.vpcCidr: must be an IPv4 CIDR such as"),
        ({"serviceCidr": "fd00::/108"}, "cluster.aws.serviceCidr: must be an IPv4 CIDR"),
        ({"autoscalerExpander": "cheapest"}, "cluster.aws.autoscalerExpander: comma-separated"),
        ({"autoscalerExpander": "priority,priority"}, "cluster.aws.autoscalerExpander"),
        ({"publicSubnetIds": ["subnet-1"]}, "cluster.aws.publicSubnetIds: needs privateSubnetIds"),
        (
            {"natGateways": "none"},
            "cluster.aws.natGateways: Input should be 'single' or 'per-zone'",
        ),
        ({"serviceCidr": "10.0.128.0/20"}, "cluster.aws.serviceCidr: must not overlap vpcCidr"),
    ],
)
def test_bad_eks_cluster_options(aws: dict[str, Any], expected: str) -> None:
    problems = problems_of(config_with(aws={**BASE["cluster"]["aws"], **aws}))
    assert any(p.startswith(expected) for p in problems), problems


def test_zones_are_required_on_aws() -> None:
    cluster = {k: v for k, v in BASE["cluster"].items() if k != "zones"}
    raw = copy.deepcopy(BASE)
    raw["cluster"] = cluster
    assert any(p.startswith("cluster.zones: is required on aws") for p in problems_of(raw))


def test_eks_needs_two_zones() -> None:
    problems = problems_of(config_with([pool()], zones=["us-east-1a"]))
    assert any(
        p.startswith("cluster.zones: EKS needs subnets in at least two zones") for p in problems
    )
