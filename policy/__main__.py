"""Serve gpufleet's policy pack to the Pulumi engine (`pulumi preview --policy-pack policy`)."""

from gpufleet_policy import PACK_NAME, POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(
    name=PACK_NAME,
    policies=POLICIES,
    enforcement_level=EnforcementLevel.MANDATORY,
    description="GPU pools scale to zero and are tainted, the EKS autoscaler sees them at zero, "
    "IMDSv2 with one hop and encrypted disks, least-privilege IAM, pinned IRSA trusts and scoped "
    "PassRole, encrypted EKS secrets, private nodes, the GKE metadata server, pinned charts, "
    "protected production clusters closed to the internet, a budget for the full-scale cost.",
)
