"""EFA on EKS (`gpuPools[].interconnect: fabric`, issue 32): the aws-efa stack gives each fabric
node one EFA interface per network card behind a security group that lets EFA through, a cluster
placement group per zone where no reservation places the nodes, the autoscaler's view of the EFA
devices at zero, and the EFA device plugin on fabric nodes only; Auto Mode refuses it (Karpenter
builds it: test_karpenter_fabric.py); turning it on for a running pool rolls or reaches new nodes."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest

from components.aws.model import fabric, nccl
from components.aws.model.catalog import CATALOG
from components.aws.model.cloud import AWS
from components.aws.model.kinds.auto_mode import AUTO_MODE
from components.aws.model.kinds.base import EksPoolKind
from components.aws.model.kinds.karpenter import KARPENTER
from components.aws.model.kinds.managed import MANAGED
from components.aws.model.kinds.self_managed import SELF_MANAGED
from components.model.config import parse_config
from components.model.cost import stack_cost
from components.model.pools import POOL_LABEL, resolve_pool
from components.model.problems import ConfigError
from components.model.schema import StackConfig
from components.tooling.diff import diff_plans
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

STACK = "aws-efa"
TODAY = date(2026, 11, 28)
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
GROUP = "aws:autoscaling/group:Group"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
PLACEMENT = "aws:ec2/placementGroup:PlacementGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"
EFA_TAG = "k8s.io/cluster-autoscaler/node-template/resources/vpc.amazonaws.com/efa"


def _of(stack: str, type_: str, overrides: dict[str, Any] | None = None) -> list[Any]:
    return plan_of(stack, overrides).of_type(type_)


def _one(type_: str, suffix: str) -> Any:
    (found,) = [r for r in _of(STACK, type_) if r.name.endswith(suffix)]
    return found


def _raw_pools() -> list[dict[str, Any]]:
    return copy.deepcopy(list(load_stack(STACK).gpufleet["gpuPools"]))


def test_every_fabric_template_has_one_efa_interface_per_network_card() -> None:
    expected = fabric.EFA_TYPES["p5.48xlarge"].efa_interfaces
    for suffix in ("h100-template", "h100-block-template"):
        inputs = _one(TEMPLATE, suffix).inputs
        interfaces = inputs["networkInterfaces"]
        assert len(interfaces) == expected == 32
        primary, *secondaries = interfaces
        assert (primary["networkCardIndex"], primary["deviceIndex"]) == (0, 0)
        assert primary["interfaceType"] == "efa"
        assert [i["networkCardIndex"] for i in secondaries] == list(range(1, 32))
        assert {(i["deviceIndex"], i["interfaceType"]) for i in secondaries} == {(1, "efa-only")}
        # Security groups go on each interface (not the template); no public IP anywhere.
        assert "vpcSecurityGroupIds" not in inputs
        efa_group = _one("aws:ec2/securityGroup:SecurityGroup", suffix.replace("template", "efa"))
        assert primary["securityGroups"][-1] == f"sg-{efa_group.name}"
        for interface in interfaces:
            assert interface["associatePublicIpAddress"] == "false"
        # What every node keeps: IMDSv2 and encrypted disks.
        assert inputs["metadataOptions"]["httpTokens"] == "required"
        assert all(d["ebs"]["encrypted"] == "true" for d in inputs["blockDeviceMappings"])


def test_the_efa_security_group_allows_all_traffic_to_and_from_itself() -> None:
    for direction in ("Ingress", "Egress"):
        suffix = {"Ingress": "h100-efa-in", "Egress": "h100-efa-out"}[direction]
        rule = _one(f"aws:vpc/securityGroup{direction}Rule:SecurityGroup{direction}Rule", suffix)
        assert rule.inputs["ipProtocol"] == "-1"
        assert rule.inputs["referencedSecurityGroupId"] == rule.inputs["securityGroupId"]


def test_an_on_demand_fabric_pool_gets_a_cluster_placement_group_per_zone() -> None:
    (placement,) = _of(STACK, PLACEMENT)
    assert placement.name == "gpufleet-efa-h100-us-east-1a-placement"
    assert placement.inputs["strategy"] == "cluster"
    (group,) = [g for g in _of(STACK, GROUP) if g.name == "gpufleet-efa-h100-us-east-1a"]
    assert group.inputs["placementGroup"].startswith(placement.name)


def test_a_capacity_block_pool_gets_no_placement_group_of_gpufleets() -> None:
    # The block places its instances (EC2 UltraClusters); its group stays in the block's zone.
    template = _one(TEMPLATE, "h100-block-template").inputs
    assert "placement" not in template
    assert template["instanceMarketOptions"]["marketType"] == "capacity-block"
    (node_group,) = [g for g in _of(STACK, NODE_GROUP) if "h100-block" in g.name]
    assert node_group.name.endswith("us-east-1b")


def test_the_autoscaler_sees_the_efa_devices_of_a_pool_at_zero() -> None:
    (group,) = [g for g in _of(STACK, GROUP) if g.name.startswith("gpufleet-efa-h100-")]
    tags = {t["key"]: t["value"] for t in group.inputs["tags"]}
    assert tags[EFA_TAG] == "32"
    (node_group,) = [g for g in _of(STACK, NODE_GROUP) if "h100-block" in g.name]
    assert node_group.inputs["tags"][EFA_TAG] == "32"
    assert node_group.inputs["labels"][fabric.FABRIC_LABEL] == fabric.FABRIC_LABEL_VALUE


def test_the_efa_device_plugin_runs_on_fabric_nodes_only() -> None:
    (release,) = [r for r in _of(STACK, RELEASE) if r.inputs["chart"] == fabric.DEVICE_PLUGIN.chart]
    assert release.inputs["version"] == "v0.5.30"
    values = release.inputs["values"]
    assert values["nodeSelector"] == {fabric.FABRIC_LABEL: fabric.FABRIC_LABEL_VALUE}
    assert {
        "key": "nvidia.com/gpu",
        "operator": "Equal",
        "value": "true",
        "effect": "NoSchedule",
    } in values["tolerations"]
    # Only the chart's keys (values.yaml @5239609242f3: nodeSelector, tolerations, image).
    assert set(values) <= {"nodeSelector", "tolerations", "image"}


def test_a_pool_without_fabric_gets_none_of_it() -> None:
    pools = _raw_pools()
    pools[0]["interconnect"] = "none"
    overrides = {"gpufleet:gpuPools": pools}
    (template,) = [t for t in _of(STACK, TEMPLATE, overrides) if t.name.endswith("h100-template")]
    assert "networkInterfaces" not in template.inputs
    assert not _of(STACK, PLACEMENT, overrides)
    (group,) = [g for g in _of(STACK, GROUP, overrides) if g.name.startswith("gpufleet-efa-h100-")]
    assert EFA_TAG not in {t["key"] for t in group.inputs["tags"]}
    assert "placementGroup" not in group.inputs
    # aws-training has no fabric pool: no EFA chart.
    assert not [r for r in _of("aws-training", RELEASE) if "efa" in r.inputs["chart"]]


def _turned_on(node_group: str) -> Any:
    """The diff of turning the fabric on for both pools, `h100` on `node_group` groups."""
    pools = _raw_pools()
    pools[0]["aws"]["nodeGroup"] = node_group
    after = plan_of(STACK, {"gpufleet:gpuPools": copy.deepcopy(pools)})
    for pool in pools:
        pool["interconnect"] = "none"
    before = plan_of(STACK, {"gpufleet:gpuPools": pools})
    return diff_plans(before.to_json(), after.to_json())


def test_turning_the_fabric_on_rolls_a_managed_group_and_reaches_new_self_managed_nodes() -> None:
    # A managed group: a new template version, EKS rolls every node onto it.
    managed = _turned_on("managed")
    (group,) = [c for c in managed.changed if c.name == "gpufleet-efa-h100-us-east-1a"]
    assert group.verdict == "roll"
    # A self-managed group: new instances only (gpufleet starts no instance refresh).
    self_managed = _turned_on("self-managed")
    (group,) = [c for c in self_managed.changed if c.name == "gpufleet-efa-h100-us-east-1a"]
    assert group.verdict == "update"
    effects = {path: note.effect for note in group.node_notes for path in note.paths}
    assert effects["placementGroup"] == "new-nodes"
    # A Capacity Block group takes a new template only at 0 nodes (EKS capacity-blocks-mng).
    (block,) = [c for c in self_managed.changed if c.name == "gpufleet-efa-h100-block-us-east-1b"]
    assert block.verdict == "reject"
    assert "refused unless the group is at 0 nodes" in block.refusals[0]


def _kind_problems(
    kind: EksPoolKind, machine_types: list[str] | None = None, zones: list[str] | None = None
) -> list[str]:
    """The fabric problems of aws-efa's on-demand pool as a pool of `kind`, in another shape."""
    config = _config()
    pool = config.gpu_pools[0].model_copy(
        update={"machine_types": machine_types or ["p5.48xlarge"], "zones": zones or ["us-east-1a"]}
    )
    return [str(p) for p in kind.fabric_problems(config.cluster, pool, "gpuPools[0]")]


def test_auto_mode_refuses_the_fabric_with_what_to_do_and_karpenter_builds_it() -> None:
    (auto,) = _kind_problems(AUTO_MODE)
    assert auto.startswith("gpuPools[0].interconnect: EKS Auto Mode has no per-interface EFA")
    assert "use cluster.aws.provisioner: cluster-autoscaler" in auto
    assert _kind_problems(KARPENTER) == []  # tests/test_karpenter_fabric.py: what it builds


def test_a_group_pool_mixing_efa_layouts_is_refused_at_the_edge() -> None:
    assert _kind_problems(SELF_MANAGED, ["p5.48xlarge", "p5e.48xlarge"]) == []  # 32, 32 cards
    (problem,) = _kind_problems(SELF_MANAGED, ["p5.48xlarge", "p5en.48xlarge"])  # 32, 16
    assert problem.startswith("gpuPools[0].machineTypes: a fabric pool's launch template")


def test_every_efa_row_is_a_catalog_type_and_types_without_efa_have_no_fabric() -> None:
    names = {m.name for m in CATALOG.rows}
    assert set(fabric.EFA_TYPES) <= names
    assert AWS.fabric_facts("g5.xlarge") is None and AWS.fabric_facts("g6e.4xlarge") is None
    facts = AWS.fabric_facts("p5.48xlarge")
    assert facts is not None and facts.resource == "vpc.amazonaws.com/efa"
    assert facts.interfaces == facts.resource_per_node == 32


def _config() -> StackConfig:
    return parse_config(dict(load_stack(STACK).gpufleet))


def test_the_nccl_test_asks_for_every_gpu_and_efa_device_of_two_nodes() -> None:
    config = _config()
    pool = resolve_pool(config, config.gpu_pools[0])
    test = AWS.nccl_test(config, pool, 2)
    assert test is not None
    (job,) = test.manifests
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 2
    limits = worker["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits["vpc.amazonaws.com/efa"] == 32 and limits["nvidia.com/gpu"] == 8
    assert worker["template"]["spec"]["nodeSelector"] == {POOL_LABEL: "h100"}
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    assert launcher["command"][launcher["command"].index("-np") + 1] == "16"
    assert test.expected is not None and test.expected.busbw_gbytes_per_s == 487.1
    assert any("MPI Operator" in need for need in test.requires)
    assert AWS.nccl_test(config, pool, 1) is None
    assert nccl.IMAGE.startswith("public.ecr.aws/hpc-cloud/nccl-tests:")


def test_the_pool_fabric_names_its_placement() -> None:
    config = _config()
    facts = AWS.fabric_facts("p5.48xlarge")
    assert facts is not None
    on_demand, block = config.gpu_pools
    assert AWS.pool_fabric(config, on_demand, facts, "us-east-1a").placement == fabric.PLACEMENT
    reserved = AWS.pool_fabric(config, block, facts, "us-east-1b")
    assert reserved.placement == fabric.BLOCK_PLACEMENT
    assert reserved.placement_max_nodes is None


def test_a_fabric_pool_in_two_zones_is_refused_once_by_the_shared_rule() -> None:
    """A cluster placement group is one zone's (EC2), and the shared rule keeps every fabric
    pool in one zone: one problem, whatever the group kind."""
    for group in ("managed", "self-managed"):
        raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
        pool = raw["gpuPools"][0]
        pool["zones"] = ["us-east-1a", "us-east-1b"]
        pool.setdefault("aws", {})["nodeGroup"] = group
        with pytest.raises(ConfigError) as refused:
            parse_config(raw)
        zone_problems = [p for p in refused.value.problems if p.path.endswith("zones")]
        assert [p.path for p in zone_problems] == ["gpuPools[0].zones"], group
    assert _kind_problems(MANAGED, zones=["us-east-1a"]) == []


def _nccl_on(accelerator: str, machine: str) -> tuple[list[str], str]:
    """The launcher's command and the result command of the NCCL test on a fabric pool of
    `machine` (the example's first pool, retyped)."""
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    raw["gpuPools"][0].update(accelerator=accelerator, machineTypes=[machine])
    config = parse_config(raw)
    pool = resolve_pool(config, config.gpu_pools[0])
    test = AWS.nccl_test(config, pool, 2)
    assert test is not None
    (job,) = test.manifests
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    return list(launcher["command"]), test.result_command


@pytest.mark.parametrize(
    ("accelerator", "machine", "end", "row"),
    [
        # 3 buffers (data check on) of 16 GiB = 48 GiB: fits 80 GB, the recipe's p5 size.
        ("h100-80gb", "p5.48xlarge", "16G", 17_179_869_184),
        # A100 40 GB and L40S 48 GB would run out of memory at 16 GiB.
        ("a100-40gb", "p4d.24xlarge", "8G", 8_589_934_592),
        ("l40s", "g6e.48xlarge", "8G", 8_589_934_592),
        ("l4", "g6.12xlarge", "4G", 4_294_967_296),
        ("t4", "g4dn.12xlarge", "2G", 2_147_483_648),
    ],
)
def test_the_nccl_tests_largest_message_fits_the_pools_gpus(
    accelerator: str, machine: str, end: str, row: int
) -> None:
    command, result = _nccl_on(accelerator, machine)
    assert command[command.index("-e") + 1] == end
    assert f"|{row}'" in result


def test_the_nccl_test_leaves_device_rdma_to_libfabric() -> None:
    """`FI_EFA_USE_DEVICE_RDMA=1` aborts on an EFA device without RDMA (libfabric fi_efa.7);
    the cited recipe leaves it unset, and so does the sample, on every EFA type."""
    for accelerator, machine in (("h100-80gb", "p5.48xlarge"), ("l4", "g6.48xlarge")):
        command, _ = _nccl_on(accelerator, machine)
        assert not any("FI_EFA_USE_DEVICE_RDMA" in part for part in command)
        assert "FI_PROVIDER=efa" in command


def test_interactive_profiles_ask_for_the_gpu_not_the_fabric() -> None:
    """g6.48xlarge: 1 EFA device for 8 GPUs. A notebook or FiftyOne operation asking for it
    would hold the node's only device, so one 1-GPU pod per node; they ask for the GPU only."""
    from components.tooling.consumers.fiftyone import fiftyone_entry
    from components.tooling.consumers.jupyterhub import jupyterhub_profile

    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    raw["gpuPools"][0].update(accelerator="l4", machineTypes=["g6.48xlarge"])
    config = parse_config(raw)
    spec = resolve_pool(config, config.gpu_pools[0])
    assert spec.fabric is not None and spec.allocatable_per_node[fabric.EFA_RESOURCE] == 1
    override = jupyterhub_profile(spec)["kubespawner_override"]
    assert override["extra_resource_limits"] == {"nvidia.com/gpu": "1"}
    assert "extra_annotations" not in override
    resources = fiftyone_entry(spec)["resources"]
    assert fabric.EFA_RESOURCE not in resources["limits"]
    assert resources["limits"]["nvidia.com/gpu"] == 1


def test_turning_the_fabric_off_is_refused_unless_the_pool_is_empty() -> None:
    """EC2 refuses to delete a placement group with instances in it and a security group an
    interface uses: the `up` would stop half-applied, so `diff` refuses it (review eks-6 E6-1)."""
    for node_group in ("managed", "self-managed"):
        on = _raw_pools()
        on[0]["aws"]["nodeGroup"] = node_group
        off = copy.deepcopy(on)
        off[0]["interconnect"] = "none"
        before = plan_of(STACK, {"gpufleet:gpuPools": on})
        after = plan_of(STACK, {"gpufleet:gpuPools": off})
        result = diff_plans(before.to_json(), after.to_json())
        (template,) = [c for c in result.changed if c.name.endswith("h100-template")]
        assert template.verdict == "reject", node_group
        (refusal,) = template.refusals
        assert "refused unless the pool's groups are at 0 nodes" in refusal
        assert "scale its groups to 0" in refusal and "remove the pool" in refusal
        removed = {r.type for r in result.removed}
        assert PLACEMENT in removed and "aws:ec2/securityGroup:SecurityGroup" in removed
        # The other fabric pool keeps its fabric: nothing of it is refused.
        assert not [c for c in result.changed if "block" in c.name and c.verdict == "reject"]
    # Removing the pool altogether is not refused: its groups go before their network.
    pools = _raw_pools()
    after = plan_of(STACK, {"gpufleet:gpuPools": pools[1:]})
    gone = diff_plans(plan_of(STACK).to_json(), after.to_json())
    assert not [c for c in gone.changed if c.verdict == "reject"]


def _adopted_with_groups(extra: int, fabric_pool: bool, quota: int | None = None) -> list[str]:
    """The problems of aws-existing with `extra` owner's node security groups, and a p5 fabric
    pool (or its t4 pool alone), as `plan` reports them."""
    raw = copy.deepcopy(dict(load_stack("aws-existing").gpufleet))
    ids = [f"sg-{index:017x}" for index in range(1, extra + 1)]
    raw["cluster"]["existing"] = {"nodeSecurityGroupIds": ids}
    if quota is not None:
        raw["cluster"]["aws"] = {"securityGroupsPerInterfaceQuota": quota}
    pools = raw["gpuPools"][:1]
    if fabric_pool:
        pools = [{**_raw_pools()[0], "zones": ["us-east-1a"]}]
    raw["gpuPools"] = pools
    try:
        parse_config(raw)
    except ConfigError as refused:
        return [str(p) for p in refused.problems]
    return []


def test_a_node_interface_over_the_security_group_quota_is_refused_at_the_edge() -> None:
    """EC2 allows 5 security groups per network interface by default (Amazon VPC quotas): the
    cluster group, the owner's ids and a fabric pool's EFA group must fit (review eks-6 E6-2)."""
    # Fabric: 1 + 3 + EFA = 5 passes; 1 + 4 + EFA = 6 is refused with what to do.
    assert _adopted_with_groups(3, fabric_pool=True) == []
    (problem,) = _adopted_with_groups(4, fabric_pool=True)
    assert problem.startswith("cluster.existing.nodeSecurityGroupIds: puts 6 security groups")
    assert "EFA security group" in problem and "Drop 1 of the ids" in problem
    assert "--service-code vpc --quota-code L-2AFB9258 --desired-value 6" in problem
    assert "cluster.aws.securityGroupsPerInterfaceQuota: 6" in problem
    # A raised quota the stack states lets it through.
    assert _adopted_with_groups(4, fabric_pool=True, quota=6) == []
    # Without fabric: 1 + 4 = 5 passes, 1 + 5 = 6 is refused.
    assert _adopted_with_groups(4, fabric_pool=False) == []
    (plain,) = _adopted_with_groups(5, fabric_pool=False)
    assert "puts 6 security groups" in plain and "EFA" not in plain


def test_efa_only_interfaces_carry_the_efa_security_group_alone() -> None:
    """AWS PCS's EFA launch template: every EFA gets the EFA group, the other groups only the
    primary interface (the EFA-only ones have no IP address)."""
    for suffix in ("h100-template", "h100-block-template"):
        primary, *secondaries = _one(TEMPLATE, suffix).inputs["networkInterfaces"]
        assert len(primary["securityGroups"]) == 2
        efa_group = primary["securityGroups"][-1]
        assert all(s["interfaceType"] == "efa-only" for s in secondaries)
        assert all(s["securityGroups"] == [efa_group] for s in secondaries)


def _odcr_warnings(capacity: Any) -> list[str]:
    """The config warnings of aws-efa with its second pool on an ODCR (self-managed)."""
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    pool = raw["gpuPools"][1]
    pool["capacity"] = capacity
    pool["aws"] = {
        "nodeGroup": "self-managed",
        "capacityReservations": [
            {"id": "cr-0f1e2d3c4b5a69788", "instanceType": "p5.48xlarge", "instanceCount": 2}
        ],
    }
    config = parse_config(raw)
    spec = resolve_pool(config, config.gpu_pools[1])
    assert spec.fabric is not None and spec.fabric.placement == fabric.ODCR_PLACEMENT
    return [w for w in config.warnings if w.startswith("gpuPools[1].interconnect: ")]


def test_plan_warns_of_a_fabric_pools_notes_and_an_odcrs_placement() -> None:
    """The cloud's fabric notes reach `plan` (config warnings, printed on stderr) for each fabric
    pool; an ODCR places nothing unless created in a placement group, and on-demand fallback
    nodes land in none (EC2 user guide cr-cpg, using-cpg-odcr-crg; review eks-6 E6-3)."""
    only = _odcr_warnings("reserved")
    day_two, placement = only
    assert "`diff` refuses it unless the pool is at 0 nodes" in day_two
    assert "only if it was created in one" in placement and "not checked" in placement
    assert "on-demand beyond the reservation" not in placement
    (_, with_fallback) = _odcr_warnings(["reserved", "on-demand"])
    assert "land in no placement group" in with_fallback
    # The aws-efa stack: both pools carry the day-two note, the block pool no ODCR note.
    warnings = parse_config(dict(load_stack(STACK).gpufleet)).warnings
    notes = [w.split(":")[0] for w in warnings if "EFA interfaces are set when" in w]
    assert notes == ["gpuPools[0].interconnect", "gpuPools[1].interconnect"]
    assert not [w for w in warnings if "On-Demand Capacity Reservation places" in w]


def _block_pool_cost(capacity: Any, max_nodes: int) -> tuple[Any, float | None]:
    """aws-efa's second pool on an ODCR of 2 instances, as `plan`'s cost prices it."""
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    pool = raw["gpuPools"][1]
    pool.update(capacity=capacity, maxNodes=max_nodes)
    pool["aws"] = {
        "nodeGroup": "self-managed",
        "capacityReservations": [
            {"id": "cr-0f1e2d3c4b5a69788", "instanceType": "p5.48xlarge", "instanceCount": 2}
        ],
    }
    cost = stack_cost(parse_config(raw), TODAY)
    (priced,) = [p for p in cost.pools if p.name == "h100-block"]
    return priced, cost.max


def test_a_pool_confined_to_its_reservation_costs_no_more_than_it_holds() -> None:
    """`capacity: reserved` launches into the ODCR or fails (components/aws/model/capacity.py):
    full scale counts the reservation's 2 nodes, not maxNodes (review eks-6 E6-4)."""
    at_cap, total_at_cap = _block_pool_cost("reserved", 2)
    assert at_cap.full_scale_nodes == 2 and at_cap.reachable_nodes is None
    over, total_over = _block_pool_cost("reserved", 3)
    assert over.full_scale_nodes == 2 and total_over == total_at_cap
    # With on-demand fallback the pool reaches maxNodes: the diff shows the dearer full scale.
    fallback, total_fallback = _block_pool_cost(["reserved", "on-demand"], 3)
    assert fallback.full_scale_nodes == 3
    assert total_fallback is not None and total_at_cap is not None
    assert fallback.per_node_hour is not None
    assert round(total_fallback - total_at_cap, 4) == round(fallback.per_node_hour, 4)
