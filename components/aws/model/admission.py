"""What EKS's API server adds to a pod (`Cloud.extended_resource_toleration`)."""

from components.model.admission import ExtendedResourceToleration

EXTENDED_RESOURCE_TOLERATION = ExtendedResourceToleration(
    True,
    "every EKS platform version enables the ExtendedResourceToleration admission controller "
    "(docs.aws.amazon.com/eks/latest/userguide/platform-versions.html; since Kubernetes 1.19, "
    "aws/containers-roadmap#739)",
)
