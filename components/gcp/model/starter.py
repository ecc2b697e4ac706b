"""A new GKE stack from a few choices (`python -m components new NAME --cloud gcp`)."""

from __future__ import annotations

from typing import Any

from components.gcp.model.catalog import CATALOG
from components.gcp.model.gpu_zones import GPU_ZONES
from components.model.managed_cloud import ManagedCloud
from components.model.starter import (
    DEFAULT_KUBERNETES_VERSION,
    PLACEHOLDER_PROJECT,
    Starter,
    StarterChoices,
    StarterError,
    gpu_pool,
    stack_config,
    unused,
)

READS = frozenset(
    {
        "region",
        "gpu",
        "spot",
        "max_nodes",
        "zones",
        "kubernetes_version",
        "existing_cluster",
        "project",
    }
)
DEFAULT_REGION = "us-central1"
DEFAULT_GPU = "l4"
# At most this many zones by default: enough to find capacity, few enough to read.
DEFAULT_ZONE_COUNT = 3


def starter(choices: StarterChoices, cloud: ManagedCloud) -> Starter:
    problems = unused(choices, READS, "gcp")
    region = choices.region or DEFAULT_REGION
    gpu = choices.gpu or DEFAULT_GPU
    machine_name = CATALOG.defaults.get(gpu)
    machine = CATALOG.machine(gpu, machine_name) if machine_name else None
    notes = []
    zones = list(choices.zones)
    if machine is None:
        problems.append(
            f"--gpu: {gpu} is not offered on gcp; offered: {', '.join(CATALOG.models())}"
        )
    elif not zones:
        offered = GPU_ZONES.get(machine.gke_accelerator, {}).get(region)
        if offered:
            zones = list(offered[:DEFAULT_ZONE_COUNT])
            notes.append(
                f"zones {', '.join(zones)}: where Compute Engine offers {gpu} in {region} "
                "(components/gcp/model/gpu_zones.py)"
            )
        else:
            problems.append(
                f"--zones: gpufleet's zone table does not say where {gpu} is offered in "
                f"{region}; name the zones (`gcloud compute accelerator-types list "
                f"--filter=zone~{region}`), e.g. --zones {region}-a {region}-b"
            )
    if problems:
        raise StarterError(problems)
    assert machine is not None
    cluster: dict[str, Any] = {
        "name": choices.existing_cluster or choices.name,
        "kubernetesVersion": choices.kubernetes_version or DEFAULT_KUBERNETES_VERSION,
        "region": region,
        "zones": zones,
    }
    if choices.existing_cluster:
        cluster["gcp"] = {"project": choices.project or PLACEHOLDER_PROJECT}
        cluster["existing"] = {}
    else:
        cluster["systemPool"] = {
            "machineType": cloud.default_system_machine,
            "minNodes": 1,
            "maxNodes": 3,
        }
        cluster["gcp"] = {"project": choices.project or PLACEHOLDER_PROJECT}
    pool = gpu_pool(choices, gpu, cloud.pool_name_rule.accepts, machineType=machine.name)
    return Starter(stack_config("gcp", cluster, [pool]), tuple(notes))
