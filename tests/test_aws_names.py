"""Every AWS name gpufleet derives fits its limit, whatever the cluster is called (review
eks-2.md N1): the shipped EKS stacks planned with the longest cluster name EKS accepts (100
characters) and with a realistic one, every named resource's physical name (given, `namePrefix`
plus the provider's 26 characters, or Pulumi's autoname) checked against AWS's limit from
`components.aws.model.names`, and every tag against AWS's tag limits."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from components.aws.model import names
from components.model.config import parse_config
from components.tooling.engine import Plan
from components.tooling.stacks import load_stack, shipped_stacks
from tests.conftest import plan_of

AWS_STACKS = [s for s in shipped_stacks() if load_stack(s).gpufleet["cloud"] == "aws"]
LONGEST = "L" + "o" * 98 + "g"  # EKS: 1-100 of A-Z a-z 0-9 - _
REALISTIC = "ml-platform-prod-us-east-1"


def _renamed(stack: str, name: str) -> Plan:
    cluster = {**load_stack(stack).gpufleet["cluster"], "name": name}
    return plan_of(stack, {"gpufleet:cluster": cluster})


def _tags(resource_inputs: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Every tag a resource sets: `tags` maps, auto scaling group tag lists, and the tags a
    launch template gives what it launches."""
    tags = resource_inputs.get("tags")
    if isinstance(tags, Mapping):
        yield from ((str(k), str(v)) for k, v in tags.items())
    elif isinstance(tags, list):
        yield from ((str(t["key"]), str(t["value"])) for t in tags)
    for spec in resource_inputs.get("tagSpecifications") or []:
        yield from ((str(k), str(v)) for k, v in (spec.get("tags") or {}).items())


def _overflows(plan: Plan) -> list[str]:
    found = []
    for resource in plan.resources:
        length = names.physical_length(resource.type, resource.name, resource.inputs)
        limit = names.NAME_LIMITS.get(resource.type)
        if length is not None and limit is not None and length > limit.limit:
            found.append(f"{resource.type} {resource.name}: {length} > {limit.limit}")
        if not resource.type.startswith("aws:"):
            continue
        for key, value in _tags(resource.inputs):
            if len(key) > names.TAG_KEY_MAX or len(value) > names.TAG_VALUE_MAX:
                found.append(f"{resource.type} {resource.name}: tag {key}={value}")
    return found


def test_the_longest_cluster_name_is_accepted() -> None:
    raw = load_stack("aws-karpenter").gpufleet
    assert parse_config({**raw, "cluster": {**raw["cluster"], "name": LONGEST}})


@pytest.mark.parametrize("stack", AWS_STACKS)
def test_every_name_fits_with_the_longest_cluster_name(stack: str) -> None:
    plan = _renamed(stack, LONGEST)
    named = [r for r in plan.resources if names.physical_length(r.type, r.name, r.inputs)]
    assert len(named) >= 5, "the plan names resources"
    assert not _overflows(plan)


@pytest.mark.parametrize("stack", ["aws-dev", "aws-karpenter", "aws-auto-mode"])
def test_a_realistic_long_name_works_with_every_provisioner(stack: str) -> None:
    plan = _renamed(stack, REALISTIC)
    assert not _overflows(plan)
    # The names that overflowed before (review eks-2.md N1) now carry a shortened prefix.
    shortened = [r.name for r in plan.resources if r.inputs.get("namePrefix")]
    # (The node termination handler's and Karpenter's event rules; nothing of Auto Mode's.)
    assert bool(shortened) == (stack != "aws-auto-mode"), shortened


def test_the_shipped_names_are_untouched() -> None:
    """A name that fits keeps Pulumi's autoname: upgrading gpufleet renames (replaces) nothing."""
    plan = plan_of("aws-training")
    roles = [r for r in plan.resources if r.type == names.ROLE]
    assert roles and not any("namePrefix" in r.inputs or "name" in r.inputs for r in roles)


def test_shortened_names_fit_and_stay_distinct() -> None:
    first = names.name_args(names.ROLE, LONGEST + "-karpenter-controller")
    second = names.name_args(names.ROLE, LONGEST + "-cluster")
    assert first["name_prefix"] != second["name_prefix"]
    assert len(first["name_prefix"]) + names.PREFIX_SUFFIX == 64
    target = names.name_args(names.EVENT_TARGET, LONGEST + "-spot-drainer-rebalance-target")
    assert len(target["target_id"]) == 64
    assert names.name_args(names.ROLE, "gpufleet-dev-cluster") == {}
