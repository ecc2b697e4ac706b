"""What the GPU pools, autoscalers and Karpenter need of an EKS cluster, created or adopted.

`EksCluster` (components/aws/cluster.py) and `AdoptedEksCluster` (components/aws/adopted.py)
both offer it, so `components.aws.stack` and `components.aws.node_pools` build the same pools
on either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.aws.live_groups import LiveNodeGroups
from components.aws.network import NetworkHandle
from components.aws.user_data import ClusterJoin


class EksNodeHost(Protocol):
    @property
    def aws_provider(self) -> aws.Provider: ...
    @property
    def k8s_provider(self) -> k8s.Provider: ...
    # The cluster's managed node groups as EKS runs them, read on first use (live_groups.py).
    @property
    def live_node_groups(self) -> LiveNodeGroups: ...
    @property
    def cluster_name(self) -> pulumi.Input[str]: ...
    @property
    def cluster_version(self) -> pulumi.Input[str]: ...
    @property
    def security_group_id(self) -> pulumi.Input[str]: ...
    # Every security group gpufleet's GPU nodes get: the cluster's, and on an adopted cluster
    # the owner's node security groups (cluster.existing.nodeSecurityGroupIds).
    @property
    def node_security_group_ids(self) -> Sequence[pulumi.Input[str]]: ...
    # The cluster's VPC (a fabric pool's EFA security group lives in it).
    @property
    def vpc_id(self) -> pulumi.Input[str]: ...
    # gpufleet's cluster autoscaler discovers gpufleet's groups only, by this tag (None: by the
    # cluster's discovery tags, which on a cluster gpufleet created are all its own).
    @property
    def autoscaler_discovery_tag(self) -> str | None: ...
    @property
    def oidc_provider_arn(self) -> pulumi.Input[str]: ...
    @property
    def oidc_issuer(self) -> pulumi.Input[str]: ...
    @property
    def network(self) -> NetworkHandle: ...
    @property
    def join(self) -> pulumi.Output[ClusterJoin]: ...
    @property
    def managed_node_role(self) -> aws.iam.Role | None: ...
    @property
    def self_managed_node_role(self) -> aws.iam.Role | None: ...
    @property
    def self_managed_instance_profile(self) -> aws.iam.InstanceProfile | None: ...
    @property
    def self_managed_access(self) -> aws.eks.AccessEntry | None: ...
    # What new nodes wait for (the system node group, so system pods have somewhere to run).
    @property
    def nodes_after(self) -> Sequence[pulumi.Resource]: ...
    # What custom resources of the cluster wait for (the cluster itself, when gpufleet made it).
    @property
    def control_plane(self) -> Sequence[pulumi.Resource]: ...
    # Where gpufleet's controllers run: the system pool, or anywhere but the GPU nodes.
    @property
    def controller_node_selector(self) -> Mapping[str, str]: ...
    # Karpenter's replicas: the chart spreads them over hosts.
    @property
    def controller_replicas(self) -> int: ...
    # The (subnet ids, security group ids) the stack was given with an adopted cluster, or None
    # on a cluster gpufleet created (it never tags an adopted cluster's network).
    @property
    def selected_by_id(self) -> tuple[Sequence[str], Sequence[str]] | None: ...
