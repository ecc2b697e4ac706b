"""Realistic config mistakes: every one reported at once, in the user's terms, none accepted."""

from __future__ import annotations

import copy
import datetime
from typing import Any

import pytest

from components.model.config import ConfigError, parse_config
from components.model.pools import resolve_pools
from components.tooling.stacks import load_stack

STACKS = {name: load_stack(name).gpufleet for name in ("gcp-dev", "aws-dev", "azure-dev")}


def stack(name: str = "gcp-dev") -> dict[str, Any]:
    return copy.deepcopy(STACKS[name])


def problems_of(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def test_a_type_error_in_the_cluster_hides_no_pool_problem() -> None:
    raw = stack()
    raw["cluster"]["zones"] = "us-central1-a"  # not a list
    raw["gpuPools"][0]["maxNodes"] = "lots"
    raw["gpuPools"][1]["machineType"] = "g2-standard-8"  # t4 pool: wrong machine
    raw["gpuPools"][1]["labels"] = {"team": "ml research"}
    raw["gpuSoftware"] = {"mode": "everything"}
    problems = problems_of(raw)
    assert len(problems) == 5, problems
    assert problems[0].startswith("cluster.zones: Input should be a valid list")
    assert any(p.startswith("gpuPools[0].maxNodes:") for p in problems)
    assert any(p.startswith("gpuPools[1].machineType: cannot carry t4 on gcp") for p in problems)
    assert any(p.startswith("gpuPools[1].labels.team: bad label value") for p in problems)
    assert any(p.startswith("gpuSoftware.mode:") for p in problems)


def test_what_could_not_be_read_raises_no_second_problem() -> None:
    raw = stack()
    raw["cluster"]["zones"] = 7
    for pool in raw["gpuPools"]:
        pool.pop("zones", None)
    # The pools' zones fall back to cluster.zones, which could not be read: no "zones required".
    assert problems_of(raw) == ["cluster.zones: Input should be a valid list (got 7)"]


def test_an_unknown_cloud_still_checks_the_pools() -> None:
    raw = stack()
    raw["cloud"] = "gke"
    raw["gpuPools"][0]["minNodes"] = 9
    problems = problems_of(raw)
    assert problems[0] == "cloud: must be one of gcp, aws, azure, existing (got 'gke')"
    assert any(p.startswith("gpuPools[0].minNodes: must be <= maxNodes") for p in problems)


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("cluster", "name"), "gpufleet-dev\n"),
        (("cluster", "name"), "gpufleet-dev "),
        (("gpuPools", 0, "name"), "l4-spot\n"),
        (("cluster", "region"), "us-central1\n"),
    ],
)
def test_names_with_trailing_whitespace_are_rejected(where: tuple[Any, ...], value: str) -> None:
    raw = stack()
    target: Any = raw
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    path = ".".join(str(k) for k in where).replace(".0.", "[0].")
    assert any(p.startswith(path) and repr(value) in p for p in problems_of(raw))


def test_a_label_value_with_a_trailing_newline_is_rejected() -> None:
    raw = stack()
    raw["gpuPools"][0]["labels"] = {"team": "ml\n"}
    assert any("labels.team: bad label value" in p for p in problems_of(raw))


@pytest.mark.parametrize(
    ("key", "camel"), [("min_nodes", "minNodes"), ("machine_type", "machineType")]
)
def test_snake_case_keys_are_unknown_with_the_right_spelling(key: str, camel: str) -> None:
    raw = stack()
    pool = raw["gpuPools"][0]
    pool[key] = pool.pop(camel, 1 if key == "min_nodes" else "g2-standard-8")
    (problem,) = problems_of(raw)
    assert problem.startswith(f"gpuPools[0].{key}: unknown key")
    assert problem.endswith(f"did you mean {camel}?")


def test_an_unquoted_version_says_to_quote_it() -> None:
    raw = stack()
    raw["cluster"]["kubernetesVersion"] = 1.30
    (problem,) = problems_of(raw)
    assert "quote it" in problem and "(got 1.3)" in problem
    assert "allowed:" in problem


def test_a_date_is_shown_as_written() -> None:
    raw = stack()
    raw["cluster"]["kubernetesVersion"] = datetime.date(2026, 11, 22)
    (problem,) = problems_of(raw)
    assert problem.endswith("(got 2026-11-22)")


def test_missing_cloud_is_required_not_none() -> None:
    raw = stack()
    del raw["cloud"]
    assert problems_of(raw) == ["cloud: is required: one of gcp, aws, azure, existing"]


@pytest.mark.parametrize("key", ["gpuSoftware", "samples", "gpuPools"])
def test_an_empty_block_means_the_defaults(key: str) -> None:
    raw = stack()
    raw[key] = None
    assert parse_config(raw).cloud == "gcp"


def test_a_wrong_region_is_one_problem_not_one_per_zone() -> None:
    raw = stack()
    raw["cluster"]["region"] = "us-centrall"
    assert problems_of(raw) == [
        "cluster.region: must be a GCP region such as us-central1 (got 'us-centrall')"
    ]


def test_a_default_is_shown_as_the_default() -> None:
    raw = stack()
    raw["gpuPools"] = [
        {
            "name": "v100",
            "accelerator": "v100",
            "machineType": "n1-standard-96",
            "zones": ["us-central1-a"],
        }
    ]
    (problem,) = problems_of(raw)
    assert problem.startswith("gpuPools[0].gpusPerNode: n1-standard-96 takes 8 attached")
    assert problem.endswith("(default 1)")


def test_gpus_per_node_is_checked_against_the_default_machine_type() -> None:
    raw = stack()
    raw["gpuPools"] = [
        {"name": "l4", "accelerator": "l4", "gpusPerNode": 4, "zones": ["us-central1-a"]}
    ]
    (problem,) = problems_of(raw)
    assert problem.startswith(
        "gpuPools[0].gpusPerNode: g2-standard-8 (the default machineType) always has 1 GPU(s)"
    )


def test_an_accelerator_newer_than_the_kubernetes_minor() -> None:
    raw = stack()
    raw["cluster"]["kubernetesVersion"] = "1.33"
    raw["gpuPools"] = [{"name": "rtx", "accelerator": "rtx-pro-6000", "zones": ["us-central1-a"]}]
    problems = problems_of(raw)
    assert any(
        problem.startswith(
            "gpuPools[0].accelerator: g4-standard-48 nodes need Kubernetes 1.34 or later on gcp"
        )
        for problem in problems
    ), problems
    raw["cluster"]["kubernetesVersion"] = "1.35"
    parse_config(raw)


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("podsCidr", "10.20.0.0/14,10.30.0.0/16", "must be one CIDR"),
        ("servicesCidr", "10.24.0.300/20", "must be an IPv4 CIDR"),
        ("servicesCidr", "10.10.0.0/24", "must not overlap subnetCidr"),
        ("masterCidr", "172.16.0.0/24", "must be an IPv4 CIDR /28"),
        ("masterAuthorizedCidrs", ["0.0.0.0/0", "office"], "masterAuthorizedCidrs[1]: must be"),
        ("project", "My_Project", "must be a project id"),
    ],
)
def test_gke_network_values_the_api_would_reject(key: str, value: Any, expected: str) -> None:
    raw = stack()
    raw["cluster"]["gcp"][key] = value
    (problem,) = problems_of(raw)
    assert expected in problem, problem


def test_gke_network_without_subnetwork() -> None:
    raw = stack()
    raw["cluster"]["gcp"]["network"] = "shared-vpc"
    (problem,) = problems_of(raw)
    assert problem.startswith("cluster.gcp.subnetwork: network and subnetwork go together")


def test_eks_public_endpoint_cidrs_are_checked() -> None:
    raw = stack("aws-dev")
    raw["cluster"]["aws"] = {
        **raw["cluster"].get("aws", {}),
        "publicEndpointCidrs": ["10.0.0.0/33"],
    }
    (problem,) = problems_of(raw)
    assert problem.startswith("cluster.aws.publicEndpointCidrs[0]: must be an IPv4 CIDR")


def test_gke_secondary_range_names_are_checked() -> None:
    raw = stack()
    raw["cluster"]["gcp"]["podsRangeName"] = "Pods"
    raw["cluster"]["gcp"]["servicesRangeName"] = "Pods"
    problems = problems_of(raw)
    assert problems[0].startswith("cluster.gcp.podsRangeName: must be a range name")
    assert problems[-1].startswith("cluster.gcp.servicesRangeName: must differ from podsRangeName")


def test_a_given_subnetwork_uses_the_named_secondary_ranges() -> None:
    from tests.conftest import plan_of

    overrides = {
        "gpufleet:cluster": {
            **STACKS["gcp-dev"]["cluster"],
            "gcp": {
                **STACKS["gcp-dev"]["cluster"]["gcp"],
                "network": "shared-vpc",
                "subnetwork": "gke-nodes",
                "podsRangeName": "gke-pods",
                "servicesRangeName": "gke-svc",
            },
        }
    }
    plan = plan_of("gcp-dev", overrides)
    (cluster,) = [r for r in plan.resources if r.type == "gcp:container/cluster:Cluster"]
    policy = cluster.inputs["ipAllocationPolicy"]
    assert policy["clusterSecondaryRangeName"] == "gke-pods"
    assert policy["servicesSecondaryRangeName"] == "gke-svc"
    assert cluster.inputs["subnetwork"] == "gke-nodes"
    assert not [r for r in plan.resources if r.type == "gcp:compute/subnetwork:Subnetwork"]


@pytest.mark.parametrize("value", ["2am", "24:00", "02:00:00", "2:00"])
def test_a_maintenance_start_time_is_hh_mm(value: str) -> None:
    raw = stack("azure-dev")
    raw["cluster"]["maintenance"] = {"startTime": value}
    (problem,) = problems_of(raw)
    assert problem.startswith("cluster.maintenance.startTime: must be a UTC time of day as HH:MM")


def test_aks_mig_sizes_are_those_aks_can_build() -> None:
    raw = stack("azure-dev")
    raw["gpuPools"] = [
        {
            "name": "h100mig",
            "accelerator": "h100-80gb",
            "machineType": "Standard_ND96isr_H100_v5",
            "migPartitionSize": "1g.20gb",
        }
    ]
    (problem,) = problems_of(raw)
    assert problem == (
        "gpuPools[0].migPartitionSize: AKS builds only these h100-80gb partitions: "
        "1g.10gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb (got '1g.20gb')"
    )
    raw["gpuPools"][0]["migPartitionSize"] = "1g.10gb"
    parse_config(raw)
    # MIG4g builds one 4g partition per GPU (review aks-2.md A-N4), and H200 sizes build theirs.
    raw["gpuPools"][0]["migPartitionSize"] = "4g.40gb"
    (h100,) = resolve_pools(parse_config(raw))
    raw["gpuPools"][0] |= {"accelerator": "h200-141gb", "machineType": "Standard_ND96isr_H200_v5", "migPartitionSize": "1g.18gb"}  # fmt: skip
    (h200,) = resolve_pools(parse_config(raw))
    assert (h100.gpus_allocatable, h200.gpus_allocatable) == (8, 56)


def test_aks_operator_driver_is_refused_with_mig_and_grid_sizes() -> None:
    raw = stack("azure-dev")
    raw["gpuSoftware"] = {"mode": "gpu-operator", "operatorDriver": True}
    raw["gpuPools"] = [
        {
            "name": "a100mig",
            "accelerator": "a100-80gb",
            "machineType": "Standard_NC24ads_A100_v4",
            "migPartitionSize": "1g.10gb",
        },
        {"name": "a10", "accelerator": "a10"},
    ]
    problems = problems_of(raw)
    assert len(problems) == 2
    assert "gpuPools[0] (a100mig) would never be partitioned" in problems[0]
    assert "Standard_NV36ads_A10_v5, whose virtual GPUs need the GRID driver" in problems[1]


def test_a_gke_zone_that_does_not_offer_the_accelerator() -> None:
    raw = stack()
    raw["gpuPools"][0]["zones"] = ["us-central1-a", "us-central1-f"]  # l4-spot
    (problem,) = problems_of(raw)
    assert problem.startswith(
        "gpuPools[0].zones: nvidia-l4 is not offered in us-central1-f; in us-central1 it is in "
        "us-central1-a, us-central1-b, us-central1-c"
    )


def test_no_control_plane_is_open_to_the_internet_by_default() -> None:
    for name, key in (
        ("aws-dev", "publicEndpointCidrs"),
        ("azure-dev", "apiServerAuthorizedCidrs"),
    ):
        raw = stack(name)
        cloud = raw["cloud"]
        del raw["cluster"][cloud][key]
        (problem,) = problems_of(raw)
        assert problem.startswith(f"cluster.{cloud}.{key}: is required on {cloud}")


def test_an_eks_endpoint_can_be_private_only() -> None:
    from tests.conftest import plan_of

    cluster = {**STACKS["aws-dev"]["cluster"]}
    cluster["aws"] = {**cluster["aws"], "publicEndpointCidrs": []}
    plan = plan_of("aws-dev", {"gpufleet:cluster": cluster})
    (eks,) = [r for r in plan.resources if r.type == "aws:eks/cluster:Cluster"]
    assert eks.inputs["vpcConfig"]["endpointPublicAccess"] is False
    assert eks.inputs["vpcConfig"]["endpointPrivateAccess"] is True


CLOUDS_TODAY = datetime.date(2026, 11, 22)


def test_a_minor_the_cloud_no_longer_creates_is_refused_with_its_dates() -> None:
    raw = stack("aws-dev")
    raw["cluster"]["kubernetesVersion"] = "1.32"  # EKS extended support to 2027-03-22
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, today=datetime.date(2027, 4, 1))
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.startswith("cluster.kubernetesVersion: EKS no longer creates Kubernetes 1.32")
    assert "2027-03-22" in problem


def test_a_minor_near_or_past_the_end_of_standard_support_is_a_warning() -> None:
    raw = stack("aws-dev")
    raw["cluster"]["kubernetesVersion"] = "1.34"  # EKS standard support to 2026-12-01
    (warning,) = version_warnings(parse_config(raw, today=CLOUDS_TODAY).warnings)
    assert warning.startswith("cluster.kubernetesVersion: EKS standard support for Kubernetes 1.34")
    raw["cluster"]["kubernetesVersion"] = "1.35"
    assert version_warnings(parse_config(raw, today=CLOUDS_TODAY).warnings) == []


@pytest.mark.parametrize("name", sorted(STACKS))
def test_the_shipped_minors_are_in_standard_support_on_the_clouds_calendar(name: str) -> None:
    assert version_warnings(parse_config(stack(name), today=CLOUDS_TODAY).warnings) == []


def version_warnings(warnings: tuple[str, ...]) -> list[str]:
    return [w for w in warnings if w.startswith("cluster.kubernetesVersion")]
