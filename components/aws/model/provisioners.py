"""What each EKS provisioner accepts and puts on its nodes: the cluster autoscaler (one auto
scaling group or managed group per pool and zone), Karpenter, or EKS Auto Mode (AWS's managed
Karpenter, whose nodes run AWS's own image with NVIDIA's driver and device plugin).

Auto Mode facts (awsdocs/amazon-eks-user-guide at 4d52b4d, latest/ug/automode/): its NodePools
take the well-known and `eks.amazonaws.com/instance-*` labels as requirements but not
`kubernetes.io/os` (create-node-pool.adoc); nodes carry `eks.amazonaws.com/compute-type: auto`;
a node runs at most 110 pods (create-node-class.adoc).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from components.aws.model import auto_mode, karpenter
from components.aws.model import config as aws_config
from components.model.capacity import declared_order
from components.model.catalog.gpus import MachineType
from components.model.managed_cloud import GpuNodeFacts
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig, SoftwareMode

# EC2 security group ids: sg- and 8 or 17 hex digits (EC2 API reference, SecurityGroup).
SECURITY_GROUP_ID = re.compile(r"sg-([0-9a-f]{8}|[0-9a-f]{17})")
# Provisioners that launch a node per pending pod from a NodePool (no groups, no minimum).
PER_POD = ("karpenter", "auto-mode")
AUTO_MODE_COMPUTE_LABEL = "eks.amazonaws.com/compute-type"
AUTO_MODE_GPU_MANUFACTURER_LABEL = "eks.amazonaws.com/instance-gpu-manufacturer"
AUTO_MODE_GPU_COUNT_LABEL = "eks.amazonaws.com/instance-gpu-count"

# nodeadm labels a node with NVIDIA devices `nvidia.com/gpu.present=true` from kubelet 1.35
# (awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go, generateKubeletConfig, at
# 81fec2e8; nodeadm/doc/api-concepts.md lists it as "since 1.35").
NODEADM_GPU_LABEL = "nvidia.com/gpu.present"
NODEADM_GPU_LABEL_SINCE = (1, 35)
# EKS managed node groups label their nodes with the group's capacity type. The cluster
# autoscaler's template of a managed group at zero does not carry it: it takes the group's own
# labels from DescribeNodegroup plus a bare `capacityType` key (kubernetes/autoscaler
# cloudprovider/aws aws_wrapper.go getManagedNodegroupInfo at 017598c2, aws_manager.go
# buildNodeFromTemplate at 00a2c93c), so a pod selecting it never scales a group up from zero.
MANAGED_CAPACITY_LABEL = "eks.amazonaws.com/capacityType"
# The group's capacityType, which EKS puts on its nodes as that label (EKS API
# Nodegroup.capacityType: ON_DEMAND | SPOT | CAPACITY_BLOCK; a group on an On-Demand Capacity
# Reservation is ON_DEMAND with a launch template that targets it).
MANAGED_CAPACITY_TYPES = {"spot": "SPOT", "capacity-block": "CAPACITY_BLOCK"}
# gpufleet's own Spot label on the groups the cluster autoscaler scales (self-managed groups get
# no cloud label at all): declared, so it reaches the kubelet's --node-labels, a self-managed
# group's node-template tag and a managed group's labels, which the autoscaler reads at zero.
SPOT_LABEL = ("gpufleet.io/capacity-type", "spot")
# The cluster autoscaler's `--balancing-label`: groups are similar, and one scale-up is split
# between them, only when both carry it with the same value (cluster-autoscaler
# processors/nodegroupset/label_nodegroups.go areLabelsSame: a label missing on either node
# makes them not similar; cloudprovider/builder/cloud_provider_builder.go puts this comparator
# in place of AWS's own when the flag is set). A pool's zone groups carry it, valued the pool's
# name, so they are balanced; a pool with `aws.maxNodesPerZone` leaves it off, so the autoscaler
# never splits a scale-up over its zones and a multi-node job can get its nodes in one zone
# (review eks-3.md R3-4; before, the balancing label was gpufleet.io/pool, which every pool has).
BALANCING_LABEL = "gpufleet.io/balancing-group"


def zone_balanced(pool: GpuPoolConfig) -> bool:
    """Whether the autoscaler balances the pool's zone groups (a pool without maxNodesPerZone)."""
    return aws_config.pool_options(pool).max_nodes_per_zone is None


def provisioner(cluster: ClusterConfig) -> str:
    return aws_config.cluster_options(cluster).provisioner


def launches_per_pod(cluster: ClusterConfig) -> bool:
    return provisioner(cluster) in PER_POD


def display_name(cluster: ClusterConfig) -> str:
    return {"karpenter": "Karpenter", "auto-mode": "EKS Auto Mode"}.get(
        provisioner(cluster), "the cluster autoscaler"
    )


def nodeadm_labels_gpu(cluster: ClusterConfig, pool: GpuPoolConfig) -> bool:
    """Whether nodeadm (AL2023, not Auto Mode's image) labels the pool's nodes GPU-present."""
    if provisioner(cluster) == "auto-mode" or aws_config.pool_options(pool).ami_family != "al2023":
        return False
    major, minor = (int(part) for part in cluster.kubernetes_version.split(".")[:2])
    return (major, minor) >= NODEADM_GPU_LABEL_SINCE


def own_device_plugin(cluster: ClusterConfig, pool: GpuPoolConfig) -> bool:
    """Bottlerocket's NVIDIA variant and Auto Mode's nodes run their own device plugin."""
    if provisioner(cluster) == "auto-mode":
        return True
    return aws_config.pool_options(pool).ami_family == "bottlerocket"


def cluster_problems(cluster: ClusterConfig) -> list[Problem]:
    """A Kubernetes minor the pinned Karpenter release does not support."""
    if provisioner(cluster) != "karpenter" or karpenter.supports(cluster.kubernetes_version):
        return []
    supported = [m for m in karpenter.MIN_KARPENTER_FOR_MINOR if karpenter.supports(m)]
    return [
        Problem(
            "cluster.kubernetesVersion",
            f"Karpenter {karpenter.CHART_VERSION} (pinned) supports Kubernetes "
            f"{', '.join(supported)} (its compatibility matrix); choose one of those or "
            "cluster.aws.provisioner: cluster-autoscaler",
            cluster.kubernetes_version,
        )
    ]


def adopted_problems(cluster: ClusterConfig) -> list[Problem]:
    """What an adopted EKS cluster's `cluster.existing` keys need of the provisioner."""
    existing = aws_config.existing_options(cluster)
    kind = provisioner(cluster)
    problems = []
    if existing.autoscaler_installed and kind == "auto-mode":
        problems.append(
            Problem(
                "cluster.existing.autoscalerInstalled",
                "EKS Auto Mode's node provisioning is AWS's, never installed; remove it",
                True,
            )
        )
    uses_role = existing.autoscaler_installed and kind == "karpenter"
    if uses_role and not existing.karpenter_node_role:
        problems.append(
            Problem(
                "cluster.existing.karpenterNodeRole",
                "is required with a Karpenter already installed: the name of the node role its "
                "controller may pass to instances (iam:PassRole), which has an access entry",
                has_value=False,
            )
        )
    groups = existing.node_security_group_ids
    if groups is not None and not groups:
        problems.append(
            Problem(
                "cluster.existing.nodeSecurityGroupIds",
                "must name at least one security group; leave it out when the cluster "
                "security group is all its nodes need",
                [],
            )
        )
    problems += [
        Problem(
            f"cluster.existing.nodeSecurityGroupIds[{index}]",
            "must be a security group id such as sg-0123456789abcdef0",
            group,
        )
        for index, group in enumerate(groups or [])
        if not SECURITY_GROUP_ID.fullmatch(group)
    ]
    if existing.karpenter_node_role and not uses_role:
        problems.append(
            Problem(
                "cluster.existing.karpenterNodeRole",
                "applies only with cluster.aws.provisioner karpenter and autoscalerInstalled: "
                "true (otherwise gpufleet creates the node role)",
                existing.karpenter_node_role,
            )
        )
    return problems


def auto_mode_lifetime_warning(path: str) -> str:
    lifetime = auto_mode.NODE_LIFETIME
    return (
        f"{path}: EKS Auto Mode replaces every node within 21 days, whatever the pods on it: "
        f"its NodePool drains a node after {lifetime['expireAfter']} (expireAfter) and deletes "
        f"what is left {lifetime['terminationGracePeriod']} later; a job that runs longer "
        "must checkpoint, or run under cluster.aws.provisioner karpenter or cluster-autoscaler"
    )


def auto_software_mode(cluster: ClusterConfig) -> SoftwareMode | None:
    """Auto Mode's nodes bring the GPU software themselves: `auto` means the cloud's."""
    return "cloud-managed" if provisioner(cluster) == "auto-mode" else None


def software_problems(
    mode: SoftwareMode, cluster: ClusterConfig | None, pools: Sequence[GpuPoolConfig]
) -> list[Problem]:
    if cluster is None or provisioner(cluster) != "auto-mode":
        return []
    problems = [
        Problem(
            f"gpuPools[{index}].{'sharing' if pool.sharing else 'migPartitionSize'}",
            "EKS Auto Mode runs its own NVIDIA device plugin, which gpufleet cannot configure "
            "for sharing or MIG; use cluster.aws.provisioner karpenter or cluster-autoscaler "
            "for this pool",
            pool.sharing.strategy if pool.sharing else pool.mig_partition_size,
        )
        for index, pool in enumerate(pools)
        if pool.sharing or pool.mig_partition_size
    ]
    if mode != "cloud-managed":
        problems.append(
            Problem(
                "gpuSoftware.mode",
                "EKS Auto Mode nodes come with NVIDIA's driver and device plugin and a read-only "
                "root file system, so NVIDIA's plugin or operator from gpufleet would conflict or "
                "have nothing to install; use auto (cloud-managed)",
                mode,
            )
        )
    return problems


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


def provisioner_keys(
    pool: GpuPoolConfig, path: str, keys: Sequence[str], provisioner: str
) -> list[Problem]:
    """Pool keys set in the stack that only `provisioner` reads."""
    options = aws_config.pool_options(pool)
    return [
        Problem(
            f"{path}.aws.{_camel(key)}",
            f"applies only with cluster.aws.provisioner: {provisioner}; remove it",
            getattr(options, key),
        )
        for key in keys
        if key in options.model_fields_set
    ]


def pool_problems(cluster: ClusterConfig, pool: GpuPoolConfig, path: str) -> list[Problem]:
    """A pool under Karpenter or Auto Mode: keys of the other provisioners, a minimum."""
    name = display_name(cluster)
    if provisioner(cluster) == "auto-mode":
        # Auto Mode picks its own image: there is no AMI family to choose.
        problems = provisioner_keys(
            pool, path, (*aws_config.AUTOSCALER_ONLY_POOL_KEYS, "ami_family"), "cluster-autoscaler"
        )
    else:
        problems = provisioner_keys(
            pool, path, aws_config.AUTOSCALER_ONLY_POOL_KEYS, "cluster-autoscaler"
        )
    if pool.min_nodes > 0:
        # A NodePool scales with pending pods only; its `replicas` (alpha) makes it a fixed size
        # that never scales, so neither is a floor under an autoscaling pool.
        problems.append(
            Problem(
                f"{path}.minNodes",
                f"{name} keeps no minimum: a NodePool launches nodes for pending pods only; "
                "set 0 (a placeholder Deployment can hold warm capacity) or use "
                "cluster.aws.provisioner: cluster-autoscaler",
                pool.min_nodes,
            )
        )
    reserved = sorted(key for key in pool.labels if karpenter.reserved_label(key))
    if reserved:
        problems.append(
            Problem(
                f"{path}.labels",
                "Karpenter reserves these keys (the karpenter.sh and karpenter.k8s.aws domains, "
                "kubernetes.io/hostname) and the API server refuses a NodePool that sets them; "
                "rename them",
                reserved,
            )
        )
    shared = pool.sharing.strategy if pool.sharing else pool.mig_partition_size
    installed = aws_config.existing_options(cluster).autoscaler_installed
    if shared and provisioner(cluster) == "karpenter" and installed:
        problems.append(
            Problem(
                f"{path}.{'sharing' if pool.sharing else 'migPartitionSize'}",
                "a Karpenter gpufleet does not run plans nodes with EC2's GPU count; only a "
                "NodeOverlay behind its alpha nodeOverlay gate (which gpufleet can neither turn "
                "on nor check there) makes it plan shared or MIG GPUs, so a pod asking for more "
                "shares than a node has physical GPUs would never get a node; let gpufleet run "
                "Karpenter (cluster.existing.autoscalerInstalled: false) or use "
                "cluster.aws.provisioner: cluster-autoscaler",
                shared,
            )
        )
    options = aws_config.pool_options(pool)
    if options.on_demand_fallback and not pool.spot:
        problems.append(
            Problem(
                f"{path}.aws.onDemandFallback",
                "is for Spot pools (spot: true): an on-demand pool needs no fallback, and a "
                "pool with a capacity list writes its fallbacks there (e.g. [reserved, spot, "
                "on-demand])",
                True,
            )
        )
    return problems


def managed_capacity_type(pool: GpuPoolConfig) -> str:
    """An EKS managed node group's capacityType for the pool."""
    return MANAGED_CAPACITY_TYPES.get(declared_order(pool.capacity, pool.spot)[0], "ON_DEMAND")


def node_facts(
    facts: GpuNodeFacts,
    cluster: ClusterConfig,
    pool: GpuPoolConfig,
    machines: list[MachineType],
) -> None:
    """The labels a pool's nodes get from how they are launched (and the launcher knows)."""
    options = aws_config.pool_options(pool)
    if nodeadm_labels_gpu(cluster, pool):
        # nodeadm labels the node itself; declared too, so the autoscaler's template at zero
        # (node-template tags, the managed group's labels, the NodePool) carries it as well.
        facts.declared[NODEADM_GPU_LABEL] = "true"
    kind = provisioner(cluster)
    if kind in PER_POD:
        _node_pool_labels(facts, pool, machines, auto_mode=kind == "auto-mode")
    else:
        if options.node_group == "managed":
            # eks.amazonaws.com/nodegroup differs per zone (one group per zone): not a pool label.
            facts.labels[MANAGED_CAPACITY_LABEL] = managed_capacity_type(pool)
            facts.only_on_nodes.add(MANAGED_CAPACITY_LABEL)
        if pool.spot:
            key, value = SPOT_LABEL
            facts.declared[key] = value
        if zone_balanced(pool):
            facts.declared[BALANCING_LABEL] = pool.name


def _node_pool_labels(
    facts: GpuNodeFacts, pool: GpuPoolConfig, machines: list[MachineType], *, auto_mode: bool
) -> None:
    """Labels Karpenter (or Auto Mode) puts on a NodePool's nodes and knows when it plans one."""
    options = aws_config.pool_options(pool)
    facts.labels[karpenter.NODEPOOL_LABEL] = pool.name
    if auto_mode:
        facts.labels[AUTO_MODE_COMPUTE_LABEL] = "auto"
        manufacturer, count = AUTO_MODE_GPU_MANUFACTURER_LABEL, AUTO_MODE_GPU_COUNT_LABEL
    else:
        facts.labels[karpenter.NODECLASS_LABEL] = pool.name
        manufacturer, count = karpenter.GPU_MANUFACTURER_LABEL, karpenter.GPU_COUNT_LABEL
    facts.labels[manufacturer] = "nvidia"
    counts = {m.gpus for m in machines}
    if len(counts) == 1:
        facts.labels[count] = str(counts.pop())
    capacity = karpenter.capacity_types(
        declared_order(pool.capacity, pool.spot), options.on_demand_fallback
    )
    if len(capacity) == 1:
        facts.labels[karpenter.CAPACITY_TYPE_LABEL] = capacity[0]
    else:
        facts.choices[karpenter.CAPACITY_TYPE_LABEL] = capacity
