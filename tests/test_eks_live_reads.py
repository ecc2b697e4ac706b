"""The program's reads of an EKS cluster's managed node groups never end in a traceback (review
eks-3.md R3-11): a read the deployer may not make, or a group EKS describes without a scaling
config (one that failed to create), stops the plan with what was read, why, and the permissions
the identity running pulumi needs."""

from __future__ import annotations

import dataclasses

import pytest

from components.aws.live_groups import READ_ACTIONS
from components.tooling.commands import BadInput
from components.tooling.engine import described_world, plan_stack
from components.tooling.stacks import load_stack

STACK = "aws-training"  # managed groups: the program reads them


def _running(**world: object) -> None:
    stack = load_stack(STACK)
    described = dataclasses.replace(described_world(stack.config), exists=True, **world)
    plan_stack(stack, None, described)


def test_a_denied_read_names_the_permission_and_no_traceback() -> None:
    with pytest.raises(BadInput) as caught:
        _running(eks_reads_denied=True)
    message = str(caught.value)
    assert "cluster gpufleet-training: gpufleet reads its EKS managed node groups" in message
    assert "AccessDeniedException" in message and "eks:ListClusters" in message
    assert all(action in message for action in READ_ACTIONS)
    assert "Traceback" not in message


def test_a_group_without_a_scaling_config_is_named() -> None:
    failed = {"h100-us-west-2a": {"labels": {}, "tags": {}}}  # CREATE_FAILED: no sizes
    with pytest.raises(BadInput) as caught:
        _running(eks_node_groups=failed)
    message = str(caught.value)
    assert "could not read node group h100-us-west-2a (eks:DescribeNodegroup)" in message
    assert "it has no scaling config (status CREATE_FAILED)" in message
    assert "fix or delete it in EKS first" in message
