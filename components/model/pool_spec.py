"""A resolved pool: what every node of a pool will look like, known before deploying.

A `PoolSpec` is computed from config and catalog alone (no cloud calls) by the pool's cloud, so
the `gpuPools` stack output, `fit`, the device plugin's placement and the sample workloads all
derive from this one place. Components read the `declared_*` fields to register labels and
taints; `node_labels`/`node_taints` add what the cloud and Kubernetes put on nodes themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal

from components.model.capacity import ON_DEMAND, CapacityOrder, PoolQueue, ReservationCap
from components.model.fabric import PoolFabric
from components.model.labels import ACCELERATOR_LABEL, POOL_LABEL

# gpufleet's NVIDIA device plugin config of a shared pool (components/kubernetes/plugin_config.py)
# sets `failRequestsGreaterThanOne`: the plugin then fails, at Allocate, a container asking for
# more than one shared GPU ("maximum request size for shared resources is 1": NVIDIA/
# k8s-device-plugin internal/rm/rm.go ValidateRequest at 1b826ac, time-slicing and MPS), after
# kube-scheduler placed the pod. NVIDIA's README recommends it ("NVIDIA recommends setting
# failRequestsGreaterThanOne=true").
PLUGIN_FAILS_REQUESTS_GREATER_THAN_ONE: Final = True

# The pod annotation that keeps a running job's node from being drained to consolidate the
# cluster. The cluster autoscaler never removes a node running a pod with `safe-to-evict:
# "false"`, whatever its profile (kubernetes/autoscaler cluster-autoscaler/FAQ.md, "What types
# of pods can prevent CA from removing a node?"), which matters most under GKE's
# OPTIMIZE_UTILIZATION (review gke-2.md N4); Karpenter (and the clouds' managed Karpenters)
# never voluntarily disrupts a node running a pod with `do-not-disrupt`
# (kubernetes-sigs/karpenter pkg/apis/v1/labels.go DoNotDisruptAnnotationKey).
SAFE_TO_EVICT: Mapping[str, str] = MappingProxyType(
    {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}
)
DO_NOT_DISRUPT: Mapping[str, str] = MappingProxyType({"karpenter.sh/do-not-disrupt": "true"})


@dataclass(frozen=True, order=True)
class Taint:
    key: str
    value: str
    effect: str

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "value": self.value, "effect": self.effect}

    def toleration(self) -> dict[str, str]:
        if self.value:
            return {
                "key": self.key,
                "operator": "Equal",
                "value": self.value,
                "effect": self.effect,
            }
        return {"key": self.key, "operator": "Exists", "effect": self.effect}

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}"


@dataclass(frozen=True)
class PoolSpec:
    """Everything about one pool that is known before deploying."""

    name: str
    cloud: str
    kind: Literal["gpu", "system"]
    accelerator: str  # portable GPU model ("" for the system pool)
    machine_types: tuple[str, ...]
    gpus_per_node: int
    gpu_resource: str
    # GPU resources (counts) and, where the cloud's reservations are known, the node's cpu,
    # memory, ephemeral-storage and pods as Kubernetes quantities (`components.model.allocatable`).
    allocatable_per_node: Mapping[str, int | str]
    min_nodes: int
    max_nodes: int
    spot: bool
    zones: tuple[str, ...]
    # Labels and taints gpufleet registers on the pool (through the cloud API or kubelet flags).
    declared_labels: Mapping[str, str]
    declared_taints: tuple[Taint, ...]
    # Every label with one value on all nodes, and labels whose value varies per node.
    node_labels: Mapping[str, str]
    label_choices: Mapping[str, tuple[str, ...]]
    node_taints: tuple[Taint, ...]
    vcpus: int
    memory_gib: float
    # How sharing and MIG are delivered: by the cloud, NVIDIA's device plugin/operator, or not.
    sharing_strategy: str | None = None
    max_shared_clients_per_gpu: int | None = None
    mig_partition_size: str | None = None
    sharing_via: Literal["cloud", "nvidia", "none"] = "none"
    # What the cluster autoscaler knows of the pool at zero nodes; None = it cannot see it.
    autoscaler_labels: Mapping[str, str] | None = None
    autoscaler_taints: tuple[Taint, ...] = ()
    autoscaler_resources: Mapping[str, int] = field(default_factory=dict)
    # What scales the pool from zero (in fit's messages).
    provisioner: str = "the cluster autoscaler"
    # Pod annotations that keep a running job's node from being consolidated away (set from
    # the pool's kind, `PoolTraits.keep_running_annotations`).
    keep_running_annotations: Mapping[str, str] = field(default_factory=lambda: SAFE_TO_EVICT)
    # Whether the API server tolerates the taint of a requested extended resource for the pod
    # (ExtendedResourceToleration; None: not known for this cluster).
    extended_resource_toleration: bool | None = False
    disk_size_gb: int = 100
    # The node labels a pod selects this pool by (its podScheduling nodeSelector).
    selector_keys: tuple[str, ...] = (POOL_LABEL,)
    # Environment a CUDA container needs on these nodes (where the cloud mounts its driver).
    container_env: Mapping[str, str] = field(default_factory=dict)
    # The node's device plugin fails a container asking for more than one shared GPU.
    one_shared_gpu_per_container: bool = False
    # Node label whose value names the GPU model, and the one naming a MIG partition size.
    accelerator_label: str = ACCELERATOR_LABEL
    partition_label: str | None = None
    # Where the cluster autoscaler's picture of the pool at zero comes from: the pool's own
    # API object (PoolSpec's autoscaler_* fields), the auto scaling groups' node-template tags
    # in the planned graph, or an autoscaler gpufleet does not manage.
    scale_from_zero: Literal["pool", "node-template-tags", "unmanaged"] = "pool"
    # The node image runs its own device plugin (a second one from us would conflict).
    own_device_plugin: bool = False
    # Where the provisioner picks one of machine_types per pending pod (Karpenter): the largest,
    # whose cpu, memory and allocatable these are (a pod that fits nothing smaller gets it).
    sized_by: str | None = None
    # The DaemonSet pods whose requests `allocatable_per_node` has already taken off.
    daemonsets: tuple[str, ...] = ()
    # What of `allocatable_per_node` is an estimate rather than the cloud's documented figure.
    allocatable_notes: tuple[str, ...] = ()
    # Pod-level fields a GPU pod on this pool must set (GKE MPS: hostIPC).
    pod_settings: Mapping[str, Any] = field(default_factory=dict)
    # How the pool gets nodes (`gpuPools[].capacity`, or what `spot` says), in fallback order.
    capacity: CapacityOrder = ON_DEMAND
    # A queued pool's Kueue queue (None: pods schedule as they come).
    queue: PoolQueue | None = None
    # The most nodes a reservation gives the pool, where the cloud knows it (None: no cap).
    reservation_cap: ReservationCap | None = None
    # The most nodes one zone of the pool can hold, where the autoscaler splits maxNodes over
    # per-zone groups (None: any one zone can hold all maxNodes).
    zone_max_nodes: int | None = None
    # The pool's GPU network fabric (`gpuPools[].interconnect: fabric`; None: default network).
    fabric: PoolFabric | None = None

    @property
    def extended_resources(self) -> dict[str, int]:
        """The counted resources of a node (GPUs, MIG slices), without cpu/memory/pods."""
        return {k: v for k, v in self.allocatable_per_node.items() if isinstance(v, int)}

    @property
    def ephemeral_storage(self) -> str:
        """The node's allocatable ephemeral storage, else its whole disk, as a quantity."""
        return str(self.allocatable_per_node.get("ephemeral-storage", f"{self.disk_size_gb}Gi"))

    @property
    def gpus_allocatable(self) -> int:
        """What one node advertises of the pool's GPU resource (after sharing or MIG)."""
        return self.extended_resources.get(self.gpu_resource, 0)

    @property
    def pod_scheduling(self) -> dict[str, Any]:
        """What a pod needs to land on this pool: selector, tolerations, one GPU."""
        selector = {k: self.node_labels[k] for k in self.selector_keys if k in self.node_labels}
        scheduling: dict[str, Any] = {
            "nodeSelector": selector,
            "tolerations": [t.toleration() for t in self.node_taints],
        }
        scheduling.update(self.pod_settings)
        if self.kind == "gpu":
            scheduling["resources"] = {"limits": {self.gpu_resource: 1}}
        else:
            scheduling["resources"] = {}
        return scheduling

    def to_output(self) -> dict[str, Any]:
        """The `gpuPools` stack output entry: exactly the documented keys."""
        return {
            "name": self.name,
            "cloud": self.cloud,
            "accelerator": self.accelerator,
            "machineTypes": list(self.machine_types),
            "gpusPerNode": self.gpus_per_node,
            "gpuResource": self.gpu_resource,
            "allocatablePerNode": dict(sorted(self.allocatable_per_node.items())),
            "minNodes": self.min_nodes,
            "maxNodes": self.max_nodes,
            "spot": self.spot,
            "zones": list(self.zones),
            "nodeLabels": dict(sorted(self.node_labels.items())),
            "nodeTaints": [t.to_dict() for t in self.node_taints],
            "podScheduling": self.pod_scheduling,
            "interconnect": "none" if self.fabric is None else "fabric",
            **({} if self.fabric is None else {"fabric": fabric_output(self.fabric)}),
        }


def fabric_output(fabric: PoolFabric) -> dict[str, Any]:
    """A fabric pool's `gpuPools[].fabric` output: what runs it, and where it is placed."""
    return {
        "kind": fabric.facts.kind,
        "interfaces": fabric.facts.interfaces,
        "bandwidthGbps": fabric.facts.bandwidth_gbps,
        "resource": fabric.resource,
        "zone": fabric.zone,
        "placement": fabric.placement,
        "placementMaxNodes": fabric.placement_max_nodes,
    }
