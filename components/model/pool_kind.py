"""A pool kind: one way a cloud makes GPU pools, as an object that returns data.

A kind is a provisioner and the API object it scales (EKS: self-managed auto scaling groups,
managed node groups, Karpenter NodePools, EKS Auto Mode NodePools; GKE: node pools; AKS: agent
pools; an existing cluster: the pools its owner runs). What differs between kinds is mostly data
(`PoolTraits`); a kind also answers the pool checks, the node facts, how pods select its nodes,
what its provisioner expects of a new node, and the capacity it builds (`gpuPools[].capacity`:
which orders, their rules, a queued pool's ProvisioningRequest class, a reservation's cap). A
cloud maps a pool to its kind once (`Cloud.pool_kind`), and shared code reads the answers, never
the provisioner's name.
The shape follows Karpenter's CloudProvider: few methods plus data types
(kubernetes-sigs/karpenter pkg/cloudprovider/types.go).

Adding a kind (GKE compute classes, AKS node auto-provisioning): a sibling of the cloud's
existing kind, returned by that cloud's `pool_kind` for the pools it makes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, ClassVar, Literal

from components.model.capacity import ON_DEMAND, SPOT, CapacityOrder, ReservationCap, declared_order
from components.model.labels import POOL_LABEL
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
    # What a user writes to keep one node of the pool warm (cold-start advice): the pool's own
    # minimum, or, where the provisioner keeps none, what its minNodes refusal says instead.
    keep_one_warm: str = "minNodes: 1"


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
    the cluster autoscaler scaling one cloud pool object of on-demand or Spot nodes, selected by
    gpufleet's pool label, with no checks and no node facts."""

    # How the kind is named in docs and messages (e.g. "managed node groups").
    title: str = "node pools"
    # The node label naming a node's pool (the cloud's own, where it sets one).
    pool_label_key: ClassVar[str] = POOL_LABEL
    # The capacity orders (`gpuPools[].capacity`) this kind builds, exactly these tuples: any
    # other order is refused at plan time as "not supported on <cloud> yet". A kind adds an
    # order (reserved, capacity-block, flex-start, queued, a fallback list) when it builds it,
    # with its rules in `check_capacity` (docs/capacity.md).
    capacity_orders: ClassVar[tuple[CapacityOrder, ...]] = (ON_DEMAND, SPOT)

    def traits(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> PoolTraits:
        """The pool's traits under this kind (checked config)."""
        return PoolTraits(capacity_orders=self.capacity_orders)

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

    def selector_keys(
        self, config: StackConfig, pool: GpuPoolConfig, sharing_via: SharingVia
    ) -> tuple[str, ...]:
        """The node labels a pod selects this pool by."""
        return (self.pool_label_key,)

    def autoscaler_gpus(self, sharing_via: SharingVia, physical: int, allocatable: int) -> int:
        """The GPU count the provisioner expects of a new node of the pool."""
        return allocatable

    # --- capacity (`gpuPools[].capacity`; docs/capacity.md) ------------------------------

    def capacity_order(self, pool: GpuPoolConfig) -> CapacityOrder:
        """The pool's order: `capacity`, else what `spot` says, unless a key of the cloud's
        older than `capacity` already says how the pool gets nodes (GKE's gcp.reservation)."""
        return declared_order(pool.capacity, pool.spot)

    def capacity_advice(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder
    ) -> str:
        """What to do instead of an order this kind does not build, and why where it is known
        (appended to the refusal)."""
        return "leave capacity out (on-demand) or write spot until it is"

    def check_capacity(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder, path: str
    ) -> list[Problem]:
        """This kind's rules for an order it builds (reservation ids and zones, version and
        machine floors, min 0 for queued pools, ...), every problem at once."""
        return []

    def provisioning_class(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> str | None:
        """The ProvisioningRequest class Kueue's admission check asks this kind's autoscaler
        for, for a queued pool (a name in `catalog.provisioning.PROVISIONING_CLASSES`); None
        where queued pools are not built. A kind listing `queued` must return one."""
        return None

    def capacity_warnings(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str, today: date
    ) -> list[str]:
        """What `plan` says of a valid pool's capacity on `today` (a reservation's end near)."""
        return []

    def reservation_cap(self, config: StackConfig, pool: GpuPoolConfig) -> ReservationCap | None:
        """The most nodes a reservation gives this pool, where the config says (None: no cap
        known); `fit` names it."""
        return None

    def fabric_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        """Why this kind cannot build `interconnect: fabric` for the pool, with what to do
        instead (none: it can, or the pool has no fabric)."""
        return []
