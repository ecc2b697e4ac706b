"""The EKS control plane: its service role, the key that encrypts its secrets, its log group
and the cluster resource itself (components/aws/cluster.py builds the rest around it)."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from components.aws import iam
from components.aws.model import auto_mode as auto_mode_model
from components.aws.model import names
from components.aws.model.config import cluster_options
from components.aws.node_roles import service_role
from components.model.schema import ClusterConfig

CONTROL_PLANE_LOGS = ["api", "audit", "authenticator", "controllerManager", "scheduler"]
# EKS would create the log group itself with no expiry; ours keeps a month.
LOG_RETENTION_DAYS = 30


def control_plane(
    name: str,
    cfg: ClusterConfig,
    subnet_ids: Sequence[pulumi.Input[str]],
    auto_mode: bool,
    partition: pulumi.Output[str],
    child: pulumi.ResourceOptions,
) -> aws.eks.Cluster:
    """The cluster, created after its role's policies, its key grant and its log group."""
    options = cluster_options(cfg)
    cluster_policies = iam.CLUSTER_POLICIES + (
        auto_mode_model.CLUSTER_POLICIES if auto_mode else ()
    )
    role, role_policies = service_role(
        f"{name}-cluster", "eks.amazonaws.com", cluster_policies, partition, child
    )
    key = aws.kms.Key(
        f"{name}-secrets",
        description=f"Kubernetes secrets of EKS cluster {cfg.name}",
        enable_key_rotation=True,
        deletion_window_in_days=30,
        opts=child,
    )
    key_use = aws.iam.RolePolicy(
        f"{name}-cluster-kms",
        **names.name_args(names.ROLE_POLICY, f"{name}-cluster-kms"),
        role=role.id,
        policy=key.arn.apply(iam.secrets_key_policy_document),
        opts=child,
    )
    logs = aws.cloudwatch.LogGroup(
        f"{name}-logs",
        name=f"/aws/eks/{cfg.name}/cluster",
        retention_in_days=LOG_RETENTION_DAYS,
        opts=child,
    )
    return aws.eks.Cluster(
        f"{name}-cluster",
        name=cfg.name,
        version=cfg.kubernetes_version,
        role_arn=role.arn,
        vpc_config=aws.eks.ClusterVpcConfigArgs(
            subnet_ids=subnet_ids,
            endpoint_private_access=True,
            # No open default: the config names who may reach it, or [] (private only).
            endpoint_public_access=bool(options.public_endpoint_cidrs),
            public_access_cidrs=options.public_endpoint_cidrs or None,
        ),
        access_config=aws.eks.ClusterAccessConfigArgs(
            authentication_mode="API",
            # Whoever runs `pulumi up` administers the cluster (the Kubernetes provider needs it).
            bootstrap_cluster_creator_admin_permissions=True,
        ),
        # Explicit: unset, EKS bills extended support once the minor leaves standard support
        # (review eks.md S2-6).
        upgrade_policy=aws.eks.ClusterUpgradePolicyArgs(support_type=options.support_type),
        kubernetes_network_config=aws.eks.ClusterKubernetesNetworkConfigArgs(
            ip_family="ipv4",
            service_ipv4_cidr=options.service_cidr,
            elastic_load_balancing=aws.eks.ClusterKubernetesNetworkConfigElasticLoadBalancingArgs(
                enabled=True
            )
            if auto_mode
            else None,
        ),
        # Auto Mode: compute, block storage and load balancing on together, no
        # self-managed add-ons (the managed ones are aws.eks.Addon, components/aws/addons.py).
        # gpufleet's NodePools bring the GPU nodes, so no built-in node pools.
        compute_config=aws.eks.ClusterComputeConfigArgs(enabled=True, node_pools=[])
        if auto_mode
        else None,
        storage_config=aws.eks.ClusterStorageConfigArgs(
            block_storage=aws.eks.ClusterStorageConfigBlockStorageArgs(enabled=True)
        )
        if auto_mode
        else None,
        # Required false only to create an Auto Mode cluster; enabling Auto Mode on a
        # running cluster keeps what it bootstrapped (terraform-provider-aws PR 40415,
        # pulumi-eks PR 1519, EKS user guide automode/auto-enable-existing), so a change of
        # it must not replace the cluster (review eks-2.md N9).
        bootstrap_self_managed_addons=False if auto_mode else None,
        encryption_config=aws.eks.ClusterEncryptionConfigArgs(
            provider=aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=key.arn),
            resources=["secrets"],
        ),
        enabled_cluster_log_types=CONTROL_PLANE_LOGS,
        deletion_protection=cfg.protect,
        opts=pulumi.ResourceOptions.merge(
            child,
            pulumi.ResourceOptions(
                protect=cfg.protect,
                depends_on=[logs, key_use, *role_policies],
                ignore_changes=["bootstrapSelfManagedAddons"],
            ),
        ),
    )
