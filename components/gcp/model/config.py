"""GKE's own config keys: `cluster.gcp` and `gpuPools[].gcp`, and what they expose."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from components.model import existing_cluster
from components.model.exposure import endpoint_warnings
from components.model.schema import ClusterConfig, ConfigModel, GpuPoolConfig, section


class GcpReservation(ConfigModel):
    """A specific Compute Engine reservation a pool's nodes consume (docs/gke.md), and what the
    stack knows of it: where it is, its machine type and size, each checked against the pool
    where written (gpufleet cannot look reservations up offline)."""

    # NAME (this project), projects/PROJECT/reservations/NAME (shared with this project), either
    # followed by /reservationBlocks/BLOCK (one block of it).
    name: str
    # The zones that hold a reservation of this name (reservations are zonal).
    zones: list[str] | None = None
    # The reservation's machine type (its instance properties).
    machine_type: str | None = None
    # How many VMs the reservation holds: the most nodes it gives the pool.
    count: int | None = None


class GcpPoolOptions(ConfigModel):
    # GKE-managed driver version; set explicitly (an unset value caused permanent diffs).
    driver_version: Literal["default", "latest"] = "default"
    # The specific reservation the pool's nodes consume (SPECIFIC_RESERVATION): a name, or the
    # mapping above. A3 Ultra and A4 are sold on demand only this way (else Spot, flex-start).
    reservation: GcpReservation | None = None
    # How long a flex-start node runs before GKE deletes it (whole seconds, at most 7 days).
    max_run_duration_seconds: int | None = None
    # Image streaming (GKE's gcfsConfig): containers start before their image is pulled whole.
    # A pool created with the default gets it; a pool that existed before keeps what it has
    # until the key is set explicitly (components/gcp/gpu_pool.py).
    image_streaming: bool = True
    # A disk image preloaded with the pods' container images (global/images/NAME or
    # projects/PROJECT/global/images/NAME): each node gets a disk of it as a container image
    # cache (components/gcp/model/image_start.py). A new image means a new node pool.
    secondary_boot_disk: str | None = None

    @field_validator("reservation", mode="before")
    @classmethod
    def _reservation_by_name(cls, value: Any) -> Any:
        # `reservation: NAME` (the older spelling) is the mapping with its name alone.
        if isinstance(value, str):
            return {"name": value}
        if value is None or isinstance(value, dict):
            return value
        raise PydanticCustomError(
            "reservation",
            "must be a reservation name, or a mapping: name, zones, machineType, count",
        )


class GcpClusterOptions(ConfigModel):
    project: str | None = None
    # EXTENDED keeps a minor past standard support (terraform-provider-google accepts
    # UNSPECIFIED, RAPID, REGULAR, STABLE, EXTENDED; review gke-2.md N11).
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = "REGULAR"
    # GKE's cluster autoscaler profile (review gke-2.md N4). BALANCED, GKE's default, removes a
    # node after about 10 minutes unneeded; OPTIMIZE_UTILIZATION removes more nodes, faster,
    # and packs pods tighter, which GKE recommends for batch work and not for serving.
    autoscaling_profile: Literal["BALANCED", "OPTIMIZE_UTILIZATION"] = "BALANCED"
    # An existing service account for the nodes (its email): gpufleet creates no account and
    # grants no project roles; the account needs GKE's node roles already (review gke-2.md N5).
    node_service_account: str | None = None
    network: str | None = None
    subnetwork: str | None = None
    # The secondary ranges of the subnetwork that pods and services use. gpufleet's own
    # subnetwork has them under these names; a given subnetwork must have them (any names).
    pods_range_name: str = "pods"
    services_range_name: str = "services"
    subnet_cidr: str = "10.10.0.0/20"
    pods_cidr: str = "10.20.0.0/14"
    services_cidr: str = "10.24.0.0/20"
    master_cidr: str = "172.16.0.0/28"
    # Who may reach the control plane's IP endpoints (empty: nobody from outside the VPC).
    master_authorized_cidrs: list[str] = Field(default_factory=list)
    # dns: clients (and gpufleet's Kubernetes provider) reach the control plane through its
    # DNS-based endpoint, authorised by IAM alone, from anywhere; the IP endpoints stay closed to
    # all but masterAuthorizedCidrs. ip: through the public IP endpoint (masterAuthorizedCidrs
    # must then include where pulumi runs).
    control_plane_access: Literal["dns", "ip"] = "dns"


class GcpExistingOptions(ConfigModel):
    """GKE's own key of `cluster.existing` (an adopted cluster). `components.model.config` adds
    it to that section, so it is written `cluster.existing.location`."""

    # Where the adopted cluster is when it is zonal (a zone of cluster.region, such as
    # us-central1-a); unset: a regional cluster, in cluster.region.
    location: str | None = None


def existing_options(cluster: ClusterConfig) -> GcpExistingOptions:
    """GKE's key of `cluster.existing` (its default when the cluster is not adopted)."""
    return section(cluster, existing_cluster.SECTION, GcpExistingOptions)


def cluster_options(cluster: ClusterConfig) -> GcpClusterOptions:
    return section(cluster, "gcp", GcpClusterOptions)


def pool_options(pool: GpuPoolConfig) -> GcpPoolOptions:
    return section(pool, "gcp", GcpPoolOptions)


def exposure_warnings(cluster: ClusterConfig, adopted: bool) -> list[str]:
    """GKE's IP endpoints open to the whole internet through the authorized networks (review
    security-1 SEC-4; CIS GKE 5.6.3). The DNS-based endpoint is IAM-authorised wherever it is
    reached from (Google's recommended access) and is not an opening of this kind. An adopted
    cluster's endpoints are its owner's: gpufleet does not set them."""
    key = None if adopted else "cluster.gcp.masterAuthorizedCidrs"
    ranges = cluster_options(cluster).master_authorized_cidrs
    return endpoint_warnings(cluster, key, ranges, "GKE")
