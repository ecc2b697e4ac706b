"""An EKS cluster with its network, IAM, OIDC provider for IRSA, CPU system node group and a
Kubernetes provider that authenticates with `aws eks get-token`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws import iam
from components.aws.addons import EksAddons, EksAddonsArgs
from components.aws.amis import managed_release_version
from components.aws.control_plane import control_plane
from components.aws.launch_template import METADATA_OPTIONS, block_devices, tag_specifications
from components.aws.live_groups import LiveNodeGroups
from components.aws.model import names
from components.aws.model.autoscaler_tags import default_tags
from components.aws.model.cloud import AWS
from components.aws.model.config import cluster_options, principal_slug
from components.aws.model.groups import applied_bounds_tag, scaling_to_send
from components.aws.network import EksNetwork, NetworkHandle, existing_network
from components.aws.node_roles import self_managed_nodes, service_role
from components.aws.user_data import ClusterJoin
from components.kubernetes.cluster import KubernetesProviders
from components.kubernetes.kubeconfig import exec_kubeconfig
from components.model.pools import POOL_LABEL, PoolSpec
from components.model.schema import SYSTEM_POOL_NAME, ClusterConfig

SYSTEM_GROUP_PREFIX = f"{SYSTEM_POOL_NAME}-"


@dataclass(frozen=True)
class EksClusterArgs:
    config: ClusterConfig
    system_pool: PoolSpec
    # Any GPU pool on self-managed auto scaling groups: their nodes need a role, instance
    # profile and an EC2_LINUX access entry (EKS creates entries only for managed groups).
    self_managed_nodes: bool
    # Karpenter creates the instance profiles of its node classes from the role itself.
    instance_profile: bool = True
    # EKS Auto Mode: AWS runs the node provisioning (components/aws/model/auto_mode.py).
    auto_mode: bool = False


class EksCluster(pulumi.ComponentResource):
    """The cluster and everything cluster-wide that the GPU pools and the autoscaler build on."""

    aws_provider: aws.Provider
    live_node_groups: LiveNodeGroups
    cluster: aws.eks.Cluster
    network: NetworkHandle
    oidc_provider: aws.iam.OpenIdConnectProvider
    oidc_issuer: pulumi.Output[str]
    managed_node_role: aws.iam.Role
    self_managed_node_role: aws.iam.Role | None
    self_managed_instance_profile: aws.iam.InstanceProfile | None
    self_managed_access: aws.eks.AccessEntry | None
    system_node_group: aws.eks.NodeGroup
    addons: EksAddons
    join: pulumi.Output[ClusterJoin]
    kubeconfig: pulumi.Output[str]
    k8s_provider: k8s.Provider

    def __init__(
        self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:aws:Cluster", name, None, opts)
        cfg = args.config
        self._system_min_nodes = args.system_pool.min_nodes
        self.aws_provider = aws.Provider(
            f"{name}-aws",
            region=cfg.region or "",
            default_tags=aws.ProviderDefaultTagsArgs(tags=default_tags(cfg.name)),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.live_node_groups = LiveNodeGroups(
            cfg.name, pulumi.InvokeOptions(parent=self, provider=self.aws_provider)
        )
        child = pulumi.ResourceOptions(parent=self, provider=self.aws_provider)
        partition = aws.get_partition_output(
            opts=pulumi.InvokeOutputOptions(parent=self, provider=self.aws_provider)
        ).partition
        if cluster_options(cfg).private_subnet_ids:
            self.network = existing_network(cfg, self.aws_provider, self)
        else:
            self.network = EksNetwork(f"{name}-network", cfg, opts=child).handle
        self.cluster = control_plane(
            name, cfg, self.network.private_subnet_ids, args.auto_mode, partition, child
        )
        self._identities(name, args, partition, child)
        self._administrators(name, cfg, partition, child)
        # The add-ons that need no node (vpc-cni on its own role among them) before the first
        # node, so it starts with pod networking (components/aws/model/vpc_cni.py). Parented to
        # the stack, as when it was built after the cluster: its URNs stay.
        self.addons = EksAddons(
            f"{cfg.name}-addons",
            EksAddonsArgs(
                cluster_name=self.cluster.name,
                cluster_version=self.cluster.version,
                cluster_arn=self.cluster.arn,
                provider=self.aws_provider,
                node_monitoring=not args.auto_mode,
            ),
        )
        self.system_node_group = self._system_node_group(name, args, child)
        self.addons.after_nodes([self.system_node_group])
        self._kubernetes_access(name, cfg)
        self.register_outputs(
            {
                "clusterName": self.cluster.name,
                "endpoint": self.cluster.endpoint,
                "oidcProviderArn": self.oidc_provider.arn,
                "kubeconfig": self.kubeconfig,
            }
        )

    def _identities(
        self,
        name: str,
        args: EksClusterArgs,
        partition: pulumi.Output[str],
        child: pulumi.ResourceOptions,
    ) -> None:
        """The OIDC provider for IRSA, the managed groups' node role and, when a pool runs on
        self-managed groups, their role, instance profile and access entry."""
        self.oidc_issuer = self.cluster.identities.apply(_issuer)
        self.oidc_provider = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc",
            url=self.oidc_issuer,
            client_id_lists=["sts.amazonaws.com"],
            opts=child,
        )
        self.managed_node_role, self._managed_node_policies = service_role(
            f"{name}-managed-nodes", "ec2.amazonaws.com", iam.NODE_POLICIES, partition, child
        )
        self.self_managed_node_role = None
        self.self_managed_instance_profile = None
        self.self_managed_access = None
        if args.self_managed_nodes:
            nodes = self_managed_nodes(
                name, self.cluster.name, partition, args.instance_profile, child
            )
            self.self_managed_node_role = nodes.role
            self.self_managed_instance_profile = nodes.instance_profile
            self.self_managed_access = nodes.access

    def _administrators(
        self,
        name: str,
        cfg: ClusterConfig,
        partition: pulumi.Output[str],
        child: pulumi.ResourceOptions,
    ) -> None:
        """An access entry with cluster admin for each of `cluster.aws.adminPrincipalArns`."""
        for arn in cluster_options(cfg).admin_principal_arns:
            # CI roles and teammates administer the cluster too (API authentication mode admits
            # only principals with an access entry; review eks.md S2).
            slug = principal_slug(arn)
            entry = aws.eks.AccessEntry(
                f"{name}-admin-{slug}",
                cluster_name=self.cluster.name,
                principal_arn=arn,
                type="STANDARD",
                opts=child,
            )
            aws.eks.AccessPolicyAssociation(
                f"{name}-admin-{slug}-cluster-admin",
                cluster_name=self.cluster.name,
                principal_arn=arn,
                policy_arn=partition.apply(
                    lambda p: f"arn:{p}:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
                ),
                access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
                opts=pulumi.ResourceOptions.merge(
                    child, pulumi.ResourceOptions(depends_on=[entry])
                ),
            )

    def _kubernetes_access(self, name: str, cfg: ClusterConfig) -> None:
        """What nodes join with, the kubeconfig and the Kubernetes providers (after the system
        group, which runs what the providers install first)."""
        self.join = pulumi.Output.all(
            self.cluster.name, self.cluster.endpoint, self.cluster.certificate_authority.data
        ).apply(
            lambda parts: ClusterJoin(
                name=parts[0],
                endpoint=parts[1],
                certificate_authority=parts[2] or "",
                service_cidr=cluster_options(cfg).service_cidr,
            )
        )
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(self.cluster.endpoint, self.cluster.certificate_authority.data).apply(
                lambda parts: eks_kubeconfig(cfg.name, cfg.region or "", parts[0], parts[1] or "")
            )
        )
        self.k8s_providers = KubernetesProviders(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # The cluster (its OIDC issuer, unique to it), not its endpoint or CA: a new endpoint
            # or CA updates the provider instead of replacing everything it manages
            # (pulumi-kubernetes DiffConfig; review gke-2.md N1).
            cluster_identifier=self.oidc_issuer,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.system_node_group]),
        )
        self.k8s_provider = self.k8s_providers.main

    # What the GPU pools and controllers read (components/aws/node_host.py).
    @property
    def cluster_name(self) -> pulumi.Input[str]:
        return self.cluster.name

    @property
    def cluster_version(self) -> pulumi.Input[str]:
        return self.cluster.version

    @property
    def security_group_id(self) -> pulumi.Input[str]:
        return self.cluster.vpc_config.cluster_security_group_id

    @property
    def node_security_group_ids(self) -> Sequence[pulumi.Input[str]]:
        return [self.security_group_id]

    @property
    def vpc_id(self) -> pulumi.Input[str]:
        return self.cluster.vpc_config.vpc_id

    @property
    def autoscaler_discovery_tag(self) -> str | None:
        return None

    @property
    def oidc_provider_arn(self) -> pulumi.Input[str]:
        return self.oidc_provider.arn

    @property
    def nodes_after(self) -> Sequence[pulumi.Resource]:
        return [self.system_node_group]

    @property
    def control_plane(self) -> Sequence[pulumi.Resource]:
        return [self.cluster]

    @property
    def controller_node_selector(self) -> Mapping[str, str]:
        return {POOL_LABEL: SYSTEM_POOL_NAME}

    @property
    def controller_replicas(self) -> int:
        return min(2, self._system_min_nodes)

    @property
    def selected_by_id(self) -> tuple[Sequence[str], Sequence[str]] | None:
        return None

    def _system_node_group(
        self, name: str, args: EksClusterArgs, child: pulumi.ResourceOptions
    ) -> aws.eks.NodeGroup:
        """The on-demand CPU group for system pods and the autoscaler (>= 1 node, never zero)."""
        cfg = args.config
        system = args.system_pool
        template = aws.ec2.LaunchTemplate(
            f"{name}-system",
            **names.name_args(names.LAUNCH_TEMPLATE, f"{name}-system"),
            description=f"EKS {cfg.name} system nodes",
            metadata_options=METADATA_OPTIONS,
            block_device_mappings=block_devices("al2023", AWS.system_disk_size_gb),
            tag_specifications=tag_specifications(
                {"Name": f"{cfg.name}-{SYSTEM_POOL_NAME}", "gpufleet-pool": SYSTEM_POOL_NAME}
            ),
            update_default_version=True,
            opts=child,
        )
        # The live group, found by its prefix and labels (Pulumi adds a suffix to the prefix).
        live = self.live_node_groups.scaling_by_prefix(
            SYSTEM_GROUP_PREFIX, dict(system.declared_labels)
        )
        scaling = scaling_to_send(system.min_nodes, system.max_nodes, live)
        return aws.eks.NodeGroup(
            f"{name}-system",
            cluster_name=self.cluster.name,
            # A prefix, not a fixed name: a replaced group (e.g. a new machine type) is created
            # before the old one is deleted, so system pods always have somewhere to run.
            node_group_name_prefix=SYSTEM_GROUP_PREFIX,
            node_role_arn=self.managed_node_role.arn,
            subnet_ids=self.network.private_subnet_ids,
            version=self.cluster.version,
            release_version=managed_release_version(
                "al2023",
                cfg.kubernetes_version,
                pulumi.InvokeOutputOptions(parent=self, provider=self.aws_provider),
                variant="standard",
            ),
            ami_type="AL2023_x86_64_STANDARD",
            capacity_type="ON_DEMAND",
            instance_types=list(system.machine_types),
            labels=dict(system.declared_labels),
            tags=applied_bounds_tag(scaling.min_size, scaling.max_size),
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                min_size=scaling.min_size,
                max_size=scaling.max_size,
                desired_size=scaling.desired_size,
            ),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=template.id, version=template.latest_version.apply(str)
            ),
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    # The autoscaler owns the size; `pulumi up` must never reset it (a bounds
                    # change sends the live size: groups.scaling_to_send).
                    ignore_changes=["scalingConfig.desiredSize"] if scaling.ignore_desired else [],
                    depends_on=[*self._managed_node_policies, self.addons.network],
                ),
            ),
        )


def eks_kubeconfig(cluster_name: str, region: str, endpoint: str, ca_data: str) -> str:
    """A kubeconfig whose tokens come from `aws eks get-token` (short-lived, never stored)."""
    return exec_kubeconfig(
        cluster=cluster_name,
        server=endpoint,
        ca_data=ca_data,
        command="aws",
        args=[
            "eks",
            "get-token",
            "--cluster-name",
            cluster_name,
            "--region",
            region,
            "--output",
            "json",
        ],
    )


def _issuer(identities: Sequence[aws.eks.outputs.ClusterIdentity]) -> str:
    """The cluster's OIDC issuer URL (what IRSA trust policies name)."""
    oidcs = identities[0].oidcs or []
    return (oidcs[0].issuer if oidcs else None) or ""
