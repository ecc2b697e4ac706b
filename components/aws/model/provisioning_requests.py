"""All-or-nothing scale-up on EKS: the cluster autoscaler's ProvisioningRequest support, as data
with sources. A queued pool (`capacity: queued`) on EKS runs under gpufleet's cluster
autoscaler, which Kueue's admission check asks for every node of a Job at once (class
best-effort-atomic-scale-up.autoscaling.x-k8s.io, `components/model/catalog/provisioning.py`).

What it takes (kubernetes/autoscaler cluster-autoscaler/FAQ.md, "Enabling ProvisioningRequest
Support", and the sources named below, read at the release tags gpufleet pins):

- the flag `--enable-provisioning-requests=true` (main.go or config/flags/flags.go
  `provisioningRequestsEnabled`, default false, at every pinned release), rendered by the chart
  from `extraArgs` (templates/deployment.yaml: `--<key>=<value>`);
- the ProvisioningRequest CRD (autoscaling.x-k8s.io, v1 served and stored), which chart 9.59.0
  does not ship (no crds/ and no CRD template): gpufleet applies the release's own file,
  pinned by the release's commit, so it moves with the autoscaler's image;
- RBAC: the chart's ClusterRole (templates/clusterrole.yaml at cluster-autoscaler-chart-9.59.0)
  grants provisioningrequests and their status get, list, watch, update and patch, and
  podtemplates get, list, watch, create, update and patch, but not delete, which the autoscaler
  uses to remove ProvisioningRequests a week after they succeed or fail
  (processors/provreq/processor.go DeleteOldProvReqs, at every pinned release); the FAQ's role
  grants it, and gpufleet adds it (`rbac.additionalRules`).

Kueue sets its ProvisioningRequest admission check up only if the API server serves the CRD
when Kueue starts (kubernetes-sigs/kueue v0.19.2 cmd/kueue/main.go: "Skipping admission check
controller setup: Provisioning Requests not supported"), so Kueue waits for the CRD.

The best-effort-atomic class scales one node group and its similar groups (the pool's per-zone
groups share gpufleet's balancing label, unless the pool sets aws.maxNodesPerZone: then one
group, in one zone) by every node at once or not at all
(core/scaleup/orchestrator/orchestrator.go ScaleUp with allOrNothing; the estimate counts the
similar groups); AWS auto scaling groups do not implement AtomicIncreaseSize, so the scale-up
is requested whole but EC2 may still deliver part of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

FLAG = "enable-provisioning-requests"
# The commit of each cluster-autoscaler release gpufleet pins (the image tags of
# components/model/catalog/charts.py CLUSTER_AUTOSCALER_IMAGE_TAGS), read from the
# kubernetes/autoscaler tags cluster-autoscaler-<version>.
RELEASE_COMMITS: Final[Mapping[str, str]] = {
    "v1.32.7": "f645beb1ec472b785e5c196b3768c0d93195a75a",
    "v1.33.6": "be4b5a18814a53539d0fe6299c92839152cae54c",
    "v1.34.5": "cb2123ed13148c38fbdb1ede42d8e99761ee2909",
    "v1.35.2": "2d42588803c71fe9b35dcd9e3669ac6bb550ca22",
    "v1.36.1": "35e8a280425c76a4040f57ae0fa232a952c02024",
}
CRD_PATH = "cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml"
CRD_NAME = "provisioningrequests.autoscaling.x-k8s.io"
# What the chart's ClusterRole lacks (see the module).
RBAC_RULES: Final[tuple[Mapping[str, Any], ...]] = (
    {
        "apiGroups": ["autoscaling.x-k8s.io"],
        "resources": ["provisioningrequests"],
        "verbs": ["delete"],
    },
)


def crd_url(image_tag: str) -> str:
    """The ProvisioningRequest CRD of the autoscaler release `image_tag`, pinned by commit."""
    return (
        "https://raw.githubusercontent.com/kubernetes/autoscaler/"
        f"{RELEASE_COMMITS[image_tag]}/{CRD_PATH}"
    )


def helm_values() -> dict[str, Any]:
    """The chart values that turn ProvisioningRequest support on (merged into gpufleet's)."""
    return {
        "extraArgs": {FLAG: True},
        "rbac": {"additionalRules": [dict(rule) for rule in RBAC_RULES]},
    }
