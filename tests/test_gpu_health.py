"""GPU health (issue 34): DCGM's XID metric drives one drain policy rendered as Prometheus alert
rules on every cluster with a DCGM exporter, and what AKS offers and lacks is said by `plan`."""

from __future__ import annotations

import copy
import inspect
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.azure.model import health as aks_health
from components.gcp.model import gpu_health as gcp_health
from components.kubernetes import dcgm
from components.model import gpu_health
from components.model.catalog import charts
from scripts import dcgm_metrics
from tests.conftest import SHARED_REFERENCE, plan_of
from tests.test_software import merged, releases

DOCS = Path(__file__).resolve().parent.parent / "docs" / "gpu-health.md"
# Published node-fatal XID sets (sources in components/model/gpu_health.py): GKE's device plugin
# XidCriticalError set (container-engine-accelerators at 992db81) and EKS's node monitoring
# agent's `WellKnownXidCodes` (eks-node-monitoring-agent v1.7.0 monitors/nvidia/dcgm/
# dcgm_policies.go).
GKE_CRITICAL = {48, 63, 64, 79, 119, 120, 123, 140}
EKS_UNHEALTHY = {46, 48, 54, 62, 63, 64, 74, 79, 95, 109, 110, 119, 120, 136, 140, 142, 143, 151}
EKS_UNHEALTHY |= {155, 156, 158}
# Left out on purpose: NVIDIA's device plugin treats 109 as an application error.
LEFT_OUT = {109}
COUNT_EXPR = re.compile(
    rf'max_over_time\({gpu_health.XID_COUNT_METRIC}\{{xid=~"([\d|]+)"\}}\[(\w+)\]\) > 0'
)
# The dcgm-exporter chart's metrics template, where a reference copy or a git checkout exists.
CHART_TEMPLATE = SHARED_REFERENCE / "helm" / "dcgm-exporter" / dcgm_metrics.TEMPLATE
DCGM_EXPORTER_GIT = os.environ.get("DCGM_EXPORTER_GIT")


def rules_of(rules_yaml: str) -> dict[str, dict[str, object]]:
    return {rule["alert"]: rule for rule in yaml.safe_load(rules_yaml)["groups"][0]["rules"]}


def alerted_xids(rules_yaml: str) -> tuple[str, set[int]]:
    """The metric the drain rule reads and the XIDs it fires on, read back from its PromQL."""
    expr = str(rules_of(rules_yaml)["GpuXidDrainNode"]["expr"])
    counted = COUNT_EXPR.fullmatch(expr)
    if counted:
        return gpu_health.XID_COUNT_METRIC, {int(x) for x in counted.group(1).split("|")}
    terms = expr.split(" or ")
    assert all(re.fullmatch(rf"{gpu_health.XID_METRIC} == \d+", term) for term in terms), terms
    return gpu_health.XID_METRIC, {int(term.rsplit(" ", 1)[1]) for term in terms}


@pytest.mark.parametrize(
    ("stack", "metric"),
    [
        ("existing-dev", gpu_health.XID_COUNT_METRIC),
        ("azure-a100-mig", gpu_health.XID_METRIC),  # GPU Operator: its exporter's own list
    ],
)
def test_stacks_with_a_dcgm_exporter_output_the_drain_alert_rules(stack: str, metric: str) -> None:
    read, xids = alerted_xids(plan_of(stack).outputs[gpu_health.ALERT_RULES_OUTPUT])
    assert read == metric
    # Every XID a cloud takes a node out for drains it, but those named as left out.
    assert xids == (GKE_CRITICAL | EKS_UNHEALTHY) - LEFT_OUT
    assert not xids & set(gpu_health.APPLICATION_XIDS)


def test_the_drain_list_follows_its_stated_rule() -> None:
    gke_set = set(gcp_health.CONDITION_XIDS)
    assert gke_set == GKE_CRITICAL
    for row in gpu_health.DRAIN_XIDS:
        # A cloud takes the node out; the catalog asks for more than an application restart
        # (63: IGNORE in the catalog, replaced by EC2 and critical on GKE).
        assert row.gke_critical == (row.xid in gke_set), row
        assert row.eks_unhealthy == (row.xid in EKS_UNHEALTHY), row
        assert row.catalog_action != "RESTART_APP", row
        assert (row.catalog_action is None) == (not row.eks_unhealthy), row


def test_the_count_rule_outlasts_the_exporters_window() -> None:
    # The count is per window (default 5 min); the rule must look back over a window plus a
    # slow scrape, or a window between two evaluations is missed.
    read, _ = alerted_xids(gpu_health.alert_rules_yaml(xid_counts=True))
    assert read == gpu_health.XID_COUNT_METRIC
    match = COUNT_EXPR.fullmatch(
        str(rules_of(gpu_health.alert_rules_yaml())["GpuXidDrainNode"]["expr"])
    )
    assert match and match.group(2) == gpu_health.XID_LOOKBACK == "10m"


def test_every_alert_names_the_node() -> None:
    for counts in (True, False):
        for name, rule in rules_of(gpu_health.alert_rules_yaml(counts)).items():
            assert "{{ $labels.Hostname }}" in str(rule["annotations"]), name


def test_lost_gpu_rule_ignores_pod_labels_and_removed_nodes() -> None:
    expr = str(rules_of(gpu_health.alert_rules_yaml())["GpuLost"]["expr"])
    # Grouped by node and GPU (pod labels change with jobs), and only while the node exports.
    assert "max by (Hostname, UUID, gpu)" in expr
    assert "unless on (Hostname, UUID)" in expr
    assert expr.endswith(f"and on (Hostname) {gpu_health.PRESENCE_METRIC}")


def test_no_alert_rules_without_a_dcgm_exporter() -> None:
    assert gpu_health.ALERT_RULES_OUTPUT not in plan_of("azure-dev").outputs


def exporter_metrics(plan: object) -> set[str]:
    csv = releases(plan)["dcgm-exporter"].inputs["values"]["customMetrics"]
    return {line.split(",", 1)[0].strip() for line in csv.splitlines() if line.strip()}


def test_a_changed_metrics_list_restarts_the_exporter_pods() -> None:
    # The exporter reads its list only at start: the pod template carries the list's checksum,
    # so a new list rolls the DaemonSet on an upgraded cluster (review fix-5 F5-6).
    values = releases(plan_of("existing-dev"))["dcgm-exporter"].inputs["values"]
    checksum = values["podAnnotations"][dcgm.METRICS_CHECKSUM_ANNOTATION]
    assert checksum == dcgm.metrics_checksum(values["customMetrics"])
    assert dcgm.metrics_checksum(values["customMetrics"] + "X, gauge, x\n") != checksum


def test_alert_rules_read_only_metrics_the_exporters_export() -> None:
    # The metrics lists were read for the pinned versions; a new pin must be read again.
    assert {"dcgm-exporter": charts.DCGM_EXPORTER.version} == gpu_health.METRICS_LISTS_READ
    exported = exporter_metrics(plan_of("existing-dev"))
    defaults = {line.split(",", 1)[0] for line in dcgm.chart_default_metrics()}
    for counts, listed in ((True, exported), (False, defaults)):
        rules = rules_of(gpu_health.alert_rules_yaml(counts)).values()
        read = {name for rule in rules for name in re.findall(r"DCGM_\w+", str(rule["expr"]))}
        assert read <= listed, read - listed
    assert gpu_health.XID_COUNT_METRIC in exported


def test_standalone_exporter_exports_the_charts_list_and_the_xid_count() -> None:
    plan = plan_of("existing-dev")
    ours = releases(plan)["dcgm-exporter"].inputs["values"]
    lines = ours["customMetrics"].splitlines()
    assert lines == [*dcgm.chart_default_metrics(), gpu_health.XID_COUNT_LINE]
    assert gpu_health.XID_METRIC in {line.split(",")[0].strip() for line in lines}
    # The chart renders customMetrics into the ConfigMap it mounts where `-f` reads.
    assert "arguments" not in ours
    values = merged("dcgm-exporter", ours)
    listed = values["arguments"][values["arguments"].index("-f") + 1]
    assert listed in {mount["mountPath"] for mount in values["extraVolumeMounts"]}


def test_default_metrics_data_is_the_pinned_charts() -> None:
    data = json.loads(dcgm.DEFAULT_METRICS_FILE.read_text())
    assert data["version"] == charts.DCGM_EXPORTER.version == dcgm_metrics.CHART_VERSION
    if CHART_TEMPLATE.is_file():
        template = CHART_TEMPLATE.read_text()
    elif DCGM_EXPORTER_GIT:
        template = dcgm_metrics.read_template(None, Path(DCGM_EXPORTER_GIT))
    else:
        pytest.skip("no dcgm-exporter chart template (../shared or DCGM_EXPORTER_GIT)")
    assert (
        dcgm_metrics.render(dcgm_metrics.build(template)) == dcgm.DEFAULT_METRICS_FILE.read_text()
    )


def test_operator_exporter_keeps_its_images_metrics_list_and_plan_says_so() -> None:
    plan = plan_of("azure-a100-mig")
    values = releases(plan)["gpu-operator"].inputs["values"]
    assert values["dcgmExporter"]["enabled"] is True
    assert "config" not in values["dcgmExporter"]
    assert any(gpu_health.XID_COUNT_METRIC in warning for warning in plan.warnings)
    assert not any(gpu_health.XID_COUNT_METRIC in w for w in plan_of("existing-dev").warnings)


def test_every_aks_gpu_pool_says_why_it_has_no_fast_image_start() -> None:
    # Said with the pool's cold-start estimate, not as a warning no stack could act on.
    plan = plan_of("azure-dev")
    starts = plan.to_json()["coldStart"]["pools"]
    names = [pool["name"] for pool in plan.outputs["gpuPools"]]
    assert set(starts) == set(names) and len(names) >= 2
    for name in names:
        (note,) = [n for n in starts[name]["notes"] if "no fast image start on AKS" in n]
        assert aks_health.ARTIFACT_STREAMING.source in note
    assert not any("fast image start on AKS" in w for w in plan.warnings)
    gcp = plan_of("gcp-dev").to_json()["coldStart"]["pools"]
    assert not any("on AKS" in n for pool in gcp.values() for n in pool["notes"])


def test_pinned_azure_sdk_still_lacks_artifact_streaming() -> None:
    # When a provider bump brings the property to a stable API, turn streaming on instead.
    from pulumi_azure_native import containerservice

    assert not aks_health.ARTIFACT_STREAMING.available
    for args in (containerservice.AgentPool, containerservice.ManagedClusterAgentPoolProfileArgs):
        assert "artifact_streaming_profile" not in inspect.signature(args.__init__).parameters


def test_gpu_health_docs_state_the_policy_and_akss_conditions() -> None:
    text = DOCS.read_text()
    for row in gpu_health.DRAIN_XIDS:
        assert f"| {row.xid} | {row.meaning} | {row.catalog_action or 'not read'} |" in text, row
    # What scrapes and evaluates the rules on each managed Prometheus, and the ServiceMonitor key.
    for wiring in ("PodMonitoring", "create-rule-groups-namespace", "prometheusRuleGroups"):
        assert wiring in text
    assert "gpufleet:gpuSoftware.monitoring.serviceMonitor: true" in text
    assert gpu_health.XID_COUNT_METRIC in text and "GpuLost" in text
    for condition in aks_health.NPD_GPU_CONDITIONS:
        assert condition in text
    # AKS's GPU checks run on two VM sizes only (review aks-5 H5-3): the docs say which.
    for size in aks_health.NPD_GPU_SIZES:
        assert size in text
    assert aks_health.AUTO_REPAIR.trigger in text


def _azure_warnings(stack: str, edit: Any = None) -> list[str]:
    from components.model.config import parse_config
    from components.tooling.stacks import load_stack

    raw = copy.deepcopy(dict(load_stack(stack).gpufleet))
    if edit is not None:
        edit(raw)
    return [w for w in parse_config(raw).warnings if "no GPU health signal" in w]


def test_aks_pools_with_no_gpu_health_signal_are_named_until_the_exporter_is_on() -> None:
    # AKS checks GPUs on two VM sizes only (review aks-5 H5-3).
    (said,) = _azure_warnings("azure-dev")
    assert "GPU pools t4, t4spot have no GPU health signal" in said
    assert "set gpuSoftware.monitoring.dcgmExporter: true" in said

    def exporter_on(raw: dict) -> None:
        raw.setdefault("gpuSoftware", {}).setdefault("monitoring", {})["dcgmExporter"] = True

    assert _azure_warnings("azure-dev", exporter_on) == []

    def only_checked_sizes(raw: dict) -> None:
        for pool in raw["gpuPools"]:
            pool.update(accelerator="h100-80gb", machineType=aks_health.NPD_GPU_SIZES[1])
            pool.pop("spot", None)

    assert _azure_warnings("azure-dev", only_checked_sizes) == []
    assert not any("no GPU health signal" in w for w in plan_of("gcp-dev").warnings)
