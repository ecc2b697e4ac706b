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
