"""What GKE's API server adds to a pod (`Cloud.extended_resource_toleration`)."""

from components.model.admission import ExtendedResourceToleration

EXTENDED_RESOURCE_TOLERATION = ExtendedResourceToleration(
    True,
    "GKE runs the ExtendedResourceToleration admission controller, which adds the toleration to "
    "pods requesting GPUs (cloud.google.com/kubernetes-engine/docs/how-to/gpus)",
)
