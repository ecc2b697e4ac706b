"""ProvisioningRequest classes: what an autoscaler does with the request Kueue's admission check
makes for a queued Job, as data with sources.

A class is named by the autoscaler that serves it; a cloud says which one its queued pools use
(`PoolKind.provisioning_class`). `fit` reads the behaviour from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final


@dataclass(frozen=True)
class ProvisioningClass:
    name: str
    # Whether the autoscaler adds nodes for the request (False: it only checks what is there).
    provisions: bool
    # Whether the pool's nodes come only through requests of this class: a pod that was not
    # admitted through the queue never gets a node of it.
    only_requested: bool
    # What the autoscaler does, read after "the autoscaler ".
    says: str
    source: str


_CA_FAQ = (
    "kubernetes/autoscaler cluster-autoscaler/FAQ.md 'Supported ProvisioningClasses' and "
    "apis/provisioningrequest/autoscaling.x-k8s.io/v1/types.go (ProvisioningClassCheckCapacity, "
    "ProvisioningClassBestEffortAtomicScaleUp), read at commit 55c37cd5 (2026-08-22)"
)

CHECK_CAPACITY = ProvisioningClass(
    "check-capacity.autoscaling.x-k8s.io",
    provisions=False,
    only_requested=False,
    says=(
        "checks whether the nodes the cluster has can take every pod of the Job and books "
        "them for 10 minutes; it adds no node"
    ),
    source=_CA_FAQ,
)
BEST_EFFORT_ATOMIC = ProvisioningClass(
    "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
    provisions=True,
    only_requested=False,
    says=(
        "scales the pool up by all the nodes the Job needs in one step, or not at all; the "
        "atomicity is the cloud provider's AtomicIncreaseSize (not implemented for AWS auto "
        "scaling groups and GCE MIGs, where the scale-up is attempted whole but not "
        "guaranteed); needs cluster-autoscaler 1.30.2+ with --enable-provisioning-requests=true"
    ),
    source=_CA_FAQ + "; cloudprovider/aws/aws_cloud_provider.go and gce/gce_cloud_provider.go "
    "AtomicIncreaseSize return ErrNotImplemented, azure/azure_scale_set.go implements it",
)
GKE_QUEUED = ProvisioningClass(
    "queued-provisioning.gke.io",
    provisions=True,
    only_requested=True,
    says=(
        "(GKE's Dynamic Workload Scheduler) obtains every node the Job needs at once, when the "
        "capacity is there, on a node pool with queued provisioning; that pool takes no other pods"
    ),
    source=(
        "GKE API v1 NodePool.QueuedProvisioning.enabled ('nodes can be only obtained through "
        "queuing via the Cluster Autoscaler ProvisioningRequest API'); GKE docs, "
        "how-to/provisioningrequest; kueue site/content/en/docs/concepts/admission_check/"
        "provisioning_request.md (v0.19.2)"
    ),
)

PROVISIONING_CLASSES: Final[Mapping[str, ProvisioningClass]] = MappingProxyType(
    {c.name: c for c in (CHECK_CAPACITY, BEST_EFFORT_ATOMIC, GKE_QUEUED)}
)
