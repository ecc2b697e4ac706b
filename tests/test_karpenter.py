"""EKS with Karpenter: what the aws-karpenter stack builds, what it refuses, and that each
NodePool and EC2NodeClass validates against Karpenter 1.14.1's CRD schemas (when the reference
CRDs in ../shared are present) and agrees with the `gpuPools` contract that fit uses."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from components.aws.mock import CLUSTER_SECURITY_GROUP
from components.aws.model import karpenter, karpenter_iam
from components.model import karpenter_pool
from components.model.config import ConfigError, parse_config
from components.tooling.diff import diff_plans
from components.tooling.engine import Plan
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

STACK = "aws-karpenter"
CRDS = Path(__file__).resolve().parents[2] / "shared/reference/karpenter/crds"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
AUTO_MODE_NODE_CLASS = "kubernetes:eks.amazonaws.com/v1:NodeClass"


def _objects(plan: Plan, kind: str) -> dict[str, dict[str, Any]]:
    found = {}
    for resource in plan.resources:
        if resource.type == kind:
            document = dict(resource.inputs)
            found[document["metadata"]["name"]] = document
    return found


def _raw() -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(STACK).gpufleet))


def _problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw)
    return [str(p) for p in caught.value.problems]


def test_karpenter_replaces_groups_and_the_cluster_autoscaler() -> None:
    plan = plan_of(STACK)
    types = [r.type for r in plan.resources]
    assert "aws:autoscaling/group:Group" not in types
    assert "aws:eks/nodeGroup:NodeGroup" in types  # the system pool only
    releases = {r.inputs["chart"] for r in plan.resources if r.type.endswith("Release")}
    assert f"{karpenter.CHART_REPOSITORY}/{karpenter.CHART}" in releases
    assert not any("cluster-autoscaler" in chart for chart in releases)
    assert set(_objects(plan, NODE_POOL)) == set(_objects(plan, NODE_CLASS)) == {"l4", "h100"}
    # One EventBridge rule per interruption event, each feeding the queue.
    rules = [r for r in plan.resources if r.type == "aws:cloudwatch/eventRule:EventRule"]
    patterns = sorted(json.loads(r.inputs["eventPattern"])["detail-type"][0] for r in rules)
    assert patterns == sorted(p["detail-type"][0] for p in karpenter_iam.EVENT_PATTERNS.values())


def test_crds_upgrade_with_karpenter_and_come_before_everything_that_uses_them() -> None:
    plan = plan_of(STACK)
    (crds,) = [r for r in plan.resources if r.name.endswith("-karpenter-crds")]
    (release,) = [r for r in plan.resources if r.name.endswith("-karpenter-release")]
    # Their own chart at the controller's version: Helm never upgrades a chart's crds/ dir.
    assert crds.inputs["chart"].endswith("/karpenter-crd")
    assert crds.inputs["version"] == release.inputs["version"] == karpenter.CHART_VERSION
    assert release.inputs["skipCrds"] is True
    assert crds.urn in release.dependencies
    for resource in plan.resources:
        if resource.type in (NODE_POOL, NODE_CLASS):
            assert {crds.urn, release.urn} <= set(resource.dependencies), resource.name


FACTS = Path(__file__).resolve().parent / "data" / "karpenter_facts.json"


def _facts() -> dict[str, Any]:
    facts: dict[str, Any] = json.loads(FACTS.read_text())
    return facts


def _crd_schema(kind: str) -> dict[str, Any]:
    """The CRD's structural schema, from the data file (scripts/karpenter_facts.py)."""
    schema: dict[str, Any] = _facts()["crds"][kind]
    return schema


@pytest.mark.parametrize(("kind", "crd"), [(NODE_POOL, "NodePool"), (NODE_CLASS, "EC2NodeClass")])
def test_generated_objects_validate_against_the_crd_schemas(kind: str, crd: str) -> None:
    schema = _crd_schema(crd)
    objects = _objects(plan_of(STACK), kind)
    assert objects
    for name, document in objects.items():
        # The structural schema (CEL rules in x-kubernetes-validations are the API server's).
        jsonschema.validate(document, schema)
        assert document["apiVersion"] in (
            karpenter_pool.NODE_POOL_API_VERSION,
            karpenter.NODE_CLASS_API_VERSION,
        ), name


def test_a_schema_violation_is_caught() -> None:
    schema = _crd_schema("NodePool")
    document = next(iter(_objects(plan_of(STACK), NODE_POOL).values()))
    broken = copy.deepcopy(document)
    broken["spec"]["disruption"]["consolidationPolicy"] = "Always"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_node_pools_say_what_the_contract_says() -> None:
    plan = plan_of(STACK)
    pools = {p["name"]: p for p in plan.outputs["gpuPools"]}
    node_pools = _objects(plan, NODE_POOL)
    for name, document in node_pools.items():
        spec = document["spec"]
        template = spec["template"]["spec"]
        requirements = {r["key"]: r["values"] for r in template["requirements"]}
        pool = pools[name]
        assert requirements["node.kubernetes.io/instance-type"] == pool["machineTypes"]
        zones = requirements["topology.kubernetes.io/zone"]
        assert zones == pool["zones"]
        # Every declared label is on the template, every taint on the node.
        labels = spec["template"]["metadata"]["labels"]
        assert {k: pool["nodeLabels"][k] for k in labels} == labels
        assert [(t["key"], t["effect"]) for t in template["taints"]] == [
            (t["key"], t["effect"]) for t in pool["nodeTaints"]
        ]
        assert pool["nodeLabels"][karpenter_pool.NODEPOOL_LABEL] == name
        # Never more GPUs than maxNodes nodes hold; nodes never expire under a job.
        gpus = pool["maxNodes"] * pool["allocatablePerNode"]["nvidia.com/gpu"]
        assert spec["limits"]["nvidia.com/gpu"] == str(gpus)
        assert template["expireAfter"] == "Never"
        assert spec["disruption"]["consolidationPolicy"] == "WhenEmpty"
        assert {"nodes": "0", "reasons": ["Drifted"]} in spec["disruption"]["budgets"]
    assert {
        r["key"]: r["values"] for r in node_pools["l4"]["spec"]["template"]["spec"]["requirements"]
    }[karpenter_pool.CAPACITY_TYPE_LABEL] == ["spot", "on-demand"]
    assert pools["h100"]["nodeLabels"][karpenter_pool.CAPACITY_TYPE_LABEL] == "on-demand"


def test_node_classes_pin_the_image_and_lock_down_the_node() -> None:
    for document in _objects(plan_of(STACK), NODE_CLASS).values():
        spec = document["spec"]
        assert spec["amiSelectorTerms"] == [{"alias": "al2023@v20261023"}]
        assert spec["metadataOptions"]["httpTokens"] == "required"
        assert spec["metadataOptions"]["httpPutResponseHopLimit"] == 1
        assert all(d["ebs"]["encrypted"] for d in spec["blockDeviceMappings"])
    assert karpenter.ami_alias("bottlerocket") == "bottlerocket@v1.66.0"


def _private_subnet_ids(plan: Plan) -> set[str]:
    """The private subnets the stack made, by the ids the mock cloud gives them."""
    return {
        f"subnet-{r.name}"
        for r in plan.of_type("aws:ec2/subnet:Subnet")
        if r.inputs["tags"].get("kubernetes.io/role/internal-elb") == "1"
    }


def _selected(plan: Plan) -> list[tuple[set[str], set[str]]]:
    """(subnet ids, security group ids) each node class selects; only `id` terms count."""
    classes = [r for r in plan.resources if r.type in (NODE_CLASS, AUTO_MODE_NODE_CLASS)]
    assert classes
    selected = []
    for node_class in classes:
        spec = node_class.inputs["spec"]
        terms = [*spec["subnetSelectorTerms"], *spec["securityGroupSelectorTerms"]]
        assert all(set(term) == {"id"} for term in terms), terms  # no tag anyone could add
        selected.append(
            (
                {t["id"] for t in spec["subnetSelectorTerms"]},
                {t["id"] for t in spec["securityGroupSelectorTerms"]},
            )
        )
    return selected


@pytest.mark.parametrize("stack", ["aws-karpenter", "aws-reserved", "aws-auto-mode"])
def test_node_classes_select_the_clusters_own_subnets_and_security_group_by_id(
    stack: str,
) -> None:
    """Security review SEC-18: selected by the discovery tag, a public subnet or an open security
    group someone tagged would get GPU nodes. By id they are exactly what the discovery tag
    found before (the private subnets gpufleet tags and the cluster security group it tags), so
    Karpenter drifts no node on the change."""
    plan = plan_of(stack)
    cluster_name = load_stack(stack).gpufleet["cluster"]["name"]
    private = _private_subnet_ids(plan)
    assert private
    tagged = {
        f"subnet-{r.name}"
        for r in plan.of_type("aws:ec2/subnet:Subnet")
        if r.inputs["tags"].get(karpenter.DISCOVERY_TAG) == cluster_name
    }
    tag_targets = {t.inputs["resourceId"] for t in plan.of_type("aws:ec2/tag:Tag")}
    for subnets, security_groups in _selected(plan):
        assert subnets == private == tagged
        assert security_groups == {CLUSTER_SECURITY_GROUP} == tag_targets


def test_given_subnets_are_selected_by_id() -> None:
    ids = ["subnet-0aaa", "subnet-0bbb", "subnet-0ccc"]
    cluster = {**load_stack(STACK).config["gpufleet:cluster"]}
    cluster["aws"] = {**cluster["aws"], "privateSubnetIds": ids}
    plan = plan_of(STACK, {"gpufleet:cluster": cluster})
    for subnets, security_groups in _selected(plan):
        assert subnets == set(ids) and security_groups == {CLUSTER_SECURITY_GROUP}


def test_a_node_class_without_a_subnet_or_security_group_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one subnet"):
        karpenter.selector_terms([])


def test_controller_permissions_are_scoped_to_the_cluster() -> None:
    policy = karpenter_iam.controller_policy(
        partition="aws",
        region="us-east-1",
        account="123456789012",
        cluster_name="c",
        node_role_arn="arn:aws:iam::123456789012:role/nodes",
        queue_arn="arn:aws:sqs:us-east-1:123456789012:q",
    )
    statements = {s["Sid"]: s for s in policy["Statement"]}
    assert statements["PassNodeRole"]["Resource"] == "arn:aws:iam::123456789012:role/nodes"
    for sid in ("LaunchTagged", "TagOnLaunch", "DeleteOwn", "LaunchFromOwnLaunchTemplates"):
        conditions = statements[sid]["Condition"]
        assert any("kubernetes.io/cluster/c" in key for key in conditions["StringEquals"]), sid
    assert statements["ReadInterruptions"]["Resource"] == "arn:aws:sqs:us-east-1:123456789012:q"
    # Nothing mutating is unscoped.
    for statement in policy["Statement"]:
        actions = (
            statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        )
        if statement["Resource"] == "*":
            assert all(a.split(":")[1].startswith(("Describe", "Get", "List")) for a in actions), (
                statement["Sid"]
            )


def test_bad_karpenter_combinations_are_refused_together() -> None:
    raw = _raw()
    raw["gpuPools"][0]["minNodes"] = 1
    raw["gpuPools"][1]["aws"] = {"nodeGroup": "managed", "onDemandFallback": True}
    problems = _problems(raw)
    assert any(p.startswith("gpuPools[0].minNodes: Karpenter keeps no minimum") for p in problems)
    assert any(
        p.startswith(
            "gpuPools[1].aws.nodeGroup: applies only with cluster.aws.provisioner: "
            "cluster-autoscaler"
        )
        for p in problems
    )
    assert any(
        p.startswith("gpuPools[1].aws.onDemandFallback: is for Spot pools") for p in problems
    )


def test_karpenter_only_keys_are_refused_under_the_cluster_autoscaler() -> None:
    raw = copy.deepcopy(dict(load_stack("aws-dev").gpufleet))
    raw["gpuPools"][0]["aws"] = {"consolidateUnderutilized": True}
    problems = _problems(raw)
    assert any(
        p.startswith(
            "gpuPools[0].aws.consolidateUnderutilized: applies only with "
            "cluster.aws.provisioner: karpenter"
        )
        for p in problems
    )


def test_a_minor_karpenter_does_not_support_is_refused() -> None:
    raw = _raw()
    raw["cluster"]["kubernetesVersion"] = "1.37"
    problems = _problems(raw)
    assert any(
        p.startswith(
            "cluster.kubernetesVersion: Karpenter 1.14.1 (pinned) supports Kubernetes "
            "1.33, 1.34, 1.35, 1.36"
        )
        for p in problems
    ), problems
    assert karpenter.supports("1.36") and not karpenter.supports("1.37")


def test_fit_sizes_a_pool_by_its_largest_type_and_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from components.tooling.cli import main

    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "big"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "nodeSelector": {"gpufleet.io/pool": "l4"},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                    "containers": [
                        {
                            "name": "c",
                            "image": "busybox",
                            # More than a g6.xlarge (4 vCPU) has, less than a g6.2xlarge.
                            "resources": {
                                "requests": {"cpu": "6"},
                                "limits": {"nvidia.com/gpu": 1},
                            },
                        }
                    ],
                }
            }
        },
    }
    manifest = tmp_path / "job.yaml"
    manifest.write_text(yaml.safe_dump(job))
    main(["fit", STACK, str(manifest), "--json"])
    report = json.loads(capsys.readouterr().out)
    (entry,) = [p for p in report["templates"][0]["pools"] if p["pool"] == "l4"]
    assert entry["fits"], entry
    job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "9"
    manifest.write_text(yaml.safe_dump(job))
    main(["fit", STACK, str(manifest), "--json"])
    report = json.loads(capsys.readouterr().out)
    (entry,) = [p for p in report["templates"][0]["pools"] if p["pool"] == "l4"]
    assert not entry["fits"]
    assert any("the largest allowed type's (g6.2xlarge) allocatable" in r for r in entry["reasons"])


def test_fit_judges_memory_by_what_karpenter_plans(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from components.tooling.cli import main

    # g6.2xlarge: Karpenter plans 32 GiB less 7.5% (vmMemoryOverheadPercent), less nodeadm's
    # 993 MiB: 29317Mi, which is the pool's allocatable too (review eks-2.md N10): a pod that
    # fits it gets a node that takes it, a larger one is told so.
    pool = next(p for p in plan_of(STACK).outputs["gpuPools"] if p["name"] == "l4")
    assert pool["allocatablePerNode"]["memory"] == "29317Mi"
    pod = {
        "nodeSelector": {"gpufleet.io/pool": "l4"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        "containers": [
            {
                "name": "c",
                "resources": {"requests": {"memory": "29Gi"}, "limits": {"nvidia.com/gpu": 1}},
            }
        ],
    }
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(yaml.safe_dump(pod))
    main(["fit", STACK, str(manifest), "--json"])
    (entry,) = [
        p for p in json.loads(capsys.readouterr().out)["templates"][0]["pools"] if p["pool"] == "l4"
    ]
    assert not entry["fits"]
    assert any("memory" in reason for reason in entry["reasons"]), entry["reasons"]
    pod["containers"][0]["resources"]["requests"]["memory"] = "28Gi"
    manifest.write_text(yaml.safe_dump(pod))
    main(["fit", STACK, str(manifest), "--json"])
    (entry,) = [
        p for p in json.loads(capsys.readouterr().out)["templates"][0]["pools"] if p["pool"] == "l4"
    ]
    assert entry["fits"], entry


def test_helm_values_use_only_keys_of_the_pinned_chart() -> None:
    from components.kubernetes import chart_values

    defaults = _facts()["values"]
    (release,) = [r for r in plan_of(STACK).resources if r.name.endswith("-karpenter-release")]
    values = release.inputs["values"]
    # nodeSelector is rendered verbatim (toYaml): any label may go below it.
    assert chart_values.unknown_keys(values, defaults, passthrough=("nodeSelector",)) == []
    assert values["settings"]["clusterName"] == "gpufleet-karpenter"
    assert values["settings"]["interruptionQueue"]
    assert values["serviceAccount"]["annotations"]["eks.amazonaws.com/role-arn"].startswith(
        "arn:aws:iam::"
    )
    # Two replicas spread over hosts: the system pool keeps two nodes.
    assert values["replicas"] == 2


def test_labels_karpenter_reserves_are_refused_before_the_api_server_does() -> None:
    raw = _raw()
    raw["gpuPools"][0]["labels"] = {"karpenter.sh/team": "a", "team": "b"}
    problems = _problems(raw)
    assert any(
        p.startswith("gpuPools[0].labels: Karpenter reserves these keys")
        and "karpenter.sh/team" in p
        for p in problems
    ), problems
    # What gpufleet itself puts on the template never is.
    for document in _objects(plan_of(STACK), NODE_POOL).values():
        labels = document["spec"]["template"]["metadata"]["labels"]
        assert not [key for key in labels if karpenter.reserved_label(key)]


@pytest.mark.skipif(not CRDS.is_dir(), reason="../shared/reference/karpenter is absent")
def test_the_data_file_is_current_with_karpenter_and_gpufleets_values() -> None:
    from scripts import karpenter_facts
    from scripts.chart_facts import render

    fresh = karpenter_facts.build(CRDS.parent, karpenter_facts.used_paths([plan_of(STACK)]))
    assert render(fresh) == FACTS.read_text(), (
        "tests/data/karpenter_facts.json is stale: run .venv/bin/python -m scripts.karpenter_facts"
    )


def test_the_data_file_is_small_and_only_data() -> None:
    text = FACTS.read_text()
    assert len(text) < 32_000
    assert "{{" not in text and "description" not in text


def test_moving_a_running_stack_from_the_discovery_tag_to_ids_rolls_no_node() -> None:
    """What `diff` tells the reviewer of the first `up` after SEC-18: each EC2NodeClass updated
    in place, no node replaced or drained (Karpenter drifts a node on what the terms resolve
    to, and by id they resolve to what the tag found)."""
    new = plan_of(STACK).to_json()
    old = copy.deepcopy(new)
    tagged = [{"tags": {karpenter.DISCOVERY_TAG: load_stack(STACK).gpufleet["cluster"]["name"]}}]
    for resource in old["resources"]:
        if resource["type"] == NODE_CLASS:
            resource["inputs"]["spec"]["subnetSelectorTerms"] = tagged
            resource["inputs"]["spec"]["securityGroupSelectorTerms"] = tagged
    result = diff_plans(old, new)
    assert not result.added and not result.removed and result.changed
    for change in result.changed:
        assert change.type == NODE_CLASS
        assert not change.replaces and not change.rolls
        assert {n.effect for n in change.node_notes} == {"new-nodes"}
        assert all("drift nothing" in n.says for n in change.node_notes)
