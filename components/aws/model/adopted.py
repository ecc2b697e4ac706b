"""What gpufleet needs of an EKS cluster it adopts (`cluster.existing`), as rules on looked-up facts.

Sources (EKS user guide, awsdocs/amazon-eks-user-guide):
- Access entries: nodes gpufleet creates (self-managed groups, Karpenter's and Auto Mode's) join
  through an access entry, which EKS accepts only in the `API` or `API_AND_CONFIG_MAP`
  authentication modes ("Change authentication mode to use access entries"; the change is
  one-way, the owner's: `aws eks update-cluster-config --access-config
  authenticationMode=API_AND_CONFIG_MAP`).
- IRSA: the cluster autoscaler, Karpenter and the node termination handler assume roles through
  the cluster's IAM OIDC provider ("Create an IAM OIDC provider for your cluster").
- Versions: managed node groups take the cluster's version; self-managed nodes get the GPU AMI of
  the stack's minor. A node newer than the control plane is unsupported (Kubernetes version skew
  policy), so `kubernetesVersion` must be the minor the cluster runs.
- Subnets: by default the private subnets of the cluster's VPC, found by the
  `kubernetes.io/role/internal-elb: 1` tag that EKS's subnet guidance gives them ("View Amazon
  EKS networking requirements for VPC and subnets"); `cluster.aws.privateSubnetIds` overrides.
- Auto Mode: NodePools of `eks.amazonaws.com` need the cluster's `computeConfig` enabled.
- Autoscaler discovery: EKS tags every managed node group's auto scaling group with
  `k8s.io/cluster-autoscaler/enabled` and `k8s.io/cluster-autoscaler/<cluster>` ("Managed node
  groups": "automatically tagged for auto-discovery by the Kubernetes Cluster Autoscaler"), the
  pair an autoscaler's default discovery looks for (kubernetes/autoscaler
  cloudprovider/aws/README.md, "Auto-Discovery Setup"). What the owner already runs on the
  cluster is not visible to gpufleet at plan time (review eks-3.md N18).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from components.aws.model import autoscaler_tags, kinds
from components.aws.model.config import existing_options
from components.model.adoption import version_problem
from components.model.problems import Problem
from components.model.schema import ClusterConfig

# The tag EKS's subnet guidance puts on private subnets (internal load balancers go there).
PRIVATE_SUBNET_TAG = "kubernetes.io/role/internal-elb"
ACCESS_ENTRY_MODES = ("API", "API_AND_CONFIG_MAP")


@dataclass(frozen=True)
class EksClusterFacts:
    """What gpufleet reads of the looked-up cluster (`aws.eks.get_cluster`) and its network."""

    name: str
    version: str
    endpoint: str
    certificate_authority: str
    vpc_id: str
    security_group_id: str
    oidc_issuer: str
    authentication_mode: str
    service_cidr: str
    auto_mode: bool
    # The IAM OIDC provider of the issuer (None: there is none).
    oidc_provider_arn: str | None = None
    # The private subnets GPU nodes may use, by zone.
    subnets_by_zone: Mapping[str, Sequence[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Needs:
    """What the stack's plan needs of the cluster."""

    access_entries: bool
    irsa: bool
    auto_mode: bool
    zones: Sequence[str]


def adoption_problems(
    facts: EksClusterFacts, cluster: ClusterConfig, needs: Needs, subnets_given: bool
) -> list[Problem]:
    problems = []
    version = version_problem(facts.name, cluster.kubernetes_version, facts.version)
    if version is not None:
        problems.append(version)
    if needs.access_entries and facts.authentication_mode not in ACCESS_ENTRY_MODES:
        problems.append(
            Problem(
                "cluster.existing",
                f"cluster {facts.name} authenticates with {facts.authentication_mode} only; "
                "gpufleet's GPU nodes join through access entries, which need API or "
                "API_AND_CONFIG_MAP: its owner runs `aws eks update-cluster-config --name "
                f"{facts.name} --access-config authenticationMode=API_AND_CONFIG_MAP`",
                has_value=False,
            )
        )
    if needs.irsa and not facts.oidc_provider_arn:
        problems.append(
            Problem(
                "cluster.existing",
                f"cluster {facts.name} has no IAM OIDC provider for {facts.oidc_issuer}, which "
                "the autoscaler, Karpenter and the node termination handler assume roles "
                "through; its owner runs `eksctl utils associate-iam-oidc-provider --cluster "
                f"{facts.name} --approve`",
                has_value=False,
            )
        )
    if needs.auto_mode and not facts.auto_mode:
        problems.append(
            Problem(
                "cluster.aws.provisioner",
                f"cluster {facts.name} does not run EKS Auto Mode (computeConfig is off); "
                "choose karpenter or cluster-autoscaler, or have its owner enable Auto Mode",
                "auto-mode",
            )
        )
    missing = [zone for zone in needs.zones if not facts.subnets_by_zone.get(zone)]
    if missing:
        where = "cluster.aws.privateSubnetIds" if subnets_given else "cluster.zones"
        source = (
            "the given subnets"
            if subnets_given
            else f"the private subnets of {facts.vpc_id} (tagged {PRIVATE_SUBNET_TAG}=1)"
        )
        problems.append(
            Problem(
                where,
                f"{source} have none in {', '.join(missing)}; give private subnets there "
                "(cluster.aws.privateSubnetIds) or choose the zones they are in",
                list(needs.zones),
            )
        )
    return problems


def adoption_warnings(
    facts: EksClusterFacts, cluster: ClusterConfig, managed_groups: bool
) -> list[str]:
    """What gpufleet cannot see of the adopted cluster and the user must check: an autoscaler,
    Karpenter or termination handler of the owner's would act on gpufleet's nodes too, and its
    NodePools share one namespace-less space with gpufleet's."""
    network = (
        []
        if existing_options(cluster).node_security_group_ids is not None
        else [
            f"cluster {facts.name}: not checked: whether the cluster security group alone lets "
            "gpufleet's GPU nodes reach CoreDNS and the owner's nodes (it does unless the "
            "owner's nodes run in security groups of their own); if they do, name those in "
            "cluster.existing.nodeSecurityGroupIds"
        ]
    )
    kind = kinds.cluster_kind(cluster)
    # gpufleet installs Karpenter itself (not Auto Mode's, not one the owner runs).
    installs_karpenter = kind.node_pools and not kind.cluster_compute
    if existing_options(cluster).autoscaler_installed:
        # The owner's autoscaler (or Karpenter) is the one meant to scale gpufleet's pools.
        names = node_pool_warnings(facts.name, False) if installs_karpenter else []
        return [
            f"cluster {facts.name}: not checked: whether its owner already runs "
            "aws-node-termination-handler (gpufleet cannot see the cluster's workloads at plan "
            "time); ask its owner",
            *names,
            *network,
        ]
    if kind.node_pools:
        return [*node_pool_warnings(facts.name, installs_karpenter), *network]
    said = [
        f"cluster {facts.name}: not checked: whether its owner already runs a cluster autoscaler "
        "or aws-node-termination-handler (gpufleet cannot see the cluster's workloads at plan "
        "time); ask its owner",
        f"cluster {facts.name}: gpufleet's self-managed GPU groups carry only its own "
        f"discovery tag {autoscaler_tags.gpufleet_owner_tag(facts.name)}, so an autoscaler "
        f"of the owner's with the default discovery ({autoscaler_tags.ENABLED_TAG} and "
        f"{autoscaler_tags.owner_tag(facts.name)}) does not find them"
        + (
            "; gpufleet's managed node groups carry that pair anyway (EKS tags every managed "
            "group's auto scaling group with it), so if the owner runs one, two autoscalers "
            "resize them: use gpuPools[].aws.nodeGroup: self-managed, or have the owner "
            "narrow its autoscaler's autoDiscovery tags"
            if managed_groups
            else ""
        ),
    ]
    return said + network


def node_pool_warnings(cluster_name: str, installs_karpenter: bool) -> list[str]:
    """Under Karpenter (gpufleet's own) or Auto Mode: what of the owner's would collide with
    gpufleet's NodePools, which are cluster-scoped and named after the pools (review eks-3.md
    R3-6). Karpenter runs one controller per cluster, and Helm refuses to install CRDs that
    another release owns ("exists and cannot be imported into the current release")."""
    pools = (
        f"cluster {cluster_name}: not checked: whether its owner has NodePools named like "
        "gpufleet's pools (NodePools are cluster-scoped, and gpufleet names each after its "
        "pool): `pulumi up` fails creating one that exists; rename the pool"
    )
    if not installs_karpenter:  # Auto Mode's Karpenter, or one the owner runs for gpufleet
        return [pools]
    return [
        f"cluster {cluster_name}: not checked: whether its owner already runs Karpenter "
        "(gpufleet cannot see the cluster's workloads at plan time): gpufleet installs its own "
        "(the karpenter-crd and karpenter releases in kube-system), and next to the owner's the "
        "CRD release fails (Helm: the CRDs exist and cannot be imported into the release) or two "
        "controllers act on the same NodePools and NodeClaims; if the owner runs Karpenter, set "
        "cluster.existing.autoscalerInstalled: true and cluster.existing.karpenterNodeRole to "
        "use it instead; ask its owner",
        pools,
    ]
