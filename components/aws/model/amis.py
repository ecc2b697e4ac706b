"""The GPU node images gpufleet pins on EKS: one reviewed release per image family.

A pinned release, not `recommended`/`latest`: those parameters move under a stack whenever AWS
publishes, so every preview could show a new launch template and a pool would mix AMIs (and
NVIDIA driver versions) without anyone deciding it (review eks.md S3-1). Bumping a release is a
commit here; `diff` then shows the image of every self-managed GPU pool changing.

Parameter paths (AWS publishes one per release as well as `recommended`):
- AL2023 NVIDIA: /aws/service/eks/optimized-ami/<minor>/amazon-linux-2023/x86_64/nvidia/
  amazon-eks-node-al2023-x86_64-nvidia-<minor>-<release>/image_id (the AMI name is the segment
  before image_id). Source: AWS, "Retrieve recommended Amazon Linux AMI IDs"
  (docs.aws.amazon.com/eks/latest/userguide/retrieve-ami-id.html) for the recommended path;
  Karpenter's EC2NodeClass documentation, amiSelectorTerms `alias` (aws/karpenter-provider-aws,
  website/content/en/docs/concepts/nodeclasses.md), for the per-release path, which Karpenter
  resolves pinned aliases through.
- Bottlerocket NVIDIA: /aws/service/bottlerocket/aws-k8s-<minor>-nvidia/x86_64/<version>/image_id
  with the bare release version, no "v" (same Karpenter documentation; Bottlerocket QUICKSTART,
  "Finding an AMI").

Releases, read 2026-11-24:
- AL2023 v20261023: awslabs/amazon-eks-ami release v20261023 ships
  amazon-eks-node-al2023-x86_64-nvidia-<minor> AMIs for Kubernetes 1.32 through 1.37 (see also
  components/aws/model/versions.py, row 1.37).
- Bottlerocket 1.66.0: bottlerocket-os/bottlerocket pull request 4946 (v1.66.0 release notes,
  merged 2026-09), which adds the aws-k8s-1.37(-nvidia) variants beside 1.32-1.36.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

AmiFamily = Literal["al2023", "bottlerocket"]

RELEASES: Mapping[AmiFamily, str] = {
    "al2023": "v20261023",
    "bottlerocket": "1.66.0",
}

_PARAMETERS: Mapping[AmiFamily, str] = {
    "al2023": (
        "/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/x86_64/nvidia/"
        "amazon-eks-node-al2023-x86_64-nvidia-{k8s}-{release}/image_id"
    ),
    "bottlerocket": "/aws/service/bottlerocket/aws-k8s-{k8s}-nvidia/x86_64/{release}/image_id",
}


def ami_parameter(family: AmiFamily, kubernetes_version: str) -> str:
    """The SSM parameter holding the pinned GPU image of `family` for the cluster's minor."""
    return _PARAMETERS[family].format(k8s=kubernetes_version, release=RELEASES[family])


# Managed node groups take the image from `amiType` and its release from `releaseVersion`
# (EKS API reference, CreateNodegroup: "By default, the latest available AMI version for the
# node group's current Kubernetes version is used"), so unpinned they take whatever AWS released
# last, at creation and at every version update (review eks-2.md S3-1). The pinned release's
# releaseVersion:
# - AL2023: `<Kubernetes patch>-<release date>`, e.g. 1.36.2-20260714 (awslabs/amazon-eks-ami
#   CHANGELOG.md, "Release version" column; awslabs/amazon-eks-ami#996). The patch is the AMI's
#   own: templates/al2023/variables-default.json describes every AMI as "..., (k8s: <version>,
#   containerd: ...)", so it is read from the pinned AMI's description (DescribeImages by name,
#   AMI names as in `_PARAMETERS`).
# - Bottlerocket: `<version>-<build>`, what SSM publishes as `image_version` next to each
#   release's `image_id` (aws/containers-roadmap#1945 shows latest/image_version "1.12.0-6ef1139f";
#   terraform-aws-modules/eks eks-managed-node-group reads .../latest/image_version the same way).
AL2023_NAMES: Mapping[str, str] = {
    "nvidia": "amazon-eks-node-al2023-x86_64-nvidia-{k8s}-{release}",
    "standard": "amazon-eks-node-al2023-x86_64-standard-{k8s}-{release}",
}
_K8S_IN_DESCRIPTION = re.compile(r"\(k8s: (\d+\.\d+\.\d+)")


def al2023_ami_name(kubernetes_version: str, variant: str = "nvidia") -> str:
    return AL2023_NAMES[variant].format(k8s=kubernetes_version, release=RELEASES["al2023"])


def al2023_release_version(description: str) -> str:
    """The managed node group releaseVersion of the pinned AL2023 AMI with this description."""
    found = _K8S_IN_DESCRIPTION.search(description)
    if found is None:
        raise ValueError(f"no Kubernetes version in the AMI description {description!r}")
    return f"{found.group(1)}-{RELEASES['al2023'].removeprefix('v')}"


def bottlerocket_version_parameter(kubernetes_version: str) -> str:
    """The SSM parameter holding the pinned Bottlerocket NVIDIA release's `image_version`."""
    release = RELEASES["bottlerocket"]
    return f"/aws/service/bottlerocket/aws-k8s-{kubernetes_version}-nvidia/x86_64/{release}/image_version"
