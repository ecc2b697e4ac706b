"""What AKS's API server adds to a pod (`Cloud.extended_resource_toleration`).

The plugin tolerates a taint keyed by the requested resource (`nvidia.com/gpu`), not AKS's own
`sku=gpu`, which a GPU pod on AKS still lists.
"""

from components.model.admission import ExtendedResourceToleration

EXTENDED_RESOURCE_TOLERATION = ExtendedResourceToleration(
    True,
    "AKS runs ExtendedResourceToleration among its admission controllers, which users cannot "
    'change (learn.microsoft.com/azure/aks/faq, "What Kubernetes admission controllers does AKS '
    'support?"; Azure/AKS#1449)',
)
