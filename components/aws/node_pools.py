"""GPU pools as NodePools: Karpenter (gpufleet runs the controller) or EKS Auto Mode (AWS runs
it). Either way one node class and one NodePool per pool, with no auto scaling groups and no
cluster autoscaler; the two differ in the node class and in who owns the controller."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi

from components.aws.auto_mode import AutoModeNodes, AutoModeNodesArgs
from components.aws.cluster import EksCluster
from components.aws.gpu_pool import POOL_TAG
from components.aws.karpenter import (
    Karpenter,
    KarpenterArgs,
    KarpenterGpuPool,
    KarpenterGpuPoolArgs,
    NodeClassDocument,
)
from components.aws.model import auto_mode, karpenter
from components.aws.model.autoscaler_tags import default_tags
from components.aws.model.config import AwsPoolOptions, cluster_options, pool_options
from components.aws.model.provisioners import provisioner
from components.model.pools import POOL_LABEL, PoolSpec
from components.model.schema import SYSTEM_POOL_NAME, StackConfig


def build(config: StackConfig, pools: Sequence[PoolSpec], eks: EksCluster) -> list[pulumi.Resource]:
    cfg = config.cluster
    given_subnets = list(cluster_options(cfg).private_subnet_ids or [])
    security_group = eks.cluster.vpc_config.cluster_security_group_id
    built: list[pulumi.Resource] = []
    if provisioner(cfg) == "auto-mode":
        nodes = AutoModeNodes(
            f"{cfg.name}-auto-mode-nodes",
            AutoModeNodesArgs(
                cluster_name=cfg.name,
                eks_cluster_name=eks.cluster.name,
                security_group_id=security_group,
                given_subnet_ids=given_subnets,
                aws_provider=eks.aws_provider,
            ),
        )
        built.append(nodes)
        node_role_name = nodes.role.name
        wait_for: list[pulumi.Resource] = [nodes.access, eks.cluster]
    else:
        assert eks.self_managed_node_role is not None and eks.self_managed_access is not None
        controller = Karpenter(
            f"{cfg.name}-karpenter",
            KarpenterArgs(
                cluster_name=cfg.name,
                region=cfg.region or "",
                node_role=eks.self_managed_node_role,
                oidc_provider_arn=eks.oidc_provider.arn,
                oidc_issuer_url=eks.oidc_issuer,
                node_selector={POOL_LABEL: SYSTEM_POOL_NAME},
                # The chart spreads its replicas over hosts: no more than the system pool keeps.
                replicas=min(2, cfg.system_pool.min_nodes),
                security_group_id=security_group,
                given_subnet_ids=given_subnets,
                aws_provider=eks.aws_provider,
                k8s_provider=eks.k8s_provider,
            ),
            # Nodes it launches may only start once they are allowed to join.
            opts=pulumi.ResourceOptions(
                depends_on=[eks.self_managed_access, eks.system_node_group]
            ),
        )
        built.append(controller)
        node_role_name = eks.self_managed_node_role.name
        wait_for = [controller.crds, controller.release]
    by_name = {p.name: p for p in config.gpu_pools}
    for pool in pools:
        options = pool_options(by_name[pool.name])
        node_class = _node_class(config, pool, options, node_role_name)
        built.append(
            KarpenterGpuPool(
                f"{cfg.name}-{pool.name}",
                KarpenterGpuPoolArgs(
                    pool=pool,
                    node_class=node_class,
                    node_pool=karpenter.node_pool(
                        pool,
                        pool.name,
                        capacity=karpenter.capacity_types(pool.spot, options.on_demand_fallback),
                        # Sized by its largest allowed type (ManagedCloud.sizing_machine).
                        largest=(pool.vcpus, pool.memory_gib),
                        consolidate_underutilized=options.consolidate_underutilized,
                        node_class_ref=_node_class_ref(config, pool.name),
                        os_requirement=provisioner(config.cluster) != "auto-mode",
                    ),
                    wait_for=wait_for,
                    k8s_provider=eks.k8s_provider,
                ),
            )
        )
    return built


def _node_class_ref(config: StackConfig, name: str) -> Mapping[str, str] | None:
    if provisioner(config.cluster) != "auto-mode":
        return None  # Karpenter's EC2NodeClass, the default
    return {"group": auto_mode.NODE_CLASS_GROUP, "kind": auto_mode.NODE_CLASS_KIND, "name": name}


def _node_class(
    config: StackConfig, pool: PoolSpec, options: AwsPoolOptions, role: pulumi.Output[str]
) -> NodeClassDocument:
    cfg = config.cluster
    if provisioner(cfg) == "auto-mode":
        spec: pulumi.Output[Any] = role.apply(
            lambda name: auto_mode.node_class_spec(
                cluster_name=cfg.name, node_role=name, disk_size_gb=pool.disk_size_gb
            )
        )
        return NodeClassDocument(auto_mode.NODE_CLASS_API_VERSION, auto_mode.NODE_CLASS_KIND, spec)
    # Karpenter adds the ownership and NodePool tags its IAM scoping needs.
    tags = {
        **{k: str(v) for k, v in default_tags(cfg.name).items()},
        "Name": f"{cfg.name}-{pool.name}",
        POOL_TAG: pool.name,
    }
    spec = role.apply(
        lambda name: karpenter.ec2_node_class(
            pool.name,
            cluster_name=cfg.name,
            family=options.ami_family,
            node_role=name,
            disk_size_gb=pool.disk_size_gb,
            tags=tags,
        )["spec"]
    )
    return NodeClassDocument(karpenter.NODE_CLASS_API_VERSION, "EC2NodeClass", spec)
