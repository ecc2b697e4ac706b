"""GPU pool rules: scale to zero, GPU taint, and the EKS autoscaler's view of a pool at zero."""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyResource,
    ResourceValidationPolicy,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from .resources import (
    AKS_AGENT_POOL,
    AKS_CLUSTER,
    CA_ENABLED_TAG,
    CA_TAG,
    EC2_GPU_TYPE,
    EFFECTS,
    EKS_ASG,
    GPUFLEET_OWNER_TAG,
    HELM_TYPES,
    LAUNCH_TEMPLATE,
    NODE_TEMPLATE_GPUS,
    NODE_TEMPLATE_TAINT,
    as_int,
    asg_tags,
    get,
    gpu_pools,
    is_gpu_asg,
    is_gpu_taint,
    min_size,
    parse_taint,
    pool_taints,
    seq,
)
from .rules import resource_rule, stack_rule

GPU_TAINT_TEXT = "`nvidia.com/gpu` (or AKS's `sku=gpu`) with effect NoSchedule"


def check_scale_to_zero(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """Every GPU pool's lower autoscaling bound is 0, so an idle pool costs nothing."""
    problems = []
    for name, pool in gpu_pools(resource_type, props):
        kind = AKS_AGENT_POOL if resource_type == AKS_CLUSTER else resource_type
        low, where = min_size(kind, pool)
        if low == 0:
            continue
        if " " in where:  # a sentence: the pool has no autoscaling at all
            problems.append(f"GPU pool {name!r} cannot scale to zero: {where}")
        else:
            shown = "unset" if low is None else low
            problems.append(
                f"GPU pool {name!r} cannot scale to zero: {where} is {shown}, must be 0"
            )
    return problems


def check_gpu_taint(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """Every GPU pool taints its nodes, so pods that ask for no GPU never keep them running."""
    problems = []
    for name, pool in gpu_pools(resource_type, props):
        kind = AKS_AGENT_POOL if resource_type == AKS_CLUSTER else resource_type
        if not any(is_gpu_taint(*taint) for taint in pool_taints(kind, pool)):
            where = "node-template taint tag" if resource_type == EKS_ASG else "taint"
            problems.append(f"GPU pool {name!r} has no GPU {where}: expected {GPU_TAINT_TEXT}")
    return problems


def check_autoscaler_template(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """A GPU ASG tells the cluster autoscaler what a node would offer while it has none."""
    if resource_type != EKS_ASG or not is_gpu_asg(props):
        return []
    tags = asg_tags(props)
    name = props.get("name") or "group"
    problems = []
    own = [k for k, v in tags.items() if k.startswith(GPUFLEET_OWNER_TAG) and v == "owned"]
    if not own and tags.get(CA_ENABLED_TAG) != "true":
        problems.append(
            f"GPU group {name!r}: tag {CA_ENABLED_TAG}=true missing, the autoscaler will not discover it"
        )
    owners = [
        k
        for k, v in tags.items()
        if k.startswith(CA_TAG)
        and "/" not in k[len(CA_TAG) :]
        and k != CA_ENABLED_TAG
        and v == "owned"
    ]
    if not own and not owners:
        problems.append(
            f"GPU group {name!r}: tag {CA_TAG}<cluster>=owned missing, the autoscaler will not discover it"
        )
    gpus = as_int(tags.get(NODE_TEMPLATE_GPUS))
    if gpus is None or gpus < 1:
        problems.append(
            f"GPU group {name!r}: tag {NODE_TEMPLATE_GPUS} must give the GPUs per node (a whole number >= 1); "
            "without it a pending GPU pod never scales the group up from zero"
        )
    for key, value in tags.items():
        if key.startswith(NODE_TEMPLATE_TAINT):
            _, colon, effect = value.rpartition(":")
            if not colon or effect not in EFFECTS.values():
                problems.append(
                    f"GPU group {name!r}: tag {key}={value!r} must read `<value>:<Effect>` "
                    f"(Effect one of {', '.join(sorted(EFFECTS.values()))}); the autoscaler ignores it otherwise"
                )
    return problems


def kubelet_taints(user_data: Any) -> list[tuple[str, str | None, str]] | None:
    """Taints a node registers from its user data (base64 or plain): AL2023 nodeadm or
    bootstrap `--register-with-taints`, or Bottlerocket `settings.kubernetes.node-taints`;
    None when the user data sets none."""
    if not isinstance(user_data, str) or not user_data:
        return None
    text = user_data
    with contextlib.suppress(binascii.Error, UnicodeDecodeError):
        text = base64.b64decode(user_data, validate=True).decode("utf-8")
    taints: list[tuple[str, str | None, str]] = []
    flags = re.findall(r"--register-with-taints=([^\s'\"]+)", text)
    for flag in flags:
        taints += [t for t in (parse_taint(item) for item in flag.split(",")) if t]
    bottlerocket = _bottlerocket_taints(text)
    if not flags and bottlerocket is None:
        return None
    return taints + (bottlerocket or [])


def _bottlerocket_taints(text: str) -> list[tuple[str, str | None, str]] | None:
    """Bottlerocket TOML: `[settings.kubernetes.node-taints]` key = ["value:Effect", ...]."""
    if "[settings." not in text:
        return None
    try:
        settings = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    table = get(settings, "settings", "kubernetes", "node-taints")
    if not isinstance(table, Mapping):
        return None
    taints: list[tuple[str, str | None, str]] = []
    for key, entries in table.items():
        for entry in seq(entries):
            value, colon, effect = str(entry).rpartition(":")
            if colon:
                taints.append((str(key), value, effect))
    return taints


def check_eks_stack(resources: Sequence[PolicyResource]) -> list[tuple[str, str | None]]:
    """Across the stack: a GPU ASG is recognisable as one at zero (its launch template's GPU
    instance type shows too), its nodes register the taints its template tags announce, and a
    cluster autoscaler is installed to act on them. Returns (message, urn) pairs."""
    problems: list[tuple[str, str | None]] = []
    gpu_groups = []
    for group in (r for r in resources if r.resource_type == EKS_ASG):
        templates = [d for d in group.dependencies if d.resource_type == LAUNCH_TEMPLATE]
        launches_gpu = any(
            EC2_GPU_TYPE.match(str(get(t.props, "instanceType") or "")) for t in templates
        )
        if not (is_gpu_asg(group.props) or launches_gpu):
            continue
        gpu_groups.append(group)
        tags = asg_tags(group.props)
        if NODE_TEMPLATE_GPUS not in tags:
            problems.append(
                (
                    f"group {group.name!r} launches GPU instances but has no {NODE_TEMPLATE_GPUS} tag: "
                    "the autoscaler cannot see its GPUs while it is at zero",
                    group.urn,
                )
            )
        announced = set(pool_taints(EKS_ASG, group.props))
        for template in templates:
            try:
                registered = kubelet_taints(template.props.get("userData"))
            except UnknownValueError:
                continue  # user data known only after the cluster exists (preview)
            if registered is None:
                problems.append(
                    (
                        f"launch template {template.name!r} of GPU group {group.name!r} registers no taints "
                        f"(--register-with-taints): nodes would carry no {GPU_TAINT_TEXT}",
                        template.urn,
                    )
                )
                continue
            if not any(is_gpu_taint(*t) for t in registered):
                problems.append(
                    (
                        f"launch template {template.name!r}: nodes register no GPU taint, expected {GPU_TAINT_TEXT}",
                        template.urn,
                    )
                )
            missing = sorted(f"{k}={v}:{e}" for k, v, e in set(registered) - announced)
            if missing:
                problems.append(
                    (
                        f"group {group.name!r}: nodes register taints {', '.join(missing)} that its "
                        f"{NODE_TEMPLATE_TAINT}* tags do not announce; the autoscaler would scale up for pods "
                        "that cannot run there",
                        group.urn,
                    )
                )
    if gpu_groups and not any(
        r.resource_type in HELM_TYPES and "cluster-autoscaler" in str(get(r.props, "chart") or "")
        for r in resources
    ):
        problems.append(
            (
                "the stack has self-managed GPU groups but no cluster-autoscaler Helm release: nothing "
                "scales them up from zero",
                None,
            )
        )
    return problems


scale_to_zero = ResourceValidationPolicy(
    name="gpu-pools-scale-to-zero",
    description="Every GPU node pool (GKE node pool, EKS node group or ASG, AKS agent pool) can scale down to zero nodes.",
    validate=resource_rule(check_scale_to_zero),
    enforcement_level=EnforcementLevel.MANDATORY,
)
gpu_taint = ResourceValidationPolicy(
    name="gpu-pools-tainted",
    description="Every GPU node pool taints its nodes (nvidia.com/gpu, or sku=gpu on AKS, NoSchedule) so only GPU pods keep them up.",
    validate=resource_rule(check_gpu_taint),
    enforcement_level=EnforcementLevel.MANDATORY,
)
autoscaler_template = ResourceValidationPolicy(
    name="eks-gpu-groups-visible-at-zero",
    description="Every EKS GPU auto scaling group carries the cluster autoscaler's discovery and node-template tags (GPUs per node, taints as value:Effect).",
    validate=resource_rule(check_autoscaler_template),
    enforcement_level=EnforcementLevel.MANDATORY,
)
eks_stack = StackValidationPolicy(
    name="eks-gpu-groups-autoscaled",
    description="EKS GPU groups are recognisable at zero, their nodes register the taints their tags announce, and a cluster autoscaler runs.",
    validate=stack_rule(check_eks_stack),
    enforcement_level=EnforcementLevel.MANDATORY,
)

POLICIES = [scale_to_zero, gpu_taint, autoscaler_template, eks_stack]
