"""What EKS refuses about a minor its calendar still creates, for this stack's settings.

- Extended support is bought per cluster with `upgradePolicy.supportType` (gpufleet's
  `cluster.aws.supportType`, default STANDARD). AWS: "If your upgrade policy is STANDARD, it will
  be automatically upgraded" at the end of standard support
  (https://docs.aws.amazon.com/eks/latest/userguide/view-upgrade-policy.html), so a minor past
  standard support with STANDARD is a cluster EKS upgrades under the GPU pools at once.
- Where gpufleet runs the cluster autoscaler itself (`provisioner: cluster-autoscaler` without
  `cluster.existing.autoscalerInstalled`), "CA minor version must match the Kubernetes minor"
  (FACTS.md, CA flags; cluster-autoscaler README, "Releases"): a minor with no pinned
  cluster-autoscaler release cannot be planned. Karpenter and Auto Mode stacks run no autoscaler
  of gpufleet's and are not held to it (review eks-3.md R3-5); Karpenter's own matrix is checked
  in provisioners.py.
"""

from __future__ import annotations

from datetime import timedelta

from components.aws.model import config as aws_config
from components.aws.model import kinds
from components.aws.model.config import existing_options
from components.model.catalog import charts
from components.model.lifecycle import Assessment
from components.model.problems import Problem
from components.model.schema import ClusterConfig


def version_problems(
    cluster: ClusterConfig, verdict: Assessment, adopted: bool = False
) -> list[Problem]:
    """`adopted`: the cluster exists and its support type is its owner's (not refused here)."""
    problems = []
    minor = cluster.kubernetes_version
    support_type = aws_config.cluster_options(cluster).support_type
    if verdict.status == "extended" and support_type == "STANDARD" and not adopted:
        problems.append(
            Problem(
                "cluster.kubernetesVersion",
                f"is past EKS standard support, and with cluster.aws.supportType STANDARD EKS "
                f"upgrades such a cluster automatically; choose a minor in standard support, or "
                f"set cluster.aws.supportType: EXTENDED to pay for extended support. "
                f"{verdict.message}",
                minor,
            )
        )
    if runs_autoscaler(cluster) and minor not in charts.CLUSTER_AUTOSCALER_IMAGE_TAGS:
        pinned = ", ".join(charts.CLUSTER_AUTOSCALER_IMAGE_TAGS)
        problems.append(
            Problem(
                "cluster.kubernetesVersion",
                "gpufleet pins no cluster-autoscaler release for this minor (the autoscaler's "
                f"minor must match the cluster's); minors with a pinned autoscaler: {pinned}",
                minor,
            )
        )
    return problems


def runs_autoscaler(cluster: ClusterConfig) -> bool:
    """Whether gpufleet installs the cluster autoscaler on this cluster."""
    installed = existing_options(cluster).autoscaler_installed
    return not kinds.cluster_kind(cluster).node_pools and not installed


def version_advice(cluster: ClusterConfig, verdict: Assessment, adopted: bool = False) -> str:
    """Standard support ending soon with supportType STANDARD: EKS upgrades the control plane
    itself when it ends, and a stack that still names the old minor then asks EKS for a
    downgrade, which UpdateClusterVersion refuses (review eks-2.md N13). Bump the stack first."""
    support_type = aws_config.cluster_options(cluster).support_type
    if adopted or verdict.status != "ending-soon" or support_type != "STANDARD" or not verdict.row:
        return ""
    major, minor = cluster.kubernetes_version.split(".")[:2]
    ends = verdict.row.end_of_standard + timedelta(days=1)
    return (
        f"With cluster.aws.supportType STANDARD, EKS upgrades this cluster's control plane to "
        f"{major}.{int(minor) + 1} itself from {ends}: bump cluster.kubernetesVersion to "
        f"{major}.{int(minor) + 1} and run `pulumi up` before then (after it, this stack would "
        "ask EKS to go back to the old minor, which EKS refuses); or set supportType: EXTENDED "
        "to keep the minor, at extended-support prices."
    )
