"""The policy pack's security rules (review security-1 SEC-4, SEC-15): each rule on resources
built directly, at its edges, then each regression made on a real graph, which must fail the pack
with exactly that rule."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.model.exposure import internet_wide as model_internet_wide
from components.tooling.stacks import STACKS_DIR
from policy import pack_config
from policy.gpufleet_policy.exposure import internet_wide as pack_internet_wide
from policy.gpufleet_policy.offline import run_pack
from tests.conftest import plan_of
from tests.test_policy import LAUNCH_TEMPLATE, check, doc, template

EC2_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
EKS = "aws:eks/cluster:Cluster"
GKE = "gcp:container/cluster:Cluster"
GKE_POOL = "gcp:container/nodePool:NodePool"
AKS = "azure-native:containerservice:ManagedCluster"
AKS_POOL = "azure-native:containerservice:AgentPool"
ISSUER = "oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF0123456789ABCDEF"
PROVIDER = f"arn:aws:iam::123456789012:oidc-provider/{ISSUER}"
API = "api-endpoints-restricted-in-production"
LOCAL = "aks-local-accounts-off-in-production"


def expect(found: list[str], problem: str | None) -> None:
    if problem is None:
        assert found == []
    else:
        assert any(problem in m for m in found), found


# --- IMDS hop limit and encrypted disks ------------------------------------------------------


@pytest.mark.parametrize(
    ("hops", "problem"),
    [(1, None), (1.0, None), (2, "httpPutResponseHopLimit is 2"), (None, "is None: set 1")],
)
def test_launch_templates_keep_the_node_role_one_hop_away(hops: Any, problem: str | None) -> None:
    options = {"httpTokens": "required", "httpPutResponseHopLimit": hops}
    found = check(
        "launch-templates-imdsv2-encrypted", LAUNCH_TEMPLATE, template(metadataOptions=options)
    )
    expect(found, problem)


def node_class(metadata: Any = "default", ebs: Any = "default") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "role": "nodes",
        "blockDeviceMappings": [
            {"deviceName": "/dev/xvda", "ebs": {"encrypted": True, "volumeSize": "100Gi"}}
        ],
    }
    if metadata != "default":
        spec["metadataOptions"] = metadata
    if ebs != "default":
        spec["blockDeviceMappings"] = ebs
    return {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "spec": spec}


@pytest.mark.parametrize(
    ("props", "problem"),
    [
        (node_class(), None),  # Karpenter's CRD defaults: required, one hop
        (node_class({"httpTokens": "required", "httpPutResponseHopLimit": 1}), None),
        (node_class({"httpPutResponseHopLimit": 2}), "httpPutResponseHopLimit is 2"),
        (node_class({"httpTokens": "optional"}), "httpTokens is 'optional'"),
        (node_class(ebs=[{"deviceName": "/dev/xvda", "ebs": {"encrypted": False}}]), "/dev/xvda"),
        (node_class(ebs=[{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "1Gi"}}]), "/dev/xvda"),
        (node_class(ebs=[]), "lists no EBS volume"),
    ],
)
def test_node_classes_require_imdsv2_one_hop_and_encrypted_disks(
    props: dict[str, Any], problem: str | None
) -> None:
    expect(check("node-classes-imdsv2-encrypted", EC2_NODE_CLASS, props), problem)


# --- IRSA trust ------------------------------------------------------------------------------


def trust(
    condition: Any, federated: str = PROVIDER, action: str = "sts:AssumeRoleWithWebIdentity"
) -> dict[str, Any]:
    statement = {"Effect": "Allow", "Principal": {"Federated": federated}, "Action": action}
    if condition is not None:
        statement["Condition"] = condition
    return {"assumeRolePolicy": doc(statement)}


SUB = {f"{ISSUER}:sub": "system:serviceaccount:kube-system:cluster-autoscaler"}
AUD = {f"{ISSUER}:aud": "sts.amazonaws.com"}


@pytest.mark.parametrize(
    ("props", "problem"),
    [
        (trust({"StringEquals": {**SUB, **AUD}}), None),
        (trust({"StringEquals": AUD}), ":sub ="),
        (trust({"StringEquals": SUB}), ":aud ="),
        (trust(None), ":sub ="),
        (trust({"StringLike": {**SUB, **AUD}}), ":sub ="),  # patterns are not pins
        (
            trust(
                {"StringEquals": {f"{ISSUER}:sub": "system:serviceaccount:kube-system:*", **AUD}}
            ),
            "any service account",
        ),
        (
            trust(
                {
                    "StringEquals": {
                        f"{ISSUER}:sub": "system:serviceaccount:kube-system:x",
                        f"{ISSUER}:aud": "other",
                    }
                }
            ),
            ":aud =",
        ),
        (trust({"StringEquals": {**SUB, **AUD}}, action="sts:*"), None),
        (trust({"StringEquals": AUD}, action="sts:*"), ":sub ="),
        # Not IRSA: a service principal, another issuer.
        (
            {
                "assumeRolePolicy": doc(
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "ec2.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                    }
                )
            },
            None,
        ),
        (
            trust(
                None, federated="arn:aws:iam::1:oidc-provider/token.actions.githubusercontent.com"
            ),
            None,
        ),
    ],
)
def test_irsa_trust_pins_one_service_account_and_the_sts_audience(
    props: dict[str, Any], problem: str | None
) -> None:
    expect(check("irsa-trust-pinned", ROLE, props), problem)


# --- iam:PassRole ----------------------------------------------------------------------------

NODE_ROLE = "arn:aws:iam::123456789012:role/ml-nodes"


@pytest.mark.parametrize(
    ("statement", "problem"),
    [
        ({"Action": "iam:PassRole", "Resource": NODE_ROLE}, None),
        ({"Action": "iam:PassRole", "Resource": "*"}, "iam:PassRole on ['*']"),
        (
            {"Action": "iam:PassRole", "Resource": "arn:aws:iam::123456789012:role/*"},
            "iam:PassRole",
        ),
        ({"Action": "iam:Pass*", "Resource": "*"}, "iam:PassRole"),
        ({"Action": "iam:PassRole", "NotResource": NODE_ROLE}, "NotResource"),
        ({"NotAction": "s3:*", "Resource": "*"}, "iam:PassRole"),
        ({"NotAction": "iam:*", "Resource": "*"}, None),
        ({"Action": "iam:GetRole", "Resource": "*"}, None),
    ],
)
def test_pass_role_names_its_roles(statement: dict[str, Any], problem: str | None) -> None:
    props = {"policy": doc({"Sid": "S", "Effect": "Allow", **statement})}
    expect(check("iam-pass-role-scoped", ROLE_POLICY, props), problem)
    denied = {"policy": doc({"Effect": "Deny", **statement})}
    assert check("iam-pass-role-scoped", ROLE_POLICY, denied) == []


# --- EKS secrets, private nodes, GKE metadata -----------------------------------------------

KEY = {"provider": {"keyArn": "arn:aws:kms:us-east-1:1:key/k"}, "resources": ["secrets"]}


@pytest.mark.parametrize(
    ("config", "ok"),
    [
        (KEY, True),
        (None, False),
        ({**KEY, "resources": []}, False),
        ({"resources": ["secrets"]}, False),
    ],
)
def test_eks_secrets_are_encrypted_with_a_kms_key(config: Any, ok: bool) -> None:
    props = {} if config is None else {"encryptionConfig": config}
    assert (check("eks-secrets-encrypted", EKS, props) == []) == ok


@pytest.mark.parametrize(
    ("type_", "props", "ok"),
    [
        (GKE, {"privateClusterConfig": {"enablePrivateNodes": True}}, True),
        (GKE, {"privateClusterConfig": {"enablePrivateNodes": False}}, False),
        (GKE, {}, False),
        (AKS, {"agentPoolProfiles": [{"name": "system", "enableNodePublicIP": False}]}, True),
        (AKS, {"agentPoolProfiles": [{"name": "system", "enableNodePublicIP": True}]}, False),
        (AKS_POOL, {"agentPoolName": "t4"}, True),
        (AKS_POOL, {"agentPoolName": "t4", "enableNodePublicIP": True}, False),
    ],
)
def test_nodes_have_no_public_address(type_: str, props: dict[str, Any], ok: bool) -> None:
    assert (check("nodes-private", type_, props) == []) == ok


@pytest.mark.parametrize(
    ("type_", "props", "ok"),
    [
        (GKE_POOL, {"nodeConfig": {"workloadMetadataConfig": {"mode": "GKE_METADATA"}}}, True),
        (GKE_POOL, {"nodeConfig": {"workloadMetadataConfig": {"mode": "GCE_METADATA"}}}, False),
        (GKE_POOL, {"nodeConfig": {}}, False),
        (GKE, {"nodeConfig": {"workloadMetadataConfig": {"mode": "GCE_METADATA"}}}, False),
        (GKE, {}, True),  # no default pool settings
    ],
)
def test_gke_nodes_serve_the_gke_metadata_server(
    type_: str, props: dict[str, Any], ok: bool
) -> None:
    assert (check("gke-workload-metadata", type_, props) == []) == ok


# --- production: API endpoints and AKS local accounts (SEC-4) -------------------------------


def eks(cidrs: Any, public: bool | None = None) -> dict[str, Any]:
    vpc: dict[str, Any] = {} if cidrs is None else {"publicAccessCidrs": cidrs}
    if public is not None:
        vpc["endpointPublicAccess"] = public
    return {"vpcConfig": vpc}


def aks(ranges: Any, private: bool = False, local: bool = False) -> dict[str, Any]:
    profile: dict[str, Any] = {"enablePrivateCluster": private}
    if ranges is not None:
        profile["authorizedIPRanges"] = ranges
    return {"apiServerAccessProfile": profile, "disableLocalAccounts": not local}


def gke(blocks: Any, **networks: Any) -> dict[str, Any]:
    if blocks is None:
        return {}
    return {
        "masterAuthorizedNetworksConfig": {
            "cidrBlocks": [{"cidrBlock": b} for b in blocks],
            **networks,
        }
    }


@pytest.mark.parametrize(
    ("type_", "props", "opening"),
    [
        (EKS, eks(["203.0.113.0/24"]), None),
        (EKS, eks(["0.0.0.0/0"]), "admits 0.0.0.0/0"),
        (EKS, eks(None), "is unset"),
        (EKS, eks(None, public=False), None),
        (EKS, eks(["0.0.0.0/1"]), None),  # half the internet is one under the edge
        (EKS, eks(["0.0.0.0/1", "128.0.0.0/1"]), "admits 0.0.0.0/0"),
        (EKS, eks(["10.1.2.3/0"]), "admits 0.0.0.0/0"),  # host bits set
        (AKS, aks(["203.0.113.0/24"]), None),
        (AKS, aks(["0.0.0.0/0"]), "admits 0.0.0.0/0"),
        (AKS, aks(["203.0.113.0/24", "::/0"]), "admits ::/0"),
        (AKS, aks(None), "is empty"),
        (AKS, aks(None, private=True), None),
        (GKE, gke([]), None),
        (GKE, gke(["0.0.0.0/0"]), "admits 0.0.0.0/0"),
        (GKE, gke(None), "is unset"),
        (GKE, gke([], gcpPublicCidrsAccessEnabled=True), "every Google Cloud public address"),
        (GKE, {**gke(None), "privateClusterConfig": {"enablePrivateEndpoint": True}}, None),
    ],
)
def test_production_api_endpoints_admit_no_whole_internet(
    type_: str, props: dict[str, Any], opening: str | None
) -> None:
    production = {"production": True}
    expect(check(API, type_, props, config=production), opening)
    assert check(API, type_, props, config={"production": False}) == []
    assert check(API, type_, props) == []  # no pack config: not production
    allowed = {"production": True, "allowPublicApiEndpoint": True}
    assert check(API, type_, props, config=allowed) == []


def test_production_aks_clusters_disable_local_accounts() -> None:
    production = {"production": True}
    assert check(LOCAL, AKS, aks(["203.0.113.0/24"]), config=production) == []
    found = check(LOCAL, AKS, aks(["203.0.113.0/24"], local=True), config=production)
    assert found and "static cluster-admin certificate" in found[0]
    assert check(LOCAL, AKS, {}, config=production), "AKS's default keeps local accounts"
    assert check(LOCAL, AKS, {}, config={"production": False}) == []
    assert check(LOCAL, AKS, {}, config={"production": True, "allowLocalAccounts": True}) == []


@pytest.mark.parametrize(
    "cidrs",
    [
        ["0.0.0.0/0"],
        ["::/0"],
        ["0.0.0.0/1"],
        ["0.0.0.0/1", "128.0.0.0/1"],
        ["1.2.3.4/0", "::/1"],
        ["x", "10.0.0.0/8"],
        [],
    ],
)
def test_the_pack_and_plan_agree_on_what_is_the_whole_internet(cidrs: list[str]) -> None:
    assert pack_internet_wide(cidrs) == model_internet_wide(cidrs)


def test_pack_config_carries_the_allowances_of_the_stack_file(tmp_path: Path) -> None:
    def config(name: str, cluster: dict[str, Any]) -> dict[str, Any]:
        path = tmp_path / f"Pulumi.{name}.yaml"
        path.write_text(yaml.safe_dump({"config": {"gpufleet:cluster": cluster}}))
        return pack_config.pack_config(path)

    written = config(
        "ml-prod",
        {"name": "c", "allowPublicApiEndpoint": True, "azure": {"allowLocalAccounts": True}},
    )
    assert written[API] == {"production": True, "allowPublicApiEndpoint": True}
    assert written[LOCAL] == {"production": True, "allowLocalAccounts": True}
    plain = config("dev", {"name": "c", "allowPublicApiEndpoint": "yes"})  # YAML true only
    assert plain[API] == {"production": False, "allowPublicApiEndpoint": False}
    assert plain[LOCAL] == {"production": False, "allowLocalAccounts": False}


# --- each regression on a real graph fails the pack with exactly its rule ---------------------


def violations(
    stack: str,
    type_: str,
    change: Callable[[dict[str, Any]], None],
    pick: Callable[[dict[str, Any]], bool] = lambda inputs: True,
    allow: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    document = copy.deepcopy(plan_of(stack).to_json())
    targets = [r for r in document["resources"] if r["type"] == type_ and pick(r["inputs"])]
    assert targets, f"{stack} has no such {type_}"
    change(targets[0]["inputs"])
    config = pack_config.pack_config(STACKS_DIR / f"Pulumi.{stack}.yaml")
    for policy, settings in (allow or {}).items():
        config[policy] = {**config[policy], **settings}
    return sorted({v.policy for v in run_pack(document, config)})


def set_at(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change that sets `value` at a dotted path of the inputs (`[]` appends to a list)."""

    def change(inputs: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = inputs
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return change


def irsa(inputs: dict[str, Any]) -> bool:
    return "Federated" in str(inputs.get("assumeRolePolicy"))


def drop_sub(inputs: dict[str, Any]) -> None:
    policy = json.loads(inputs["assumeRolePolicy"])
    equals = policy["Statement"][0]["Condition"]["StringEquals"]
    policy["Statement"][0]["Condition"]["StringEquals"] = {
        k: v for k, v in equals.items() if not k.endswith(":sub")
    }
    inputs["assumeRolePolicy"] = json.dumps(policy)


def pod_identity(inputs: dict[str, Any]) -> bool:
    return "pods.eks.amazonaws.com" in str(inputs.get("assumeRolePolicy"))


def drop_cluster_tag(inputs: dict[str, Any]) -> None:
    """The Pod Identity trust without its cluster condition (security review 2 N-4)."""
    policy = json.loads(inputs["assumeRolePolicy"])
    for statement in policy["Statement"]:
        equals = statement.get("Condition", {}).get("StringEquals", {})
        equals.pop("aws:RequestTag/eks-cluster-arn", None)
    inputs["assumeRolePolicy"] = json.dumps(policy)


def pass_any_role(inputs: dict[str, Any]) -> None:
    policy = json.loads(inputs["policy"])
    for statement in policy["Statement"]:
        if statement.get("Action") == "iam:PassRole":
            statement["Resource"] = "*"
    inputs["policy"] = json.dumps(policy)


def passes_roles(inputs: dict[str, Any]) -> bool:
    return "iam:PassRole" in str(inputs.get("policy"))


def gpu_pool(inputs: dict[str, Any]) -> bool:
    return bool(inputs["nodeConfig"].get("guestAccelerators"))


@pytest.mark.parametrize(
    ("stack", "type_", "change", "pick", "rule"),
    [
        (
            "aws-dev",
            LAUNCH_TEMPLATE,
            set_at("metadataOptions.httpPutResponseHopLimit", 2),
            None,
            "launch-templates-imdsv2-encrypted",
        ),
        (
            "aws-karpenter",
            EC2_NODE_CLASS,
            set_at("spec.metadataOptions.httpPutResponseHopLimit", 2),
            None,
            "node-classes-imdsv2-encrypted",
        ),
        (
            "aws-karpenter",
            EC2_NODE_CLASS,
            set_at("spec.blockDeviceMappings.0.ebs.encrypted", False),
            None,
            "node-classes-imdsv2-encrypted",
        ),
        ("aws-dev", ROLE, drop_sub, irsa, "irsa-trust-pinned"),
        ("aws-existing", ROLE, drop_sub, irsa, "irsa-trust-pinned"),
        ("aws-dev", ROLE, drop_cluster_tag, pod_identity, "irsa-trust-pinned"),
        ("aws-karpenter", ROLE_POLICY, pass_any_role, passes_roles, "iam-pass-role-scoped"),
        ("aws-dev", EKS, lambda i: i.pop("encryptionConfig"), None, "eks-secrets-encrypted"),
        (
            "gcp-dev",
            GKE,
            set_at("privateClusterConfig.enablePrivateNodes", False),
            None,
            "nodes-private",
        ),
        (
            "gcp-dev",
            GKE_POOL,
            set_at("nodeConfig.workloadMetadataConfig.mode", "GCE_METADATA"),
            gpu_pool,
            "gke-workload-metadata",
        ),
        (
            "gcp-existing",
            GKE_POOL,
            set_at("nodeConfig.workloadMetadataConfig.mode", "GCE_METADATA"),
            None,
            "gke-workload-metadata",
        ),
        ("azure-dev", AKS_POOL, set_at("enableNodePublicIP", True), None, "nodes-private"),
        ("aws-training", EKS, set_at("vpcConfig.publicAccessCidrs", ["0.0.0.0/0"]), None, API),
        (
            "azure-a100-mig",
            AKS,
            set_at("apiServerAccessProfile.authorizedIPRanges", ["0.0.0.0/0"]),
            None,
            API,
        ),
        (
            "gcp-a100-mig",
            GKE,
            set_at("masterAuthorizedNetworksConfig.cidrBlocks", [{"cidrBlock": "0.0.0.0/0"}]),
            None,
            API,
        ),
        ("azure-a100-mig", AKS, set_at("disableLocalAccounts", False), None, LOCAL),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_each_security_regression_fails_the_pack_with_its_rule(
    stack: str, type_: str, change: Any, pick: Any, rule: str
) -> None:
    assert violations(stack, type_, change, pick or (lambda inputs: True)) == [rule]


def test_production_opt_ins_pass_when_the_stack_file_allows_them() -> None:
    open_eks = set_at("vpcConfig.publicAccessCidrs", ["0.0.0.0/0"])
    allow = {API: {"allowPublicApiEndpoint": True}}
    assert violations("aws-training", EKS, open_eks, allow=allow) == []
    local = set_at("disableLocalAccounts", False)
    assert (
        violations("azure-a100-mig", AKS, local, allow={LOCAL: {"allowLocalAccounts": True}}) == []
    )
    # A stack that is not production is only warned about by `plan`.
    assert violations("aws-dev", EKS, open_eks) == []


# --- SQS queue policies: bound to their sources, TLS only (SEC-13) ---------------------------

QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy"
QUEUE_RULE = "sqs-queues-bound-to-their-sources"
_QUEUE = "arn:aws:sqs:us-east-1:123456789012:q"
_SERVICE = {"Effect": "Allow", "Principal": {"Service": "events.amazonaws.com"}}
_TLS = {"Effect": "Deny", "Principal": "*", "Condition": {"Bool": {"aws:SecureTransport": "false"}}}
_RULE_ARN = "arn:aws:events:us-east-1:123456789012:rule/r"


@pytest.mark.parametrize(
    ("statements", "problem"),
    [
        ([{**_SERVICE, "Condition": {"ArnEquals": {"aws:SourceArn": [_RULE_ARN]}}}, _TLS], None),
        ([{**_SERVICE, "Condition": {"StringEquals": {"aws:SourceAccount": "1"}}}, _TLS], None),
        ([_SERVICE, _TLS], "may send from any account"),
        (
            [{**_SERVICE, "Condition": {"StringEquals": {"aws:SourceVpc": "v"}}}, _TLS],
            "any account",
        ),
        ([{**_SERVICE, "Condition": {"ArnEquals": {"aws:SourceArn": [_RULE_ARN]}}}], "without TLS"),
        # A public queue, and a source key under an operator that binds nothing.
        ([{"Effect": "Allow", "Principal": "*", "Action": "sqs:*"}, _TLS], "the queue is public"),
        ([{"Effect": "Allow", "Principal": {"AWS": "*"}}, _TLS], "the queue is public"),
        (
            [{**_SERVICE, "Condition": {"StringNotEquals": {"aws:SourceAccount": "1"}}}, _TLS],
            "any account",
        ),
        (
            [
                {**_SERVICE, "Condition": {"ArnEquals": {"aws:SourceArn": [_RULE_ARN]}}},
                {**_TLS, "Condition": {"Bool": {"aws:SecureTransport": "true"}}},
            ],
            "without TLS",
        ),
    ],
)
def test_queue_policies_bind_services_to_their_sources_and_deny_plain_http(
    statements: list[dict[str, Any]], problem: str | None
) -> None:
    document = {"Version": "2012-10-17", "Statement": statements}
    found = check(QUEUE_RULE, QUEUE_POLICY, {"queueUrl": _QUEUE, "policy": json.dumps(document)})
    expect(found, problem)


def unbind(inputs: dict[str, Any]) -> None:
    policy = json.loads(inputs["policy"])
    for statement in policy["Statement"]:
        if statement["Effect"] == "Allow":
            del statement["Condition"]
    inputs["policy"] = json.dumps(policy)


def allow_http(inputs: dict[str, Any]) -> None:
    policy = json.loads(inputs["policy"])
    policy["Statement"] = [s for s in policy["Statement"] if s["Effect"] == "Allow"]
    inputs["policy"] = json.dumps(policy)


@pytest.mark.parametrize("stack", ["aws-dev", "aws-karpenter"])
@pytest.mark.parametrize("change", [unbind, allow_http])
def test_an_unbound_or_plain_http_interruption_queue_fails_the_pack(
    stack: str, change: Callable[[dict[str, Any]], None]
) -> None:
    assert violations(stack, QUEUE_POLICY, change) == [QUEUE_RULE]
