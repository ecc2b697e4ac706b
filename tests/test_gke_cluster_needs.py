"""What the pools need of a GKE cluster's network and project, on the whole graph (review gke-3
N15, N17): the control plane reaches Kueue through a firewall rule gpufleet adds to its own VPC
(or names, where it cannot add it), and image streaming's API is enabled before the pools on a
cluster gpufleet creates (or said "not checked" on an adopted one).

Facts and sources: components/gcp/model/cluster_needs.py, components/model/kueue_ports.py.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from components.gcp.mock import ADOPTED_CONTROL_PLANE_CIDR
from components.gcp.model import cluster_needs
from components.model import kueue, kueue_ports
from components.tooling.engine import Plan, RecordedResource
from components.tooling.stacks import load_stack
from tests.conftest import plan_of
from tests.test_kueue import FACTS as KUEUE_FACTS_FILE

FIREWALL = "gcp:compute/firewall:Firewall"
SERVICE = "gcp:projects/service:Service"


def gpufleet(stack: str) -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(stack).gpufleet))


def overrides(stack: str, **sections: Any) -> dict[str, Any]:
    return {f"gpufleet:{key}": value for key, value in sections.items()}


def kueue_release(plan: Plan) -> RecordedResource:
    (release,) = [
        r for r in plan.of_type("kubernetes:helm.sh/v3:Release") if r.name.endswith("kueue-release")
    ]
    return release


def test_kueues_ports_are_the_charts() -> None:
    assert kueue.CHART_MANAGER_CONFIG["webhook"]["port"] == kueue_ports.WEBHOOK_PORT
    facts = json.loads(KUEUE_FACTS_FILE.read_text())
    chart_config = facts["values"]["managerConfig"]["controllerManagerConfigYaml"]
    assert chart_config["webhook"]["port"] == kueue_ports.WEBHOOK_PORT


def test_the_control_plane_reaches_kueue_through_a_rule_in_gpufleets_vpc() -> None:
    plan = plan_of("gcp-flex-start")
    (rule,) = plan.of_type(FIREWALL)
    (network,) = plan.of_type("gcp:compute/network:Network")
    (account,) = plan.of_type("gcp:serviceaccount/account:Account")
    inputs = rule.inputs
    # The network's id, as terraform-provider-google forms it (the mock cloud does too).
    assert (
        inputs["network"] == f"projects/ml-training-prod/global/networks/{network.inputs['name']}"
    )
    assert inputs["direction"] == "INGRESS"
    # From the control plane's private range only, to gpufleet's nodes only (Kueue runs on the
    # system pool, which carries the node service account), on Kueue's ports GKE does not open.
    assert inputs["sourceRanges"] == ["172.16.0.0/28"]
    assert inputs["allows"] == [{"protocol": "tcp", "ports": ["9443", "8082"]}]
    assert not set(inputs["allows"][0]["ports"]) & {"443", "10250"}
    assert inputs["targetServiceAccounts"] == [
        f"{account.inputs['accountId']}@mock-project.iam.gserviceaccount.com"
    ]
    assert "sourceTags" not in inputs and "targetTags" not in inputs
    # Kueue's release (and so its objects, which its webhooks admit) waits for the rule.
    assert rule.urn in kueue_release(plan).depends_on


def test_the_rule_follows_the_control_plane_range_and_exists_only_with_kueue() -> None:
    raw = gpufleet("gcp-flex-start")
    raw["cluster"]["gcp"]["masterCidr"] = "172.16.8.0/28"
    (rule,) = plan_of("gcp-flex-start", overrides("", cluster=raw["cluster"])).of_type(FIREWALL)
    assert rule.inputs["sourceRanges"] == ["172.16.8.0/28"]
    unqueued = [p for p in raw["gpuPools"] if p.get("capacity") != "queued"]
    plan = plan_of("gcp-flex-start", overrides("", gpuPools=unqueued, queues=None))
    assert plan.of_type(FIREWALL) == []
    assert plan_of("gcp-dev").of_type(FIREWALL) == []


def test_a_given_network_gets_no_rule_but_the_exact_one_to_add() -> None:
    raw = gpufleet("gcp-flex-start")
    raw["cluster"]["gcp"].update(
        network="projects/host/global/networks/shared",
        subnetwork="projects/host/regions/us-central1/subnetworks/gpu",
        masterCidr="172.16.4.0/28",
    )
    plan = plan_of("gcp-flex-start", overrides("", cluster=raw["cluster"]))
    assert plan.of_type(FIREWALL) == []
    (warning,) = [w for w in plan.warnings if "firewall-rules create" in w]
    assert warning.startswith("cluster.gcp.network:") and "not checked" in warning
    # The rule goes in the network's project, a Shared VPC's host (review gke-3.md R3-8).
    assert (
        "gcloud compute firewall-rules create gpufleet-dws-kueue-webhooks --project "
        "host --network projects/host/global/networks/shared --direction INGRESS "
        "--source-ranges 172.16.4.0/28 --allow tcp:9443,tcp:8082 --target-service-accounts "
        "<the stack's nodeIdentity output>"
    ) in warning


def test_the_rule_targets_a_given_node_account_and_a_network_by_name_is_the_projects() -> None:
    raw = gpufleet("gcp-flex-start")
    account = "gpu-nodes@ml-training-prod.iam.gserviceaccount.com"
    raw["cluster"]["gcp"].update(
        network="shared", subnetwork="gpu", masterCidr="172.16.4.0/28", nodeServiceAccount=account
    )
    plan = plan_of("gcp-flex-start", overrides("", cluster=raw["cluster"]))
    (warning,) = [w for w in plan.warnings if "firewall-rules create" in w]
    assert "--project ml-training-prod --network shared" in warning
    assert warning.endswith(f"--target-service-accounts {account}")


def adopted_with_a_queued_pool() -> dict[str, Any]:
    raw = gpufleet("gcp-existing")
    pools = raw["gpuPools"]
    queued = {k: v for k, v in pools[0].items() if k not in ("spot", "sharing")}
    pools[0] = {**queued, "capacity": "queued"}
    return overrides("", gpuPools=pools, queues={"namespaces": ["ml"]})


def test_an_adopted_private_cluster_gets_the_rule_its_owner_adds() -> None:
    plan = plan_of("gcp-existing", adopted_with_a_queued_pool())
    assert plan.of_type(FIREWALL) == []
    (warning,) = [w for w in plan.warnings if "firewall-rules create" in w]
    assert (
        "gcloud compute firewall-rules create platform-prod-kueue-webhooks --network "
        f"platform-vpc --direction INGRESS --source-ranges {ADOPTED_CONTROL_PLANE_CIDR} "
        "--allow tcp:9443,tcp:8082 --target-tags"
    ) in warning
    assert not any("firewall" in w for w in plan_of("gcp-existing").warnings)


def test_image_streaming_s_api_is_enabled_before_the_pools_and_never_disabled() -> None:
    plan = plan_of("gcp-dev")
    (service,) = plan.of_type(SERVICE)
    assert service.inputs["service"] == cluster_needs.IMAGE_STREAMING_API
    assert service.inputs["project"] == gpufleet("gcp-dev")["cluster"]["gcp"]["project"]
    # Destroying the stack leaves the project's API (and what depends on it) alone.
    assert service.inputs["disableOnDestroy"] is False
    assert service.inputs["disableDependentServices"] is False
    pools = [r for r in plan.resources if r.type == "gpufleet:gcp:GpuNodePool"]
    assert pools and all(service.urn in pool.depends_on for pool in pools)


def test_no_api_when_no_pool_streams() -> None:
    pools = gpufleet("gcp-dev")["gpuPools"]
    for pool in pools:
        pool.setdefault("gcp", {})["imageStreaming"] = False
    assert plan_of("gcp-dev", overrides("", gpuPools=pools)).of_type(SERVICE) == []


def test_an_adopted_cluster_s_project_api_is_said_not_checked() -> None:
    plan = plan_of("gcp-existing")
    assert plan.of_type(SERVICE) == []
    (warning,) = [w for w in plan.warnings if cluster_needs.IMAGE_STREAMING_API in w]
    assert warning.startswith("gpuPools[0], gpuPools[1]: ") and "not checked" in warning
    assert "--project platform-prod-project" in warning
    pools = gpufleet("gcp-existing")["gpuPools"]
    for pool in pools:
        pool["gcp"] = {"imageStreaming": False}
    quiet = plan_of("gcp-existing", overrides("", gpuPools=pools))
    assert not any(cluster_needs.IMAGE_STREAMING_API in w for w in quiet.warnings)


@pytest.mark.parametrize(
    ("network", "project"),
    [
        ("projects/host-proj-123/global/networks/shared", "host-proj-123"),
        (
            "https://www.googleapis.com/compute/v1/projects/host-proj-123/global/networks/shared",
            "host-proj-123",
        ),
        ("shared", None),
        ("projects", None),
    ],
)
def test_the_network_s_project_is_read_from_a_path_or_a_url(
    network: str, project: str | None
) -> None:
    """A Shared VPC network given as a full URL names its host project too (review gke-4 N4)."""
    from components.gcp.model.cluster_needs import network_project

    assert network_project(network) == project
