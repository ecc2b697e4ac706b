"""What `plan`'s tree shows of the shared Kubernetes types: the input properties worth seeing at a
glance (dotted camelCase paths). Each cloud's types are in its resource knowledge
(`components/<cloud>/model/resources.py`); `resource_index` merges both, refusing a type twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

# A Karpenter NodePool (karpenter.sh, any cloud's Karpenter) shows what a node pool or group
# does: its machines and capacity types (the requirements), GPU limit, taints, and how it
# disrupts.
KUBERNETES_HIGHLIGHTS: Final[Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {
        "kubernetes:helm.sh/v3:Release": ("chart", "version", "namespace"),
        "kubernetes:batch/v1:Job": ("metadata.name", "metadata.namespace"),
        "kubernetes:apps/v1:Deployment": ("metadata.name", "spec.replicas"),
        "kubernetes:karpenter.sh/v1:NodePool": (
            "metadata.name",
            "spec.template.spec.requirements",
            "spec.limits",
            "spec.template.spec.taints",
            "spec.template.spec.expireAfter",
            "spec.disruption.consolidationPolicy",
        ),
        "kubernetes:karpenter.sh/v1alpha1:NodeOverlay": ("metadata.name", "spec.capacity"),
    }
)
