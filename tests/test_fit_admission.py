"""`fit` judges a pod as the cluster's API server admits it: where the ExtendedResourceToleration
admission plugin runs (EKS, GKE and AKS say theirs does), a pod requesting `nvidia.com/gpu`
tolerates the taint `nvidia.com/gpu` without listing it; on a cluster whose distribution gpufleet
is not told, that is not known, said so, and the pod is judged without it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.model.config import parse_config
from components.model.pools import resolve_pools
from components.model.registry import CLOUDS
from components.tooling.fit import fit_templates
from components.tooling.pool_views import pool_checks
from components.tooling.scheduling import extract_pod_templates
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

GPU_POD = """
apiVersion: v1
kind: Pod
metadata: {name: cuda}
spec:
  containers:
  - name: cuda
    resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_every_cloud_says_whether_its_api_server_adds_the_toleration_with_a_source() -> None:
    said = {name: cloud.extended_resource_toleration for name, cloud in CLOUDS.items()}
    assert {name: fact.runs for name, fact in said.items()} == {
        "gcp": True,
        "aws": True,
        "azure": True,
        "existing": None,
    }
    assert "platform-versions" in said["aws"].source
    assert "kubernetes-engine/docs/how-to/gpus" in said["gcp"].source
    assert "aks/faq" in said["azure"].source
    for fact in said.values():
        assert "ExtendedResourceToleration" in fact.source


def _verdicts(stack: str, raw: dict[str, Any] | None = None) -> dict[str, Any]:
    config = parse_config(raw if raw is not None else dict(load_stack(stack).gpufleet))
    resources = plan_of(stack).resources if raw is None else None
    (verdict,) = fit_templates(extract_pod_templates(GPU_POD), pool_checks(config, resources))
    return {pool.pool: pool for pool in verdict.pools}


@pytest.mark.parametrize("stack", ["aws-dev", "aws-karpenter", "aws-auto-mode", "gcp-dev"])
def test_a_gpu_pod_without_a_toleration_fits_an_eks_or_gke_pool(stack: str) -> None:
    verdicts = _verdicts(stack)
    gpu = [name for name, v in verdicts.items() if name != "system"]
    # Every GPU pool whose GPU count takes one GPU takes the untolerating pod.
    assert gpu and all(verdicts[name].fits for name in gpu), verdicts


def test_aks_adds_the_toleration_for_the_resource_not_for_its_sku_taint() -> None:
    verdicts = _verdicts("azure-dev")
    for name in ("t4", "t4spot"):
        assert not verdicts[name].fits
        assert verdicts[name].reasons[0] == (
            "taint sku=gpu:NoSchedule is not tolerated (the API server adds tolerations only for "
            "the resources the pod requests (nvidia.com/gpu, NoSchedule), not for sku; the pod "
            "must list one)"
        )


def _existing(distribution: str | None) -> dict[str, Any]:
    raw = copy.deepcopy(dict(load_stack("existing-dev").gpufleet))
    if distribution is not None:
        raw["cluster"].setdefault("existing", {})["distribution"] = distribution
        if distribution == "gke":  # GKE keeps its own device plugin
            raw["gpuSoftware"] = {"mode": "gpu-operator"}
    return raw


def test_an_existing_cluster_is_judged_by_its_distribution_or_said_not_known() -> None:
    raw = _existing("generic")
    (a10, *_) = resolve_pools(parse_config(raw))
    assert a10.extended_resource_toleration is None
    unknown = _verdicts("existing-dev", raw)["a10"]
    assert not unknown.fits
    assert unknown.reasons == (
        "taint nvidia.com/gpu=present:NoSchedule is not tolerated (whether this cluster's API "
        "server adds a toleration for requested nvidia.com/gpu is not known: its "
        "ExtendedResourceToleration admission plugin is off unless enabled (EKS, GKE and AKS run "
        "it); list one in the pod)",
    )
    for distribution in ("eks", "gke", "aks"):
        raw = _existing(distribution)
        assert resolve_pools(parse_config(raw))[0].extended_resource_toleration is True
        assert _verdicts("existing-dev", raw)["a10"].fits, distribution
