"""gpufleet's Karpenter on EKS: one `karpenter.sh/v1` NodePool and EC2NodeClass per pool; the
controller picks an instance type per pending pod and falls back between capacity types."""

from __future__ import annotations

from typing import ClassVar

from components.aws.model import allocatable, capacity, capacity_checks, fabric, karpenter
from components.aws.model.config import existing_options
from components.aws.model.kinds.node_pool_kinds import NodePoolKind
from components.model import karpenter_pool
from components.model.capacity import ON_DEMAND, SPOT, CapacityOrder
from components.model.catalog.gpus import MachineType
from components.model.pool_kind import GpuNodeFacts
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig


class KarpenterNodePools(NodePoolKind):
    title = "Karpenter NodePools"
    provisioner = "karpenter"
    display = "Karpenter"
    capacity_orders: ClassVar[tuple[CapacityOrder, ...]] = (
        ON_DEMAND,
        SPOT,
        *capacity.KARPENTER_ORDERS,
    )
    joins_with_node_role = True
    # Karpenter's chart runs two controller replicas on different nodes.
    system_nodes = 2
    # The controller passes gpufleet's node role to the nodes, which it creates before any pool.
    node_role_always = True
    # Karpenter makes the nodes' instance profile from the role itself.
    instance_profile = False
    # An installed Karpenter may pass only its own node role (cluster.existing.karpenterNodeRole).
    installed_needs_node_role = True
    gpu_manufacturer_label = karpenter.GPU_MANUFACTURER_LABEL
    gpu_count_label = karpenter.GPU_COUNT_LABEL

    fabric_change_note = fabric.KARPENTER_CHANGE_NOTE

    def max_pods(
        self, pool: GpuPoolConfig, machines: list[MachineType], machine: str
    ) -> int | None:
        # A fabric node class's EFA-only interface on card 0 takes one of the card's ENIs from
        # Karpenter's maxPods (components/aws/model/allocatable.py `karpenter_max_pods`); the
        # kube-reserved memory stays nodeadm's, from its own ENI figure (allocatable.py).
        group = fabric.fabric_group(pool)
        if group is None:
            return None
        interfaces = karpenter.efa_network_interfaces(group.efa_devices)
        return allocatable.karpenter_max_pods(machine, karpenter.efa_only_on_card0(interfaces))

    def fabric_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        """The node class lays out one set of EFA interfaces (the types' layouts must match), on
        a Karpenter gpufleet runs at a version that builds them."""
        if pool.interconnect != "fabric":
            return []
        if existing_options(cluster).autoscaler_installed:
            return [fabric.refusal(path, fabric.INSTALLED_KARPENTER_WHY)]
        problems = super().fabric_problems(cluster, pool, path)
        if not karpenter.builds_fabric():
            problems.append(
                fabric.refusal(
                    path,
                    f"Karpenter {karpenter.CHART_VERSION} (pinned) has no EC2NodeClass "
                    "networkInterfaces or placementGroupSelector: they came in "
                    f"v{karpenter.FABRIC_MIN_VERSION} (aws/karpenter-provider-aws PRs #9027, "
                    "#9030)",
                )
            )
        return problems

    def kind_facts(
        self, facts: GpuNodeFacts, pool: GpuPoolConfig, machines: list[MachineType]
    ) -> None:
        super().kind_facts(facts, pool, machines)
        if fabric.fabric_group(pool):
            # What the EFA device plugin's DaemonSet selects (components/aws/efa_plugin.py),
            # as a NodePool template label.
            facts.declared[fabric.FABRIC_LABEL] = fabric.FABRIC_LABEL_VALUE

    def class_labels(self, pool: GpuPoolConfig) -> dict[str, str]:
        return {karpenter.NODECLASS_LABEL: pool.name}

    def cluster_problems(self, cluster: ClusterConfig) -> list[Problem]:
        """A Kubernetes minor the pinned Karpenter release does not support."""
        if karpenter.supports(cluster.kubernetes_version):
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

    def sharing_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        shared = pool.sharing.strategy if pool.sharing else pool.mig_partition_size
        if not shared or not existing_options(cluster).autoscaler_installed:
            return []
        return [
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
        ]

    def capacity_advice(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder
    ) -> str:
        head = capacity.single_reservation(order)
        if head is None:
            return super().capacity_advice(cluster, pool, order)
        rest = [w for w in karpenter_pool.CAPACITY_PRIORITY[1:] if w in order]
        return (
            "Karpenter tries reserved capacity first, then Spot, then on-demand, whatever the "
            f"order written: write [{', '.join([head, *rest])}]"
        )

    def reservation_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, word: str, path: str
    ) -> list[Problem]:
        return capacity_checks.karpenter_problems(cluster, pool, word, path)

    def reservation_warnings(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[str]:
        order = capacity.order_of(pool)
        if capacity.reservation_word(order) is None:
            return []
        warnings = capacity.reserved_first_consolidation(pool, order, path)
        if existing_options(cluster).autoscaler_installed:
            warnings.append(
                f"{path}.capacity: not checked: the Karpenter this cluster runs must be 1.3 or "
                "later (1.6 for Capacity Blocks) with its reservedCapacity feature gate on, or "
                "the NodePool never launches reserved capacity"
            )
        return warnings


KARPENTER = KarpenterNodePools()
