"""GKE settings the second review asked for (review gke-2.md N4, N5, N11, N14, S1-5, and cold
start), on the whole graph: each key's effect on the planned resources, and its refusals."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from components.gcp.node_identity import account_id
from components.model.config import ConfigError, parse_config
from components.tooling.cli import main
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
ACCOUNT = "gcp:serviceaccount/account:Account"
GRANT = "gcp:projects/iAMMember:IAMMember"
GIVEN_ACCOUNT = "gpu-nodes@platform-prod-project.iam.gserviceaccount.com"


def _cluster(stack: str, **gcp: Any) -> dict[str, Any]:
    cluster = copy.deepcopy(load_stack(stack).gpufleet["cluster"])
    cluster["gcp"] = {**cluster.get("gcp", {}), **gcp}
    return {"gpufleet:cluster": cluster}


def _problems(stack: str, cluster: dict[str, Any]) -> list[str]:
    raw = {**load_stack(stack).gpufleet, "cluster": cluster}
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(problem) for problem in caught.value.problems]


def test_the_autoscaling_profile_is_gkes_default_unless_the_stack_asks() -> None:
    (cluster,) = plan_of("gcp-dev").of_type(CLUSTER)
    assert cluster.inputs["clusterAutoscaling"]["autoscalingProfile"] == "BALANCED"
    packed = plan_of("gcp-dev", _cluster("gcp-dev", autoscalingProfile="OPTIMIZE_UTILIZATION"))
    (cluster,) = packed.of_type(CLUSTER)
    assert cluster.inputs["clusterAutoscaling"] == {
        "enabled": False,
        "autoscalingProfile": "OPTIMIZE_UTILIZATION",
    }
    wrong = _cluster("gcp-dev", autoscalingProfile="AGGRESSIVE")["gpufleet:cluster"]
    assert any(p.startswith("cluster.gcp.autoscalingProfile") for p in _problems("gcp-dev", wrong))


@pytest.mark.parametrize("tool", ["fiftyone", "flyte"])
def test_training_consumers_keep_their_running_jobs_from_consolidation(
    capsys: pytest.CaptureFixture[str], tool: str
) -> None:
    """A consolidating autoscaler evicts movable pods from underused nodes; a job that carries
    safe-to-evict "false" keeps its node (cluster-autoscaler FAQ; review gke-2.md N4)."""
    main(["consumers", "gcp-a100-mig", "--for", tool])
    values = yaml.safe_load(capsys.readouterr().out)
    keep = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}
    if tool == "fiftyone":
        jobs = values["delegatedOperatorJobTemplates"]["jobs"].values()
        assert jobs and all(job["podAnnotations"] == keep for job in jobs)
    else:
        assert values["plugins"]["k8s"]["default-annotations"] == keep


def test_karpenter_jobs_ask_karpenter_not_to_disrupt_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["consumers", "aws-karpenter", "--for", "fiftyone"])
    jobs = yaml.safe_load(capsys.readouterr().out)["delegatedOperatorJobTemplates"]["jobs"]
    assert all(
        job["podAnnotations"] == {"karpenter.sh/do-not-disrupt": "true"} for job in jobs.values()
    )


def test_a_given_node_service_account_means_no_account_and_no_project_grants() -> None:
    """Enterprise and adopted clusters: the platform team's account, no IAM admin needed on its
    project (review gke-2.md N5)."""
    for stack in ("gcp-dev", "gcp-existing"):
        plan = plan_of(stack, _cluster(stack, nodeServiceAccount=GIVEN_ACCOUNT))
        assert plan.of_type(ACCOUNT) == [] and plan.of_type(GRANT) == [], stack
        pools = plan.of_type(POOL)
        assert pools and all(
            pool.inputs["nodeConfig"]["serviceAccount"] == GIVEN_ACCOUNT for pool in pools
        )
        assert plan.outputs["nodeIdentity"] == GIVEN_ACCOUNT
    (cluster,) = plan_of("gcp-dev", _cluster("gcp-dev", nodeServiceAccount=GIVEN_ACCOUNT)).of_type(
        CLUSTER
    )
    assert cluster.inputs["nodeConfig"]["serviceAccount"] == GIVEN_ACCOUNT
    assert cluster.depends_on == ()  # no grants to wait for
    bad = _cluster("gcp-dev", nodeServiceAccount="nodes@example.com")["gpufleet:cluster"]
    assert any(
        p.startswith("cluster.gcp.nodeServiceAccount: must be a service account email")
        for p in _problems("gcp-dev", bad)
    )


def test_gpufleets_own_account_cannot_collide_with_another_clusters() -> None:
    """The same cluster name in two regions of a project, two long names sharing their first 24
    characters, and an owner's `<cluster>-nodes` account all differ from gpufleet's id; an
    account an earlier gpufleet created keeps its id (ignoreChanges)."""
    long_a, long_b = "training-cluster-for-team-a", "training-cluster-for-team-b"
    ids = {
        account_id("ml", "p", "us-central1"),
        account_id("ml", "p", "europe-west4"),
        account_id(long_a, "p", "us-central1"),
        account_id(long_b, "p", "us-central1"),
        "ml-nodes",
    }
    assert len(ids) == 5
    assert all(6 <= len(i) <= 30 for i in ids)
    for stack in ("gcp-dev", "gcp-existing"):
        (account,) = plan_of(stack).of_type(ACCOUNT)
        assert account.ignore_changes == ("accountId",)
        assert (
            account.inputs["accountId"] != f"{load_stack(stack).gpufleet['cluster']['name']}-nodes"
        )


def test_the_extended_channel_keeps_a_minor_past_standard_support() -> None:
    """1.33 left standard support on 2026-08-03: refused on REGULAR with the way out, accepted
    on EXTENDED (review gke-2.md N11)."""
    cluster = _cluster("gcp-dev")["gpufleet:cluster"]
    cluster["kubernetesVersion"] = "1.33"
    (problem,) = [p for p in _problems("gcp-dev", cluster) if "kubernetesVersion" in p]
    assert "set cluster.gcp.releaseChannel: EXTENDED" in problem
    cluster["gcp"]["releaseChannel"] = "EXTENDED"
    config = parse_config({**load_stack("gcp-dev").gpufleet, "cluster": cluster})
    assert any("extended" in warning for warning in config.warnings)


def test_the_system_pools_machine_is_checked_and_sized() -> None:
    """N4 and C3 system pools have their shapes; a typo or a GPU machine is refused (review
    gke-2.md N14)."""
    from components.model.pools import system_pool

    cluster = _cluster("gcp-dev")["gpufleet:cluster"]
    cluster["systemPool"] = {"machineType": "n4-standard-4"}
    spec = system_pool(parse_config({**load_stack("gcp-dev").gpufleet, "cluster": cluster}))
    assert spec is not None and (spec.vcpus, spec.memory_gib) == (4, 16.0)
    assert spec.allocatable_per_node["cpu"] == "3920m"
    for machine in ("n4-standrd-4", "g2-standard-8", "e2-standard-64"):
        cluster["systemPool"] = {"machineType": machine}
        (problem,) = _problems("gcp-dev", cluster)
        assert problem.startswith("cluster.systemPool.machineType: not a general-purpose")
        assert f"(got '{machine}')" in problem


def test_a_given_network_without_its_own_master_range_is_warned() -> None:
    """Every private cluster peered into one VPC needs its own /28 (review gke.md S1-5)."""
    base = load_stack("gcp-dev").gpufleet
    cluster = _cluster("gcp-dev", network="shared-vpc", subnetwork="gpu-nodes")["gpufleet:cluster"]
    warnings = parse_config({**base, "cluster": cluster}).warnings
    assert any(w.startswith("cluster.gcp.masterCidr: the default 172.16.0.0/28") for w in warnings)
    cluster["gcp"]["masterCidr"] = "172.16.8.0/28"
    assert not any("masterCidr" in w for w in parse_config({**base, "cluster": cluster}).warnings)
    assert not any("masterCidr" in w for w in parse_config(base).warnings)


def test_gpu_pools_stream_their_images_and_a_pool_may_turn_it_off() -> None:
    pools = {p.inputs["name"]: p for p in plan_of("gcp-dev").of_type(POOL)}
    assert pools["system"].inputs["nodeConfig"].get("gcfsConfig") is None
    for name in ("l4-spot", "t4"):
        assert pools[name].inputs["nodeConfig"]["gcfsConfig"] == {"enabled": True}
        # The default applies when a pool is created, never to a pool that exists.
        assert "nodeConfig.gcfsConfig" in pools[name].ignore_changes
    raw = copy.deepcopy(load_stack("gcp-dev").gpufleet["gpuPools"])
    raw[0]["gcp"] = {**raw[0].get("gcp", {}), "imageStreaming": False}
    pools = {
        p.inputs["name"]: p for p in plan_of("gcp-dev", {"gpufleet:gpuPools": raw}).of_type(POOL)
    }
    assert pools["l4-spot"].inputs["nodeConfig"]["gcfsConfig"] == {"enabled": False}
    assert "nodeConfig.gcfsConfig" not in pools["l4-spot"].ignore_changes


def _pool_problems(pool: dict[str, Any], software: str = "auto") -> list[str]:
    raw = {**load_stack("gcp-dev").gpufleet, "gpuPools": [pool]}
    raw["gpuSoftware"] = {"mode": software}
    try:
        parse_config(raw)
    except ConfigError as error:
        return [str(problem) for problem in error.problems]
    return []


def test_gkes_mps_takes_every_tesla_and_one_client_shares_nothing() -> None:
    """GKE runs MPS on every Tesla type, P4 and P100 included; NVIDIA's software (the GPU
    Operator) keeps the catalog's rule. One client per GPU is refused (review gke.md S5)."""
    p4 = {
        "name": "p4",
        "accelerator": "p4",
        "zones": ["us-central1-c"],
        "sharing": {"strategy": "mps", "maxSharedClientsPerGpu": 4},
    }
    assert _pool_problems(p4) == []
    assert any("p4 supports time-sharing" in p for p in _pool_problems(p4, "gpu-operator"))
    one = {
        **p4,
        "accelerator": "t4",
        "sharing": {"strategy": "time-sharing", "maxSharedClientsPerGpu": 1},
    }
    assert _pool_problems(one) == [
        "gpuPools[0].sharing.maxSharedClientsPerGpu: must be at least 2 on GKE (1 shares "
        "nothing: drop `sharing`) (got 1)"
    ]


def test_a_streaming_node_account_may_use_the_projects_services() -> None:
    """Nodes not on Compute Engine's default account stream only with Service Usage Consumer
    in the project that hosts the images (GKE image-streaming requirements; review gke-3.md
    R3-5): gpufleet grants it to its own account while a pool streams, and says "not checked"
    for a given account, which it never grants anything."""
    role = "roles/serviceusage.serviceUsageConsumer"
    for stack in ("gcp-dev", "gcp-existing"):
        plan = plan_of(stack)
        (grant,) = [g for g in plan.of_type(GRANT) if g.inputs["role"] == role]
        assert grant.inputs["project"] == load_stack(stack).gpufleet["cluster"]["gcp"]["project"]
        (account,) = plan.of_type(ACCOUNT)
        assert grant.inputs["member"] == f"serviceAccount:{plan.outputs['nodeIdentity']}"
        assert account.inputs["accountId"] in grant.inputs["member"]
    off = copy.deepcopy(load_stack("gcp-dev").gpufleet["gpuPools"])
    for pool in off:
        pool["gcp"] = {**pool.get("gcp", {}), "imageStreaming": False}
    quiet = plan_of("gcp-dev", {"gpufleet:gpuPools": off})
    assert not [g for g in quiet.of_type(GRANT) if g.inputs["role"] == role]
    given = plan_of("gcp-dev", _cluster("gcp-dev", nodeServiceAccount=GIVEN_ACCOUNT))
    (warning,) = [w for w in given.warnings if role in w]
    assert warning.startswith("gpuPools[0], gpuPools[1]: image streaming needs the nodes' account")
    assert "not checked" in warning and f"serviceAccount:{GIVEN_ACCOUNT}" in warning
    default = "123456789012-compute@developer.gserviceaccount.com"
    compute = plan_of("gcp-dev", _cluster("gcp-dev", nodeServiceAccount=default))
    assert not [w for w in compute.warnings if role in w]
