"""A pool kind: one way a cloud makes GPU pools, as an object that returns data.

A kind is a provisioner and the API object it scales (EKS: self-managed auto scaling groups,
managed node groups, Karpenter NodePools, EKS Auto Mode NodePools; GKE: node pools; AKS: agent
pools). What differs between kinds is mostly data (`PoolTraits`); a kind also answers the pool
checks and the node facts that differ with it. A cloud maps a pool to its kind once
(`ManagedCloud.pool_kind`), and shared code reads the answers, never the provisioner's name.
The shape follows Karpenter's CloudProvider: few methods plus data types
(kubernetes-sigs/karpenter pkg/cloudprovider/types.go).

Adding a kind (GKE compute classes, AKS node auto-provisioning): a sibling of the cloud's
existing kind, returned by that cloud's `pool_kind` for the pools it makes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from components.model.capacity import ON_DEMAND, SPOT, CapacityOrder
from components.model.pool_spec import SAFE_TO_EVICT, Taint
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig, StackConfig

if TYPE_CHECKING:
    from components.model.catalog.gpus import MachineType

# Who delivers sharing and MIG for a pool: the cloud, NVIDIA's software, or nobody.
SharingVia = Literal["cloud", "nvidia", "none"]
# Where the provisioner's picture of a pool at zero nodes comes from: the pool's own API object
# (PoolSpec's autoscaler_* fields), the auto scaling groups' node-template tags, or an
# autoscaler gpufleet does not manage.
ScaleFromZero = Literal["pool", "node-template-tags", "unmanaged"]

CLUSTER_AUTOSCALER = "the cluster autoscaler"


@dataclass(frozen=True)
class PoolTraits:
    """What a pool of one kind is to the scheduler, the provisioner and fit: data, per pool."""

    # What scales the pool from zero, as fit names it.
    provisioner_name: str = CLUSTER_AUTOSCALER
    # The provisioner chooses among the pool's machine types for each pending pod (Karpenter)
    # rather than simulating one type per group (the cluster autoscaler: the first).
    picks_type_per_pod: bool = False
    scale_from_zero: ScaleFromZero = "pool"
    # The node image runs its own NVIDIA device plugin (a second one from gpufleet would conflict).
    own_device_plugin: bool = False
    # The nodes' reservations are the cloud's documented ones (gpufleet can compute allocatable).
    allocatable_known: bool = True
    # The most nodes one zone of the pool holds (None: any zone can hold all of maxNodes).
    zone_max_nodes: int | None = None
    # Pod annotations that keep a running job's node from being consolidated away
    # (SAFE_TO_EVICT, DO_NOT_DISRUPT in components/model/pool_spec.py say why).
    keep_running_annotations: Mapping[str, str] = field(default_factory=lambda: SAFE_TO_EVICT)
    # The capacity orders (`gpuPools[].capacity`) this kind builds.
    capacity_orders: tuple[CapacityOrder, ...] = (ON_DEMAND, SPOT)


@dataclass
class GpuNodeFacts:
    """What a kind adds to a GPU pool's nodes: labels gpufleet declares, and those (and taints)
    the cloud puts on its nodes itself."""

    declared: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[Taint] = field(default_factory=list)
    # Taints gpufleet itself sets on the pool's nodes (sent to the cloud), beyond the GPU taint
    # and the configured ones.
    declared_taints: list[Taint] = field(default_factory=list)
    # Labels whose value differs between the pool's nodes (e.g. Spot or on-demand).
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Labels of `labels` on the nodes that the autoscaler's template of the pool at zero lacks.
    only_on_nodes: set[str] = field(default_factory=set)


class PoolKind:
    """One way a cloud makes GPU pools. Subclasses override what differs; the defaults are
    the cluster autoscaler scaling one cloud pool object, with no checks and no node facts."""

    # How the kind is named in docs and messages (e.g. "managed node groups").
    title: str = "node pools"

    def traits(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> PoolTraits:
        """The pool's traits under this kind (checked config)."""
        return PoolTraits()

    def check(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str, warnings: list[str]
    ) -> list[Problem]:
        """What this kind's pool objects can express, beyond the catalog's machine checks."""
        return []

    def node_facts(
        self,
        config: StackConfig,
        pool: GpuPoolConfig,
        machines: list[MachineType],
        sharing_via: SharingVia,
    ) -> GpuNodeFacts:
        """The labels and taints this kind's nodes carry (beyond gpufleet's own)."""
        return GpuNodeFacts()
