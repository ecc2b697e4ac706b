"""Regions and GPU machines per region or zone, checked against each cloud's dated table.

The tables are components/<cloud>/model/offerings.json (scripts/offerings.py writes them from
public sources). A region that does not exist, or a machine the region (or the pool's zones)
does not sell, is refused before anything is created; where a table has no answer, the config
carries a "not checked" warning that `plan` prints.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from components.model.config import ConfigError, parse_config
from components.model.registry import CLOUDS
from components.tooling.commands import BadInput
from components.tooling.engine import plan_stack
from components.tooling.stacks import load_stack, shipped_stacks
from scripts import offerings as script
from tests.conftest import plan_of

TABLES = {name: CLOUDS[name].offerings for name in ("gcp", "aws", "azure")}


def raw_of(stack: str) -> dict[str, Any]:
    return copy.deepcopy(load_stack(stack).gpufleet)


def problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def warnings(raw: dict[str, Any]) -> list[str]:
    return list(parse_config(raw).warnings)


def aws_in(region: str, pools: list[dict[str, Any]], stack: str = "aws-dev") -> dict[str, Any]:
    raw = raw_of(stack)
    raw["cluster"]["region"] = region
    raw["cluster"]["zones"] = [f"{region}a", f"{region}b"]
    raw["gpuPools"] = pools
    return raw


# --------------------------------------------------------------------------- the examples


@pytest.mark.parametrize("stack", ["aws-dev", "aws-existing"])
def test_an_aws_region_that_does_not_exist_is_refused_with_the_closest(stack: str) -> None:
    raw = aws_in("us-west-9", [{"name": "t4", "accelerator": "t4"}], stack)
    (problem,) = problems(raw)
    assert problem.startswith("cluster.region: not an AWS region (did you mean us-west-2, ")
    assert "boto/botocore botocore/data/partitions.json" in problem
    assert problem.endswith("(got 'us-west-9')")


@pytest.mark.parametrize("stack", ["azure-dev", "azure-existing"])
def test_an_azure_region_that_does_not_exist_is_refused_with_the_closest(stack: str) -> None:
    raw = raw_of(stack)
    raw["cluster"]["region"] = "eastus3"
    (problem,) = problems(raw)
    assert problem.startswith("cluster.region: not an Azure region (did you mean eastus, ")
    assert problem.endswith("(got 'eastus3')")


def test_a_gcp_region_that_does_not_exist_is_refused_with_the_closest() -> None:
    raw = raw_of("gcp-dev")
    raw["cluster"]["region"] = "us-centrall1"
    raw["cluster"]["zones"] = ["us-centrall1-a"]
    for pool in raw["gpuPools"]:
        pool["zones"] = ["us-centrall1-a"]
    (problem,) = problems(raw)
    assert problem.startswith("cluster.region: not a GCP region (did you mean us-central1")


def test_a_region_far_from_every_name_lists_them_all() -> None:
    raw = aws_in("zz-space-1", [{"name": "t4", "accelerator": "t4"}])
    (problem,) = problems(raw)
    assert "known: af-south-1, ap-east-1, " in problem and "us-west-2" in problem


def test_g6e_in_af_south_1_is_refused_with_the_regions_that_sell_it() -> None:
    raw = aws_in("af-south-1", [{"name": "l40s", "accelerator": "l40s"}])
    (problem,) = problems(raw)
    assert problem.startswith(
        "gpuPools[0].accelerator: g6e.xlarge (the default for l40s) is not offered in "
        "af-south-1; regions that sell it: ap-northeast-1, "
    )
    assert "us-east-1, us-east-2, us-west-2 (per skypilot-org/skypilot-catalog" in problem


def test_a_named_instance_type_the_region_does_not_sell_is_refused_at_its_key() -> None:
    pool = {"name": "l4", "accelerator": "l4", "machineTypes": ["g6.xlarge", "g6.2xlarge"]}
    (first, second) = problems(aws_in("af-south-1", [pool]))
    assert first.startswith("gpuPools[0].machineTypes[0]: g6.xlarge is not offered in af-south-1")
    assert second.startswith("gpuPools[0].machineTypes[1]: g6.2xlarge is not offered")


@pytest.mark.parametrize("stack", ["azure-dev", "azure-existing"])
def test_h100_in_brazilsouth_is_refused_with_the_regions_that_sell_it(stack: str) -> None:
    raw = raw_of(stack)
    raw["cluster"]["region"] = "brazilsouth"
    raw["gpuPools"] = [
        {"name": "h100", "accelerator": "h100-80gb", "machineType": "Standard_ND96isr_H100_v5"}
    ]
    (problem,) = problems(raw)
    assert problem.startswith(
        "gpuPools[0].machineType: Standard_ND96isr_H100_v5 is not offered in brazilsouth; "
        "regions that sell it: australiaeast, "
    )
    assert "westeurope" in problem and "zz_generated.pricing.go" in problem


def test_zones_in_an_azure_region_without_zones_are_refused() -> None:
    raw = raw_of("azure-dev")
    raw["cluster"]["region"] = "westus"
    found = problems(raw)
    assert found[0].startswith("cluster.zones: westus has no availability zones")
    assert [p.split(":")[0] for p in found] == [
        "cluster.zones",
        "gpuPools[0].zones",
        "gpuPools[1].zones",
    ]
    for pool in raw["gpuPools"]:
        del pool["zones"]
    del raw["cluster"]["zones"]
    assert parse_config(raw)  # regional pools are fine there


def test_more_zones_than_the_type_is_sold_in_are_refused_for_groups_per_zone() -> None:
    # p4de.24xlarge: two zone ids of us-east-1 (use1-az4, use1-az6) in the table.
    pool = {"name": "a100", "accelerator": "a100-80gb", "maxNodes": 3}
    zones = ["us-east-1a", "us-east-1b", "us-east-1c"]
    raw = aws_in("us-east-1", [{**pool, "zones": zones}])
    raw["cluster"]["zones"] = zones
    (problem,) = problems(raw)
    assert problem.startswith(
        "gpuPools[0].zones: p4de.24xlarge is offered in 2 zone(s) of us-east-1 "
        "(use1-az4, use1-az6), fewer than the 3 listed"
    )
    # Karpenter launches only where EC2 sells the type: no zone judgement there.
    raw["cluster"]["aws"]["provisioner"] = "karpenter"
    raw["gpuPools"][0]["minNodes"] = 0
    assert parse_config(raw)


def test_the_refusal_stops_the_real_program_before_anything_is_created() -> None:
    raw = aws_in("af-south-1", [{"name": "l40s", "accelerator": "l40s"}])
    with pytest.raises(BadInput, match=re.escape("g6e.xlarge (the default for l40s)")):
        plan_stack(load_stack("aws-dev"), {f"gpufleet:{k}": v for k, v in raw.items()})


# --------------------------------------------------------------------------- not checked, aloud


def test_gke_zones_of_an_accelerator_without_rows_are_said_not_checked() -> None:
    # Review gke-2 N9: G4 (nvidia-rtx-pro-6000) has no rows, so its zones cannot be judged.
    raw = raw_of("gcp-dev")
    raw["gpuPools"][1] = {"name": "g4", "accelerator": "rtx-pro-6000", "zones": ["us-central1-a"]}
    (said,) = warnings(raw)
    assert said.startswith(
        "gpuPools[1].zones: zones us-central1-a for nvidia-rtx-pro-6000 not checked: the zone "
        "table has no nvidia-rtx-pro-6000 rows at all"
    )
    assert "gcloud compute accelerator-types list" in said


def test_gke_zones_of_a_region_the_table_lacks_are_said_not_checked() -> None:
    raw = raw_of("gcp-dev")
    raw["cluster"].update(region="us-west2", zones=["us-west2-a", "us-west2-b"])
    raw["gpuPools"] = [{"name": "h100", "accelerator": "h100-80gb", "zones": ["us-west2-a"]}]
    (said,) = warnings(raw)
    assert "the zone table has no nvidia-h100-80gb rows for us-west2 (it lists" in said


def test_an_aws_region_the_offerings_do_not_cover_is_said_not_checked() -> None:
    raw = aws_in("sa-east-1", [{"name": "t4", "accelerator": "t4"}])
    (said,) = warnings(raw)
    assert said.startswith(
        "gpuPools[0]: instance types g4dn.xlarge in sa-east-1 not checked: the offerings table"
    )
    assert "aws ec2 describe-instance-type-offerings --region sa-east-1" in said


def test_an_azure_region_without_prices_is_said_not_checked() -> None:
    raw = raw_of("azure-dev")
    raw["cluster"]["region"] = "belgiumcentral"
    said = warnings(raw)
    assert any(
        w.startswith("gpuPools[0]: VM sizes Standard_NC4as_T4_v3 in belgiumcentral not")
        for w in said
    )


def test_aws_zones_a_type_misses_are_said_not_checked_with_the_zone_ids() -> None:
    # g6 is sold in four of us-east-1's six zone ids; zone names differ per account.
    pool = {"name": "l4", "accelerator": "l4", "zones": ["us-east-1a", "us-east-1b"]}
    (said,) = warnings(aws_in("us-east-1", [pool]))
    assert said == (
        "gpuPools[0].zones: zones us-east-1a, us-east-1b for g6.xlarge not checked: us-east-1's "
        "zones use1-az3 and use1-az5 do not offer it, and zone names map to zone ids differently "
        "in every account; `aws ec2 describe-availability-zones --region us-east-1` shows which "
        "of your zones are use1-az1, use1-az2, use1-az4, use1-az6; a group in another zone "
        "never launches"
    )


def test_a_planned_stack_prints_its_not_checked_lines() -> None:
    # The whole program: `plan` (and `pulumi up`) warn through Pulumi's log.
    said = [w for w in plan_of("aws-dev").warnings if " not checked: " in w]
    assert [w.split(":")[0] for w in said] == ["gpuPools[0].zones", "gpuPools[1].zones"]


# --------------------------------------------------------------------------- the examples


@pytest.mark.parametrize("stack", shipped_stacks())
def test_every_shipped_example_passes_its_region_and_offering_checks(stack: str) -> None:
    config = parse_config(load_stack(stack).gpufleet)
    cloud = CLOUDS[config.cloud]
    if cloud.offerings is None:
        return
    region = config.cluster.region or ""
    assert region in cloud.offerings.regions(), region
    for pool in config.gpu_pools:
        for machine in cloud.machines(pool):
            assert cloud.offered(machine, region) is True, (stack, machine.name)


# --------------------------------------------------------------------------- tables in step


def catalog_names(cloud: str) -> set[str]:
    rows = CLOUDS[cloud].catalog.rows
    return {r.gke_accelerator for r in rows} if cloud == "gcp" else {r.name for r in rows}


@pytest.mark.parametrize("cloud", ["aws", "azure"])
def test_every_catalog_machine_has_offering_rows_and_no_row_is_stale(cloud: str) -> None:
    machines = TABLES[cloud].table()["offerings"]["machines"]
    assert set(machines) == catalog_names(cloud)
    # A machine the source lists nowhere (Azure's ND H200 v5 is not in the Retail Prices
    # extract) is one the table cannot judge: said "not checked", never "not offered".
    sold_somewhere = next(region for where in machines.values() for region in where)
    for name in [name for name, where in machines.items() if not where]:
        machine = next(row for row in CLOUDS[cloud].catalog.rows if row.name == name)
        assert TABLES[cloud].offered(machine, sold_somewhere) is None, name


def test_every_gke_accelerator_of_the_catalog_has_a_zone_table() -> None:
    zones = TABLES["gcp"].table()["gpu_zones"]
    assert set(zones) == catalog_names("gcp")
    # Review gke-2 N9: the one without rows is said not checked (see above), never judged.
    assert [a for a, rows in zones.items() if not rows] == ["nvidia-rtx-pro-6000"]


@pytest.mark.parametrize("cloud", ["gcp", "aws", "azure"])
def test_the_table_names_its_sources_and_when_it_was_read(cloud: str) -> None:
    table = TABLES[cloud].table()
    assert re.fullmatch(r"20\d\d-\d\d-\d\d", table["read"])
    for source in table["sources"].values():
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]), source
        assert source["repository"] in script.LICENCES and source["licence"]
    # Every region the offerings speak for is a region the list knows.
    offered = table.get("offerings", {}).get("covered_regions", [])
    assert set(offered) <= TABLES[cloud].regions()


def test_the_aws_table_is_the_script_run_on_its_rows() -> None:
    # scripts/offerings.py turns the source's rows into the table: run it on rows rebuilt
    # from the table itself and get the same offerings back (the parser and the data agree).
    offerings = TABLES["aws"].table()["offerings"]
    rows = ["InstanceType,Region,AvailabilityZone"]
    for name, regions in offerings["machines"].items():
        rows += [f"{name},{r},{z}" for r, zones in regions.items() for z in zones]
    for region, zones in offerings["region_zone_ids"].items():
        rows += [f"r4.large,{region},{z}" for z in zones]
    rebuilt = script.aws_offerings("\n".join(rows), offerings["machines"])
    assert rebuilt == offerings


# --------------------------------------------------------------------------- the script's parsers


def test_the_script_keeps_zone_ids_and_drops_local_zones() -> None:
    csv_text = (
        "InstanceType,Region,AvailabilityZone\n"
        "g6.xlarge,us-west-2,usw2-az1\ng6.xlarge,us-west-2,usw2-lax1-az1\nm5.large,us-west-2,usw2-az4\n"
    )
    parsed = script.aws_offerings(csv_text, ["g6.xlarge", "p5.48xlarge"])
    assert parsed["machines"] == {"g6.xlarge": {"us-west-2": ["usw2-az1"]}, "p5.48xlarge": {}}
    assert parsed["region_zone_ids"] == {"us-west-2": ["usw2-az1", "usw2-az4"]}


def test_the_script_reads_regions_prices_and_zones() -> None:
    partitions = {
        "partitions": [
            {
                "id": "aws",
                "regionRegex": r"^(us|af)\-\w+\-\d+$",
                "regions": {"us-east-1": {}, "aws-global": {}, "af-south-1": {}},
            },
            {
                "id": "aws-iso",
                "regionRegex": r"^us\-iso\-\w+\-\d+$",
                "regions": {"us-iso-east-1": {}},
            },
        ]
    }
    assert script.aws_regions(partitions) == ["af-south-1", "us-east-1"]
    go = (
        "// generated at 2026-06-18T03:43:41Z\n"
        'initialOnDemandPrices["eastus"] = map[string]float64{\n'
        '    "Standard_NC4as_T4_v3": 0.526000, "Basic_A0": 0.018000,\n}\n'
        'initialOnDemandPrices["westus"] = map[string]float64{\n    "Basic_A0": 0.018000,\n}\n'
    )
    assert script.azure_offerings(go, ["Standard_NC4as_T4_v3"]) == {
        "generated": "2026-06-18T03:43:41Z",
        "covered_regions": ["eastus", "westus"],
        "machines": {"Standard_NC4as_T4_v3": ["eastus"]},
    }
    locations = [
        {"name": "westus", "metadata": {"regionType": "Physical"}, "availabilityZoneMappings": []},
        {
            "name": "eastus",
            "metadata": {"regionType": "Physical"},
            "availabilityZoneMappings": [{"logicalZone": "2"}, {"logicalZone": "1"}],
        },
        {"name": "europe", "metadata": {"regionType": "Logical"}},
    ]
    assert script.azure_regions(locations) == {"eastus": ["1", "2"], "westus": []}
    vms = (
        "InstanceType,AcceleratorName,AcceleratorCount,Region,AvailabilityZone\n"
        ",L4,1,us-central1,us-central1-a\ng2-standard-4,L4,1,us-central1,us-central1-f\n"
    )
    assert script.gcp_gpu_zones(vms, ["nvidia-l4"]) == {
        "nvidia-l4": {"us-central1": ["us-central1-a"]}
    }
    assert json.loads(json.dumps(script.SOURCES))  # every source is named
