"""Every Spot pool on every cloud carries a node label saying so, which the autoscaler's picture
of the pool at zero has too (so a pod or a Flyte task that selects it scales the pool up).

The cloud's own label where the cloud sets it and its autoscaler sees it (GKE, AKS, Karpenter
and Auto Mode's per-node capacity type); gpufleet's `gpufleet.io/capacity-type=spot` on the
groups the cluster autoscaler scales on EKS: self-managed nodes get no Spot label from AWS, and
a managed group's `eks.amazonaws.com/capacityType` is not in the autoscaler's template at zero
(kubernetes/autoscaler cloudprovider/aws aws_wrapper.go getManagedNodegroupInfo).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.aws import user_data
from components.aws.model import karpenter
from components.model import karpenter_pool
from components.model.config import parse_config
from components.model.labels import RESERVED_LABEL_PREFIXES
from components.model.pools import PoolSpec, resolve_pool, resolve_pools
from components.model.schema import StackConfig
from components.tooling.consumers.flyte import flyte_settings
from components.tooling.pool_views import asgs_by_pool, pool_checks
from components.tooling.scheduling import fit_pool
from components.tooling.stacks import load_stack
from tests.conftest import plan_of

GPUFLEET_SPOT = ("gpufleet.io/capacity-type", "spot")


def raw_of(stack: str) -> dict[str, Any]:
    return copy.deepcopy(load_stack(stack).gpufleet)


def managed_spot() -> dict[str, Any]:
    raw = raw_of("aws-dev")
    raw["gpuPools"] = [
        {
            "name": "t4-spot",
            "accelerator": "t4",
            "machineType": "g4dn.xlarge",
            "spot": True,
            "zones": ["us-east-1a", "us-east-1b"],
            "aws": {"nodeGroup": "managed"},
        }
    ]
    return raw


def karpenter_spot_only() -> dict[str, Any]:
    raw = raw_of("aws-karpenter")
    del raw["gpuPools"][0]["aws"]["onDemandFallback"]
    return raw


# (stack or raw config, Spot pool, the label, whether it varies per node)
CASES: list[tuple[str, Any, str, tuple[str, str], bool]] = [
    ("gke", "gcp-dev", "l4-spot", ("cloud.google.com/gke-spot", "true"), False),
    ("gke-adopted", "gcp-existing", "l4-spot", ("cloud.google.com/gke-spot", "true"), False),
    ("aks", "azure-dev", "t4spot", ("kubernetes.azure.com/scalesetpriority", "spot"), False),
    ("eks-self-managed", "aws-dev", "t4-spot", GPUFLEET_SPOT, False),
    ("eks-self-managed-adopted", "aws-existing", "t4-spot", GPUFLEET_SPOT, False),
    ("eks-bottlerocket", "aws-training", "a100-spot", GPUFLEET_SPOT, False),
    ("eks-managed", managed_spot(), "t4-spot", GPUFLEET_SPOT, False),
    (
        "karpenter-fallback",
        "aws-karpenter",
        "l4",
        (karpenter_pool.CAPACITY_TYPE_LABEL, "spot"),
        True,
    ),
    (
        "karpenter-spot",
        karpenter_spot_only(),
        "l4",
        (karpenter_pool.CAPACITY_TYPE_LABEL, "spot"),
        False,
    ),
    ("auto-mode", "aws-auto-mode", "l4", (karpenter_pool.CAPACITY_TYPE_LABEL, "spot"), True),
]


def config_of(source: Any) -> StackConfig:
    return parse_config(raw_of(source) if isinstance(source, str) else source)


def spot_and_on_demand(config: StackConfig, name: str) -> tuple[PoolSpec, PoolSpec]:
    pool = next(p for p in config.gpu_pools if p.name == name)
    assert pool.spot
    on_demand = pool.model_copy(update={"spot": False})
    return resolve_pool(config, pool), resolve_pool(config, on_demand)


def carries(spec: PoolSpec, key: str, value: str, *, at_zero: bool) -> bool:
    labels = spec.autoscaler_labels if at_zero and spec.autoscaler_labels is not None else {}
    fixed = labels if at_zero else spec.node_labels
    return fixed.get(key) == value or value in spec.label_choices.get(key, ())


@pytest.mark.parametrize(
    ("source", "pool", "label", "per_node"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_every_spot_pool_carries_a_spot_label_its_autoscaler_sees_at_zero(
    source: Any, pool: str, label: tuple[str, str], per_node: bool
) -> None:
    spot, on_demand = spot_and_on_demand(config_of(source), pool)
    key, value = label
    assert carries(spot, key, value, at_zero=False)  # on the running nodes
    assert carries(spot, key, value, at_zero=True)  # in the template a scale-up is planned on
    assert not carries(on_demand, key, value, at_zero=False)  # and only because they are Spot
    # A pool that falls back to on-demand has both kinds of node: the label varies per node.
    assert (key in spot.label_choices) == per_node


def test_eks_managed_groups_capacity_label_is_on_nodes_but_not_in_the_template_at_zero() -> None:
    spot, _ = spot_and_on_demand(config_of(managed_spot()), "t4-spot")
    assert spot.node_labels["eks.amazonaws.com/capacityType"] == "SPOT"
    assert spot.autoscaler_labels is not None
    assert "eks.amazonaws.com/capacityType" not in spot.autoscaler_labels
    # So fit says a pod selecting AWS's label never scales the group up, gpufleet's does.
    (check,) = [c for c in pool_checks(config_of(managed_spot())) if c.name == "t4-spot"]
    toleration = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

    def pod(selector: dict[str, str]) -> dict[str, Any]:
        limits = {"nvidia.com/gpu": 1}
        return {
            "nodeSelector": selector,
            "tolerations": [toleration],
            "containers": [{"name": "c", "resources": {"limits": limits}}],
        }

    (_, view) = check.views[0]
    aws_label = fit_pool(pod({"eks.amazonaws.com/capacityType": "SPOT"}), view)
    assert not aws_label.fits
    assert "template of it (what it believes a new node would have) blocks" in aws_label.reasons[0]
    assert fit_pool(pod(dict([GPUFLEET_SPOT])), view).fits


def test_gpufleets_spot_label_is_one_kubelets_and_karpenter_accept() -> None:
    # NodeRestriction refuses kubelet self-labels under kubernetes.io and k8s.io; the Karpenter
    # NodePool CRD refuses its own domains in template labels (tests/data/karpenter_facts.json).
    key, _ = GPUFLEET_SPOT
    domain = key.split("/")[0]
    assert not domain.endswith(("kubernetes.io", "k8s.io"))
    assert not karpenter.reserved_label(key)
    # gpufleet owns the prefix, so a user label cannot collide with it.
    assert domain in RESERVED_LABEL_PREFIXES


def test_self_managed_spot_groups_register_and_advertise_the_label() -> None:
    # The whole graph: the kubelet's --node-labels and every group's node-template tag.
    plan = plan_of("aws-dev")
    groups = asgs_by_pool(plan.resources)
    key, value = GPUFLEET_SPOT
    assert {asg.labels.get(key) for asg in groups["t4-spot"]} == {value}
    assert {asg.labels.get(key) for asg in groups["l4"]} == {None}  # the on-demand pool
    templates = {
        r.name: user_data.parse_registration(r.inputs["userData"])
        for r in plan.of_type("aws:ec2/launchTemplate:LaunchTemplate")
        if "userData" in r.inputs
    }
    assert templates["gpufleet-dev-t4-spot-template"].labels[key] == value
    assert key not in templates["gpufleet-dev-l4-template"].labels


def test_flyte_selects_managed_spot_groups_by_a_label_the_autoscaler_sees_at_zero() -> None:
    raw = managed_spot()
    raw["gpuPools"].append({**raw["gpuPools"][0], "name": "t4", "spot": False})
    config = config_of(raw)
    plugin = flyte_settings(config, resolve_pools(config)).config
    # Not AWS's eks.amazonaws.com/capacityType: a task selecting it would never scale a managed
    # group up from zero.
    assert plugin["interruptible-node-selector-requirement"]["key"] == GPUFLEET_SPOT[0]
