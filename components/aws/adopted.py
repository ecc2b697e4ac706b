"""An EKS cluster gpufleet adopts (`cluster.existing`): looked up, never created or changed.

The lookups (the cluster, its IAM OIDC provider, the private subnets and their zones) run while
the program plans, so what keeps the GPU pools from joining is an error before any resource
exists. gpufleet adds only what its nodes and controllers need: the node roles (with their
access entries) and the Kubernetes provider; `components.aws.stack` then builds the same pools,
autoscaler or Karpenter as on a cluster it creates. The cluster's add-ons, subnets and security
groups stay its owner's: node classes select the network by id and nothing is tagged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws.cluster import eks_kubeconfig
from components.aws.live_groups import LiveNodeGroups
from components.aws.model import autoscaler_tags, quotas, vpc_cni
from components.aws.model.adopted import (
    PRIVATE_SUBNET_TAG,
    EksClusterFacts,
    Needs,
    adoption_problems,
    adoption_warnings,
)
from components.aws.model.autoscaler_tags import default_tags
from components.aws.model.config import cluster_options, existing_options
from components.aws.network import NetworkHandle
from components.aws.node_roles import node_policies, self_managed_nodes, service_role
from components.aws.user_data import ClusterJoin
from components.kubernetes.cluster import KubernetesProviders, stop_unless_adoptable
from components.model.adoption import AdoptionError
from components.model.schema import ClusterConfig


@dataclass(frozen=True)
class AdoptedEksClusterArgs:
    config: ClusterConfig
    needs: Needs
    # Self-managed groups or gpufleet's Karpenter: a node role with an EC2_LINUX entry.
    self_managed_nodes: bool
    instance_profile: bool
    # Managed node groups: a node role (EKS creates its access entry).
    managed_nodes: bool
    # gpufleet's managed node groups by name: with the owner's, within EKS's quota per cluster.
    managed_group_names: tuple[str, ...] = ()


class AdoptedEksCluster(pulumi.ComponentResource):
    """The looked-up cluster's facts, gpufleet's node roles and its Kubernetes provider."""

    facts: EksClusterFacts
    owners_cni: vpc_cni.OwnersCni | None
    aws_provider: aws.Provider
    live_node_groups: LiveNodeGroups
    network: NetworkHandle
    oidc_issuer: str
    managed_node_role: aws.iam.Role | None
    self_managed_node_role: aws.iam.Role | None
    self_managed_instance_profile: aws.iam.InstanceProfile | None
    self_managed_access: aws.eks.AccessEntry | None
    join: pulumi.Output[ClusterJoin]
    kubeconfig: pulumi.Output[str]
    k8s_provider: k8s.Provider

    def __init__(
        self, name: str, args: AdoptedEksClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:aws:AdoptedCluster", name, None, opts)
        cfg = args.config
        self._config = cfg
        self.aws_provider = aws.Provider(
            f"{name}-aws",
            region=cfg.region or "",
            default_tags=aws.ProviderDefaultTagsArgs(tags=default_tags(cfg.name)),
            opts=pulumi.ResourceOptions(parent=self),
        )
        invoke = pulumi.InvokeOptions(parent=self, provider=self.aws_provider)
        # Looked up below (a missing cluster stops the program), so it exists.
        self.live_node_groups = LiveNodeGroups(cfg.name, invoke, exists=True)
        self.facts = self._look_up_or_stop(args, invoke)
        self._node_roles(name, args, invoke)
        self._network(cfg)
        self._kubernetes_access(name, cfg)
        self.register_outputs({"clusterName": self.facts.name, "version": self.facts.version})

    def _look_up_or_stop(
        self, args: AdoptedEksClusterArgs, invoke: pulumi.InvokeOptions
    ) -> EksClusterFacts:
        """The cluster's facts; the program stops here when the pools could not join it."""
        cfg = args.config
        given = list(cluster_options(cfg).private_subnet_ids or [])
        facts = look_up(cfg, given, invoke)
        problems = adoption_problems(facts, cfg, args.needs, subnets_given=bool(given))
        if args.managed_group_names and not problems:
            # The owner's groups count toward the same quota (review eks-3.md R3-2).
            over = quotas.live_problem(
                cfg, args.managed_group_names, sorted(self.live_node_groups.names)
            )
            problems += [over] if over else []
        stop_unless_adoptable(
            cfg.name, problems, adoption_warnings(facts, cfg, managed_groups=args.managed_nodes)
        )
        return facts

    def _node_roles(
        self, name: str, args: AdoptedEksClusterArgs, invoke: pulumi.InvokeOptions
    ) -> None:
        """gpufleet's node roles: for managed groups, and for self-managed groups or its own
        Karpenter (with their instance profile and access entry)."""
        facts = self.facts
        child = pulumi.ResourceOptions(parent=self, provider=self.aws_provider)
        partition = aws.get_partition_output(
            opts=pulumi.InvokeOutputOptions(parent=self, provider=self.aws_provider)
        ).partition
        # The owner's vpc-cni decides whether gpufleet's node roles need its policy (SEC-2);
        # read only when gpufleet makes a node role.
        self.owners_cni = (
            owners_cni(facts.name, invoke)
            if args.managed_nodes or args.self_managed_nodes
            else None
        )
        if vpc_cni.node_roles_keep_cni_policy(self.owners_cni):
            assert self.owners_cni is not None
            pulumi.log.warn(vpc_cni.kept_policy_warning(facts.name, self.owners_cni))
        policies = node_policies(self.owners_cni)
        self.managed_node_role = None
        if args.managed_nodes:
            self.managed_node_role, _ = service_role(
                f"{name}-managed-nodes", "ec2.amazonaws.com", policies, partition, child
            )
        self.self_managed_node_role = None
        self.self_managed_instance_profile = None
        self.self_managed_access = None
        if args.self_managed_nodes:
            nodes = self_managed_nodes(
                name, facts.name, partition, args.instance_profile, child, policies
            )
            self.self_managed_node_role = nodes.role
            self.self_managed_instance_profile = nodes.instance_profile
            self.self_managed_access = nodes.access

    def _network(self, cfg: ClusterConfig) -> None:
        """The looked-up private subnets of the configured zones, by zone."""
        facts = self.facts
        zones = list(cfg.zones or [])
        by_zone = {zone: list(facts.subnets_by_zone.get(zone, ())) for zone in zones}
        self._subnet_ids = [subnet for zone in zones for subnet in by_zone[zone]]
        self.network = NetworkHandle(
            private_subnet_ids=self._subnet_ids,
            public_subnet_ids=[],
            private_subnets_by_zone=by_zone,
        )

    def _kubernetes_access(self, name: str, cfg: ClusterConfig) -> None:
        """What nodes join with, the kubeconfig and the Kubernetes providers."""
        facts = self.facts
        self.oidc_issuer = facts.oidc_issuer
        self.join = pulumi.Output.from_input(
            ClusterJoin(
                name=facts.name,
                endpoint=facts.endpoint,
                certificate_authority=facts.certificate_authority,
                service_cidr=facts.service_cidr,
            )
        )
        self.kubeconfig = pulumi.Output.secret(
            eks_kubeconfig(cfg.name, cfg.region or "", facts.endpoint, facts.certificate_authority)
        )
        self.k8s_providers = KubernetesProviders(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # The cluster (its OIDC issuer), not its endpoint or CA: see components/aws/cluster.py.
            cluster_identifier=facts.oidc_issuer,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.k8s_provider = self.k8s_providers.main

    # What the GPU pools and controllers read (components/aws/node_host.py).
    @property
    def cluster_name(self) -> str:
        return self.facts.name

    @property
    def cluster_version(self) -> str:
        return self.facts.version

    @property
    def security_group_id(self) -> str:
        return self.facts.security_group_id

    @property
    def node_security_group_ids(self) -> Sequence[str]:
        extra = existing_options(self._config).node_security_group_ids or []
        return [self.facts.security_group_id, *extra]

    @property
    def vpc_id(self) -> str:
        return self.facts.vpc_id

    @property
    def autoscaler_discovery_tag(self) -> str | None:
        # EKS tags every managed node group of the owner for the autoscaler's discovery (EKS
        # user guide, managed-node-groups); gpufleet's must find only gpufleet's (review eks-2.md
        # N4), and an autoscaler of the owner's must not find gpufleet's (eks-3.md N18). When
        # the owner's autoscaler is the one meant to scale them (autoscalerInstalled), the
        # groups carry the standard pair it discovers by.
        if existing_options(self._config).autoscaler_installed:
            return None
        return autoscaler_tags.gpufleet_owner_tag(self.facts.name)

    @property
    def oidc_provider_arn(self) -> str:
        return self.facts.oidc_provider_arn or ""

    @property
    def nodes_after(self) -> Sequence[pulumi.Resource]:
        return []

    @property
    def control_plane(self) -> Sequence[pulumi.Resource]:
        return []

    @property
    def controller_node_selector(self) -> Mapping[str, str]:
        # Its CPU nodes are the owner's and unlabelled by gpufleet; the GPU nodes are tainted.
        return {"kubernetes.io/os": "linux"}

    @property
    def controller_replicas(self) -> int:
        # How many CPU nodes it has is not gpufleet's to know: one replica always schedules.
        return 1

    @property
    def selected_by_id(self) -> tuple[Sequence[str], Sequence[str]]:
        return self._subnet_ids, list(self.node_security_group_ids)


def owners_cni(cluster: str, invoke: pulumi.InvokeOptions) -> vpc_cni.OwnersCni:
    """The adopted cluster's vpc-cni as the add-on API describes it (no add-on: self-managed)."""
    try:
        found = aws.eks.get_addon(addon_name=vpc_cni.ADDON, cluster_name=cluster, opts=invoke)
    except Exception as error:
        # The provider wraps EKS's ResourceNotFoundException ("couldn't find resource").
        text = str(error)
        if any(m in text for m in ("ResourceNotFound", "couldn't find resource", "not found")):
            return vpc_cni.OwnersCni(managed=False)  # aws-node is a self-managed DaemonSet
        # Denied or throttled: say so, as the other live reads do (review eks-4 N-5).
        raise pulumi.RunError(
            f"cannot read the vpc-cni add-on of cluster {cluster} (eks:DescribeAddon): {error}; "
            "give the identity running pulumi eks:DescribeAddon and "
            "eks:DescribePodIdentityAssociation on the cluster (docs/eks.md, Permissions)"
        ) from None
    return vpc_cni.OwnersCni(
        managed=True,
        pod_identity_associations=len(found.pod_identity_associations or []),
        irsa_role_arn=found.service_account_role_arn or None,
    )


def look_up(
    cfg: ClusterConfig, given_subnets: list[str], invoke: pulumi.InvokeOptions
) -> EksClusterFacts:
    """The cluster named `cluster.name`, its OIDC provider, and its private subnets by zone."""
    try:
        found = aws.eks.get_cluster(name=cfg.name, opts=invoke)
    except Exception as error:  # the provider's message says why (not found, no access)
        where = f"in {cfg.region}"
        raise pulumi.RunError(AdoptionError.unreadable(cfg.name, where, error).render()) from None
    vpc = found.vpc_config
    identities = found.identities or []
    oidcs = identities[0].oidcs if identities else []
    issuer = (oidcs[0].issuer if oidcs else "") or ""
    provider_arn: str | None
    try:
        provider_arn = aws.iam.get_open_id_connect_provider(url=issuer, opts=invoke).arn
    except Exception:  # none for this issuer
        provider_arn = None
    ids = given_subnets or list(
        aws.ec2.get_subnets(
            filters=[
                aws.ec2.GetSubnetsFilterArgs(name="vpc-id", values=[vpc.vpc_id]),
                aws.ec2.GetSubnetsFilterArgs(name=f"tag:{PRIVATE_SUBNET_TAG}", values=["1"]),
            ],
            opts=invoke,
        ).ids
    )
    by_zone: dict[str, list[str]] = {}
    for subnet_id in sorted(ids):
        zone = aws.ec2.get_subnet(id=subnet_id, opts=invoke).availability_zone
        by_zone.setdefault(zone, []).append(subnet_id)
    access = (found.access_configs or [None])[0]
    network = (found.kubernetes_network_configs or [None])[0]
    compute = (found.compute_configs or [None])[0]
    authority = (found.certificate_authorities or [None])[0]
    return EksClusterFacts(
        name=found.name,
        version=found.version,
        endpoint=found.endpoint,
        certificate_authority=getattr(authority, "data", "") or "",
        vpc_id=vpc.vpc_id,
        security_group_id=vpc.cluster_security_group_id,
        oidc_issuer=issuer,
        authentication_mode=getattr(access, "authentication_mode", None) or "CONFIG_MAP",
        service_cidr=getattr(network, "service_ipv4_cidr", None) or "",
        auto_mode=bool(getattr(compute, "enabled", False)),
        oidc_provider_arn=provider_arn,
        subnets_by_zone=by_zone,
    )
