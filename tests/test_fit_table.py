"""`fit` verdicts per cloud, table by table: manifests written the way GKE, EKS, AKS and the
tools' docs write them, against test stacks of each cloud, with the expected pools and reasons."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from components.model.config import StackConfig, parse_config
from components.model.pools import resolve_pools
from components.tooling.engine import RecordedResource
from components.tooling.fit import PoolVerdict, fit_templates
from components.tooling.pool_views import LABEL_TAG, RESOURCE_TAG, TAINT_TAG, PoolCheck, pool_checks
from components.tooling.scheduling import extract_pod_templates
from components.tooling.stacks import load_stack

FIXTURES = Path(__file__).parent / "fixtures" / "fit"
STACKS = FIXTURES / "stacks"


@functools.cache
def config_of(stack: str) -> StackConfig:
    return parse_config(load_stack(str(STACKS / f"{stack}.yaml")).gpufleet)


def asg_for(
    config: StackConfig, pool: str, zone: str, *, drop: tuple[str, ...] = ()
) -> RecordedResource:
    """An ASG as gpufleet's EKS component tags it (discovery + node-template tags); `drop`
    removes tags whose key ends with one of the given suffixes."""
    spec = next(p for p in resolve_pools(config) if p.name == pool)
    tags = {
        "k8s.io/cluster-autoscaler/enabled": "true",
        f"k8s.io/cluster-autoscaler/{config.cluster.name}": "owned",
        **{LABEL_TAG + key: value for key, value in spec.declared_labels.items()},
        **{TAINT_TAG + t.key: f"{t.value}:{t.effect}" for t in spec.declared_taints},
        RESOURCE_TAG + spec.gpu_resource: str(spec.allocatable_per_node[spec.gpu_resource]),
        RESOURCE_TAG + "ephemeral-storage": "100Gi",
    }
    tags = {k: v for k, v in tags.items() if not any(k.endswith(suffix) for suffix in drop)}
    name = f"{config.cluster.name}-{pool}-{zone}"
    return RecordedResource(
        urn=f"urn:pulumi:test::gpufleet::aws:autoscaling/group:Group::{name}",
        type="aws:autoscaling/group:Group",
        name=name,
        parent=None,
        custom=True,
        provider=None,
        dependencies=(),
        inputs={
            "minSize": 0,
            "maxSize": 2,
            "tags": [{"key": k, "value": v, "propagateAtLaunch": False} for k, v in tags.items()],
        },
        protect=False,
        ignore_changes=(),
        delete_before_replace=False,
        depends_on=(),
    )


def eks_graph(**drop: tuple[str, ...]) -> list[RecordedResource]:
    """The test EKS stack's self-managed ASGs, one per zone; drop[pool] removes tags."""
    config = config_of("eks")
    return [
        asg_for(config, pool, zone, drop=drop.get(pool, ()))
        for pool in ("t4", "a100")
        for zone in config.cluster.zones or ()
    ]


@functools.cache
def checks_of(stack: str) -> tuple[PoolCheck, ...]:
    resources = eks_graph() if stack == "eks" else None
    return tuple(pool_checks(config_of(stack), resources))


def verdicts_by_pool(manifest: str, checks: tuple[PoolCheck, ...]) -> dict[str, PoolVerdict]:
    (template,) = extract_pod_templates((FIXTURES / manifest).read_text())
    (verdict,) = fit_templates([template], checks)
    return {pool.pool: pool for pool in verdict.pools}


@dataclass(frozen=True)
class Case:
    stack: str
    manifest: str
    fits: frozenset[str]
    reasons: dict[str, list[str]] = field(default_factory=dict)


CASES = {
    # --- GKE: the admission plugin adds the GPU toleration to pods requesting GPUs.
    "gke-docs-pod-auto-toleration": Case(
        "gke",
        "gke-gpu-pod.yaml",
        frozenset({"l4-shared"}),
        {
            "t4": [
                "nodeSelector cloud.google.com/gke-accelerator=nvidia-l4: node has "
                "cloud.google.com/gke-accelerator=nvidia-tesla-t4"
            ],
            "system": [
                "nodeSelector cloud.google.com/gke-accelerator=nvidia-l4: no such label",
                "requests nvidia.com/gpu: 1 but the node offers none",
            ],
        },
    ),
    "gke-cpu-pod-pinned-to-gpu-pool-no-auto-toleration": Case(
        "gke",
        "gpu-pool-without-gpu-pod.yaml",
        frozenset(),
        {
            "t4": ["taint nvidia.com/gpu=present:NoSchedule is not tolerated"],
            "system": [
                "nodeSelector cloud.google.com/gke-nodepool=t4: node has "
                "cloud.google.com/gke-nodepool=system"
            ],
        },
    ),
    "gke-autopilot-selector-and-gpu-request-without-limit": Case(
        "gke",
        "gke-autopilot-deployment.yaml",
        frozenset(),
        {
            "l4-shared": [
                "nodeSelector cloud.google.com/gke-accelerator-count=1: no such label",
                "requests nvidia.com/gpu=1 without limits nvidia.com/gpu",
            ]
        },
    ),
    "gke-time-sharing-clients-mismatch": Case(
        "gke",
        "gke-timesharing-deployment.yaml",
        frozenset(),
        {
            "l4-shared": [
                "nodeSelector cloud.google.com/gke-max-shared-clients-per-gpu=2: node has "
                "cloud.google.com/gke-max-shared-clients-per-gpu=4"
            ],
            "t4": ["nodeSelector cloud.google.com/gke-gpu-sharing-strategy=time-sharing: no such"],
        },
    ),
    "gke-time-sharing-two-gpus-per-container": Case(
        "gke",
        "gke-timesharing-two-gpus.yaml",
        frozenset(),
        {"l4-shared": ["container greedy: limits nvidia.com/gpu=2", "at most 1 shared GPU"]},
    ),
    "gke-mig-partition-selector": Case(
        "gke",
        "gke-mig-pod.yaml",
        frozenset({"a100-mig"}),
        {"h100": ["nodeSelector cloud.google.com/gke-gpu-partition-size=1g.5gb: no such label"]},
    ),
    "mixed-strategy-mig-resource": Case(
        "gke",
        "mixed-mig-resource-pod.yaml",
        frozenset(),
        {"a100-mig": ["requests nvidia.com/mig-1g.5gb: 1 but the node offers none"]},
    ),
    "too-many-gpus": Case(
        "gke",
        "too-many-gpus-job.yaml",
        frozenset(),
        {"h100": ["requests nvidia.com/gpu: 16 but a node offers 8"]},
    ),
    "cpu-and-memory-larger-than-the-machine": Case(
        "gke",
        "too-big-statefulset.yaml",
        frozenset(),
        {
            "h100": [
                # a3-highgpu-8g: 208 vCPU and 1872 GiB, less GKE's reservations (image
                # streaming's 17.68 GiB among them)
                "requests cpu 300 but a node's allocatable less its DaemonSets is 207.36 vCPU",
                "requests memory 2000 GiB but a node's allocatable less its DaemonSets is 1780.35 GiB",
            ]
        },
    ),
    "required-affinity-in-doesnotexist-gt-two-terms": Case(
        "gke",
        "affinity-cronjob.yaml",
        frozenset({"t4"}),
        {
            "l4-shared": [
                "required node affinity: no term matches",
                "term 1: cloud.google.com/gke-spot DoesNotExist but node has "
                "cloud.google.com/gke-spot=true",
                "term 2: cloud.google.com/gke-max-shared-clients-per-gpu Gt [8] but node has "
                "cloud.google.com/gke-max-shared-clients-per-gpu=4",
            ],
            "h100": ["cloud.google.com/gke-accelerator In [nvidia-tesla-t4, nvidia-l4] but"],
        },
    ),
    # --- EKS runs ExtendedResourceToleration (every platform version): a pod requesting
    # nvidia.com/gpu tolerates nvidia.com/gpu=true without listing it, as on GKE.
    "eks-docs-pod-tolerated-by-admission": Case(
        "eks",
        "eks-nvidia-smi-pod.yaml",
        frozenset({"t4", "l4m", "a100"}),
        {"system": ["requests nvidia.com/gpu: 1 but the node offers none"]},
    ),
    "eks-accelerator-selector-exists-toleration": Case(
        "eks",
        "eks-tolerating-deployment.yaml",
        frozenset({"t4"}),
        {
            "l4m": [
                "nodeSelector k8s.amazonaws.com/accelerator=nvidia-t4: node has "
                "k8s.amazonaws.com/accelerator=nvidia-l4"
            ]
        },
    ),
    "eks-custom-pool-label": Case(
        "eks",
        "eks-team-pod.yaml",
        frozenset({"t4"}),
        {"a100": ["nodeSelector team=ml-research: no such label"]},
    ),
    "eks-empty-key-exists-toleration": Case(
        "eks",
        "tolerate-everything-daemonset.yaml",
        frozenset({"t4", "l4m", "a100"}),
        {"system": ["nodeSelector nvidia.com/gpu=true: no such label"]},
    ),
    "eks-gke-style-pod": Case(
        "eks",
        "gke-gpu-pod.yaml",
        frozenset(),
        {"t4": ["nodeSelector cloud.google.com/gke-accelerator=nvidia-l4: no such label"]},
    ),
    # --- AKS: sku=gpu on every GPU pool, plus the spot taint AKS adds to Spot pools.
    "aks-docs-job-on-spot-pool": Case(
        "aks",
        "aks-mnist-job.yaml",
        frozenset({"a100mig"}),
        {
            "t4spot": [
                "taint kubernetes.azure.com/scalesetpriority=spot:NoSchedule is not tolerated"
            ]
        },
    ),
    "aks-spot-job": Case(
        "aks",
        "aks-spot-job.yaml",
        frozenset({"t4spot"}),
        {"a100mig": ["nodeSelector kubernetes.azure.com/scalesetpriority=spot: no such label"]},
    ),
    # AKS runs the plugin too, but it tolerates the requested resource's key, not AKS's sku.
    "aks-eks-style-pod": Case(
        "aks",
        "eks-nvidia-smi-pod.yaml",
        frozenset(),
        {
            "t4spot": [
                "taint sku=gpu:NoSchedule is not tolerated (the API server adds tolerations only "
                "for the resources the pod requests (nvidia.com/gpu, NoSchedule), not for sku; "
                "the pod must list one)",
                "taint kubernetes.azure.com/scalesetpriority=spot:NoSchedule is not tolerated",
            ]
        },
    ),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_verdicts_and_reasons(case: Case) -> None:
    verdicts = verdicts_by_pool(case.manifest, checks_of(case.stack))
    assert {name for name, v in verdicts.items() if v.fits} == case.fits, verdicts
    for pool, expected in case.reasons.items():
        text = "\n".join(verdicts[pool].reasons)
        for fragment in expected:
            assert fragment in text, f"{pool}: {fragment!r} not in:\n{text}"
    for pool in case.fits:  # a fitting pool gives no reason
        assert verdicts[pool].reasons == ()


def test_pools_at_zero_are_judged_by_the_autoscaler_template_running_pools_by_nodes() -> None:
    verdicts = verdicts_by_pool("eks-tolerating-deployment.yaml", checks_of("eks"))
    assert verdicts["t4"].via == "autoscaler template at zero"
    assert verdicts["l4m"].via == "autoscaler template at zero"
    assert verdicts["a100"].via == "running nodes"
    assert verdicts["system"].via == "running nodes"


def test_existing_cluster_with_unknown_machine_does_not_invent_cpu_limits() -> None:
    pod = {
        "nodeSelector": {"gpu-type": "a100"},
        "tolerations": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
        "containers": [
            {
                "name": "x",
                "resources": {"requests": {"cpu": "500"}, "limits": {"nvidia.com/gpu": 8}},
            }
        ],
    }
    (check,) = checks_of("existing")
    (verdict,) = fit_templates(
        extract_pod_templates(__import__("json").dumps(pod)), checks_of("existing")
    )
    (dgx,) = verdict.pools
    assert dgx.fits
    assert any("CPU and memory not checked" in note for note in check.notes)
    too_many = {
        **pod,
        "containers": [{"name": "x", "resources": {"limits": {"nvidia.com/gpu": 9}}}],
    }
    (verdict,) = fit_templates(
        extract_pod_templates(__import__("json").dumps(too_many)), checks_of("existing")
    )
    assert verdict.pools[0].reasons == (
        "requests nvidia.com/gpu: 9 but a node offers 8 (container x: limits nvidia.com/gpu=9)",
    )
