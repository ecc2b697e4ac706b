"""EKS GPU pools on reserved capacity (issue 25): On-Demand Capacity Reservations and Capacity
Blocks under Karpenter and on the cluster autoscaler's node groups, queued pools with
all-or-nothing scale-up, and everything gpufleet refuses, warns about, prices and diffs for them.

Plans: aws-reserved and aws-training (shipped, cached), and one aws-dev variant with a queued
pool and a self-managed pool on a reservation.
"""

from __future__ import annotations

import copy
import json
from datetime import date
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from components.aws.model import karpenter, provisioning_requests
from components.model import karpenter_pool
from components.model.catalog import charts
from components.model.catalog.provisioning import BEST_EFFORT_ATOMIC
from components.model.config import ConfigError, parse_config
from components.model.cost import stack_cost
from components.model.pools import resolve_pool
from components.tooling.capacity_fit import Workload
from components.tooling.commands import load_validated
from components.tooling.diff import diff_plans, render_text
from components.tooling.fit import fit_check
from components.tooling.pool_views import pool_checks
from components.tooling.scheduling.workloads import read_workloads
from components.tooling.stacks import load_stack
from tests.conftest import PINNED_TODAY, SHARED_REFERENCE, plan_of

NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
GROUP = "aws:autoscaling/group:Group"
KARPENTER_FACTS = Path(__file__).resolve().parent / "data" / "karpenter_facts.json"
ODCR = "cr-0a1b2c3d4e5f60718"
BLOCK = "cr-0f1e2d3c4b5a69788"
TRAINING_BLOCK = "cr-0123456789abcdef0"
DEV_ODCR = "cr-00112233445566778"


def raw_of(stack: str) -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(stack).gpufleet))


def problems_of(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def crd(kind: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(KARPENTER_FACTS.read_text())["crds"][kind]
    return schema


def by_name(plan: Any, kind: str) -> dict[str, Any]:
    return {r.name: r for r in plan.of_type(kind)}


def requirement(document: dict[str, Any], key: str) -> list[str] | None:
    for item in document["spec"]["template"]["spec"]["requirements"]:
        if item["key"] == key:
            return list(item["values"])
    return None


# --- Karpenter ----------------------------------------------------------------------------


def test_karpenter_prefers_the_reservations_and_falls_back_as_the_pool_says() -> None:
    plan = plan_of("aws-reserved")
    pools = {r.inputs["metadata"]["name"]: dict(r.inputs) for r in plan.of_type(NODE_POOL)}
    classes = {r.inputs["metadata"]["name"]: dict(r.inputs) for r in plan.of_type(NODE_CLASS)}
    # h100: [reserved, on-demand] -- the reservation first, then on-demand, never Spot.
    assert requirement(pools["h100"], karpenter_pool.CAPACITY_TYPE_LABEL) == [
        "reserved",
        "on-demand",
    ]
    # h200: capacity-block alone -- Karpenter's `reserved`, nothing to fall back to.
    assert requirement(pools["h200"], karpenter_pool.CAPACITY_TYPE_LABEL) == ["reserved"]
    assert classes["h100"]["spec"]["capacityReservationSelectorTerms"] == [{"id": ODCR}]
    assert classes["h200"]["spec"]["capacityReservationSelectorTerms"] == [{"id": BLOCK}]
    for document in pools.values():
        jsonschema.validate(document, crd("NodePool"))
    for document in classes.values():
        jsonschema.validate(document, crd("EC2NodeClass"))
    # Only reserved pools select reservations: an aws-karpenter node class selects none.
    for resource in plan_of("aws-karpenter").of_type(NODE_CLASS):
        assert "capacityReservationSelectorTerms" not in resource.inputs["spec"]
    # What fit and the autoscaler see: h200's nodes are all `reserved`.
    labels = {p["name"]: p["nodeLabels"] for p in plan.outputs["gpuPools"]}
    assert labels["h200"][karpenter_pool.CAPACITY_TYPE_LABEL] == "reserved"
    assert karpenter_pool.CAPACITY_TYPE_LABEL not in labels["h100"]  # reserved or on-demand


def test_the_reserved_capacity_gate_is_on_in_the_pinned_chart_and_stated() -> None:
    facts = json.loads(KARPENTER_FACTS.read_text())
    assert facts["values"]["settings"]["featureGates"]["reservedCapacity"] is True
    (release,) = [
        r for r in plan_of("aws-reserved").resources if r.name.endswith("-karpenter-release")
    ]
    assert release.inputs["values"]["settings"]["featureGates"]["reservedCapacity"] is True


def test_karpenter_orders_tags_and_the_crds_limits() -> None:
    """Every order Karpenter builds maps to its own capacity types in the order it tries them;
    tags select as one term; the CRD refuses what the config checks refuse first."""
    assert karpenter_pool.capacity_types(("reserved", "spot", "on-demand"), False) == (
        "reserved",
        "spot",
        "on-demand",
    )
    assert karpenter_pool.capacity_types(("capacity-block", "spot"), False) == ("reserved", "spot")
    assert karpenter_pool.capacity_types(("spot",), True) == ("spot", "on-demand")
    assert karpenter_pool.capacity_types(("on-demand",), False) == ("on-demand",)
    raw = raw_of("aws-reserved")
    raw["gpuPools"][0]["capacity"] = ["reserved", "spot", "on-demand"]
    raw["gpuPools"][0]["aws"]["capacityReservationTags"] = {"team": "ml", "purpose": "*"}
    config = parse_config(raw)
    from components.aws.model import capacity

    terms = capacity.selector_terms(config.gpu_pools[0])
    assert terms == [{"id": ODCR}, {"tags": {"purpose": "*", "team": "ml"}}]
    document = karpenter.ec2_node_class(
        "h100",
        family="al2023",
        node_role="r",
        disk_size_gb=100,
        tags={},
        subnet_ids=["subnet-0a1b2c3d"],
        security_group_ids=["sg-0a1b2c3d"],
        capacity_reservations=terms,
    )
    jsonschema.validate(document, crd("EC2NodeClass"))
    broken = copy.deepcopy(document)
    broken["spec"]["capacityReservationSelectorTerms"][0]["id"] = "cr_0a1b"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, crd("EC2NodeClass"))


# --- node groups ----------------------------------------------------------------------------


def test_a_capacity_block_managed_group_launches_into_the_block_only() -> None:
    plan = plan_of("aws-training")
    groups = by_name(plan, NODE_GROUP)
    (block,) = [g for name, g in groups.items() if "-h100-block-" in name]
    assert block.inputs["capacityType"] == "CAPACITY_BLOCK"
    # The instance type is the template's: EKS refuses it on the group then.
    assert "instanceTypes" not in block.inputs
    assert block.inputs["subnetIds"] == ["subnet-gpufleet-training-network-private-us-west-2a"]
    assert block.inputs["scalingConfig"]["minSize"] == 0
    templates = by_name(plan, TEMPLATE)
    template = templates["gpufleet-training-h100-block-template"].inputs
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": TRAINING_BLOCK}
    }
    assert template["instanceType"] == "p5.48xlarge"
    # The on-demand h100 groups are as before.
    on_demand = groups["gpufleet-training-h100-us-west-2a"].inputs
    assert on_demand["capacityType"] == "ON_DEMAND" and on_demand["instanceTypes"]
    plain = templates["gpufleet-training-h100-template"].inputs
    assert "instanceMarketOptions" not in plain and "capacityReservationSpecification" not in plain
    # The scheduler's and fit's view: the nodes carry EKS's capacity type label.
    config = parse_config(raw_of("aws-training"))
    spec = resolve_pool(config, config.gpu_pools[2])
    assert spec.node_labels["eks.amazonaws.com/capacityType"] == "CAPACITY_BLOCK"


QUEUED_DEV: dict[str, Any] = {}


def queued_dev() -> dict[str, Any]:
    """aws-dev with t4-spot queued and l4 on a reservation in one zone (self-managed)."""
    if not QUEUED_DEV:
        pools = raw_of("aws-dev")["gpuPools"]
        pools[0].pop("spot")
        pools[0]["capacity"] = "queued"
        pools[1].update(
            zones=["us-east-1a"],
            capacity="reserved",
            aws={"capacityReservations": [{"id": DEV_ODCR, "instanceCount": 1}]},
        )
        QUEUED_DEV["gpufleet:gpuPools"] = pools
    return QUEUED_DEV


def test_a_self_managed_group_targets_its_reservation_and_nothing_else() -> None:
    plan = plan_of("aws-dev", queued_dev())
    (group,) = [g for name, g in by_name(plan, GROUP).items() if "-l4-" in name]
    # The template alone, with the reservation's one instance type: no mixed instances.
    assert "mixedInstancesPolicy" not in group.inputs
    assert group.inputs["launchTemplate"]["id"]
    (template,) = [t for name, t in by_name(plan, TEMPLATE).items() if "-l4-" in name]
    assert template.inputs["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": DEV_ODCR}
    }
    assert template.inputs["instanceType"] == "g6.xlarge"
    assert "instanceMarketOptions" not in template.inputs


def test_a_queued_pool_gets_all_or_nothing_scale_up_from_the_cluster_autoscaler() -> None:
    plan = plan_of("aws-dev", queued_dev())
    (release,) = [r for r in plan.resources if r.name == "gpufleet-dev-autoscaler-release"]
    values = release.inputs["values"]
    assert values["extraArgs"]["enable-provisioning-requests"] is True
    assert {
        "apiGroups": ["autoscaling.x-k8s.io"],
        "resources": ["provisioningrequests"],
        "verbs": ["delete"],
    } in values["rbac"]["additionalRules"]
    (crd_file,) = plan.of_type("kubernetes:yaml/v2:ConfigFile")
    tag = charts.CLUSTER_AUTOSCALER_IMAGE_TAGS["1.35"]
    assert crd_file.inputs["file"] == provisioning_requests.crd_url(tag)
    assert provisioning_requests.RELEASE_COMMITS[tag] in crd_file.inputs["file"]
    assert crd_file.urn in release.dependencies  # the autoscaler watches them from its start
    # Kueue starts after the CRD (it sets its admission check up only if the CRD is served).
    (kueue,) = [r for r in plan.resources if r.name == "gpufleet-dev-kueue-release"]
    assert crd_file.urn in kueue.dependencies
    (config,) = [r for r in plan.resources if r.inputs.get("kind") == "ProvisioningRequestConfig"]
    assert config.inputs["spec"]["provisioningClassName"] == BEST_EFFORT_ATOMIC.name
    # Without a queued pool, none of it.
    plain = plan_of("aws-dev")
    assert not plain.of_type("kubernetes:yaml/v2:ConfigFile")
    (release,) = [r for r in plain.resources if r.name == "gpufleet-dev-autoscaler-release"]
    assert "enable-provisioning-requests" not in release.inputs["values"]["extraArgs"]


CHART_VALUES = SHARED_REFERENCE / "helm" / "cluster-autoscaler" / "values.yaml"


@pytest.mark.skipif(not CHART_VALUES.is_file(), reason="../shared/reference/helm is absent")
def test_the_queued_autoscaler_values_are_keys_of_the_pinned_chart() -> None:
    from components.kubernetes import chart_values

    plan = plan_of("aws-dev", queued_dev())
    (release,) = [r for r in plan.resources if r.name == "gpufleet-dev-autoscaler-release"]
    defaults = yaml.safe_load(CHART_VALUES.read_text())
    passthrough = ("extraArgs", "nodeSelector", "podAnnotations", "expanderPriorities")
    unknown = chart_values.unknown_keys(release.inputs["values"], defaults, passthrough=passthrough)
    assert unknown == []
    assert defaults["rbac"]["additionalRules"] == []


# --- what is refused, with what to do -------------------------------------------------------


def test_every_bad_reservation_under_karpenter_is_refused_at_once() -> None:
    raw = raw_of("aws-reserved")
    h100, h200 = raw["gpuPools"]
    bad = [
        # Karpenter tries Spot before on-demand whatever the order.
        {**h100, "name": "a", "capacity": ["reserved", "on-demand", "spot"]},
        {**h100, "name": "b", "capacity": "queued", "aws": {}},
        {**h100, "name": "c", "capacity": "reserved", "aws": {}},
        {
            **h100,
            "name": "d",
            "aws": {
                "capacityReservations": [
                    {"id": ODCR, "zone": "us-east-1c", "instanceType": "p5en.48xlarge"},
                    {"id": ODCR, "endTime": "2027-01-01T00:00:00Z"},
                    {"id": "cr-nope"},
                ],
                "capacityReservationTags": {"team": ""},
            },
        },
        {**h200, "name": "e", "aws": {"capacityReservations": [{"id": BLOCK, "endTime": "soon"}]}},
        # A Capacity Block on a Spot pool.
        {
            **h200,
            "name": "f",
            "spot": True,
            "capacity": "spot",
            "aws": {"capacityReservations": [{"id": BLOCK}]},
        },
        {**h200, "name": "g", "capacity": ["capacity-block", "reserved"]},
    ]
    raw["gpuPools"] = bad
    found = problems_of(raw)
    expected = [
        "gpuPools[0].capacity: not supported on aws yet; supported here: on-demand, spot, "
        "reserved, [reserved, on-demand], [reserved, spot], [reserved, spot, on-demand], "
        "capacity-block,",
        "Karpenter tries reserved capacity first, then Spot, then on-demand, whatever the order "
        "written: write [reserved, spot, on-demand] (got ['reserved', 'on-demand', 'spot'])",
        "gpuPools[1].capacity: not supported on aws yet;",
        "Karpenter serves no ProvisioningRequest (Karpenter has no ProvisioningRequest "
        "controller; EKS Auto Mode runs Karpenter), so Kueue's admission check would wait "
        "forever; queued pools need cluster.aws.provisioner: cluster-autoscaler (got 'queued')",
        "gpuPools[2].aws.capacityReservations: is required with capacity reserved: the "
        "On-Demand Capacity Reservations the pool launches into, each as {id: cr-...}",
        "gpuPools[3].aws.capacityReservations[0].zone: not among the pool's zones "
        "['us-east-1a', 'us-east-1b']: the NodePool would never launch into "
        f"{ODCR}; add the zone to the pool (or cluster.zones) (got 'us-east-1c')",
        "gpuPools[3].aws.capacityReservations[0].instanceType: not among the pool's machine "
        "types ['p5.48xlarge']",
        f"gpuPools[3].aws.capacityReservations[1].id: repeats "
        f"gpuPools[3].aws.capacityReservations[0] (got '{ODCR}')",
        "gpuPools[3].aws.capacityReservations[1].endTime: is for Capacity Blocks",
        "gpuPools[3].aws.capacityReservations[2].id: must be a capacity reservation id such as "
        "cr-0123456789abcdef0",
        "gpuPools[3].aws.capacityReservationTags: tag keys and values must not be empty",
        "gpuPools[4].aws.capacityReservations[0].endTime: must be the block's end in UTC, ISO "
        "8601, such as 2026-12-10T11:30:00Z",
        "gpuPools[5].aws.capacityReservations: applies only to a pool whose capacity starts "
        "with reserved or capacity-block; this pool's is spot (Spot instances never run in a "
        "reservation)",
        "gpuPools[6].capacity: not supported on aws yet;",
        "a pool launches into reserved capacity or capacity-blocks, not both",
    ]
    for text in expected:
        assert any(text in problem for problem in found), (text, found)


def test_every_bad_reservation_on_node_groups_is_refused_at_once() -> None:
    raw = raw_of("aws-training")
    h100, _, block = raw["gpuPools"]
    entry = block["aws"]["capacityReservations"][0]
    raw["gpuPools"] = [
        # Self-managed, two zones, two types, a minimum, and the block in another zone.
        {
            **block,
            "name": "a",
            "minNodes": 1,
            "zones": ["us-west-2a", "us-west-2b"],
            "machineTypes": ["p5.48xlarge", "p5.4xlarge"],
            "aws": {"capacityReservations": [entry]},
        },
        {
            **block,
            "name": "b",
            "zones": ["us-west-2c"],
            "aws": {
                "nodeGroup": "managed",
                "capacityReservations": [{**entry, "instanceType": "p5e.48xlarge"}],
            },
        },
        {
            **h100,
            "name": "c",
            "capacity": ["reserved", "on-demand"],
            "aws": {"nodeGroup": "managed", "capacityReservations": [entry]},
        },
        {
            **h100,
            "name": "d",
            "zones": ["us-west-2a"],
            "capacity": "reserved",
            "aws": {
                "capacityReservations": [entry, {"id": "cr-0123456789abcdef1"}],
                "capacityReservationTags": {"team": "ml"},
            },
        },
    ]
    found = problems_of(raw)
    expected = [
        "gpuPools[0].aws.nodeGroup: Capacity Blocks need an EKS managed node group here",
        "gpuPools[0].minNodes: a Capacity Block pool must be able to reach 0 nodes",
        "gpuPools[0].zones: a reservation is in one zone and a node group launches into it "
        "only there: give the pool that one zone (us-west-2a)",
        "gpuPools[0].machineTypes: a reservation is for one instance type: give the pool only "
        "the reservation's (p5.48xlarge)",
        "gpuPools[1].aws.capacityReservations[0].zone: is not the pool's zone us-west-2c: no "
        f"instance of the pool could launch into {TRAINING_BLOCK}; make the pool's zones "
        "[us-west-2a]",
        "gpuPools[1].aws.capacityReservations[0].instanceType: is not the pool's machine type "
        "p5.48xlarge",
        "gpuPools[2].capacity: not supported on aws yet; supported here: on-demand, spot, "
        "reserved, capacity-block, queued; EKS owns a managed node group's Auto Scaling group "
        "and takes no Capacity Reservation preference for it",
        "gpuPools[3].aws.capacityReservationTags: only Karpenter selects reservations by tag",
        "gpuPools[3].aws.capacityReservations: a node group's launch template targets one "
        "reservation: list exactly one",
    ]
    for text in expected:
        assert any(text in problem for problem in found), (text, found)


def test_auto_mode_and_an_owners_autoscaler_refuse_with_the_reason() -> None:
    raw = raw_of("aws-auto-mode")
    raw["gpuPools"][0].pop("spot", None)
    raw["gpuPools"][0]["capacity"] = "capacity-block"
    raw["gpuPools"][0]["aws"] = {"capacityReservations": [{"id": BLOCK}]}
    (refused,) = [p for p in problems_of(raw) if p.startswith("gpuPools[0].capacity")]
    # Reserved capacity is built there (tests/test_auto_mode_reserved.py); Capacity Blocks not.
    assert "on EKS Auto Mode gpufleet builds reserved and [reserved, on-demand]" in refused
    assert "not yet Capacity Blocks or Spot after a reservation: for those use " in refused
    raw = raw_of("aws-existing")
    raw["cluster"]["existing"]["autoscalerInstalled"] = True
    raw["gpuPools"][0].pop("spot")
    raw["gpuPools"][0]["capacity"] = "queued"
    (problem,) = problems_of(raw)
    assert problem.startswith(
        "gpuPools[0].capacity: a queued pool needs a cluster autoscaler started with "
        "--enable-provisioning-requests=true and the ProvisioningRequest CRD; this cluster's "
        "autoscaler is its owner's"
    )


def test_a_karpenter_gpufleet_does_not_run_is_said_not_checked() -> None:
    raw = raw_of("aws-existing")
    raw["cluster"]["aws"] = {"provisioner": "karpenter"}
    raw["cluster"]["existing"] = {"autoscalerInstalled": True, "karpenterNodeRole": "nodes"}
    raw["gpuPools"] = [raw_of("aws-reserved")["gpuPools"][0]]
    raw["gpuPools"][0]["zones"] = ["us-east-1a"]
    raw["gpuPools"][0]["aws"]["onDemandFallback"] = True
    assert any(
        "pool with a capacity list writes its fallbacks there (e.g. [reserved, spot, on-demand])"
        in p
        for p in problems_of(raw)
    )
    del raw["gpuPools"][0]["aws"]["onDemandFallback"]
    (warning,) = [w for w in parse_config(raw).warnings if "reservedCapacity" in w]
    assert warning.startswith(
        "gpuPools[0].capacity: not checked: the Karpenter this cluster runs must be 1.3 or later "
        "(1.6 for Capacity Blocks) with its reservedCapacity feature gate on"
    )


# --- the end of a Capacity Block --------------------------------------------------------------


def warnings_on(raw: dict[str, Any], today: date) -> list[str]:
    return [w for w in parse_config(raw, today).warnings if "capacityReservations" in w]


def test_plan_warns_as_a_capacity_blocks_end_nears(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = raw_of("aws-reserved")  # the block ends 2027-01-14 11:30 UTC
    assert warnings_on(raw, PINNED_TODAY) == []
    assert warnings_on(raw, date(2027, 1, 6)) == []  # 8 days ahead
    (near,) = warnings_on(raw, date(2027, 1, 7))
    assert near == (
        f"gpuPools[1].aws.capacityReservations[0].endTime: Capacity Block {BLOCK} ends in 7 "
        "days (2027-01-14 11:30 UTC): 40 minutes before, its nodes are drained (EKS scales the "
        "group to 0; Karpenter drains them) and 30 minutes before, EC2 terminates whatever "
        "still runs; checkpoint long jobs before, and point the pool at a new block"
    )
    assert "ends today" in warnings_on(raw, date(2027, 1, 14))[0]
    assert (
        "ended 2027-01-14 11:30 UTC: nothing launches into it any more"
        in (warnings_on(raw, date(2027, 1, 15))[0])
    )
    del raw["gpuPools"][1]["aws"]["capacityReservations"][0]["endTime"]
    (unknown,) = warnings_on(raw, PINNED_TODAY)
    assert f"no endTime: gpufleet cannot warn before Capacity Block {BLOCK} ends" in unknown
    # What `plan` prints, on the pinned day, for a block three days from its end.
    stack = load_stack("aws-reserved")
    entry = stack.config["gpufleet:gpuPools"][1]["aws"]["capacityReservations"][0]
    config = copy.deepcopy(stack.config)
    config["gpufleet:gpuPools"][1]["aws"]["capacityReservations"][0] = {
        **entry,
        "endTime": "2026-11-25T11:30:00Z",
    }
    path = tmp_path / "Pulumi.near-end.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    load_validated(str(path))
    assert (
        f"warning: gpuPools[1].aws.capacityReservations[0].endTime: Capacity Block {BLOCK} "
        "ends in 3 days" in capsys.readouterr().err
    )


# --- fit, cost, diff --------------------------------------------------------------------------

POD = """
apiVersion: batch/v1
kind: Job
metadata: {{name: train}}
spec:
  parallelism: {pods}
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {{gpufleet.io/pool: {pool}}}
      tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
      containers:
      - name: main
        image: example.com/train:1
        resources: {{limits: {{nvidia.com/gpu: 8}}}}
"""


def test_fit_names_the_cap_a_reservation_puts_on_the_pool() -> None:
    raw = raw_of("aws-reserved")
    raw["gpuPools"][1]["maxNodes"] = 4
    checks = {c.name: c for c in pool_checks(parse_config(raw))}

    def notes(pool: str, pods: int) -> tuple[str, ...]:
        (template,) = read_workloads(POD.format(pods=pods, pool=pool)).templates
        verdict = fit_check(template.spec, checks[pool], Workload(template.pods))
        assert verdict.fits
        return verdict.notes

    assert (
        f"the first 2 nodes come from On-Demand Capacity Reservation {ODCR} (2 x p5.48xlarge); "
        "beyond them, on-demand (capacity [reserved, on-demand])"
    ) in notes("h100", 3)
    assert (
        "at most 2 nodes at once, not maxNodes 4: every node comes from Capacity Block "
        f"{BLOCK} (2 x p5en.48xlarge)"
    ) in notes("h200", 1)
    # A reservation whose size the config does not show names no cap.
    del raw["gpuPools"][0]["aws"]["capacityReservations"][0]["instanceCount"]
    config = parse_config(raw)
    assert resolve_pool(config, config.gpu_pools[0]).reservation_cap is None


def test_reserved_capacity_is_counted_at_its_count_whether_or_not_nodes_run() -> None:
    # Issue 31: an ODCR and a Capacity Block are billed whether used or not: idle counts them.
    config = parse_config(raw_of("aws-reserved"))
    cost = stack_cost(config, PINNED_TODAY)
    (h100,) = [p for p in cost.pools if p.name == "h100"]
    assert h100.per_node_hour is not None
    assert h100.committed_per_hour == pytest.approx(h100.per_node_hour * 2)
    said = " ".join(cost.warnings)
    assert (
        "pool h100: 2 reserved instance(s) of On-Demand Capacity Reservations, billed at the "
        "on-demand rate while active, used or not"
    ) in said
    assert "pool h200: 2 reserved instance(s) of Capacity Blocks, paid upfront" in said
    assert cost.idle is not None and cost.committed is not None
    assert cost.idle > cost.committed > 0
    plain = stack_cost(parse_config(raw_of("aws-karpenter")), PINNED_TODAY)
    assert plain.committed == 0.0 and not any("reserved instance" in w for w in plain.warnings)


def test_updating_a_capacity_block_group_is_refused_while_it_has_nodes() -> None:
    """A new image release (here: the old plan on another release) rolls the on-demand groups
    and is refused for the Capacity Block group unless it is at 0 nodes."""
    after = plan_of("aws-training").to_json()
    before = copy.deepcopy(after)
    for resource in before["resources"]:
        if resource["type"] == NODE_GROUP:
            resource["inputs"]["releaseVersion"] = "1.35.3-20261001"
    changed = {c.name: c for c in diff_plans(before, after).changed if c.type == NODE_GROUP}
    block = changed["gpufleet-training-h100-block-us-west-2a"]
    assert block.verdict == "reject"
    (reason,) = block.refusals
    assert reason.startswith("releaseVersion: refused unless the group is at 0 nodes")
    assert "instead: wait until the group is empty" in reason
    assert changed["gpufleet-training-h100-us-west-2a"].verdict == "roll"
    assert not changed["gpufleet-training-h100-us-west-2a"].refusals


def test_a_changed_reservation_selection_leaves_running_nodes_alone() -> None:
    after = plan_of("aws-reserved").to_json()
    before = copy.deepcopy(after)
    for resource in before["resources"]:
        if resource["type"] == NODE_CLASS and resource["inputs"]["metadata"]["name"] == "h100":
            terms = resource["inputs"]["spec"]["capacityReservationSelectorTerms"]
            terms[0]["id"] = "cr-0a1b2c3d4e5f60000"
    (change,) = diff_plans(before, after).changed
    assert change.verdict == "update"
    (note,) = change.node_notes
    assert note.effect == "new-nodes"
    assert "no longer selects is marked drifted (CapacityReservationDrift)" in note.says
    assert "no longer selects is marked drifted" in render_text(diff_plans(before, after))
