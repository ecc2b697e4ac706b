"""Fast image start on EKS (issue 34): SOCI parallel pull, and a Bottlerocket data volume that
starts from an EBS snapshot with the images already in it. One frozen object per pool
(`EksImageStart`), computed once by the pool's kind and handed to the components, which only
map its fields (user data, block device mappings).

Sources (read 2026-11-28):
- AL2023: awslabs/amazon-eks-ami at 81fec2e (2026-07-23), nodeadm/doc/examples.md "Enabling fast
  image pull (experimental)": `spec.featureGates.FastImagePull: true`; more CPU, memory and EBS
  I/O while pulling; ignored below 4 vCPU or 7 GiB (nodeadm/internal/containerd/config.go
  UseSOCISnapshotter); >= 600 MiB/s root volume throughput recommended, below it pulls may be
  slower; nodeadm/internal/api/featuregates.go: `FastImagePull: DefaultFalse`. First AMI with
  it: v20250813 (CHANGELOG.md, PR #2352). nodeadm merges the NodeConfig documents of the user
  data in order (nodeadm/doc/examples.md, first section).
- Bottlerocket: release v1.44.0 (2025-08-04) adds the soci-snapshotter to the Kubernetes
  variants, configured for parallel pull and unpack (bottlerocket PR #4593, core-kit #569) and
  `configure-snapshotter.service`, which resets the snapshotters' state directories at boot when
  the selected snapshotter changed (core-kit #582); bottlerocket.dev api/settings
  container-runtime (`settings.container-runtime.snapshotter`: takes effect at boot; on a change
  "Bottlerocket will remove containers and existing images under /var/lib/containerd and
  /var/lib/soci-snapshotter") and container-runtime-plugins (`pull-mode =
  "parallel-pull-unpack"`). Bottlerocket supports parallel-pull-unpack, not lazy loading
  (awslabs/ai-on-eks website/docs/guidance/container-startup-time, 3-image-distribution-at-scale).
- Data volume: Bottlerocket keeps images on its data volume `/dev/xvdb`; a launch template or
  EC2NodeClass block device mapping for it may name a snapshot (aws-samples/
  bottlerocket-images-cache README, "Using snapshot with Amazon EKS"; Karpenter v1.14.1 CRD
  `blockDeviceMappings[].ebs.snapshotID`). EC2 resource ids are `snap-` and 8 or 17 lower-case
  hexadecimal digits (EC2 API reference, "Resource IDs": the longer format since 2016-2018).
- Where it goes: Karpenter merges an EC2NodeClass's userData with its own (v1.14.1 docs
  concepts/nodeclasses "spec.userData": AL2023 a NodeConfig part before Karpenter's; Bottlerocket
  keeps every settings table but `kubernetes`, pkg/providers/amifamily/bootstrap/
  bottlerocketsettings.go MarshalTOML). EKS managed node groups append EKS's NodeConfig to a
  launch template's AL2023 user data (eksctl docs, node-bootstrapping) and merge a Bottlerocket
  TOML with theirs, which must then name the cluster (AWS re:Post knowledge center,
  eks-configure-user-data-for-node-groups).
- EKS Auto Mode: its NodeClass takes role, subnets, security groups and ephemeralStorage (size,
  IOPS, throughput, KMS key), no user data, snapshotter or snapshot (EKS user guide
  automode/create-node-class.adoc, "Node Class Specification").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from components.aws.model.amis import RELEASES, AmiFamily
from components.aws.model.config import AwsPoolOptions
from components.model.problems import Problem

FAST_IMAGE_PULL_KEY: Final = "aws.fastImagePull"
SNAPSHOT_KEY: Final = "aws.dataVolumeSnapshot"
DATA_VOLUME_DEVICE: Final = "/dev/xvdb"
SNAPSHOT_ID: Final = re.compile(r"snap-(?:[0-9a-f]{8}|[0-9a-f]{17})")
NODEADM_GATE: Final = "FastImagePull"
# Bottlerocket settings tables, as bottlerocket.dev documents them.
BOTTLEROCKET_SETTINGS: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {
        "settings.container-runtime": {"snapshotter": "soci"},
        "settings.container-runtime-plugins.soci-snapshotter": {
            "pull-mode": "parallel-pull-unpack"
        },
    }
)


@dataclass(frozen=True)
class FastPullFacts:
    """How an image family pulls in parallel, since which release, and gpufleet's default."""

    how: str
    since: str
    default_on: bool
    why: str


FAST_PULL: Final[Mapping[AmiFamily, FastPullFacts]] = MappingProxyType(
    {
        "al2023": FastPullFacts(
            how="nodeadm featureGates.FastImagePull",
            since="v20250813",
            default_on=False,
            why=(
                "nodeadm's FastImagePull gate is experimental and off by default in "
                "amazon-eks-ami, which recommends a root volume of at least 600 MiB/s "
                "(gpufleet's gp3 has 125) and warns that pulls may be slower below it"
            ),
        ),
        "bottlerocket": FastPullFacts(
            how="settings.container-runtime.snapshotter soci, pull-mode parallel-pull-unpack",
            since="1.44.0",
            default_on=False,
            why=(
                "untuned soci parallel pull is bound by the disk: soci and amazon-eks-ami "
                "recommend at least 600 MiB/s and warn that pulls may be slower below it "
                "(gpufleet's gp3 has 125), and the pinned Bottlerocket's containerd 2.1 already "
                "downloads layers in parallel chunks (review eks-5 E5-1)"
            ),
        ),
    }
)


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", release))


def pinned_release_has_it(family: AmiFamily) -> bool:
    """Whether gpufleet's pinned image release of `family` has SOCI parallel pull."""
    return _release_key(RELEASES[family]) >= _release_key(FAST_PULL[family].since)


@dataclass(frozen=True)
class EksImageStart:
    """What one pool's nodes do to start images fast: SOCI parallel pull, and (Bottlerocket) a
    data volume from a snapshot. `family` is None on EKS Auto Mode (AWS's image, none of it)."""

    family: AmiFamily | None
    fast_image_pull: bool
    data_volume_snapshot: str | None
    # Why fast image pull is on or off (docs and plan say it).
    reason: str

    def nodeadm_feature_gates(self) -> dict[str, bool]:
        return {NODEADM_GATE: True} if self.fast_image_pull and self.family == "al2023" else {}

    def bottlerocket_settings(self) -> Mapping[str, Mapping[str, str]]:
        on = self.fast_image_pull and self.family == "bottlerocket"
        return BOTTLEROCKET_SETTINGS if on else {}

    @property
    def adds_user_data(self) -> bool:
        """Whether the nodes need user data beyond what their provisioner writes."""
        return bool(self.nodeadm_feature_gates() or self.bottlerocket_settings())


OFF: Final = EksImageStart(None, False, None, "EKS Auto Mode pulls images its own way")


def image_start(
    family: AmiFamily, options: AwsPoolOptions, *, cloud_image: bool, rolls_nodes: bool
) -> EksImageStart:
    """The pool's image start. Unset, fast image pull follows the family's default, except where
    a new launch template rolls the running nodes (managed node groups: upgrading gpufleet must
    not) or a data volume snapshot's images would be dropped by the snapshotter change."""
    if cloud_image:
        return OFF
    snapshot = options.data_volume_snapshot
    facts = FAST_PULL[family]
    if options.fast_image_pull is not None:
        reason = f"{FAST_IMAGE_PULL_KEY} is {str(options.fast_image_pull).lower()}"
        return EksImageStart(family, options.fast_image_pull, snapshot, reason)
    if not pinned_release_has_it(family):
        reason = f"the pinned {family} release {RELEASES[family]} predates it ({facts.since})"
    elif not facts.default_on:
        reason = facts.why
    elif rolls_nodes:
        reason = "turning it on rolls a managed node group's nodes; set it to opt in"
    elif snapshot:
        reason = "the data volume snapshot's images would be dropped at first boot"
    else:
        return EksImageStart(family, True, snapshot, facts.why)
    return EksImageStart(family, False, snapshot, reason)


def problems(
    family: AmiFamily,
    options: AwsPoolOptions,
    *,
    cloud_image: bool,
    disk_size_gb: int,
    path: str,
    warnings: list[str],
) -> list[Problem]:
    """The keys' values, what the pool's image and kind can take, and what is not checked."""
    found: list[Problem] = []
    pull, snapshot = options.fast_image_pull, options.data_volume_snapshot
    if cloud_image:
        for key, value in ((FAST_IMAGE_PULL_KEY, pull), (SNAPSHOT_KEY, snapshot)):
            if value is not None:
                found.append(
                    Problem(
                        f"{path}.{key}",
                        "EKS Auto Mode's NodeClass has no user data, snapshotter or volume "
                        "snapshot (role, subnets, security groups, ephemeralStorage only); "
                        "remove it, or use cluster.aws.provisioner karpenter or "
                        "cluster-autoscaler for this pool",
                        value,
                    )
                )
        return found
    if pull and not pinned_release_has_it(family):
        found.append(
            Problem(
                f"{path}.{FAST_IMAGE_PULL_KEY}",
                f"gpufleet's pinned {family} release {RELEASES[family]} predates SOCI parallel "
                f"pull ({FAST_PULL[family].since}); remove it",
                pull,
            )
        )
    if pull and family == "al2023":
        warnings.append(
            f"{path}.{FAST_IMAGE_PULL_KEY}: AL2023's FastImagePull is experimental; nodeadm "
            "ignores it below 4 vCPU or 7 GiB, and amazon-eks-ami recommends a root volume of "
            "at least 600 MiB/s, which gpufleet's gp3 (125 MiB/s) is not: pulls may be slower"
        )
    if snapshot is None:
        return found
    if not SNAPSHOT_ID.fullmatch(snapshot):
        found.append(
            Problem(
                f"{path}.{SNAPSHOT_KEY}",
                "is an EBS snapshot id: snap- and 8 or 17 lower-case hexadecimal digits "
                "(`aws ec2 describe-snapshots --owner-ids self`)",
                snapshot,
            )
        )
    if family != "bottlerocket":
        found.append(
            Problem(
                f"{path}.{SNAPSHOT_KEY}",
                "a data volume with preloaded images is Bottlerocket's (/dev/xvdb); AL2023 "
                "keeps images on its root volume: set aws.amiFamily: bottlerocket, or remove "
                "it (AL2023 may opt in to aws.fastImagePull, docs/eks.md)",
                snapshot,
            )
        )
        return found
    warnings.append(
        f"{path}.{SNAPSHOT_KEY}: not checked: {snapshot} must exist in the stack's region, be "
        f"shared with the account, hold no more than diskSizeGb ({disk_size_gb} GiB), and, "
        "when encrypted with a customer managed KMS key, be usable by the nodes' launcher"
    )
    if pull:
        warnings.append(
            f"{path}.{FAST_IMAGE_PULL_KEY}: not checked: the snapshot must have been built on "
            "a node whose snapshotter was soci; Bottlerocket removes the images of another "
            "snapshotter at first boot (bottlerocket-images-cache builds with the default one)"
        )
    return found
