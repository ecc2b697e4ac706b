"""What a cluster's API server adds to a pod before the scheduler sees it, as `fit` must judge it.

The ExtendedResourceToleration admission plugin (kubernetes plugin/pkg/admission/
extendedresourcetoleration) adds a toleration `<resource> Exists NoSchedule` for every extended
resource (such as `nvidia.com/gpu`) that a container or init container of the pod requests. So
a GPU pod tolerates a node taint keyed by that resource without listing it, where the plugin
runs. kube-apiserver does not enable it by default; a managed cloud says whether its control
plane runs it. Each cloud states it, with its source, in its own folder
(`components/<cloud>/model/admission.py`, read through `Cloud.extended_resource_toleration`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExtendedResourceToleration:
    """Whether the cluster's API server runs the ExtendedResourceToleration plugin (None: not
    known, e.g. a cluster gpufleet did not create and whose distribution it is not told), and
    where that is documented."""

    runs: bool | None
    source: str


# A cluster gpufleet knows nothing about: kube-apiserver's default plugins do not include it.
NOT_KNOWN = ExtendedResourceToleration(
    None,
    "not known for this cluster: kube-apiserver does not enable ExtendedResourceToleration by "
    "default (--enable-admission-plugins); EKS, GKE and AKS run it",
)
