"""GPU health (issue 34): DCGM's XID metric drives one drain policy rendered as Prometheus alert
rules on every cluster with a DCGM exporter, and what AKS offers and lacks is said by `plan`."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import yaml

from components.azure.model import health as aks_health
from components.model import gpu_health
from components.model.catalog import charts
from tests.conftest import chart_defaults, plan_of
from tests.test_software import merged, releases

DOCS = Path(__file__).resolve().parent.parent / "docs" / "gpu-health.md"
# Published node-fatal XID sets (sources in components/model/gpu_health.py): GKE's device plugin
# XidCriticalError set (container-engine-accelerators at 992db81) and EKS's node monitoring
# agent's AcceleratedHardwareReady set (eks-node-monitoring-agent v1.7.0).
GKE_CRITICAL = {48, 63, 64, 79, 119, 120, 123, 140}
EKS_UNHEALTHY = {46, 48, 54, 62, 63, 64, 74, 79, 95, 109, 110, 119, 120, 136, 140, 142, 143, 151}


def alerted_xids(rules_yaml: str) -> set[int]:
    """The XIDs the rendered drain rule fires on, read back from its PromQL."""
    rules = yaml.safe_load(rules_yaml)["groups"][0]["rules"]
    (drain,) = [rule for rule in rules if rule["alert"] == "GpuXidDrainNode"]
    terms = drain["expr"].split(" or ")
    assert all(re.fullmatch(rf"{gpu_health.XID_METRIC} == \d+", term) for term in terms), terms
    return {int(term.rsplit(" ", 1)[1]) for term in terms}


@pytest.mark.parametrize("stack", ["azure-a100-mig", "existing-dev"])
def test_stacks_with_a_dcgm_exporter_output_the_drain_alert_rules(stack: str) -> None:
    xids = alerted_xids(plan_of(stack).outputs[gpu_health.ALERT_RULES_OUTPUT])
    # Every XID both clouds take a node out for drains it; no application XID does.
    assert xids >= GKE_CRITICAL & EKS_UNHEALTHY
    assert xids <= GKE_CRITICAL | EKS_UNHEALTHY
    assert not xids & set(gpu_health.APPLICATION_XIDS)


def test_no_alert_rules_without_a_dcgm_exporter() -> None:
    assert gpu_health.ALERT_RULES_OUTPUT not in plan_of("azure-dev").outputs


def test_alert_rules_read_only_metrics_the_pinned_charts_export_by_default() -> None:
    # The metrics lists were read for the pinned versions; a new pin must be read again.
    assert {"dcgm-exporter": charts.DCGM_EXPORTER.version} == gpu_health.METRICS_LISTS_READ
    rules = yaml.safe_load(gpu_health.alert_rules_yaml())["groups"][0]["rules"]
    read = {name for rule in rules for name in re.findall(r"DCGM_\w+", rule["expr"])}
    assert read == set(gpu_health.ALERT_METRICS)


def test_standalone_exporter_keeps_the_charts_metrics_list() -> None:
    plan = plan_of("existing-dev")
    ours = releases(plan)["dcgm-exporter"].inputs["values"]
    assert "customMetrics" not in ours and "arguments" not in ours
    values = merged("dcgm-exporter", ours)
    # The exporter reads the list the chart mounts from its default-list ConfigMap.
    listed = values["arguments"][values["arguments"].index("-f") + 1]
    assert listed in {mount["mountPath"] for mount in values["extraVolumeMounts"]}
    assert chart_defaults("dcgm-exporter")["arguments"] == ours.get("arguments", ["-f", listed])


def test_operator_exporter_keeps_its_images_metrics_list() -> None:
    values = releases(plan_of("azure-a100-mig"))["gpu-operator"].inputs["values"]
    assert values["dcgmExporter"]["enabled"] is True
    assert "config" not in values["dcgmExporter"]


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
        assert f"| {row.xid} |" in text, row
    for condition in aks_health.NPD_GPU_CONDITIONS:
        assert condition in text
    assert aks_health.AUTO_REPAIR.trigger in text
