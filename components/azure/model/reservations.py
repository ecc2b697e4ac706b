"""AKS GPU pools in a capacity reservation group: the config's rules, and the group as read.

An agent pool names one capacity reservation group (`AgentPool.capacityReservationGroupID`, API
2025-09-01); its VMs then consume the group's reservation of their size in their zone. Facts
(Microsoft Learn, read 2026-11; MicrosoftDocs/azure-aks-docs at fb060abe, azure-compute-docs
at 4c61ef1e):

- Azure does not stop at a reservation: VMs beyond the reserved quantity are regular
  pay-as-you-go VMs without the capacity SLA, subject to quota and to Azure having capacity
  ("Azure won't stop allocations because a capacity reservation is fully consumed":
  virtual-machines/capacity-reservation-overallocate). So an AKS pool in a group is
  `[reserved, on-demand]`; it is `reserved` alone only while maxNodes stays within the VMs
  reserved for it.
- Spot VMs cannot use a reservation; ND-series and NCads H100 v5 VMs have none (only the GPU
  series below); each reservation is for one VM size in one zone (or the region), and "if the
  group doesn't have a reservation matching the size and location, Azure returns an error";
  a group without zones takes only VMs deployed without a zone; the group is in one region
  (capacity-reservation-overview, Limitations and "Work with capacity reservation").
- AKS needs a group with at least one reservation ("If not, the node pool is added to the
  cluster with a warning and no capacity reservation group gets associated"), and a
  user-assigned control-plane identity with Contributor on the resource group that holds the
  group ("System-assigned managed identities don't work for this feature"; the grant "can take
  up to 60 minutes" to propagate): aks/use-capacity-reservation-groups.
- The group is fixed when AKS creates the pool: associating one with an existing pool is a
  preview (aks-preview 20.0.0b7, a rolling reimage of zonal pools; regional pools first scaled
  to zero), outside API 2025-09-01, and terraform-provider-azurerm marks
  `capacity_reservation_group_id` ForceNew (kubernetes_cluster_node_pool_resource.go). Deleting
  a pool dissociates it from its group (aks/use-capacity-reservation-groups).
- A group shared from another subscription is in preview (capacity-reservation-group-share) and
  AKS documents none.
- Billing: every reserved instance is billed at the VM size's pay-as-you-go rate whether a VM
  uses it or not; a VM that uses it is billed once, as the VM (capacity-reservation-overview,
  "Pricing and billing").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from components.azure.model.catalog import CATALOG
from components.azure.model.config import cluster_options, pool_options
from components.model.capacity import ReservationCap, declared_order, shown_order
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

KEY = "azure.capacityReservationGroupId"
NODES_KEY = "azure.reservedNodes"
IDENTITY_KEY = "cluster.azure.controlPlaneIdentityId"
RESERVED_THEN_ON_DEMAND: Final = ("reserved", "on-demand")
# A queued pool's own taint (value: the pool's name). On AKS a queued pool is an ordinary
# autoscaled scale set, so without it any pod tolerating the GPU taint (`sku=gpu`, in every
# example of AKS's GPU guide, use-nvidia-gpu) could take the nodes added for an admitted Job or
# grow the pool outside the queue (review aks-3 N15). The pool's Kueue ResourceFlavor tolerates
# it, and Kueue adds a flavor's tolerations to the pods it admits; GKE has its own
# (cloud.google.com/gke-queued, components/gcp/model/capacity.py).
QUEUED_TAINT_KEY: Final = "gpufleet.io/queued"
RESERVED: Final = ("reserved",)

GROUP_ID = re.compile(
    r"/subscriptions/(?P<subscription>[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})"
    r"/resourceGroups/(?P<group>[-\w.()]{1,90})/providers/Microsoft\.Compute/"
    r"capacityReservationGroups/(?P<name>[-\w.]{1,80})",
    re.IGNORECASE,
)
IDENTITY_ID = re.compile(
    r"/subscriptions/(?P<subscription>[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})"
    r"/resourceGroups/(?P<group>[-\w.()]{1,90})/providers/Microsoft\.ManagedIdentity/"
    r"userAssignedIdentities/(?P<name>[-\w]{3,128})",
    re.IGNORECASE,
)
_GROUP_ID_FORM = (
    "/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Compute/"
    "capacityReservationGroups/<name> (az capacity reservation group show --query id)"
)
_IDENTITY_ID_FORM = (
    "/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.ManagedIdentity/"
    "userAssignedIdentities/<name> (az identity show --query id)"
)

# The GPU series Azure takes capacity reservations for, as VM size patterns
# (capacity-reservation-overview, Limitations: "NC-series, v3", NCasT4_v3, NCADSA10_v4,
# NC_A100_v4, "NV-series, v3 and newer", NVadsA10_v5; not "ND-series" nor "NCads H100 v5").
RESERVABLE_GPU_SERIES: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("NCv3", re.compile(r"Standard_NC\d+r?s_v3")),
    ("NCasT4_v3", re.compile(r"Standard_NC\d+as_T4_v3")),
    ("NCads_A10_v4", re.compile(r"Standard_NC\d+ads_A10_v4")),
    ("NC_A100_v4", re.compile(r"Standard_NC\d+ads_A100_v4")),
    ("NVv3", re.compile(r"Standard_NV\d+s_v3")),
    ("NVadsA10_v5", re.compile(r"Standard_NV\d+ads_A10_v5")),
)


def reservable(vm_size: str) -> bool:
    return any(pattern.fullmatch(vm_size) for _, pattern in RESERVABLE_GPU_SERIES)


def reservable_sizes() -> list[str]:
    """The catalog's VM sizes Azure reserves, for messages."""
    return [row.name for row in CATALOG.rows if reservable(row.name)]


@dataclass(frozen=True)
class GroupId:
    subscription: str
    resource_group: str
    name: str

    @property
    def resource_group_id(self) -> str:
        return f"/subscriptions/{self.subscription}/resourceGroups/{self.resource_group}"


def group_id(value: str | None) -> GroupId | None:
    """The parts of a capacity reservation group's ARM id (None: not one)."""
    found = GROUP_ID.fullmatch(value or "")
    if found is None:
        return None
    return GroupId(found["subscription"].lower(), found["group"], found["name"])


def vm_size(pool: GpuPoolConfig) -> str | None:
    """The pool's VM size: as written, else the catalog's default for its accelerator."""
    return pool.machine_type or CATALOG.defaults.get(pool.accelerator)


def uses_group(pool: GpuPoolConfig) -> bool:
    return pool_options(pool).capacity_reservation_group_id is not None


def capacity_problems(
    cluster: ClusterConfig,
    pool: GpuPoolConfig,
    order: tuple[str, ...],
    path: str,
    adopted: bool,
) -> list[Problem]:
    """Everything wrong with the pool's reservation keys for its capacity order, at once."""
    options = pool_options(pool)
    written = options.capacity_reservation_group_id
    key, nodes_key = f"{path}.{KEY}", f"{path}.{NODES_KEY}"
    problems: list[Problem] = []
    if "reserved" not in order:
        if written is not None:
            why = (
                "Spot VMs cannot use a capacity reservation (Azure: capacity-reservation-"
                "overview, Limitations); remove it, or make the pool on-demand in the group "
                "with capacity: [reserved, on-demand]"
                if "spot" in order
                else f"applies only to a pool whose capacity is reserved (this pool's is "
                f"{shown_order(order)}); write capacity: [reserved, on-demand] (AKS fills the "
                "reservation first, then takes regular VMs) or remove it"
            )
            problems.append(Problem(key, why, written))
        if options.reserved_nodes is not None:
            problems.append(
                Problem(
                    nodes_key,
                    f"applies only with {KEY} and capacity reserved; remove it",
                    options.reserved_nodes,
                )
            )
        return problems
    parts = group_id(written)
    if written is None:
        problems.append(
            Problem(
                key,
                f"is required with capacity {shown_order(order)}: the ARM id of the capacity "
                f"reservation group the pool's VMs are placed in, {_GROUP_ID_FORM}",
                has_value=False,
            )
        )
    elif parts is None:
        problems.append(
            Problem(
                key, f"must be a capacity reservation group's ARM id, {_GROUP_ID_FORM}", written
            )
        )
    subscription = cluster_options(cluster).subscription_id
    if parts is not None and subscription and subscription.lower() != parts.subscription:
        problems.append(other_subscription(parts, subscription, key, written))
    size = vm_size(pool)
    if size is not None and not reservable(size):
        where = f"{path}.machineType" if pool.machine_type else f"{path}.accelerator"
        problems.append(
            Problem(
                where,
                f"{size} cannot be reserved: Azure has capacity reservations for no ND-series "
                "and no NCads H100 v5 VM (capacity-reservation-overview, Limitations); GPU "
                f"sizes gpufleet knows that can be: {', '.join(reservable_sizes())}; or leave "
                "capacity out",
                pool.machine_type or pool.accelerator,
            )
        )
    if order == RESERVED and (
        options.reserved_nodes is None or pool.max_nodes > options.reserved_nodes
    ):
        held = (
            f"maxNodes {pool.max_nodes} is more than {NODES_KEY} {options.reserved_nodes}"
            if options.reserved_nodes is not None
            else f"{NODES_KEY} does not say how many VMs the group reserves for it"
        )
        problems.append(
            Problem(
                f"{path}.capacity",
                "Azure does not stop at a reservation: a pool in a capacity reservation group "
                "takes regular on-demand VMs beyond the reserved ones (capacity-reservation-"
                f"overallocate), so capacity reserved alone holds only while maxNodes stays "
                f"within them, and {held}; write capacity: [reserved, on-demand], or set "
                f"{NODES_KEY} and keep maxNodes within it",
                pool.capacity,
            )
        )
    if not adopted and cluster_options(cluster).control_plane_identity_id is None:
        problems.append(
            Problem(
                key,
                "AKS places a pool in a capacity reservation group only for a cluster whose "
                "control plane has a user-assigned managed identity (a system-assigned one does "
                "not work: aks/use-capacity-reservation-groups); create one (az identity "
                f"create) and set {IDENTITY_KEY} to its id when the cluster is created",
                written,
                has_value=written is not None,
            )
        )
    return problems


def capacity_warnings(
    cluster: ClusterConfig, pool: GpuPoolConfig, path: str, adopted: bool
) -> list[str]:
    """What gpufleet cannot check about a reserved or queued pool, said by `plan`."""
    warnings = []
    parts = group_id(pool_options(pool).capacity_reservation_group_id)
    if parts is not None:
        if adopted:
            grant = ""  # the adopted cluster's grants are its owner's (model/adopted.py)
        elif "reservation-groups" in cluster_options(cluster).grants_made_elsewhere:
            grant = (
                f"; the control plane's Contributor grant on resource group "
                f"{parts.resource_group} is made elsewhere (cluster.azure.grantsMadeElsewhere): "
                "not checked; it must be at least 60 minutes old when `up` creates the pool "
                "(AKS: up to 60 minutes to propagate, aks/use-capacity-reservation-groups)"
            )
        elif cluster_options(cluster).role_assignments:
            grant = (
                "; the control plane's new Contributor grant on resource group "
                f"{parts.resource_group} covers everything in that group (its identity may "
                "change or delete any resource there, and whoever may attach the identity acts "
                "with it) and stays after the stack goes: keep that group for capacity "
                "reservation groups only (review security-1 SEC-8). The grant can take up to 60 "
                "minutes to propagate "
                "(aks/use-capacity-reservation-groups), so `pulumi up` creates the pool only "
                "once the grant is 60 minutes old: the first `up` takes about an hour (the "
                "cluster is created meanwhile), and so does one that moves the pool to a group "
                "in another resource group (the old pool runs until then). Azure keeps one such "
                "grant per identity and group, and gpufleet keeps its own in Azure when it "
                "leaves the stack (retainOnDelete): if one exists already (another stack's, "
                "or this stack's from before a destroy), `up` fails with RoleAssignmentExists, "
                # The grant's reach (review security-1 SEC-8): the whole group, beyond the stack.
                "so name reservation-groups in cluster.azure.grantsMadeElsewhere (not checked). "
                "Contributor on the whole group lets the control plane's identity, and whoever "
                "can attach that identity to a VM, change or delete anything in "
                f"{parts.resource_group}, after the stack is gone too: keep only capacity "
                "reservation groups in it"
            )
        else:
            grant = (
                f"; the control plane's identity needs Contributor on resource group "
                f"{parts.resource_group} (aks/use-capacity-reservation-groups), which "
                "cluster.azure.roleAssignments false leaves to an administrator: not checked; "
                "it must be at least 60 minutes old when `up` creates the pool (up to 60 "
                "minutes to propagate)"
            )
        warnings.append(
            f"{path} ({pool.name}): other pools or VMs that use group {parts.name} share its "
            f"reservations, and that is not checked{grant}"
        )
    if "queued" in declared_order(pool.capacity, pool.spot):
        warnings.append(
            f"{path} ({pool.name}) is queued: AKS's own cluster autoscaler serves its "
            "ProvisioningRequests (best-effort-atomic-scale-up; learn.microsoft.com/azure/aks/"
            "configure-kueue-with-cluster-autoscaler) and AKS provides their API, so gpufleet "
            "installs neither; whether the cluster's AKS release serves them is not checked "
            "offline (kubectl get crd provisioningrequests.autoscaling.x-k8s.io)"
        )
    return warnings


def other_subscription(parts: GroupId, subscription: str, key: str, value: str | None) -> Problem:
    return Problem(
        key,
        f"is in subscription {parts.subscription}, the cluster in {subscription}: sharing a "
        "reservation group with another subscription is a preview (capacity-reservation-group-"
        "share) that AKS documents no support for; use a group in the cluster's subscription",
        value,
    )


def identity_problems(cluster: ClusterConfig) -> list[Problem]:
    """`cluster.azure.controlPlaneIdentityId`, when written, is a user-assigned identity's id."""
    value = cluster_options(cluster).control_plane_identity_id
    if value is None or IDENTITY_ID.fullmatch(value):
        return []
    return [
        Problem(
            IDENTITY_KEY,
            f"must be a user-assigned managed identity's ARM id, {_IDENTITY_ID_FORM}",
            value,
        )
    ]


def cap(pool: GpuPoolConfig) -> ReservationCap | None:
    """The pool's cap where the config says how many VMs the group reserves for it."""
    options = pool_options(pool)
    parts = group_id(options.capacity_reservation_group_id)
    if parts is None or options.reserved_nodes is None:
        return None
    count = options.reserved_nodes
    return ReservationCap(
        count,
        f"capacity reservation group {parts.name} ({count} reserved {vm_size(pool)})",
    )


# --- the group as read while the program plans (compute.get_capacity_reservation[_group]) ----


@dataclass(frozen=True)
class Reservation:
    """One member reservation of a group: a VM size, where (zone, or the region) and how many."""

    vm_size: str
    zones: tuple[str, ...]
    capacity: int


@dataclass(frozen=True)
class GroupFacts:
    name: str
    location: str
    # The group's eligible zones (empty: a regional group).
    zones: tuple[str, ...]
    reservations: tuple[Reservation, ...]


def _same_region(a: str, b: str) -> bool:
    # ARM reports locations as `eastus2`; a portal may say `East US 2`.
    return a.replace(" ", "").lower() == b.replace(" ", "").lower()


def group_problems(
    group: GroupFacts, pool: GpuPoolConfig, cluster: ClusterConfig, path: str
) -> list[Problem]:
    """What Azure or AKS would refuse, or do silently, with the pool in this group."""
    key = f"{path}.{KEY}"
    value = pool_options(pool).capacity_reservation_group_id
    size = vm_size(pool) or ""
    region = cluster.region
    # The pool's zones as it is created with them (its own, else the cluster's).
    zones = tuple(pool.zones or cluster.zones or ())
    problems: list[Problem] = []

    def refuse(why: str) -> None:
        problems.append(Problem(key, f"group {group.name} {why}", value))

    if region and not _same_region(group.location, region):
        refuse(
            f"is in {group.location}, the cluster in {region}: a group reserves VMs in its own "
            "region only; use a group in the cluster's region"
        )
    if not group.reservations:
        refuse(
            "holds no capacity reservation, and AKS then adds the pool without the group (with "
            f"a warning only); create a reservation for {size} in it first"
        )
        return problems
    if group.zones and not zones:
        refuse(
            f"is zonal ({', '.join(group.zones)}) and the pool has no zones: a regional VM "
            f"matches none of its reservations; set the pool's zones to zones the group reserves "
            f"{size} in"
        )
    if not group.zones and zones:
        refuse(
            "is regional (no zones): it takes only VMs deployed without a zone, and the pool is "
            f"in zones {', '.join(zones)}; remove the pool's zones or use a zonal group"
        )
    of_size = [r for r in group.reservations if r.vm_size.lower() == size.lower()]
    if not of_size:
        held = ", ".join(sorted({r.vm_size for r in group.reservations}))
        refuse(
            f"reserves no {size} (it reserves {held}): Azure refuses a VM whose size the "
            f"group does not reserve; add a {size} reservation to the group or use another group"
        )
        return problems
    reserved_zones = {zone for r in of_size for zone in r.zones}
    missing = [zone for zone in zones if group.zones and zone not in reserved_zones]
    if missing:
        refuse(
            f"reserves {size} in zones {', '.join(sorted(reserved_zones)) or 'none'}, not in "
            f"{', '.join(missing)} where the pool also runs: Azure refuses a VM in a zone the "
            "group does not reserve its size in; reserve it there or keep the pool's zones to "
            "those"
        )
    counted = [r for r in of_size if not zones or not r.zones or set(r.zones) & set(zones)]
    total = sum(r.capacity for r in counted)
    stated = pool_options(pool).reserved_nodes
    if stated is not None and stated > total:
        problems.append(
            Problem(
                f"{path}.{NODES_KEY}",
                f"group {group.name} reserves {total} {size} where the pool runs, fewer than "
                "this; set it to what the group reserves for the pool (az capacity reservation "
                "show)",
                stated,
            )
        )
    return problems


def grant_scopes(pools: Sequence[GpuPoolConfig]) -> list[str]:
    """The resource groups whose Contributor role the control-plane identity needs (each once,
    in the pools' order)."""
    scopes: list[str] = []
    for pool in pools:
        parts = group_id(pool_options(pool).capacity_reservation_group_id)
        if parts is not None and parts.resource_group_id.lower() not in {s.lower() for s in scopes}:
            scopes.append(parts.resource_group_id)
    return scopes
