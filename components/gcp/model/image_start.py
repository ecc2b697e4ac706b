"""How a GKE GPU node pool's containers start fast: image streaming, and a secondary boot disk
preloaded with the container images (`gpuPools[].gcp.secondaryBootDisk`), as data with sources,
their checks at plan, and what the node pool sends (docs/gke.md "Fast image start").

Sources, read 2026-11-28:

- GKE docs, how-to/data-container-image-preloading (en; the zh-cn copy for the per-image-type
  list): node-pool secondary boot disks from 1.28.3-gke.1067000 on Standard clusters (gpufleet's;
  1.30.1-gke.1329000 on Autopilot), UBUNTU_CONTAINERD from 1.35.0-gke.1403000; image
  streaming is a requirement; one Persistent Disk per node from the disk image, of the boot disk's
  type and the image's size, created in parallel with the node and deleted with it; a new disk
  image needs a new node pool (existing nodes are not updated).
- pulumi-gcp 10.2.0 `container/_inputs.py` NodePoolNodeConfigSecondaryBootDiskArgs: `disk_image`
  ("global/images/DISK_IMAGE_NAME" after gke-disk-image-builder), `mode` (CONTAINER_IMAGE_CACHE;
  unset, the disk is a data disk); "`gcfs_config` must be `enabled=true` for this feature".
  terraform-provider-google node_config.go: `secondary_boot_disks` is ForceNew
  (components/gcp/model/change_rules.py).
- GKE docs, concepts/node-images: COS_CONTAINERD is the default node image; gpufleet's GPU pools
  send no imageType (components/gcp/gpu_pool.py), so theirs is COS_CONTAINERD.
- Compute Engine docs, images/sharing-images-across-projects and managing-access-custom-images:
  a disk image of another project is used through `roles/compute.imageUser`, granted on the
  image itself (`gcloud compute images add-iam-policy-binding`) or on its project; a managed
  instance group creates its VMs and their disks as the project's Google APIs service agent
  (PROJECT_NUMBER@cloudservices.gserviceaccount.com), so that agent of the cluster's project
  needs it (GKE node pools are managed instance groups), and so does the GKE service agent,
  which builds the pool's instance template from the image (review fix-5 F5-1; GKE's
  cross-project section not read first-hand here); the nodes' runtime account never
  reads its own disk image. The organization policy `constraints/compute.trustedImageProjects`
  may refuse images of other projects (review gke-5 R5-1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from components.gcp.model import config as gcp_config
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

CACHE_MODE: Final[str] = "CONTAINER_IMAGE_CACHE"
IMAGE_USER_ROLE: Final[str] = "roles/compute.imageUser"
KEY: Final[str] = "gcp.secondaryBootDisk"
# The image type of gpufleet's GPU pools: GKE's default, none being sent.
POOL_IMAGE_TYPE: Final[str] = "COS_CONTAINERD"
_PRELOADING = "cloud.google.com/kubernetes-engine/docs/how-to/data-container-image-preloading"


@dataclass(frozen=True)
class PreloadFloor:
    """The oldest GKE version whose nodes of this image type take a preloaded disk."""

    image_type: str
    version: str
    source: str


FLOORS: Final[dict[str, PreloadFloor]] = {
    # Standard clusters; 1.30.1-gke.1329000 is Autopilot's (review gke-5 R5-2; Google's
    # terraform-docs-samples gke/standard/zonal/secondary-boot-disk says the same).
    "COS_CONTAINERD": PreloadFloor("COS_CONTAINERD", "1.28.3-gke.1067000", _PRELOADING),
    "UBUNTU_CONTAINERD": PreloadFloor("UBUNTU_CONTAINERD", "1.35.0-gke.1403000", _PRELOADING),
}

_NAME = r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?"
_PROJECT = r"[a-z][-a-z0-9]{4,28}[a-z0-9]"
DISK_IMAGE_FORM: Final[str] = (
    "global/images/NAME (an image of the cluster's project) or "
    "projects/PROJECT/global/images/NAME (NAME: 1-63 of a-z 0-9 -, starting with a letter)"
)
_DISK_IMAGE = re.compile(rf"(?:projects/(?P<project>{_PROJECT})/)?global/images/(?P<name>{_NAME})")
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+)(?:-gke\.(\d+))?)?")


def gke_version(text: str) -> tuple[int, int, int, int] | None:
    """`1.28.3-gke.1067000` as (1, 28, 3, 1067000); a bare minor (`1.31`, what
    cluster.kubernetesVersion holds) as its earliest patch, (1, 31, 0, 0): GKE may run any patch
    of it, the earliest included. None when unreadable."""
    match = _VERSION.fullmatch(text)
    if match is None:
        return None
    major, minor, patch, build = match.groups()
    return (int(major), int(minor), int(patch or 0), int(build or 0))


def meets(version: str, floor: str) -> bool:
    """Whether every GKE version `version` names is `floor` or later (False when unreadable)."""
    have, need = gke_version(version), gke_version(floor)
    return have is not None and need is not None and have >= need


def image_project(disk_image: str) -> str | None:
    """The project a `projects/PROJECT/global/images/NAME` names (None: the cluster's own)."""
    match = _DISK_IMAGE.fullmatch(disk_image)
    return match["project"] if match else None


@dataclass(frozen=True)
class NodePoolImageStart:
    """What a node pool sends so its containers start fast."""

    # Image streaming (gcfsConfig.enabled).
    streaming: bool = True
    # Whether the pool's streaming is applied on update: set in the stack, or needed by a
    # preloaded disk (else a pool an earlier gpufleet created keeps its own: ignoreChanges).
    streaming_applied: bool = False
    # The disk image whose disk each node gets as a container image cache (None: none).
    preloaded_disk: str | None = None


def node_pool_image_start(pool: GpuPoolConfig) -> NodePoolImageStart:
    options = gcp_config.pool_options(pool)
    disk = options.secondary_boot_disk
    return NodePoolImageStart(
        streaming=options.image_streaming,
        # A replaced pool (a new disk) must stream: never carry an old pool's setting over.
        streaming_applied="image_streaming" in options.model_fields_set or disk is not None,
        preloaded_disk=disk,
    )


def image_start_problems(cluster: ClusterConfig, pool: GpuPoolConfig, path: str) -> list[Problem]:
    """Every reason GKE would refuse the pool's preloaded disk, each with what to do."""
    options = gcp_config.pool_options(pool)
    disk = options.secondary_boot_disk
    if disk is None:
        return []
    key = f"{path}.{KEY}"
    problems: list[Problem] = []
    if _DISK_IMAGE.fullmatch(disk) is None:
        problems.append(Problem(key, f"must be a disk image: {DISK_IMAGE_FORM}", disk))
    if not options.image_streaming:
        problems.append(
            Problem(
                f"{path}.gcp.imageStreaming",
                "must be true with gcp.secondaryBootDisk: GKE reads preloaded images through "
                "image streaming; remove imageStreaming: false, or remove secondaryBootDisk",
                options.image_streaming,
            )
        )
    floor = FLOORS[POOL_IMAGE_TYPE]
    version = cluster.kubernetes_version
    if not meets(version, floor.version):
        problems.append(
            Problem(
                "cluster.kubernetesVersion",
                f"{key} needs GKE {floor.version} or later on {floor.image_type} nodes (the GPU "
                f"pools' image); {version} includes earlier versions: raise it to a later minor, "
                f"or remove {key}",
                version,
            )
        )
    return problems


def image_start_warnings(cluster: ClusterConfig, pool: GpuPoolConfig, path: str) -> list[str]:
    """What gpufleet cannot check offline about the preloaded disk, and what to grant."""
    disk = gcp_config.pool_options(pool).secondary_boot_disk
    if disk is None or _DISK_IMAGE.fullmatch(disk) is None:
        return []
    own = gcp_config.cluster_options(cluster).project
    project = image_project(disk) or own
    warnings = [
        f"{path}.{KEY}: not checked offline: that {disk} exists and holds the images the pods "
        "run (built with gke-disk-image-builder, docs/gke.md); a pod whose image is not on it "
        "is pulled as usual"
    ]
    if project is not None and project != own:
        name = disk.rsplit("/", 1)[-1]
        warnings.append(
            f"{path}.{KEY}: the disk image is in project {project}: GKE's service agent "
            "builds the node pool's instance template from it, and the pool's managed instance "
            "group creates each node's disks as the cluster project's Google APIs service "
            f"agent: both need {IMAGE_USER_ROLE} on the image; gpufleet does not grant it in a "
            "project it does not manage: not checked. Grant it on the image: gcloud compute "
            f"images add-iam-policy-binding {name} --project {project} --role "
            f"{IMAGE_USER_ROLE} --member serviceAccount:service-<CLUSTER_PROJECT_NUMBER>"
            "@container-engine-robot.iam.gserviceaccount.com, and again with --member "
            "serviceAccount:<CLUSTER_PROJECT_NUMBER>@cloudservices.gserviceaccount.com (without "
            "them the pool's creation or every scale-up fails); an organization policy "
            f"constraints/compute.trustedImageProjects must also allow {project}"
        )
    return warnings
