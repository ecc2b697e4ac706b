"""Pod Security labels (issue 36, SEC-3): every namespace gpufleet creates enforces the least
privileged level its pods need, privileged only where a DaemonSet needs the node; the samples
pass the level of their namespace; the queues' namespaces (a team's, ensured) carry none of
gpufleet's; and on a running stack the labels arrive as an update in place."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from components.kubernetes import namespaces
from components.kubernetes import sample_manifests as samples
from components.model import pod_security
from components.model.config import parse_config
from components.model.pools import resolve_pools
from components.tooling.diff import diff_plans
from components.tooling.engine import Plan
from components.tooling.stacks import load_stack
from tests.conftest import over_every_stack, plan_of
from tests.test_software import CASES, software_overrides

# The same variants as test_software and test_samples (one worker plans them once).
pytestmark = pytest.mark.xdist_group("software-plans")

NAMESPACE = "kubernetes:core/v1:Namespace"
RELEASE = "kubernetes:helm.sh/v3:Release"
WORKLOADS = ("kubernetes:batch/v1:Job", "kubernetes:apps/v1:Deployment")
ENABLED = {"gpufleet:samples": {"enabled": True}}
BEFORE_ISSUE_36 = Path(__file__).parent / "data" / "before_issue36"
ENFORCE = f"{pod_security.LABEL_PREFIX}enforce"


def planned_namespaces(plan: Plan) -> dict[str, Any]:
    return {r.inputs["metadata"]["name"]: r for r in plan.of_type(NAMESPACE)}


def ensured(resource: Any) -> bool:
    """A namespace gpufleet only makes sure exists (a queue's): its labels are ignored."""
    return "metadata.labels" in resource.ignore_changes


def check_namespaces(plan: Plan) -> None:
    for name, resource in planned_namespaces(plan).items():
        labels = resource.inputs["metadata"].get("labels", {})
        if ensured(resource):
            assert not any(key.startswith(pod_security.LABEL_PREFIX) for key in labels), name
            continue
        level = pod_security.enforced(labels)
        assert level is not None, f"{name} has no Pod Security level"
        report = "baseline" if level == "privileged" else level
        for mode in ("audit", "warn"):
            assert labels[f"{pod_security.LABEL_PREFIX}{mode}"] == report, (name, mode)
        if name == samples.NAMESPACE:
            pods = [
                r.inputs["spec"]["template"]["spec"]
                for r in plan.resources
                if r.type in WORKLOADS and r.inputs["metadata"]["namespace"] == name
            ]
            assert pods, "a samples namespace without samples"
            for pod in pods:
                assert pod_security.violations(pod, level) == [], name
            assert level == pod_security.strictest(pods)
        else:
            # Privileged only where the software there needs the node.
            assert level == pod_security.level_for(name), name


@over_every_stack
def test_every_namespace_gpufleet_creates_enforces_what_its_pods_need(stack: str) -> None:
    check_namespaces(plan_of(stack, ENABLED))


@pytest.mark.every_stack
@pytest.mark.parametrize(("stack", "mode"), CASES)
def test_every_software_mode_namespace_is_labelled(stack: str, mode: str) -> None:
    plan = plan_of(stack, software_overrides(stack, mode))
    check_namespaces(plan)
    for release in plan.of_type(RELEASE):
        namespace = release.inputs["namespace"]
        own = planned_namespaces(plan).get(namespace)
        if own is not None:
            # The release's pods are admitted where they land.
            labels = own.inputs["metadata"]["labels"]
            assert pod_security.enforced(labels) == pod_security.level_for(namespace)


def test_privileged_namespaces_are_those_of_the_gpu_daemonsets() -> None:
    privileged = {n for n, (level, _) in pod_security.NEEDS.items() if level == "privileged"}
    # network-operator: AKS InfiniBand pools' DOCA driver and device plugin DaemonSets.
    assert privileged == {
        "nvidia-device-plugin",
        "gpu-operator",
        "gpu-monitoring",
        "network-operator",
    }
    assert pod_security.level_for("kueue-system") == "restricted"
    manifest = namespaces.namespace_manifest("gpu-operator")
    assert manifest["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "gpufleet",
        f"{pod_security.LABEL_PREFIX}enforce": "privileged",
        f"{pod_security.LABEL_PREFIX}audit": "baseline",
        f"{pod_security.LABEL_PREFIX}warn": "baseline",
    }


def test_samples_run_as_non_root_and_pass_restricted() -> None:
    plan = plan_of("existing-dev", ENABLED)
    pods = [r.inputs["spec"]["template"]["spec"] for r in plan.resources if r.type in WORKLOADS]
    assert pods
    for pod in pods:
        context = pod["securityContext"]
        assert context["runAsNonRoot"] is True and context["runAsUser"] == samples.SAMPLE_USER
        assert pod_security.violations(pod, "restricted") == []
    ns = planned_namespaces(plan)[samples.NAMESPACE]
    assert pod_security.enforced(ns.inputs["metadata"]["labels"]) == "restricted"


def _mps(stack: str, pool_index: int) -> dict[str, Any]:
    raw = copy.deepcopy(dict(load_stack(stack).gpufleet))
    pool = raw["gpuPools"][pool_index]
    pool["sharing"] = {"strategy": "mps", "maxSharedClientsPerGpu": 4}
    return raw


@pytest.mark.parametrize(
    ("stack", "level"),
    [("gcp-dev", "privileged"), ("aws-dev", "baseline")],
)
def test_mps_samples_lower_the_samples_namespace_and_say_so(stack: str, level: str) -> None:
    """GKE's MPS clients need the host's IPC namespace (privileged); MPS through NVIDIA's device
    plugin keeps its clients as root (baseline). Every other pool's samples stay non-root."""
    raw = _mps(stack, 0)
    raw["samples"] = {"enabled": True}
    pools = resolve_pools(parse_config(raw))
    assert samples.namespace_level(pools) == level
    overrides = {f"gpufleet:{key}": value for key, value in raw.items()}
    plan = plan_of(stack, overrides)
    check_namespaces(plan)
    assert any(f"enforces Pod Security {level}" in w for w in plan.warnings)


def test_violations_at_each_control() -> None:
    restricted = {
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 1000,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": "c",
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
                },
            }
        ],
    }
    assert pod_security.violations(restricted, "restricted") == []
    assert pod_security.strictest([restricted]) == "restricted"

    def changed(**pod: Any) -> dict[str, Any]:
        spec = copy.deepcopy(restricted)
        spec.update(pod)
        return spec

    as_root = copy.deepcopy(restricted)
    as_root["securityContext"]["runAsUser"] = 0
    assert pod_security.strictest([as_root]) == "baseline"
    no_seccomp = copy.deepcopy(restricted)
    del no_seccomp["securityContext"]["seccompProfile"]
    assert pod_security.strictest([no_seccomp]) == "baseline"
    host_ipc = changed(hostIPC=True)
    assert pod_security.strictest([host_ipc]) == "privileged"
    host_path = changed(volumes=[{"name": "v", "hostPath": {"path": "/"}}])
    assert pod_security.strictest([host_path]) == "privileged"
    sys_admin = copy.deepcopy(restricted)
    sys_admin["containers"][0]["securityContext"]["capabilities"]["add"] = ["SYS_ADMIN"]
    assert pod_security.strictest([sys_admin]) == "privileged"
    chown = copy.deepcopy(restricted)
    chown["containers"][0]["securityContext"]["capabilities"]["add"] = ["CHOWN"]
    assert pod_security.strictest([chown]) == "baseline"
    # The strictest level admits all: one privileged pod makes the namespace privileged.
    assert pod_security.strictest([restricted, host_ipc]) == "privileged"


def test_queue_namespaces_stay_the_teams_and_plan_says_so() -> None:
    plan = plan_of("gcp-flex-start")
    (queue_ns,) = [r for r in plan.of_type(NAMESPACE) if ensured(r)]
    assert queue_ns.inputs["metadata"] == {"name": "ml-training"}
    assert any(
        "queues.namespaces ml-training" in w and "no Pod Security level" in w for w in plan.warnings
    )


@pytest.mark.parametrize("stack", ["existing-dev", "azure-a100-mig", "gcp-flex-start"])
def test_upgrading_gpufleet_labels_the_namespaces_in_place(stack: str) -> None:
    """The plan gpufleet made before issue 36 (tests/data/before_issue36: the committed snapshot
    of main at a7c846e, its Namespaces, workloads, releases, IAM and providers) against today's:
    each namespace gpufleet created is updated in place, none replaced or deleted."""
    old = json.loads((BEFORE_ISSUE_36 / f"{stack}.json").read_text())
    plan = plan_of(stack).to_json()
    kept = {r["type"] for r in old["resources"]}
    new = {**plan, "resources": [r for r in plan["resources"] if r["type"] in kept]}
    diff = diff_plans(old, new)
    namespaces_changed = [c for c in diff.changed if c.type == NAMESPACE]
    assert namespaces_changed and not [c.name for c in namespaces_changed if c.replaces]
    assert not [r for r in diff.removed if r.type == NAMESPACE]
    for change in namespaces_changed:
        assert {p.path.split(".")[0] for p in change.changes} == {"metadata"}
