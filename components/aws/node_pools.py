"""GPU pools as NodePools: Karpenter (gpufleet runs the controller) or EKS Auto Mode (AWS runs
it). Either way one node class and one NodePool per pool, with no auto scaling groups and no
cluster autoscaler; the two differ in the node class and in who owns the controller."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi

from components.aws.auto_mode import AutoModeNodes, AutoModeNodesArgs
from components.aws.gpu_pool import POOL_TAG
from components.aws.karpenter import KARPENTER_GPU_POOL_TYPE, Karpenter, KarpenterArgs
from components.aws.model import auto_mode, capacity, karpenter
from components.aws.model.autoscaler_tags import default_tags
from components.aws.model.config import AwsPoolOptions, cluster_options, pool_options
from components.aws.model.kinds import cluster_kind
from components.aws.node_host import EksNodeHost
from components.kubernetes.karpenter_pool import (
    KarpenterGpuPool,
    KarpenterGpuPoolArgs,
    NodeClassDocument,
)
from components.model import existing_cluster, karpenter_pool
from components.model.pools import PoolSpec
from components.model.schema import StackConfig


def build(
    config: StackConfig, pools: Sequence[PoolSpec], eks: EksNodeHost
) -> list[pulumi.Resource]:
    cfg = config.cluster
    # On a created cluster gpufleet's own subnets carry the discovery tag and given ones get it;
    # an adopted cluster's network is never tagged.
    by_id = eks.selected_by_id
    given_subnets = [] if by_id else list(cluster_options(cfg).private_subnet_ids or [])
    security_group = eks.security_group_id
    existing = existing_cluster.cluster_options(cfg)
    built: list[pulumi.Resource] = []
    wait_for: list[pulumi.Resource]
    node_role_name: pulumi.Input[str]
    kind = cluster_kind(cfg)
    # Only a Karpenter gpufleet runs has its NodeOverlay gate on: Auto Mode's and an installed
    # Karpenter's are not gpufleet's, and sharing and MIG are refused there (the kinds' checks).
    runs_karpenter = not kind.cluster_compute and not existing.autoscaler_installed
    overlays = {
        pool.name: karpenter_pool.node_overlay(pool) if runs_karpenter else None for pool in pools
    }
    if not kind.cluster_compute and existing.autoscaler_installed:
        # The running Karpenter (its CRDs, controller and interruption queue) takes the pools;
        # it may pass only its own node role, which already has an access entry.
        assert existing.karpenter_node_role is not None  # required by the config check
        node_role_name = existing.karpenter_node_role
        wait_for = list(eks.control_plane)
    elif kind.cluster_compute:
        nodes = AutoModeNodes(
            f"{cfg.name}-auto-mode-nodes",
            AutoModeNodesArgs(
                cluster_name=cfg.name,
                eks_cluster_name=eks.cluster_name,
                security_group_id=security_group,
                given_subnet_ids=given_subnets,
                tag_for_discovery=by_id is None,
                aws_provider=eks.aws_provider,
            ),
        )
        built.append(nodes)
        node_role_name = nodes.role.name
        wait_for = [nodes.access, *eks.control_plane]
    else:
        assert eks.self_managed_node_role is not None and eks.self_managed_access is not None
        controller = Karpenter(
            f"{cfg.name}-karpenter",
            KarpenterArgs(
                cluster_name=cfg.name,
                region=cfg.region or "",
                node_role=eks.self_managed_node_role,
                oidc_provider_arn=eks.oidc_provider_arn,
                oidc_issuer_url=eks.oidc_issuer,
                node_selector=eks.controller_node_selector,
                replicas=eks.controller_replicas,
                security_group_id=security_group,
                given_subnet_ids=given_subnets,
                tag_for_discovery=by_id is None,
                aws_provider=eks.aws_provider,
                k8s_provider=eks.k8s_provider,
                node_overlays=any(overlays.values()),
            ),
            # Nodes it launches may only start once they are allowed to join.
            opts=pulumi.ResourceOptions(depends_on=[eks.self_managed_access, *eks.nodes_after]),
        )
        built.append(controller)
        node_role_name = eks.self_managed_node_role.name
        wait_for = [controller.crds, controller.release]
    # Node classes select the cluster's private subnets and node security groups by id (an
    # adopted cluster's as given, a created one's as gpufleet made them), never by a tag others
    # could add (security review SEC-18). The discovery tags above stay: nothing reads them now,
    # and removing them is not needed for the selection to be exact.
    network = (eks.network.private_subnet_ids, eks.node_security_group_ids)
    by_name = {p.name: p for p in config.gpu_pools}
    for pool in pools:
        options = pool_options(by_name[pool.name])
        node_class = _node_class(
            config,
            pool,
            options,
            node_role_name,
            network,
            capacity.selector_terms(by_name[pool.name]),
        )
        built.append(
            KarpenterGpuPool(
                KARPENTER_GPU_POOL_TYPE,
                f"{cfg.name}-{pool.name}",
                KarpenterGpuPoolArgs(
                    pool=pool,
                    node_class=node_class,
                    node_pool=karpenter_pool.node_pool(
                        pool,
                        capacity=karpenter_pool.capacity_types(
                            pool.capacity, options.on_demand_fallback
                        ),
                        # Sized by its largest allowed type (ManagedCloud.sizing_machine).
                        largest=(pool.vcpus, pool.memory_gib),
                        consolidate_underutilized=options.consolidate_underutilized,
                        node_class_ref=_node_class_ref(config, pool.name),
                        os_requirement=not kind.cluster_compute,
                        lifetime=auto_mode.NODE_LIFETIME
                        if kind.cluster_compute
                        else karpenter_pool.NEVER_EXPIRE,
                    ),
                    wait_for=wait_for,
                    k8s_provider=eks.k8s_provider,
                    node_overlay=overlays[pool.name],
                ),
            )
        )
    return built


def _node_class_ref(config: StackConfig, name: str) -> Mapping[str, str]:
    if not cluster_kind(config.cluster).cluster_compute:
        return karpenter.ec2_node_class_ref(name)
    return {"group": auto_mode.NODE_CLASS_GROUP, "kind": auto_mode.NODE_CLASS_KIND, "name": name}


def _node_class(
    config: StackConfig,
    pool: PoolSpec,
    options: AwsPoolOptions,
    role_name: pulumi.Input[str],
    network: tuple[Sequence[pulumi.Input[str]], Sequence[pulumi.Input[str]]],
    reservations: Sequence[Mapping[str, Any]] = (),
) -> NodeClassDocument:
    cfg = config.cluster
    subnets, security_groups = network
    # (role name, subnet ids, security group ids), once the cloud knows them.
    resolved = pulumi.Output.all(
        role_name, pulumi.Output.all(*subnets), pulumi.Output.all(*security_groups)
    )
    if cluster_kind(cfg).cluster_compute:
        spec: pulumi.Output[Any] = resolved.apply(
            lambda parts: auto_mode.node_class_spec(
                node_role=parts[0],
                disk_size_gb=pool.disk_size_gb,
                subnet_ids=parts[1],
                security_group_ids=parts[2],
            )
        )
        return NodeClassDocument(auto_mode.NODE_CLASS_API_VERSION, auto_mode.NODE_CLASS_KIND, spec)
    # Karpenter adds the ownership and NodePool tags its IAM scoping needs.
    tags = {
        **{k: str(v) for k, v in default_tags(cfg.name).items()},
        "Name": f"{cfg.name}-{pool.name}",
        POOL_TAG: pool.name,
    }
    spec = resolved.apply(
        lambda parts: karpenter.ec2_node_class(
            pool.name,
            family=options.ami_family,
            node_role=parts[0],
            disk_size_gb=pool.disk_size_gb,
            tags=tags,
            subnet_ids=parts[1],
            security_group_ids=parts[2],
            capacity_reservations=reservations,
        )["spec"]
    )
    return NodeClassDocument(karpenter.NODE_CLASS_API_VERSION, karpenter.NODE_CLASS_KIND, spec)
