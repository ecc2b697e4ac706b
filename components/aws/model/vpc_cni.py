"""The VPC CNI's AWS permissions: on its own role, not on the nodes' (issue 36, SEC-2).

The `vpc-cni` add-on's pods (DaemonSet aws-node, service account kube-system/aws-node) create,
attach and delete network interfaces and assign IPs across the region (AmazonEKS_CNI_Policy).
Left on the node role, any hostNetwork or escaped pod on a GPU node has them too.

On a cluster gpufleet creates, the add-on gets an EKS Pod Identity association to a role of its
own, and the node roles go without the policy. Sources (awsdocs/amazon-eks-user-guide at
4d52b4d, latest/ug/): the node role needs the CNI permissions only "if you don't use IRSA or EKS
Pod Identity" and EKS recommends a separate role (security/iam-reference/create-node-role.adoc);
EKS recommends Pod Identity associations for add-ons, and "if you update the pod identity
associations for an existing add-on, Amazon EKS initiates a rolling restart of the add-on pods"
(workloads/add-ons-iam.adoc), whereas setting an add-on's IRSA role leaves running aws-node pods
on the node's credentials until restarted (aws/amazon-vpc-cni-k8s#1338), which is why Pod
Identity is the move for a running stack; the association and its role trust are in
manage-access/aws-access/service-accounts.adoc. The add-on's `podIdentityAssociations` update in
place (terraform-provider-aws internal/service/eks/addon.go: UpdateAddon, not ForceNew).

Ordering on a running stack: the role and its policy are created and the add-on updated (EKS
restarts aws-node onto the role) while the program runs; Pulumi deletes what the program no
longer declares, the node roles' policy attachments, only after every create and update has
finished (pulumi/pulumi pkg/resource/deploy/deployment_executor.go, performPostSteps after the
program's last registration), and not at all when the add-on update fails. On a new cluster the
add-on and its association exist before the system node group starts any node.

On a cluster gpufleet adopts, vpc-cni is its owner's: gpufleet reads the add-on
(DescribeAddon) and drops the policy from its own node roles only when the add-on has a role of
its own (a Pod Identity association or an IRSA role); otherwise gpufleet's nodes would get no pod
IPs, so the policy stays there and plan says what the owner must do. Auto Mode nodes run no
aws-node (Auto Mode's networking is built in) and their role never had the policy
(components/aws/model/auto_mode.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

ADDON: Final = "vpc-cni"
NAMESPACE: Final = "kube-system"
SERVICE_ACCOUNT: Final = "aws-node"


@dataclass(frozen=True)
class OwnersCni:
    """What the add-on API says of an adopted cluster's vpc-cni."""

    # An EKS add-on (False: none, a self-managed aws-node whose credentials gpufleet cannot see).
    managed: bool
    pod_identity_associations: int = 0
    irsa_role_arn: str | None = None


def node_roles_keep_cni_policy(owners: OwnersCni | None) -> bool:
    """On an adopted cluster gpufleet's node roles keep the CNI policy, whatever the owner's
    vpc-cni uses: an IRSA role or a Pod Identity association reaches an aws-node pod only when
    the pod starts (aws/amazon-vpc-cni-k8s#1338; aws/amazon-eks-pod-identity-webhook#210: the
    variables "are only injected at the moment of pod creation"), so aws-node pods that started
    before the owner gave vpc-cni its role still run on the node's credentials, and gpufleet
    cannot see which (review of the eks-4 fixes, S2). None: a cluster gpufleet creates, whose
    add-on has its own role from the start."""
    return owners is not None


def kept_policy_warning(cluster: str, owners: OwnersCni) -> str:
    """What plan says when gpufleet's node roles keep the CNI policy on an adopted cluster."""
    if owners.managed and (owners.pod_identity_associations or owners.irsa_role_arn):
        how = "a Pod Identity association" if owners.pod_identity_associations else "an IRSA role"
        why = (
            f"its vpc-cni add-on has {how}, but aws-node pods that started before it keep the "
            "node's credentials until they restart (not checked: gpufleet cannot see them)"
        )
    elif owners.managed:
        why = (
            "its vpc-cni add-on has no role of its own (no Pod Identity association, no IRSA role)"
        )
    else:
        why = (
            "it has no vpc-cni EKS add-on gpufleet could read (a self-managed aws-node, whose "
            "credentials gpufleet cannot see: not checked)"
        )
    return (
        f"cluster {cluster}: gpufleet's node roles keep AmazonEKS_CNI_Policy, because {why}, so "
        "aws-node on gpufleet's GPU nodes uses the node role; any hostNetwork pod there can then "
        "change network interfaces across the region. On a cluster it adopts gpufleet keeps "
        "the policy, since it cannot see which aws-node pods run on the node's credentials; "
        "the owner's own nodes are safer with vpc-cni on its own role "
        f"(`aws eks update-addon --cluster-name {cluster} --addon-name vpc-cni "
        "--pod-identity-associations serviceAccount=aws-node,roleArn=ROLE`, with "
        "AmazonEKS_CNI_Policy on ROLE, then `kubectl -n kube-system rollout restart ds/aws-node`)"
    )
