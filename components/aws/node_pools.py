"""GPU pools as `karpenter.sh/v1` NodePools on EKS: per pool one node class and one NodePool
(`components/kubernetes/karpenter_pool.py`), with no auto scaling groups and no cluster
autoscaler.

What differs between the provisioners that build them is one small strategy object each
(`EksNodePoolBuilder`): the controller it needs, the node class its NodePools name, and what
it writes into each NodePool. `KarpenterBuilder` (gpufleet runs Karpenter),
`InstalledKarpenterBuilder` (the cluster's own Karpenter takes the pools) and `AutoModeBuilder`
(AWS runs it); the pool kinds (`components/aws/model/kinds/`) answer the checks and node facts.
AKS node auto-provisioning is the same shape in azure/: a builder with an AKSNodeClass, the
same shared NodePool (`components/model/karpenter_pool.py`) and `KarpenterGpuPool` under its
own type token.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import pulumi

from components.aws.auto_mode import AutoModeNodes, AutoModeNodesArgs
from components.aws.fabric_network import fabric_network
from components.aws.gpu_pool import POOL_TAG
from components.aws.karpenter import KARPENTER_GPU_POOL_TYPE, Karpenter, KarpenterArgs
from components.aws.model import auto_mode, capacity, karpenter
from components.aws.model.autoscaler_tags import default_tags
from components.aws.model.config import cluster_options, existing_options, pool_options
from components.aws.model.fabric import fabric_group
from components.aws.model.kinds import pool_kind
from components.aws.node_host import EksNodeHost
from components.aws.user_data import merged_user_data
from components.kubernetes.karpenter_pool import (
    KarpenterGpuPool,
    KarpenterGpuPoolArgs,
    NodeClassDocument,
)
from components.model import karpenter_pool
from components.model.pools import PoolSpec
from components.model.schema import GpuPoolConfig, StackConfig


@dataclass(frozen=True)
class Controller:
    """What a provisioner's controller gives its pools: the node role their node classes name,
    what their custom resources wait for, and what it built."""

    node_role_name: pulumi.Input[str]
    wait_for: list[pulumi.Resource]
    built: list[pulumi.Resource]


class EksNodePoolBuilder(ABC):
    """How one provisioner builds EKS NodePools (a strategy): its controller, its node class,
    and its NodePools' options. The node classes select the cluster's private subnets and node security
    groups by id (an adopted cluster's as given, a created one's as gpufleet made them), never by
    a tag others could add (security review SEC-18); the discovery tags stay on running stacks,
    though nothing reads them now."""

    node_class_api_version: ClassVar[str]
    node_class_kind: ClassVar[str]

    def __init__(self, config: StackConfig, eks: EksNodeHost) -> None:
        self.config = config
        self.eks = eks

    @property
    def tag_for_discovery(self) -> bool:
        """An adopted cluster's network is never tagged."""
        return self.eks.selected_by_id is None

    @property
    def given_subnets(self) -> list[str]:
        """On a created cluster gpufleet's own subnets carry the discovery tag; these, the
        subnets the stack was given, get it."""
        if not self.tag_for_discovery:
            return []
        return list(cluster_options(self.config.cluster).private_subnet_ids or [])

    @abstractmethod
    def controller(self, node_overlays: bool) -> Controller:
        """What runs the NodePools, and the role their nodes get (`node_overlays`: some pool
        needs the NodeOverlay gate)."""

    @abstractmethod
    def node_class_spec(
        self,
        pool: PoolSpec,
        pool_config: GpuPoolConfig,
        node_role: str,
        subnet_ids: Sequence[str],
        security_group_ids: Sequence[str],
    ) -> dict[str, Any]:
        """The pool's node class spec, once the cloud knows the role and network ids."""

    @abstractmethod
    def node_pool_options(self, pool: PoolSpec) -> karpenter_pool.NodePoolOptions:
        """What this provisioner writes into the pool's NodePool."""

    def node_overlay(self, pool: PoolSpec) -> Mapping[str, Any] | None:
        """The pool's NodeOverlay (None: the provisioner plans with the cloud's GPU count)."""
        return None

    def node_class(
        self, pool: PoolSpec, pool_config: GpuPoolConfig, node_role: pulumi.Input[str]
    ) -> NodeClassDocument:
        subnets = self.eks.network.private_subnet_ids
        security_groups = self.eks.node_security_group_ids
        resolved = pulumi.Output.all(
            node_role, pulumi.Output.all(*subnets), pulumi.Output.all(*security_groups)
        )
        spec = resolved.apply(
            lambda parts: self.node_class_spec(pool, pool_config, parts[0], parts[1], parts[2])
        )
        return NodeClassDocument(self.node_class_api_version, self.node_class_kind, spec)


class KarpenterBuilder(EksNodePoolBuilder):
    """gpufleet's Karpenter: its controller, an EC2NodeClass per pool, NodeOverlays for shared
    and MIG GPUs (the only NodeOverlay gate gpufleet turns on)."""

    node_class_api_version = karpenter.NODE_CLASS_API_VERSION
    node_class_kind = karpenter.NODE_CLASS_KIND

    def controller(self, node_overlays: bool) -> Controller:
        cfg, eks = self.config.cluster, self.eks
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
                security_group_id=eks.security_group_id,
                given_subnet_ids=self.given_subnets,
                tag_for_discovery=self.tag_for_discovery,
                aws_provider=eks.aws_provider,
                k8s_provider=eks.k8s_provider,
                node_overlays=node_overlays,
            ),
            # Nodes it launches may only start once they are allowed to join.
            opts=pulumi.ResourceOptions(depends_on=[eks.self_managed_access, *eks.nodes_after]),
        )
        return Controller(
            eks.self_managed_node_role.name, [controller.crds, controller.release], [controller]
        )

    def node_class_spec(
        self,
        pool: PoolSpec,
        pool_config: GpuPoolConfig,
        node_role: str,
        subnet_ids: Sequence[str],
        security_group_ids: Sequence[str],
    ) -> dict[str, Any]:
        cluster_name = self.config.cluster.name
        # Karpenter adds the ownership and NodePool tags its IAM scoping needs.
        tags = {
            **{k: str(v) for k, v in default_tags(cluster_name).items()},
            "Name": f"{cluster_name}-{pool.name}",
            POOL_TAG: pool.name,
        }
        start = pool_kind(self.config.cluster, pool_config).image_start(pool_config)
        return karpenter.ec2_node_class(
            pool.name,
            family=pool_options(pool_config).ami_family,
            node_role=node_role,
            disk_size_gb=pool.disk_size_gb,
            tags=tags,
            subnet_ids=subnet_ids,
            security_group_ids=security_group_ids,
            capacity_reservations=capacity.selector_terms(pool_config),
            data_volume_snapshot=start.data_volume_snapshot,
            user_data=merged_user_data(start),
        )["spec"]

    def node_class(
        self, pool: PoolSpec, pool_config: GpuPoolConfig, node_role: pulumi.Input[str]
    ) -> NodeClassDocument:
        """A fabric pool's node class adds its EFA interfaces, EFA security group and cluster
        placement group (made here, in the pool's one zone, as a group pool's are)."""
        document = super().node_class(pool, pool_config, node_role)
        efa = fabric_group(pool_config)
        if efa is None:
            return document
        cluster_name = self.config.cluster.name
        network = fabric_network(
            f"{cluster_name}-{pool.name}",
            efa,
            pool.zones,
            self.eks.vpc_id,
            cluster_name,
            pulumi.ResourceOptions(provider=self.eks.aws_provider),
        )
        (zone,) = pool.zones  # a fabric pool has one zone (fabric_checks)
        spec = pulumi.Output.all(
            document.spec, network.security_group.id, network.placement_group_name(zone)
        ).apply(lambda parts: karpenter.with_fabric(parts[0], efa.efa_devices, parts[1], parts[2]))
        return replace(document, spec=spec)

    def node_pool_options(self, pool: PoolSpec) -> karpenter_pool.NodePoolOptions:
        return karpenter_pool.NodePoolOptions(karpenter.ec2_node_class_ref(pool.name))

    def node_overlay(self, pool: PoolSpec) -> Mapping[str, Any] | None:
        return karpenter_pool.node_overlay(pool)


class InstalledKarpenterBuilder(KarpenterBuilder):
    """The cluster's own Karpenter (its CRDs, controller and interruption queue) takes the pools.
    Its NodeOverlay gate is not gpufleet's: sharing and MIG are refused there (the kind's
    checks)."""

    def controller(self, node_overlays: bool) -> Controller:
        existing = existing_options(self.config.cluster)
        # It may pass only its own node role, which already has an access entry.
        assert existing.karpenter_node_role is not None  # required by the config check
        return Controller(existing.karpenter_node_role, list(self.eks.control_plane), [])

    def node_overlay(self, pool: PoolSpec) -> Mapping[str, Any] | None:
        return None


class AutoModeBuilder(EksNodePoolBuilder):
    """EKS Auto Mode: AWS runs the controller; gpufleet makes the nodes' role and a NodeClass
    per pool, and its NodePools state Auto Mode's node lifetime. Sharing and MIG are refused
    (the kind's checks), so no NodeOverlay."""

    node_class_api_version = auto_mode.NODE_CLASS_API_VERSION
    node_class_kind = auto_mode.NODE_CLASS_KIND

    def controller(self, node_overlays: bool) -> Controller:
        cfg, eks = self.config.cluster, self.eks
        nodes = AutoModeNodes(
            f"{cfg.name}-auto-mode-nodes",
            AutoModeNodesArgs(
                cluster_name=cfg.name,
                eks_cluster_name=eks.cluster_name,
                security_group_id=eks.security_group_id,
                given_subnet_ids=self.given_subnets,
                tag_for_discovery=self.tag_for_discovery,
                aws_provider=eks.aws_provider,
            ),
        )
        return Controller(nodes.role.name, [nodes.access, *eks.control_plane], [nodes])

    def node_class_spec(
        self,
        pool: PoolSpec,
        pool_config: GpuPoolConfig,
        node_role: str,
        subnet_ids: Sequence[str],
        security_group_ids: Sequence[str],
    ) -> dict[str, Any]:
        return auto_mode.node_class_spec(
            node_role=node_role,
            disk_size_gb=pool.disk_size_gb,
            subnet_ids=subnet_ids,
            security_group_ids=security_group_ids,
            capacity_reservations=capacity.selector_terms(pool_config),
        )

    def node_pool_options(self, pool: PoolSpec) -> karpenter_pool.NodePoolOptions:
        return karpenter_pool.NodePoolOptions(
            {
                "group": auto_mode.NODE_CLASS_GROUP,
                "kind": auto_mode.NODE_CLASS_KIND,
                "name": pool.name,
            },
            # Auto Mode's NodePools take no `kubernetes.io/os` requirement.
            os_requirement=False,
            lifetime=auto_mode.NODE_LIFETIME,
        )


def karpenter_builder(config: StackConfig, eks: EksNodeHost) -> EksNodePoolBuilder:
    """gpufleet's Karpenter, or the one the cluster runs already."""
    if existing_options(config.cluster).autoscaler_installed:
        return InstalledKarpenterBuilder(config, eks)
    return KarpenterBuilder(config, eks)


def build(
    builder: EksNodePoolBuilder, pools: Sequence[PoolSpec], eks: EksNodeHost
) -> list[pulumi.Resource]:
    """The controller (where gpufleet runs one), then a NodePool and node class per pool."""
    config = builder.config
    overlays = {pool.name: builder.node_overlay(pool) for pool in pools}
    controller = builder.controller(node_overlays=any(overlays.values()))
    built = list(controller.built)
    by_name = {p.name: p for p in config.gpu_pools}
    for pool in pools:
        pool_config = by_name[pool.name]
        options = pool_options(pool_config)
        built.append(
            KarpenterGpuPool(
                KARPENTER_GPU_POOL_TYPE,
                f"{config.cluster.name}-{pool.name}",
                KarpenterGpuPoolArgs(
                    pool=pool,
                    node_class=builder.node_class(pool, pool_config, controller.node_role_name),
                    node_pool=karpenter_pool.node_pool(
                        pool,
                        builder.node_pool_options(pool),
                        capacity=karpenter_pool.capacity_types(
                            pool.capacity, options.on_demand_fallback
                        ),
                        # Sized by its largest allowed type (pool_resolution.sizing_machine).
                        largest=(pool.vcpus, pool.memory_gib),
                        consolidate_underutilized=options.consolidate_underutilized,
                    ),
                    wait_for=controller.wait_for,
                    k8s_provider=eks.k8s_provider,
                    node_overlay=overlays[pool.name],
                ),
            )
        )
    return built
