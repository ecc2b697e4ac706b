"""Why each of gpufleet's components exists: `diff` says it when a component comes or goes with
everything under it, so a reviewer sees one cause instead of a list of resources.

Keyed by the component's type token (``gpufleet:<cloud>:<Kind>``); the sentence is read after
"exists while" / "built while". Each cloud keeps its components' roles in its folder
(``components/<cloud>/model/resources.py``); the shared Kubernetes components' are here.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

KUBERNETES_COMPONENT_ROLES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "gpufleet:kubernetes:ExistingCluster": "`cloud` is existing (a cluster from a kubeconfig)",
        "gpufleet:kubernetes:GpuSoftware": (
            "`gpuSoftware.mode` installs software (device plugin or GPU Operator, DCGM exporter)"
        ),
        "gpufleet:kubernetes:Samples": "`samples.enabled` is true",
        "gpufleet:kubernetes:Kueue": (
            "a GPU pool has `capacity: queued` (Kueue admits its Jobs whole, once the autoscaler "
            "can provision every node at once); it goes with the last such pool"
        ),
    }
)
