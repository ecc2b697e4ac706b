"""AWS rules: launch templates with IMDSv2 and encrypted disks; least-privilege IAM for the
cluster autoscaler (no wildcard actions, scaling only groups tagged for this cluster); SQS queue
policies that admit AWS services only from this account's sources and nothing without TLS."""

from __future__ import annotations

import json
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    ResourceValidationPolicy,
)

from .resources import (
    CA_ENABLED_TAG,
    CA_TAG,
    GPUFLEET_OWNER_TAG,
    LAUNCH_TEMPLATE,
    as_int,
    get,
    seq,
    unwrap,
)
from .rules import resource_rule

# Provider type tokens written out here, not asked of gpufleet's clouds: the pack runs in
# Pulumi's analyzer, in its own virtualenv without gpufleet's program, and judges whatever
# resources a preview reports (tests/test_architecture.py lets policy/ keep them).
IAM_POLICY_TYPES = (
    "aws:iam/policy:Policy",
    "aws:iam/rolePolicy:RolePolicy",
    "aws:iam/userPolicy:UserPolicy",
    "aws:iam/groupPolicy:GroupPolicy",
)
IAM_ROLE = "aws:iam/role:Role"
QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy"
# Condition keys that bind a service principal to the stack's own resources or account
# (EventBridge user guide, "Amazon SQS permissions"; IAM, "The confused deputy problem").
SOURCE_CONDITION_KEYS = ("aws:SourceArn", "aws:SourceAccount")
IAM_ATTACHMENTS = (
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    "aws:iam/policyAttachment:PolicyAttachment",
)
# Actions that change an auto scaling group's size or instances: what the autoscaler needs, and
# what must never reach groups outside its cluster.
SCALING_ACTIONS = (
    "autoscaling:SetDesiredCapacity",
    "autoscaling:TerminateInstanceInAutoScalingGroup",
    "autoscaling:UpdateAutoScalingGroup",
)
# Owner tags a scaling statement may be conditioned on: the autoscaler's per-cluster tag (with
# its `enabled` tag), or on a cluster gpufleet adopts gpufleet's own alone (the owner's managed
# groups carry the former; gpufleet's groups there carry only the latter).
OWNER_TAG_PREFIXES = (CA_TAG, GPUFLEET_OWNER_TAG)
# Condition keys that tie an action to the autoscaler's discovery tags on the group.
TAG_CONDITION_PREFIXES = ("aws:ResourceTag/", "autoscaling:ResourceTag/")
# AWS managed policies that grant every action of a service (or of every service).
BROAD_MANAGED_POLICIES = (
    "AdministratorAccess",
    "PowerUserAccess",
    "AutoScalingFullAccess",
    "AmazonEC2FullAccess",
)


def check_launch_template(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """IMDSv2 only, one hop (pods cannot reach the node role's credentials), and every EBS volume
    encrypted."""
    if resource_type != LAUNCH_TEMPLATE:
        return []
    problems = []
    tokens = get(props, "metadataOptions", "httpTokens")
    if tokens != "required":
        problems.append(f"metadataOptions.httpTokens is {tokens!r}: set 'required' (IMDSv2 only)")
    hops = get(props, "metadataOptions", "httpPutResponseHopLimit")
    if as_int(hops) != 1:
        # Unset, EC2 takes the AMI's default, which is 2 for AMIs registered with ImdsSupport
        # v2.0 (EC2 API reference, Image: ImdsSupport).
        problems.append(
            f"metadataOptions.httpPutResponseHopLimit is {hops!r}: set 1, so that only the node, "
            "not a pod one network hop further, gets the node role's credentials (pods use IRSA)"
        )
    volumes = [
        m for m in seq(props.get("blockDeviceMappings")) if isinstance(get(m, "ebs"), Mapping)
    ]
    if not volumes:
        problems.append(
            "no blockDeviceMappings with an `ebs` block: the root volume would follow the AMI "
            "and the account default, not be encrypted by this template"
        )
    for mapping in volumes:
        # pulumi-aws types `encrypted` as a string ("true"/"false").
        encrypted = get(mapping, "ebs", "encrypted")
        if str(encrypted).lower() != "true":
            device = get(mapping, "deviceName") or "volume"
            problems.append(f"{device}: ebs.encrypted is {encrypted!r}, must be 'true'")
    return problems


def policy_documents(resource_type: str, props: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(where, document) for each IAM policy document the resource carries."""
    if resource_type in IAM_POLICY_TYPES:
        return [("policy", props.get("policy"))]
    if resource_type == IAM_ROLE:
        return [
            (f"inlinePolicies[{i}]", get(p, "policy"))
            for i, p in enumerate(seq(props.get("inlinePolicies")))
            if get(p, "policy") is not None
        ]
    return []


def check_policy_document(document: Any) -> list[str]:
    """No `*` or whole-service actions; scaling actions only on this cluster's tagged groups."""
    document = unwrap(document)
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except json.JSONDecodeError:
            return ["the policy is not valid JSON"]
    if not isinstance(document, Mapping):
        return ["the policy is not a JSON object"]
    problems = []
    for index, statement in enumerate(seq(document.get("Statement"))):
        if not isinstance(statement, Mapping) or statement.get("Effect") != "Allow":
            continue
        sid = statement.get("Sid") or f"Statement[{index}]"
        if "NotAction" in statement:
            problems.append(f"{sid}: Allow with NotAction grants every other action")
        actions = [str(a) for a in seq(statement.get("Action"))]
        for action in actions:
            if action == "*" or action.endswith(":*"):
                problems.append(f"{sid}: wildcard action {action!r}")
        scaling = [
            name
            for name in SCALING_ACTIONS
            if any(fnmatchcase(name.lower(), a.lower()) for a in actions)
        ]
        if scaling and not _scoped(statement):
            problems.append(
                f"{sid}: {', '.join(scaling)} on any group; restrict it with the conditions "
                f"aws:ResourceTag/{CA_ENABLED_TAG}=true and aws:ResourceTag/{CA_TAG}<cluster>=owned "
                f"(or, on an adopted cluster, aws:ResourceTag/{GPUFLEET_OWNER_TAG}<cluster>=owned)"
            )
    return problems


def _scoped(statement: Mapping[str, Any]) -> bool:
    """The statement reaches only named groups, or only groups tagged for one cluster."""
    resources = [str(r) for r in seq(statement.get("Resource"))]
    if resources and not any("*" in r for r in resources):
        return True
    conditions = get(statement, "Condition") or {}
    tags: dict[str, str] = {}
    for operator in ("StringEquals", "StringEqualsIgnoreCase"):
        for key, value in (get(conditions, operator) or {}).items():
            for prefix in TAG_CONDITION_PREFIXES:
                if str(key).startswith(prefix):
                    tags[str(key)[len(prefix) :]] = str(unwrap(value))
    enabled = tags.get(CA_ENABLED_TAG) == "true"
    owned = any(
        k.startswith(OWNER_TAG_PREFIXES) and k != CA_ENABLED_TAG and v == "owned"
        for k, v in tags.items()
    )
    gpufleets = any(k.startswith(GPUFLEET_OWNER_TAG) and v == "owned" for k, v in tags.items())
    return (enabled and owned) or gpufleets


def check_iam(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """IAM documents and managed-policy attachments of the stack, as `check_policy_document`."""
    problems = []
    for where, document in policy_documents(resource_type, props):
        problems += [f"{where}: {p}" for p in check_policy_document(document)]
    if resource_type in IAM_ATTACHMENTS:
        arn = str(props.get("policyArn") or "")
        name = arn.rsplit("/", 1)[-1]
        if arn.startswith("arn:aws:iam::aws:policy/") and name in BROAD_MANAGED_POLICIES:
            problems.append(f"attaches the AWS managed policy {name}, which grants whole services")
    return problems


def check_queue_policy(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """A service may send only from the stack's sources; nothing may reach it without TLS.
    A document not known yet (a first preview) is checked on the next one."""
    if resource_type != QUEUE_POLICY:
        return []
    document = unwrap(props.get("policy"))
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except json.JSONDecodeError:
            return ["the policy is not valid JSON"]
    if not isinstance(document, Mapping):
        return []
    statements = [s for s in seq(document.get("Statement")) if isinstance(s, Mapping)]
    problems = []
    for index, statement in enumerate(statements):
        if statement.get("Effect") != "Allow":
            continue
        sid = statement.get("Sid") or f"Statement[{index}]"
        principal = statement.get("Principal")
        anyone = principal == "*" or "*" in [
            str(p) for p in seq(get(statement, "Principal", "AWS"))
        ]
        service = get(statement, "Principal", "Service")
        if anyone:
            problems.append(f"{sid}: allows any principal ('*'): the queue is public")
            continue
        if service is None:
            continue
        # Only a binding operator counts: StringNotEquals aws:SourceAccount binds nothing.
        keys = {
            key
            for operator, condition in (get(statement, "Condition") or {}).items()
            if operator in ("ArnEquals", "ArnLike", "StringEquals")
            for key in (condition or {})
        }
        if not keys & set(SOURCE_CONDITION_KEYS):
            problems.append(
                f"{sid}: {service} may send from any account; bind it with ArnEquals "
                "aws:SourceArn (the rules' ARNs) or StringEquals aws:SourceAccount"
            )
    if not any(
        s.get("Effect") == "Deny"
        and str(get(s, "Condition", "Bool", "aws:SecureTransport")).lower() == "false"
        for s in statements
    ):
        problems.append("no statement denies requests without TLS (aws:SecureTransport false)")
    return problems


launch_templates = ResourceValidationPolicy(
    name="launch-templates-imdsv2-encrypted",
    description="EC2 launch templates require IMDSv2 (httpTokens=required) with a hop limit of 1 and encrypt every EBS volume.",
    validate=resource_rule(check_launch_template),
    enforcement_level=EnforcementLevel.MANDATORY,
)
iam_least_privilege = ResourceValidationPolicy(
    name="autoscaler-iam-least-privilege",
    description="IAM policies grant no '*' or whole-service actions, and auto scaling group changes only on groups tagged for this cluster.",
    validate=resource_rule(check_iam),
    enforcement_level=EnforcementLevel.MANDATORY,
)

queue_policies = ResourceValidationPolicy(
    name="sqs-queues-bound-to-their-sources",
    description="SQS queue policies admit AWS services only with an aws:SourceArn or aws:SourceAccount condition, and deny requests without TLS.",
    validate=resource_rule(check_queue_policy),
    enforcement_level=EnforcementLevel.MANDATORY,
)

POLICIES = [launch_templates, iam_least_privilege, queue_policies]
