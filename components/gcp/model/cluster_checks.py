"""What `plan` refuses in a GKE stack's cluster settings (`cluster`, `cluster.gcp`), all at once,
and what it warns of there."""

from __future__ import annotations

import re

from components.gcp.model import node_limits, system_machines
from components.gcp.model.config import cluster_options, existing_options, exposure_warnings
from components.model.cloud import NameRule
from components.model.networks import cidr_list_problems, overlap_problems, parse_ipv4_cidr
from components.model.problems import Problem
from components.model.schema import ClusterConfig

# cloud.google.com/resource-manager/docs/creating-managing-projects#before_you_begin
PROJECT_ID = NameRule(
    r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$",
    "6-30 of a-z 0-9 -, starting with a letter, not ending with a hyphen",
)
# A service account email: a user-managed account (IAM account ids: 6-30 of a-z 0-9 -) or
# Compute Engine's default one (cloud.google.com/iam/docs/service-account-types).
SERVICE_ACCOUNT_EMAIL = NameRule(
    r"^([a-z][-a-z0-9]{4,28}[a-z0-9]@[a-z][-a-z0-9]{4,28}[a-z0-9]\.iam\.gserviceaccount\.com"
    r"|[0-9]+-compute@developer\.gserviceaccount\.com)$",
    "NAME@PROJECT.iam.gserviceaccount.com, or NUMBER-compute@developer.gserviceaccount.com",
)
# Secondary range names: RFC 1035 labels (cloud.google.com/vpc/docs/subnets#secondary-ranges).
RANGE_NAME = NameRule(
    r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$", "1-63 of a-z 0-9 -, starting with a letter"
)
# A zone's name: its region and a letter (us-central1-a).
ZONE_OF = re.compile(r"[a-z]+-[a-z]+[0-9]+-[a-z]")
# A weekday occurs only 4 times in some 32-day spans: 4 x 12 h = GKE's 48 h minimum
# (cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions).
GKE_MIN_WEEKLY_WINDOW_HOURS = 12


def cluster_problems(cluster: ClusterConfig, machine_names: NameRule) -> list[Problem]:
    gcp = cluster_options(cluster)
    problems: list[Problem] = []
    if not gcp.project:
        problems.append(
            Problem(
                "cluster.gcp.project",
                "is required on gcp (the GCP project id)",
                has_value=False,
            )
        )
    elif not PROJECT_ID.accepts(gcp.project):
        problems.append(
            Problem("cluster.gcp.project", f"must be a project id ({PROJECT_ID.rule})", gcp.project)
        )
    if (gcp.network is None) != (gcp.subnetwork is None):
        problems.append(
            Problem(
                "cluster.gcp.subnetwork" if gcp.subnetwork is None else "cluster.gcp.network",
                "network and subnetwork go together: give both, or neither",
                has_value=False,
            )
        )
    window = cluster.maintenance
    if window.duration_hours < GKE_MIN_WEEKLY_WINDOW_HOURS:
        problems.append(
            Problem(
                "cluster.maintenance.durationHours",
                f"GKE needs 48 hours of maintenance window in any 32 days; a weekly window "
                f"must last at least {GKE_MIN_WEEKLY_WINDOW_HOURS} hours",
                window.duration_hours,
                is_default="duration_hours" not in window.model_fields_set,
            )
        )
    account = gcp.node_service_account
    if account is not None and not SERVICE_ACCOUNT_EMAIL.accepts(account):
        problems.append(
            Problem(
                "cluster.gcp.nodeServiceAccount",
                f"must be a service account email ({SERVICE_ACCOUNT_EMAIL.rule})",
                account,
            )
        )
    problems += node_limits.pool_problems(
        cluster.system_pool.max_nodes, cluster.zones, "cluster.systemPool"
    )
    machine = cluster.system_pool.machine_type
    # Another cloud's name is said once, by the shared naming check.
    if machine is not None and machine_names.accepts(machine):
        problems += system_machines.problems(machine, "cluster.systemPool.machineType")
    where = "cluster.gcp"
    ranges = {
        "subnetCidr": parse_ipv4_cidr(f"{where}.subnetCidr", gcp.subnet_cidr, problems),
        "podsCidr": parse_ipv4_cidr(f"{where}.podsCidr", gcp.pods_cidr, problems),
        "servicesCidr": parse_ipv4_cidr(f"{where}.servicesCidr", gcp.services_cidr, problems),
        # The control plane's private range is a /28 (GKE private clusters).
        "masterCidr": parse_ipv4_cidr(f"{where}.masterCidr", gcp.master_cidr, problems, (28, 28)),
    }
    for key, value in (
        ("podsRangeName", gcp.pods_range_name),
        ("servicesRangeName", gcp.services_range_name),
    ):
        if not RANGE_NAME.accepts(value):
            problems.append(
                Problem(f"{where}.{key}", f"must be a range name ({RANGE_NAME.rule})", value)
            )
    if gcp.pods_range_name == gcp.services_range_name:
        problems.append(
            Problem(
                f"{where}.servicesRangeName",
                "must differ from podsRangeName (pods and services need their own ranges)",
                gcp.services_range_name,
            )
        )
    if gcp.subnetwork is not None:
        # A bring-your-own subnetwork brings its own node range; the pod and service ranges
        # are its secondary ranges (named in the cluster resource), not these keys.
        ranges = {"masterCidr": ranges["masterCidr"]}
    problems += overlap_problems(where, ranges)
    problems += cidr_list_problems(f"{where}.masterAuthorizedCidrs", gcp.master_authorized_cidrs)
    return problems + _location_problems(cluster)


def cluster_warnings(cluster: ClusterConfig, adopted: bool) -> list[str]:
    """What a GKE cluster's settings risk that gpufleet cannot check (an adopted cluster's
    system pool and network are its owner's)."""
    warnings = exposure_warnings(cluster, adopted)
    if adopted:
        return warnings
    machine = cluster.system_pool.machine_type
    warnings += system_machines.warnings(machine, "cluster.systemPool.machineType")
    gcp = cluster_options(cluster)
    if gcp.network is not None and "master_cidr" not in gcp.model_fields_set:
        # Every private cluster peered into one VPC needs its own control-plane /28 (GKE
        # private clusters); gpufleet's own VPC holds only its cluster (review gke.md S1-5).
        warnings.append(
            f"cluster.gcp.masterCidr: the default {gcp.master_cidr} is every gpufleet "
            "cluster's; in the given network gcp.network another private cluster may use it "
            "already (not checked): GKE would refuse the cluster. Set a /28 no other cluster "
            "in that VPC uses"
        )
    return warnings


def adopted_location(cluster: ClusterConfig) -> str:
    """Where an adopted cluster is looked up and its node pools go: its zone when it is zonal
    (`cluster.existing.location`), else `cluster.region` (review gke-3.md R3-4)."""
    return existing_options(cluster).location or cluster.region or ""


def _location_problems(cluster: ClusterConfig) -> list[Problem]:
    location = existing_options(cluster).location
    region = cluster.region or ""
    if location is None or location == region:
        return []
    if ZONE_OF.fullmatch(location) and location.rpartition("-")[0] == region:
        return []
    return [
        Problem(
            "cluster.existing.location",
            f"must be a zone of cluster.region {region} (a zonal cluster's location, such as "
            f"{region}-a), or be left out for a regional cluster",
            location,
        )
    ]
