"""The VPC CNI on its own role (issue 36, SEC-2): on a cluster gpufleet creates, vpc-cni gets an
EKS Pod Identity association to a role only kube-system/aws-node of that cluster can assume, and
no node role carries AmazonEKS_CNI_Policy; on an adopted cluster gpufleet's node roles drop it
only when the owner's vpc-cni has a role of its own. On a running stack the add-on moves to its
role in the same `up` that removes the policy from the node roles, which Pulumi deletes last."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from components.aws import iam
from components.aws.model import vpc_cni
from components.tooling.diff import diff_plans
from components.tooling.engine import Plan, described_world, plan_stack
from components.tooling.stacks import load_stack
from tests.conftest import every_stack, plan_of

ADDON = "aws:eks/addon:Addon"
ROLE = "aws:iam/role:Role"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
CNI_ARN = f"arn:aws:iam::aws:policy/{iam.CNI_POLICY}"
BEFORE_ISSUE_36 = Path(__file__).parent / "data" / "before_issue36"


def created_eks_stacks() -> list[str]:
    return [
        s
        for s in every_stack()
        if load_stack(s).gpufleet.get("cloud") == "aws"
        and "existing" not in load_stack(s).gpufleet["cluster"]
    ]


def cni_roles(plan: Plan) -> set[str]:
    """The logical names of the roles the CNI policy is attached to."""
    # Attachments are named <role>-<policy>.
    role_names = {f"{r.name}-{iam.CNI_POLICY}": r.name for r in plan.of_type(ROLE)}
    return {
        role_names[a.name] for a in plan.of_type(ATTACHMENT) if a.inputs["policyArn"] == CNI_ARN
    }


def node_roles(plan: Plan) -> set[str]:
    return {
        r.name
        for r in plan.of_type(ROLE)
        if json.loads(r.inputs["assumeRolePolicy"])["Statement"][0]["Principal"].get("Service")
        == "ec2.amazonaws.com"
    }


@pytest.mark.every_stack
@pytest.mark.parametrize("stack", created_eks_stacks())
def test_vpc_cni_has_its_own_role_and_no_node_role_has_its_policy(stack: str) -> None:
    plan = plan_of(stack)
    (addon,) = [r for r in plan.of_type(ADDON) if r.inputs["addonName"] == vpc_cni.ADDON]
    (association,) = addon.inputs["podIdentityAssociations"]
    assert association["serviceAccount"] == vpc_cni.SERVICE_ACCOUNT
    (role,) = [r for r in plan.of_type(ROLE) if r.name.endswith("-addons-vpc-cni")]
    assert association["roleArn"].endswith(f":role/{role.name}-0a1b2c3")
    assert cni_roles(plan) == {role.name}
    assert node_roles(plan)  # the node roles exist, without the policy
    assert not node_roles(plan) & cni_roles(plan)
    (statement,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(statement["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    (cluster,) = plan.of_type("aws:eks/cluster:Cluster")
    conditions = statement["Condition"]["StringEquals"]
    assert conditions == {
        "aws:RequestTag/eks-cluster-arn": (
            f"arn:aws:eks:{load_stack(stack).gpufleet['cluster']['region']}:123456789012:"
            f"cluster/{cluster.inputs['name']}"
        ),
        "aws:RequestTag/kubernetes-namespace": "kube-system",
        "aws:RequestTag/kubernetes-service-account": "aws-node",
    }


@pytest.mark.every_stack
@pytest.mark.parametrize("stack", created_eks_stacks())
def test_the_add_on_moves_before_nodes_start_and_after_its_role_has_the_policy(stack: str) -> None:
    plan = plan_of(stack)
    addons = {r.inputs["addonName"]: r for r in plan.of_type(ADDON)}
    cni = addons[vpc_cni.ADDON]
    (attachment,) = [
        a for a in plan.of_type(ATTACHMENT) if a.name.endswith(f"-vpc-cni-{iam.CNI_POLICY}")
    ]
    # EKS restarts aws-node onto the role when the association changes: the role has its policy.
    assert attachment.urn in cni.depends_on
    assert addons["eks-pod-identity-agent"].urn in cni.depends_on
    # The system group's first nodes start with pod networking.
    (system,) = [g for g in plan.of_type(NODE_GROUP) if g.name.endswith("-system")]
    assert cni.urn in system.depends_on
    # CoreDNS still waits for the nodes.
    assert system.urn in addons["coredns"].depends_on


def _adopted(vpc: str) -> Plan:
    stack = load_stack("aws-existing")
    world = dataclasses.replace(described_world(stack.config), vpc_cni=vpc)
    return plan_stack(stack, world=world)


@pytest.mark.parametrize(
    ("world", "said"),
    [
        ("node-role", "has no role of its own"),
        ("self-managed", "not checked"),
        # A role given to a running add-on reaches aws-node pods only as they restart
        # (amazon-vpc-cni-k8s#1338, amazon-eks-pod-identity-webhook#210): the policy stays.
        ("pod-identity", "has a Pod Identity association"),
        ("irsa", "has an IRSA role"),
    ],
)
def test_adopted_cluster_node_roles_keep_the_policy_and_say_why(world: str, said: str) -> None:
    plan = _adopted(world)
    roles = node_roles(plan)
    assert roles
    assert cni_roles(plan) == roles
    (warning,) = [w for w in plan.warnings if "keep AmazonEKS_CNI_Policy" in w]
    assert said in warning and "aws eks update-addon" in warning
    # gpufleet never touches the owner's add-ons.
    assert not plan.of_type(ADDON)


def test_the_default_world_keeps_the_adopted_example_unchanged() -> None:
    """aws-existing's world: an add-on on the nodes' credentials (EKS's default), so its node
    role keeps the policy and the plan says why."""
    assert cni_roles(plan_of("aws-existing")) == node_roles(plan_of("aws-existing"))


def _today(stack: str, old: dict[str, Any], plan: Plan | None = None) -> dict[str, Any]:
    document = (plan or plan_of(stack)).to_json()
    kept = {r["type"] for r in old["resources"]}
    return {**document, "resources": [r for r in document["resources"] if r["type"] in kept]}


@pytest.mark.parametrize("stack", ["aws-dev", "aws-karpenter", "aws-auto-mode"])
def test_upgrading_gpufleet_moves_the_cni_and_only_deletes_node_policy_attachments(
    stack: str,
) -> None:
    """The plan of main at a7c846e (tests/data/before_issue36) against today's: vpc-cni is
    updated in place with its association, its role and policy are added, and the only
    deletions are the node roles' CNI attachments, which nothing in today's plan depends on:
    Pulumi deletes them after every create and update, the add-on's among them."""
    old = json.loads((BEFORE_ISSUE_36 / f"{stack}.json").read_text())
    plan = plan_of(stack)
    diff = diff_plans(old, _today(stack, old, plan))
    (cni,) = [c for c in diff.changed if c.type == ADDON]
    assert cni.name.endswith("-vpc-cni") and not cni.replaces
    # Its association, and what it now waits for (its role's policy, the Pod Identity agent).
    assert {p.path for p in cni.changes} == {"podIdentityAssociations", "options.dependsOn"}
    assert sorted(r.type for r in diff.added) == [ROLE, ATTACHMENT]
    assert {r.name for r in diff.removed} == {
        f"{role}-{iam.CNI_POLICY}"
        for role in node_roles(plan)
        if not role.endswith("-nodes-role")  # Auto Mode's node role never had it
    }
    assert {r.type for r in diff.removed} == {ATTACHMENT}
    assert not diff.replaced
    removed = {r.urn for r in diff.removed}
    assert not [r.name for r in plan.resources if removed & set(r.dependencies)]


def test_upgrading_gpufleet_leaves_an_adopted_cluster_on_the_nodes_credentials_alone() -> None:
    old = json.loads((BEFORE_ISSUE_36 / "aws-existing.json").read_text())
    diff = diff_plans(old, _today("aws-existing", old))
    assert not diff.removed and not diff.added
    assert not [c for c in diff.changed if c.type in (ROLE, ATTACHMENT)]
    # Nor once its owner gives vpc-cni a role: aws-node pods already running keep the node's
    # credentials until they restart, which gpufleet cannot see.
    moved = diff_plans(old, _today("aws-existing", old, _adopted("pod-identity")))
    assert not moved.removed and not moved.added


def test_plan_prints_what_the_program_warns_once(capsys: pytest.CaptureFixture[str]) -> None:
    """`plan` shows the program's own warnings (here the adopted cluster's vpc-cni), as `pulumi
    preview` would, and not a second time what the config check printed."""
    from components.tooling.cli import main as cli_main

    assert cli_main(["plan", "aws-existing"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert any("keep AmazonEKS_CNI_Policy" in line for line in lines)
    assert len(lines) == len(set(lines))


def test_a_denied_vpc_cni_read_stops_with_the_actions_to_grant() -> None:
    """A denied or throttled DescribeAddon is not "no add-on" (review of the eks-4 fixes, N-5)."""
    from components.tooling.commands import BadInput

    with pytest.raises(BadInput) as caught:
        _adopted("denied")
    message = str(caught.value)
    assert "cannot read the vpc-cni add-on of cluster platform-prod" in message
    assert "AccessDeniedException" in message and "Traceback" not in message
    assert "eks:DescribeAddon and eks:DescribePodIdentityAssociation" in message
