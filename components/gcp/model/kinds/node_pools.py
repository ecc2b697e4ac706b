"""GKE node pools: one per GPU pool, which GKE's cluster autoscaler scales from zero, with the
labels GKE puts on GPU nodes, selected by their node pool's name, with one capacity each.
A fallback list one node pool cannot express is a custom compute class (`compute_class.py`)."""

from __future__ import annotations

from collections.abc import Sequence

from components.gcp.model import capacity as gke_capacity
from components.gcp.model import capacity_checks, image_start, node_limits
from components.gcp.model import config as gcp_config
from components.gcp.model import fabric as gke_fabric
from components.gcp.model.catalog import CATALOG
from components.gcp.model.gpu_zones import zone_rule
from components.model.capacity import CapacityOrder, ReservationCap, declared_order
from components.model.catalog.gpus import MachineType
from components.model.cloud import zone_problems
from components.model.pool_kind import GpuNodeFacts, PoolKind, SharingVia
from components.model.pool_spec import PoolSpec, Taint
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig, SoftwareMode, StackConfig

NO_DEFAULT_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
DRIVER_DISABLED = "INSTALLATION_DISABLED"
SHARING_STRATEGY_LABEL = "cloud.google.com/gke-gpu-sharing-strategy"
MAX_SHARED_CLIENTS_LABEL = "cloud.google.com/gke-max-shared-clients-per-gpu"
PARTITION_SIZE_LABEL = "cloud.google.com/gke-gpu-partition-size"


def capacity_order(pool: GpuPoolConfig) -> CapacityOrder:
    """The pool's order; `gcp.reservation` alone (the older spelling) means capacity: reserved."""
    if pool.capacity is None and not pool.spot and gcp_config.pool_options(pool).reservation:
        return gke_capacity.RESERVED
    return declared_order(pool.capacity, pool.spot)


def gke_driver(mode: SoftwareMode, pool: GpuPoolConfig) -> str:
    """The pool's `gpu_driver_installation_config.gpu_driver_version`."""
    if mode == "gpu-operator":
        return DRIVER_DISABLED
    return gcp_config.pool_options(pool).driver_version.upper()


def location_policy(spec: PoolSpec) -> str:
    """The node pool's autoscaling location policy: ANY for Spot, flex-start, queued and scarce
    GPUs (capacity in whichever zone has it), else BALANCED."""
    machine = CATALOG.machine(spec.accelerator, spec.machine_types[0])
    dws = spec.capacity in gke_capacity.DWS_ORDERS
    return "ANY" if spec.spot or dws or (machine is not None and machine.scarce) else "BALANCED"


def gke_accelerator(spec_accelerator: str, machine_type: str) -> str:
    """The guest accelerator `type` of a pool's machine type."""
    machine = CATALOG.machine(spec_accelerator, machine_type)
    return machine.gke_accelerator if machine is not None else ""


def machines_of(pool: GpuPoolConfig) -> list[MachineType]:
    """The pool's machine types (the catalog's default when it names none); checked config."""
    names = pool.machine_types or [pool.machine_type or CATALOG.defaults.get(pool.accelerator, "")]
    found = [CATALOG.machine(pool.accelerator, name) for name in names]
    return [m for m in found if m is not None]


def gke_zone_problems(region: str, zones: Sequence[str], path: str) -> list[Problem]:
    """GKE's zone names in `region`, and repeats."""
    return zone_problems(zone_rule(region), region, zones, path)


class NodePools(PoolKind):
    title = "GKE node pools"
    pool_label_key = "cloud.google.com/gke-nodepool"
    # One capacity per node pool; ANY_RESERVATION is GKE's only fallback (capacity.py).
    capacity_orders = gke_capacity.ORDERS

    def check(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str, warnings: list[str]
    ) -> list[Problem]:
        """Machines GKE sells only as Spot, flex-start or from a reservation; sharing limits;
        the nodes a pool's zones can hold; the preloaded image disk; what plan says of the
        pool's capacity."""
        problems: list[Problem] = []
        if pool.sharing is not None and pool.sharing.max_shared_clients_per_gpu == 1:
            # One client per GPU shares nothing; GKE documents 2-48 (GPU sharing in
            # ComputeClasses; review gke.md S5).
            problems.append(
                Problem(
                    f"{path}.sharing.maxSharedClientsPerGpu",
                    "must be at least 2 on GKE (1 shares nothing: drop `sharing`)",
                    1,
                )
            )
        problems += node_limits.pool_problems(pool.max_nodes, pool.zones or cluster.zones, path)
        order = capacity_order(pool)
        written = pool.capacity is not None
        for machine in machines_of(pool):
            # Any capacity but Spot and flex-start (queued nodes are flex-start VMs too).
            if machine.spot_only and set(order) - {"spot", "flex-start", "queued"}:
                problems.append(
                    Problem(
                        f"{path}.machineType",
                        "is sold only as Spot or flex-start on GKE; set spot: true, or "
                        "capacity: flex-start (or queued)",
                        machine.name,
                    )
                )
            if machine.reservation_only and "on-demand" in order:
                # A3 Ultra and A4: no on-demand VM outside a reservation (catalog.py).
                problems.append(
                    Problem(
                        f"{path}.capacity" if written else f"{path}.spot",
                        f"{machine.name} is sold on demand only from a reservation: write "
                        "capacity: flex-start (Dynamic Workload Scheduler, up to 7 days per "
                        "node), queued, spot, or reserved with gcp.reservation naming your "
                        "reservation",
                        pool.capacity if written else pool.spot,
                        is_default=not written and "spot" not in pool.model_fields_set,
                    )
                )
        problems += image_start.image_start_problems(cluster, pool, path)
        warnings += image_start.image_start_warnings(cluster, pool, path)
        if order in self.capacity_orders:
            warnings += capacity_checks.capacity_warnings(cluster, pool, order, path)
        return problems

    def node_facts(
        self,
        config: StackConfig,
        pool: GpuPoolConfig,
        machines: list[MachineType],
        sharing_via: SharingVia,
    ) -> GpuNodeFacts:
        machine = machines[0]
        mode = config.gpu_software_mode
        driver = gke_driver(mode, pool)
        facts = GpuNodeFacts()
        if mode == "gpu-operator":
            facts.declared[NO_DEFAULT_PLUGIN_LABEL] = "true"
        labels = {
            "cloud.google.com/gke-nodepool": pool.name,
            "cloud.google.com/gke-accelerator": machine.gke_accelerator,
            "cloud.google.com/gke-gpu": "true",
            "cloud.google.com/gke-os-distribution": "cos",
            "cloud.google.com/machine-family": machine.name.split("-")[0],
        }
        if driver != DRIVER_DISABLED:
            labels["cloud.google.com/gke-gpu-driver-version"] = driver.lower()
        if pool.spot:
            labels["cloud.google.com/gke-spot"] = "true"
        order = capacity_order(pool)
        if order in gke_capacity.DWS_ORDERS:
            key, value = gke_capacity.FLEX_START_LABEL
            labels[key] = value
        if order == gke_capacity.QUEUED:
            facts.taints.append(Taint(*gke_capacity.QUEUED_TAINT))
        if sharing_via == "cloud" and pool.sharing:
            labels[SHARING_STRATEGY_LABEL] = pool.sharing.strategy
            labels[MAX_SHARED_CLIENTS_LABEL] = str(pool.sharing.max_shared_clients_per_gpu)
        if sharing_via == "cloud" and pool.mig_partition_size:
            labels[PARTITION_SIZE_LABEL] = pool.mig_partition_size
        facts.labels = labels
        return facts

    def selector_keys(
        self, config: StackConfig, pool: GpuPoolConfig, sharing_via: SharingVia
    ) -> tuple[str, ...]:
        keys = [self.pool_label_key]
        if sharing_via == "cloud":
            keys += [SHARING_STRATEGY_LABEL, MAX_SHARED_CLIENTS_LABEL]
        if (
            pool.mig_partition_size
            and gke_driver(config.gpu_software_mode, pool) != DRIVER_DISABLED
        ):
            keys.append(PARTITION_SIZE_LABEL)
        return tuple(keys)

    def autoscaler_gpus(self, sharing_via: SharingVia, physical: int, allocatable: int) -> int:
        # GKE's autoscaler multiplies by GKE's own sharing and partition settings only; with
        # NVIDIA's software sharing the GPUs it builds the template from the accelerator count
        # (kubernetes/autoscaler cloudprovider/gce/templates.go BuildCapacity).
        return physical if sharing_via == "nvidia" else allocatable

    # --- capacity (components/gcp/model/capacity.py) ----------------------------------------

    def fabric_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str
    ) -> list[Problem]:
        # GPUDirect's subnets take a block by the zone's letter (components/gcp/model/fabric.py).
        zone = gke_fabric.fabric_zone(pool, cluster.zones)
        return gke_fabric.zone_block_problems(pool, zone, path)

    def capacity_order(self, pool: GpuPoolConfig) -> CapacityOrder:
        return capacity_order(pool)

    def capacity_advice(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder
    ) -> str:
        return (
            "a GKE node pool has one capacity, [reserved, on-demand] (any matching reservation, "
            "then on-demand) being its only fallback; a list of two or more of reserved, "
            "flex-start, spot and on-demand is a GKE compute class (docs/gke.md); queued stands "
            "alone, and EC2 Capacity Blocks are reservations on GKE (capacity: reserved)"
        )

    def check_capacity(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, order: CapacityOrder, path: str
    ) -> list[Problem]:
        machines = machines_of(pool)
        problems = capacity_checks.capacity_problems(cluster, pool, order, path, machines)
        zones = gke_zone_problems if cluster.region else None
        return problems + capacity_checks.reservation_zone_problems(
            cluster, pool, order, path, zones
        )

    def provisioning_class(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> str | None:
        return gke_capacity.PROVISIONING_CLASS

    def reservation_cap(self, config: StackConfig, pool: GpuPoolConfig) -> ReservationCap | None:
        if capacity_order(pool) != gke_capacity.RESERVED:
            return None
        return capacity_checks.reservation_cap(pool, machines_of(pool))


NODE_POOLS = NodePools()
