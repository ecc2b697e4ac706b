"""GPUDirect on GKE on the whole graph (`gcp-gpudirect`: an A3 Mega pool with
`interconnect: fabric`): the eight GPU VPCs and subnets at GKE's MTU, the cluster's Dataplane V2
and multi-networking, the Network objects, the node pool's extra NICs and compact placement,
the NCCL plugin installer on fabric nodes only, day two (`diff`), each refusal at its edge, and
the NCCL test's pod contract.

Facts and sources: components/gcp/model/fabric.py, gpudirect_installer.py, nccl_test.py.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import ipaddress
import json
from typing import Any

import kubernetes_validate
import pytest

from components.gcp.model import fabric as gke_fabric
from components.gcp.model import gpudirect_installer
from components.gcp.model.cloud import GCP
from components.mock_world import World
from components.model.config import ConfigError, parse_config
from components.model.labels import POOL_LABEL
from components.model.pools import resolve_pool
from components.tooling.commands import BadInput
from components.tooling.diff import diff_plans, render_text
from components.tooling.engine import plan_stack
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

pytestmark = pytest.mark.xdist_group("gke-gpudirect")

STACK = "gcp-gpudirect"
NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
NETWORK = "gcp:compute/network:Network"
SUBNET = "gcp:compute/subnetwork:Subnetwork"
CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"


def _raw(**changes: Any) -> dict[str, Any]:
    """gcp-gpudirect's gpufleet keys, its fabric pool changed."""
    raw = copy.deepcopy(dict(load_stack(STACK).gpufleet))
    raw["gpuPools"][0].update(changes)
    return raw


def _pools(**changes: Any) -> dict[str, Any]:
    return {"gpufleet:gpuPools": _raw(**changes)["gpuPools"]}


def _plain_pool_added() -> dict[str, Any]:
    """gcp-gpudirect plus an A3 Mega pool without the fabric."""
    pools = _pools()["gpufleet:gpuPools"]
    plain = {k: v for k, v in pools[0].items() if k not in ("interconnect", "capacity", "gcp")}
    return {"gpufleet:gpuPools": [*pools, {**plain, "name": "a3-plain"}]}


def _node_pool(overrides: dict[str, Any] | None, name: str = "a3-mega") -> dict[str, Any]:
    (pool,) = [r for r in plan_of(STACK, overrides).of_type(NODE_POOL) if r.inputs["name"] == name]
    return dict(pool.inputs)


def test_the_a3_mega_pool_gets_eight_gpu_vpcs_with_gkes_mtu_in_its_region() -> None:
    plan = plan_of(STACK)
    networks = [r.inputs for r in plan.of_type(NETWORK) if "-tcpxo-" in r.inputs["name"]]
    subnets = [r.inputs for r in plan.of_type(SUBNET) if "-tcpxo-" in r.inputs["name"]]
    assert len(networks) == len(subnets) == 8
    assert {n["mtu"] for n in networks} == {8244}
    assert all(not n["autoCreateSubnetworks"] for n in networks)
    assert {s["region"] for s in subnets} == {"us-central1"}
    cidrs = sorted(s["ipCidrRange"] for s in subnets)
    assert len(set(cidrs)) == 8 and all(c.startswith("192.168.") for c in cidrs)


def test_the_node_pool_attaches_every_gpu_network_in_order_and_is_compact() -> None:
    inputs = _node_pool(None)
    extra = inputs["networkConfig"]["additionalNodeNetworkConfigs"]
    assert [e["network"] for e in extra] == [f"gpufleet-gpudirect-tcpxo-a-{i}" for i in range(1, 9)]
    assert [e["subnetwork"] for e in extra] == [e["network"] for e in extra]
    assert inputs["placementPolicy"] == {"type": "COMPACT"}
    assert inputs["nodeLocations"] == ["us-central1-a"]
    assert inputs["nodeConfig"]["gvnic"] == {"enabled": True}


def test_a_pool_on_a_specific_reservation_takes_its_placement_not_compact() -> None:
    reservation = {
        "name": "projects/ml-training-prod/reservations/a3-mega-training",
        "zones": ["us-central1-a"],
        "machineType": "a3-megagpu-8g",
        "count": 4,
    }
    reserved = _pools(capacity="reserved", gcp={"reservation": reservation})
    inputs = _node_pool(reserved)
    assert "placementPolicy" not in inputs
    assert len(inputs["networkConfig"]["additionalNodeNetworkConfigs"]) == 8
    config = parse_config(_raw(capacity="reserved", gcp={"reservation": reservation}))
    facts = GCP.fabric_facts("a3-megagpu-8g")
    assert facts is not None
    fabric = GCP.pool_fabric(config, config.gpu_pools[0], facts, "us-central1-a")
    assert fabric.placement_max_nodes is None and "reservation" in fabric.placement


def test_a_plain_pool_beside_it_has_no_extra_networks_and_no_placement() -> None:
    inputs = _node_pool(_plain_pool_added(), "a3-plain")
    assert "networkConfig" not in inputs and "placementPolicy" not in inputs


def test_the_cluster_is_created_with_dataplane_v2_and_multi_networking_kept_after() -> None:
    (cluster,) = plan_of(STACK).of_type(CLUSTER)
    assert cluster.inputs["datapathProvider"] == "ADVANCED_DATAPATH"
    assert cluster.inputs["enableMultiNetworking"] is True
    assert {"datapathProvider", "enableMultiNetworking"} <= set(cluster.ignore_changes)
    (plain,) = plan_of("gcp-dev").of_type(CLUSTER)
    assert "datapathProvider" not in plain.inputs


def test_each_gpu_network_has_its_param_set_and_network_object() -> None:
    plan = plan_of(STACK)
    params = plan.of_type("kubernetes:networking.gke.io/v1:GKENetworkParamSet")
    objects = plan.of_type("kubernetes:networking.gke.io/v1:Network")
    assert len(params) == len(objects) == 8
    by_name = {p.inputs["metadata"]["name"]: p.inputs["spec"] for p in params}
    assert by_name["tcpxo-a-3"] == {
        "vpc": "gpufleet-gpudirect-tcpxo-a-3",
        "vpcSubnet": "gpufleet-gpudirect-tcpxo-a-3",
        "deviceMode": "NetDevice",
    }
    refs = {o.inputs["spec"]["parametersRef"]["name"] for o in objects}
    assert refs == set(by_name)


def test_the_tcpxo_installer_and_device_injector_land_on_fabric_pools_only() -> None:
    plan = plan_of(STACK, _plain_pool_added())
    daemonsets = {
        obj["metadata"]["name"]: obj
        for group in plan.of_type(CONFIG_GROUP)
        for obj in group.inputs.get("objs") or []
        if obj.get("kind") == "DaemonSet"
    }
    assert set(daemonsets) >= {"gpufleet-nccl-tcpxo-installer", "gpufleet-device-injector"}
    for name in ("gpufleet-nccl-tcpxo-installer", "gpufleet-device-injector"):
        terms = daemonsets[name]["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"]
        for term in terms:
            assert {"key": POOL_LABEL, "operator": "In", "values": ["a3-mega"]} in term[
                "matchExpressions"
            ]
    image = daemonsets["gpufleet-nccl-tcpxo-installer"]["spec"]["template"]["spec"][
        "initContainers"
    ][1]["image"]
    assert image.endswith("nccl-plugin-gpudirecttcpx-dev:v1.0.15")


def test_a_stack_without_fabric_pools_gets_none_of_it() -> None:
    plan = plan_of(STACK, _pools(interconnect="none"))
    assert not [r for r in plan.of_type(NETWORK) if "-tcpxo-" in r.inputs["name"]]
    assert not plan.of_type("kubernetes:networking.gke.io/v1:Network")
    assert "networkConfig" not in _node_pool(_pools(interconnect="none"))


def test_diff_turning_the_fabric_on_replaces_the_pool_and_refuses_the_cluster_change() -> None:
    before = plan_of(STACK, _pools(interconnect="none")).to_json()
    diff = diff_plans(before, plan_of(STACK).to_json())
    (pool,) = [c for c in diff.changed if c.type == NODE_POOL]
    assert pool.verdict == "replace"
    assert "networkConfig.additionalNodeNetworkConfigs" in pool.replace_paths
    assert "placementPolicy.type" in pool.replace_paths
    (cluster,) = [c for c in diff.changed if c.type == CLUSTER]
    assert cluster.verdict != "replace"
    text = render_text(diff)
    assert "Dataplane V2" in text and "created" in text


def _fabric_problems(**changes: Any) -> list[str]:
    try:
        parse_config(_raw(**changes))
    except ConfigError as refused:
        return [str(p) for p in refused.problems]
    return []


def test_a_fabric_pool_takes_one_zone_and_not_two() -> None:
    assert _fabric_problems(zones=["us-central1-a"]) == []
    (problem,) = _fabric_problems(zones=["us-central1-a", "us-central1-b"])
    assert problem.startswith("gpuPools[0].zones:") and "one zone" in problem


def test_the_nccl_test_carries_the_pools_annotations_and_the_tcpxo_sidecar() -> None:
    config = parse_config(_raw())
    pool_config = config.gpu_pools[0]
    facts = GCP.fabric_facts("a3-megagpu-8g")
    assert facts is not None and facts.resource is None
    fabric = GCP.pool_fabric(config, pool_config, facts, "us-central1-a")
    assert fabric.placement == "compact placement" and fabric.placement_max_nodes == 1500
    interfaces = json.loads(fabric.pod_annotations["networking.gke.io/interfaces"])
    assert [i["network"] for i in interfaces] == ["default"] + [f"tcpxo-a-{i}" for i in range(1, 9)]
    assert fabric.requested_by({}, fabric.pod_annotations)
    assert not fabric.requested_by({"nvidia.com/gpu": 8}, {})
    spec = resolve_pool(config, pool_config)
    test = GCP.nccl_test(config, dataclasses.replace(spec, fabric=fabric), 3)
    assert test is not None and test.expected is not None
    assert test.expected.collective == "all_gather" and test.expected.busbw_gbytes_per_s == 188.7
    pods = [m for m in test.manifests if m["kind"] == "Pod"]
    assert len(pods) == 3
    containers = [c["name"] for c in pods[0]["spec"]["containers"]]
    assert containers == ["tcpxo-daemon", "nccl-test"]
    assert pods[0]["metadata"]["annotations"] == dict(fabric.pod_annotations)
    assert "devices.gke.io/container.tcpxo-daemon" in fabric.pod_annotations
    assert pods[0]["spec"]["nodeSelector"] == {POOL_LABEL: "a3-mega"}
    assert test.result_command.endswith(
        "a3-mega-nccl-host-1 a3-mega-nccl-host-2 a3-mega-nccl-host-3"
    )


def test_every_gke_fabric_row_has_a_source_and_rdma_has_no_sidecar() -> None:
    for machine, (mode, facts) in gke_fabric.FABRICS.items():
        assert facts.machine_type == machine and facts.source
        assert gke_fabric.MODES[mode].kind == facts.kind
    rdma = gke_fabric.MODES["rdma"]
    assert rdma.sidecar is None and rdma.mtu == 8896 and rdma.rdma


def test_the_vendored_installers_are_googles_files_unchanged() -> None:
    for file, digest in gpudirect_installer.VENDORED_SHA256.items():
        data = (gpudirect_installer.DATA / file).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, file


def test_the_installers_and_the_nccl_test_validate_against_kubernetes() -> None:
    config = parse_config(_raw())
    version = config.cluster.kubernetes_version
    for manifest in gpudirect_installer.manifests(gke_fabric.fabric_groups(config)):
        kubernetes_validate.validate(manifest, version, strict=True)
    facts = GCP.fabric_facts("a3-megagpu-8g")
    assert facts is not None
    pool = config.gpu_pools[0]
    fabric = GCP.pool_fabric(config, pool, facts, "us-central1-a")
    test = GCP.nccl_test(config, dataclasses.replace(resolve_pool(config, pool), fabric=fabric), 2)
    assert test is not None
    for manifest in test.manifests:
        kubernetes_validate.validate(dict(manifest), version, strict=True)


def test_a_fabric_pool_with_a_capacity_list_is_refused_one_capacity_passes() -> None:
    # One capacity: one node pool holds the networks and the placement.
    parse_config(_raw(capacity="spot"))
    with pytest.raises(ConfigError) as refused:
        parse_config(_raw(capacity=["spot", "on-demand"]))
    assert [p.path for p in refused.value.problems] == ["gpuPools[0].capacity"]
    assert "a fabric pool is one node pool" in str(refused.value)


# --------------------------------------------------------------------------- day two (rev-gke6)

FIREWALL = "gcp:compute/firewall:Firewall"
A3_HIGH = {
    "name": "a3-high",
    "accelerator": "h100-80gb",
    "machineType": "a3-highgpu-8g",
    "maxNodes": 2,
    "zones": ["us-central1-a"],
    "diskSizeGb": 500,
    "interconnect": "fabric",
}


def _fabric_networks(overrides: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The GPU VPCs, subnets and firewalls of a plan, by URN."""
    plan = plan_of(STACK, overrides)
    return {
        r.urn: dict(r.inputs)
        for kind in (NETWORK, SUBNET, FIREWALL)
        for r in plan.of_type(kind)
        if "-tcpx" in r.inputs["name"] or "-rdma" in r.inputs["name"]
    }


@pytest.mark.parametrize(
    "added",
    [
        # ("tcpx", a) sorts before the running ("tcpxo", a): once, that moved its subnets.
        A3_HIGH,
        # Another zone, and an RDMA group sorting before tcpxo's key.
        {
            **A3_HIGH,
            "name": "a3-ultra",
            "machineType": "a3-ultragpu-8g",
            "accelerator": "h200-141gb",
            "zones": ["us-central1-b"],
            "capacity": "spot",
        },
    ],
    ids=["a3-high", "a3-ultra"],
)
def test_adding_or_removing_a_fabric_group_never_moves_a_running_subnet(
    added: dict[str, Any],
) -> None:
    running = _fabric_networks(None)
    both = {"gpufleet:gpuPools": [*_pools()["gpufleet:gpuPools"], added]}
    grown = _fabric_networks(both)
    assert len(grown) > len(running)
    assert {urn: grown[urn] for urn in running} == running
    # The way back: removing the first-sorting group leaves the other's subnets as they were.
    alone = {"gpufleet:gpuPools": [added]}
    kept = _fabric_networks(alone)
    assert {urn: grown[urn] for urn in kept} == kept
    diff = diff_plans(plan_of(STACK).to_json(), plan_of(STACK, both).to_json())
    assert not [c for c in diff.changed if c.type in (SUBNET, NETWORK, FIREWALL)]


def _with_gpu_subnet_range(cidr: str) -> dict[str, Any]:
    after = copy.deepcopy(plan_of(STACK).to_json())
    for resource in after["resources"]:
        if resource["type"] == SUBNET and resource["inputs"]["name"].endswith("-tcpxo-a-1"):
            resource["inputs"]["ipCidrRange"] = cidr
    return after


@pytest.mark.parametrize(
    ("cidr", "replaced"),
    [
        ("192.168.0.0/23", False),  # contains 192.168.0.0/24: the provider widens it in place
        ("192.168.0.0/16", False),
        ("192.168.0.0/25", True),  # shrunk
        ("192.168.16.0/24", True),  # moved
        ("192.168.1.0/23", True),  # wider, but not containing the old range (it is 1.0-2.255)
    ],
)
def test_diff_replaces_a_subnet_whose_new_range_does_not_contain_the_old(
    cidr: str, replaced: bool
) -> None:
    diff = diff_plans(plan_of(STACK).to_json(), _with_gpu_subnet_range(cidr))
    (subnet,) = [c for c in diff.changed if c.type == SUBNET]
    assert ("ipCidrRange" in subnet.replace_paths) is replaced
    if replaced:
        # Recreated under its own name while the old one (and the node pool's NICs) hold it.
        assert any("same name" in r for r in subnet.refusals), subnet.refusals
    else:
        assert subnet.verdict != "replace" and not subnet.refusals


def test_diff_refuses_only_turning_dataplane_v2_on_not_off() -> None:
    on, off = plan_of(STACK).to_json(), plan_of(STACK, _pools(interconnect="none")).to_json()
    (cluster,) = [c for c in diff_plans(off, on).changed if c.type == CLUSTER]
    assert [r.split(":")[0] for r in cluster.refusals] == [
        "datapathProvider",
        "enableMultiNetworking",
    ]
    assert "Not checked" in cluster.refusals[0]
    # On -> off: ignored on the running cluster, nothing sent, nothing refused.
    assert not [c for c in diff_plans(on, off).changed if c.type == CLUSTER and c.refusals]


def _adopted_with_fabric(world: World) -> str:
    """gcp-existing plus gcp-gpudirect's A3 Mega fabric pool, planned on the mock's cluster:
    what refuses it ("" when it plans)."""
    existing = load_stack("gcp-existing")
    pools = [*existing.gpufleet["gpuPools"], *_raw()["gpuPools"]]
    try:
        plan_stack(existing, {"gpufleet:gpuPools": pools}, world=world)
    except BadInput as refused:
        return str(refused)
    return ""


def test_an_adopted_cluster_needs_dataplane_v2_and_multi_networking_for_a_fabric_pool() -> None:
    assert _adopted_with_fabric(World("1.35.2")) == ""
    legacy = _adopted_with_fabric(World("1.35.2", gke_datapath_provider="LEGACY_DATAPATH"))
    assert "runs without Dataplane V2 (datapathProvider LEGACY_DATAPATH)" in legacy
    assert "a new cluster" in legacy and "--enable-multi-networking" not in legacy
    off = _adopted_with_fabric(World("1.35.2", gke_multi_networking=False))
    assert "multi-networking off" in off and "(a3-mega, interconnect: fabric)" in off
    assert (
        "gcloud container clusters update platform-prod --location us-central1 "
        "--enable-multi-networking" in off
    )
    # Without a fabric pool neither setting matters: gcp-existing plans on a legacy cluster.
    plan_stack(
        load_stack("gcp-existing"),
        world=World("1.35.2", gke_datapath_provider="LEGACY_DATAPATH", gke_multi_networking=False),
    )


def test_no_two_fabric_groups_of_a_cluster_have_overlapping_subnets() -> None:
    """GKE refuses Pod-networks of one cluster with overlapping ranges (GKE docs,
    setup-multinetwork-support-for-pods, General limitations): every (mode, zone letter) group
    has a block of its own, and TCPXO in zone a keeps the ranges the first stacks got."""
    subnets = []
    for mode in gke_fabric.MODES.values():
        for letter in "abcdefghijklmnop":
            group = gke_fabric._group("c", mode, f"us-central1-{letter}")
            subnets += [(mode.key, letter, ipaddress.ip_network(n.cidr)) for n in group.networks]
    for i, (mode, letter, net) in enumerate(subnets):
        for other_mode, other_letter, other in subnets[i + 1 :]:
            assert not net.overlaps(other), (mode, letter, other_mode, other_letter)
    first = gke_fabric._group("c", gke_fabric.MODES["tcpxo"], "us-central1-a")
    assert [n.cidr for n in first.networks] == [f"192.168.{n}.0/24" for n in range(8)]


def test_a_zone_letter_without_a_subnet_block_is_refused_at_its_edge() -> None:
    pool = parse_config(_raw()).gpu_pools[0]
    assert gke_fabric.zone_block_problems(pool, "us-central1-p", "gpuPools[0]") == []
    (problem,) = gke_fabric.zone_block_problems(pool, "us-central1-q", "gpuPools[0]")
    assert problem.path == "gpuPools[0].zones"
