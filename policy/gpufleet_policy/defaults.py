"""The security defaults gpufleet deploys, guarded so that a regression fails review (review
security-1 SEC-15): Karpenter's nodes fence the node role's credentials and encrypt their disks,
every IRSA trust names one service account and the STS audience, `iam:PassRole` names its roles,
EKS secrets are envelope-encrypted with a KMS key, nodes have no public address, and GKE nodes
hide the node's credentials behind the GKE metadata server.

Sources: EKS Best Practices Guide, Security/IAM ("Restrict access to the instance profile
assigned to the worker node", "Scope the IAM role trust policy for IRSA to the service account
name"); IAM user guide, "Granting a user permissions to pass a role"; CIS EKS 5.3.1, CIS GKE
5.2.1/5.4.1/5.6.5; Karpenter's EC2NodeClass CRD (metadataOptions defaults).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Any

from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

from .aws import IAM_ROLE, policy_documents
from .resources import (
    AKS_AGENT_POOL,
    AKS_CLUSTER,
    EKS_CLUSTER,
    GKE_CLUSTER,
    GKE_NODE_POOL,
    as_int,
    get,
    seq,
    unwrap,
)
from .rules import resource_rule

EC2_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
# What Karpenter's EC2NodeClass CRD defaults each metadata option to when it is left out.
NODE_CLASS_METADATA_DEFAULTS = {"httpTokens": "required", "httpPutResponseHopLimit": 1}
WEB_IDENTITY = "sts:assumerolewithwebidentity"
# An EKS cluster's OIDC issuer (`oidc.eks.<region>.amazonaws.com[.cn]/id/<id>`): IRSA's.
EKS_ISSUER = re.compile(r"^oidc\.eks\.[a-z0-9-]+\.amazonaws\.com(\.cn)?/id/\w+$")
STS_AUDIENCE = "sts.amazonaws.com"
SERVICE_ACCOUNT_SUBJECT = "system:serviceaccount:"
GKE_METADATA = "GKE_METADATA"


def _json(document: Any) -> Mapping[str, Any] | None:
    document = unwrap(document)
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except json.JSONDecodeError:
            return None
    return document if isinstance(document, Mapping) else None


def _allows(document: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(Sid, statement) of each Allow statement."""
    return [
        (str(s.get("Sid") or f"Statement[{i}]"), s)
        for i, s in enumerate(seq(document.get("Statement")))
        if isinstance(s, Mapping) and s.get("Effect") == "Allow"
    ]


def _grants(statement: Mapping[str, Any], action: str) -> bool:
    """Whether the statement's Action (or NotAction) lets `action` (lower case) through."""
    if "NotAction" in statement:
        return not any(fnmatchcase(action, str(a).lower()) for a in seq(statement["NotAction"]))
    return any(fnmatchcase(action, str(a).lower()) for a in seq(statement.get("Action")))


def check_node_class(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """A Karpenter EC2NodeClass: IMDSv2 with one hop (Karpenter's CRD defaults when left out),
    and every EBS volume it lists encrypted."""
    if resource_type != EC2_NODE_CLASS:
        return []
    problems = []
    metadata = get(props, "spec", "metadataOptions") or {}
    tokens = get(metadata, "httpTokens") or NODE_CLASS_METADATA_DEFAULTS["httpTokens"]
    if tokens != "required":
        problems.append(f"spec.metadataOptions.httpTokens is {tokens!r}: set 'required' (IMDSv2)")
    hops = get(metadata, "httpPutResponseHopLimit")
    if as_int(hops if hops is not None else 1) != 1:
        problems.append(
            f"spec.metadataOptions.httpPutResponseHopLimit is {hops!r}: set 1, so that pods do "
            "not get the node role's credentials"
        )
    mappings = [m for m in seq(get(props, "spec", "blockDeviceMappings")) if get(m, "ebs")]
    if not mappings:
        problems.append(
            "spec.blockDeviceMappings lists no EBS volume: the root volume would follow "
            "Karpenter's and the AMI's defaults, not an `encrypted: true` of this NodeClass"
        )
    for mapping in mappings:
        if get(mapping, "ebs", "encrypted") is not True:
            device = get(mapping, "deviceName") or "volume"
            problems.append(f"{device}: ebs.encrypted must be true")
    return problems


def check_web_identity_trust(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """A role an EKS cluster's OIDC issuer trusts (IRSA) names one service account and the STS
    audience, both with StringEquals: otherwise any pod of the cluster (or any token of the
    issuer) could take the role."""
    if resource_type != IAM_ROLE:
        return []
    document = _json(props.get("assumeRolePolicy"))
    if document is None:
        return ["assumeRolePolicy is not a JSON policy document"]
    problems = []
    for sid, statement in _allows(document):
        federated = [str(f) for f in seq(get(statement, "Principal", "Federated"))]
        issuers = [
            f.split("oidc-provider/", 1)[1]
            for f in federated
            if EKS_ISSUER.search(f.split("oidc-provider/", 1)[-1])
        ]
        if not issuers or not _grants(statement, WEB_IDENTITY):
            continue
        equals = get(statement, "Condition", "StringEquals") or {}
        for issuer in issuers:
            subjects = [str(s) for s in seq(get(equals, f"{issuer}:sub"))]
            audiences = [str(a) for a in seq(get(equals, f"{issuer}:aud"))]
            if not subjects or any(
                "*" in s or "?" in s or not s.startswith(SERVICE_ACCOUNT_SUBJECT) for s in subjects
            ):
                problems.append(
                    f"{sid}: trusts {issuer} without StringEquals {issuer}:sub = "
                    f"{SERVICE_ACCOUNT_SUBJECT}<namespace>:<name> (got {subjects or 'none'}): "
                    "any service account of the cluster could assume the role"
                )
            if audiences != [STS_AUDIENCE]:
                problems.append(
                    f"{sid}: trusts {issuer} without StringEquals {issuer}:aud = {STS_AUDIENCE} "
                    f"(got {audiences or 'none'})"
                )
    return problems + _pod_identity_problems(document)


# EKS Pod Identity: the agent assumes the role for a pod and tags the session with its cluster,
# namespace and service account (EKS user guide, pod-id-role, "Setting Conditions").
POD_IDENTITY_SERVICE = "pods.eks.amazonaws.com"
POD_IDENTITY_TAGS = (
    "aws:RequestTag/eks-cluster-arn",
    "aws:RequestTag/kubernetes-namespace",
    "aws:RequestTag/kubernetes-service-account",
)


def _pod_identity_problems(document: Any) -> list[str]:
    """A role EKS Pod Identity may assume names the cluster, namespace and service account
    with StringEquals: otherwise any pod an association names could take it (security review 2
    N-4)."""
    problems = []
    for sid, statement in _allows(document):
        services = [str(s) for s in seq(get(statement, "Principal", "Service"))]
        if POD_IDENTITY_SERVICE not in services:
            continue
        equals = get(statement, "Condition", "StringEquals") or {}
        missing = [
            tag
            for tag in POD_IDENTITY_TAGS
            if not seq(get(equals, tag)) or any("*" in str(v) for v in seq(get(equals, tag)))
        ]
        if missing:
            problems.append(
                f"{sid}: trusts {POD_IDENTITY_SERVICE} without StringEquals on "
                f"{', '.join(missing)}: any pod an association names could assume the role"
            )
    return problems


def check_pass_role(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """`iam:PassRole` names the roles it passes: on `*` (or a pattern) whoever holds the policy
    hands any role of the account, an administrator's too, to a service it controls."""
    problems = []
    for where, raw in policy_documents(resource_type, props):
        document = _json(raw)
        if document is None:
            continue  # autoscaler-iam-least-privilege names an unreadable document
        for sid, statement in _allows(document):
            if not _grants(statement, "iam:passrole"):
                continue
            resources = [str(r) for r in seq(statement.get("Resource"))]
            if "NotResource" in statement or not resources or any("*" in r for r in resources):
                problems.append(
                    f"{where}: {sid}: grants iam:PassRole on {resources or 'NotResource'}: name "
                    "the role ARNs it may pass"
                )
    return problems


def check_secrets_encryption(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """An EKS cluster envelope-encrypts Kubernetes Secrets with a KMS key (CIS EKS 5.3.1)."""
    if resource_type != EKS_CLUSTER:
        return []
    config = get(props, "encryptionConfig") or {}
    resources = [str(r) for r in seq(get(config, "resources"))]
    if "secrets" not in resources or not get(config, "provider", "keyArn"):
        return [
            "encryptionConfig does not encrypt `secrets` with a KMS key (provider.keyArn): "
            "Kubernetes Secrets would rest in etcd under EKS's default encryption only"
        ]
    return []


def check_private_nodes(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """Nodes have no public address: GKE private nodes, AKS pools without node public IPs (EKS
    nodes take their subnets' setting: gpufleet's node subnets are private)."""
    if (
        resource_type == GKE_CLUSTER
        and get(props, "privateClusterConfig", "enablePrivateNodes") is not True
    ):
        return ["privateClusterConfig.enablePrivateNodes is not true: nodes get public addresses"]
    pools = []
    if resource_type == AKS_CLUSTER:
        pools = [(str(get(p, "name")), p) for p in seq(props.get("agentPoolProfiles"))]
    elif resource_type == AKS_AGENT_POOL:
        pools = [(str(props.get("agentPoolName") or "agent pool"), props)]
    return [
        f"agent pool {name!r}: enableNodePublicIP is true: every node gets a public address"
        for name, pool in pools
        if get(pool, "enableNodePublicIP") is True
    ]


def check_gke_metadata(resource_type: str, props: Mapping[str, Any]) -> list[str]:
    """GKE nodes serve pods the GKE metadata server (Workload Identity), never the node's own
    service account credentials (CIS GKE 5.4.1)."""
    if resource_type not in (GKE_NODE_POOL, GKE_CLUSTER):
        return []
    config = get(props, "nodeConfig")
    if resource_type == GKE_CLUSTER and config is None:
        return []  # no default pool settings to check
    mode = get(config, "workloadMetadataConfig", "mode")
    if mode == GKE_METADATA:
        return []
    return [
        f"nodeConfig.workloadMetadataConfig.mode is {mode!r}: set {GKE_METADATA}, so that pods "
        "reach the GKE metadata server, not the node's service account credentials"
    ]


def _policy(name: str, description: str, check: Any) -> ResourceValidationPolicy:
    return ResourceValidationPolicy(
        name=name,
        description=description,
        validate=resource_rule(check),
        enforcement_level=EnforcementLevel.MANDATORY,
    )


POLICIES = [
    _policy(
        "node-classes-imdsv2-encrypted",
        "Karpenter EC2NodeClasses require IMDSv2 with a hop limit of 1 and encrypt every EBS volume.",
        check_node_class,
    ),
    _policy(
        "irsa-trust-pinned",
        "Every IAM role trusted by an OIDC provider pins StringEquals on the token's sub (one service account) and aud (sts.amazonaws.com).",
        check_web_identity_trust,
    ),
    _policy(
        "iam-pass-role-scoped",
        "iam:PassRole is granted on named roles only, never on '*' or a pattern.",
        check_pass_role,
    ),
    _policy(
        "eks-secrets-encrypted",
        "EKS clusters envelope-encrypt Kubernetes Secrets with a KMS key.",
        check_secrets_encryption,
    ),
    _policy(
        "nodes-private",
        "GKE nodes are private and AKS agent pools give nodes no public IP.",
        check_private_nodes,
    ),
    _policy(
        "gke-workload-metadata",
        "GKE nodes run the GKE metadata server (workloadMetadataConfig.mode GKE_METADATA).",
        check_gke_metadata,
    ),
]
