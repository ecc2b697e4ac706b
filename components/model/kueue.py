"""Kueue for queued pools (`capacity: queued`) and pools of paid capacity (`queues.pools`): the
pinned chart and, per pool, its objects.

A queued pool's Jobs wait in a Kueue queue; Kueue reserves quota for a whole Job, then its
ProvisioningRequest admission check asks the autoscaler for every node the Job needs at once
(the class is the pool kind's, `PoolKind.provisioning_class`), and only then lets the Job's pods be
created. Per queued pool gpufleet declares:

- a ResourceFlavor: the pool's nodes (the labels a pod selects it by, its taints), with
  tolerations Kueue adds to the pods it admits;
- a ClusterQueue: quota for the whole pool (maxNodes x a node's allocatable GPUs, cpu, memory
  and ephemeral storage), open to the `queues.namespaces` only, behind the admission check;
- a LocalQueue named after the pool in each of those namespaces (what a Job's
  `kueue.x-k8s.io/queue-name` label names);
- an AdmissionCheck of Kueue's ProvisioningRequest controller with its
  ProvisioningRequestConfig (the cloud's class; only GPU-requesting pod sets are sent).

A pool `queues.pools` names (a reservation, Capacity Block or flex-start pool, or an on-demand
pool to borrow from) gets the same flavor, ClusterQueue and LocalQueues, without the admission
check: its nodes come as the autoscaler adds them. Its quota is the reservation's size when every
node comes from it (`ReservationCap.nodes` x a node's resources, at most maxNodes), else
maxNodes. With `borrowFrom`, its ClusterQueue and the lender's join one cohort (`cohortName`,
v1beta2; `cohort` in v1beta1) and its resource group lists the lender's flavor second with no
quota of its own: Kueue tries flavors in order, so a Job takes the reservation while it has
quota, else borrows the lender's unused quota and runs on the lender's nodes, whole (a pod set
gets one flavor). Reclaim stays Kueue's default (`reclaimWithinCohort: Never`): the lender's own
Jobs wait for borrowed ones to finish rather than preempt running training
(site/content/en/docs/concepts/cluster_queue.md, "Cohort", "Borrowing", "Preemption").

Facts: kubernetes-sigs/kueue v0.19.2 (commit 8eab68778fc1b52affe165fdf5af29d1e9b4f3cb):
charts/kueue (values.yaml, templates/crd; tests/data/kueue_facts.json holds the structural
schemas), site/content/en/docs/concepts/admission_check/provisioning_request.md,
pkg/scheduler/flavorassigner (a resource the ClusterQueue does not cover blocks admission under
the default quotaCheckStrategy BlockUndeclared), apis/config/v1beta2/configuration_types.go.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import yaml

from components.model.capacity import RESERVATIONS, CapacityOrder, PoolQueue, ReservationCap
from components.model.catalog.charts import ChartPin
from components.model.pool_spec import PoolSpec
from components.model.registry import all_machine_types
from components.model.schema import GpuPoolConfig

VERSION = "0.19.2"
SOURCE_COMMIT = "8eab68778fc1b52affe165fdf5af29d1e9b4f3cb"
# The chart as the Kueue installation guide installs it (promoted from staging on release).
PIN = ChartPin("kueue", VERSION, "oci://registry.k8s.io/kueue/charts", "kueue-system")
RELEASE = "kueue"
# hack/helm-chart-package.sh sets these in the published chart; gpufleet sets them explicitly
# (the values.yaml in git names a staging image on a branch tag).
IMAGE_REPOSITORY = "registry.k8s.io/kueue/kueue"
IMAGE_TAG = f"v{VERSION}"
# v1beta2 is the stored version in 0.19; v1beta1 is served but deprecated.
API_VERSION = "kueue.x-k8s.io/v1beta2"
API_GROUP = "kueue.x-k8s.io"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
# Cluster-scoped objects carry this prefix so they never take the name of one of the cluster's
# own (server-side apply would merge into it).
PREFIX = "gpufleet-"
# AdmissionCheck.spec.parameters.name: a DNS label of at most 63 characters (CRD schema).
MAX_OBJECT_NAME = 63
MAX_POOL_NAME = MAX_OBJECT_NAME - len(PREFIX)
# ResourceFlavor: at most 8 nodeLabels, nodeTaints and tolerations (CRD schema).
MAX_FLAVOR_ITEMS = 8
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
MANAGED_BY = {"app.kubernetes.io/managed-by": "gpufleet"}


def cluster_queue_name(pool: str) -> str:
    return f"{PREFIX}{pool}"


def cohort_name(lender: str) -> str:
    """The cohort a lending pool's ClusterQueue shares with those that borrow from it."""
    return f"{PREFIX}{lender}"


def quota_nodes(pool: GpuPoolConfig, order: CapacityOrder, cap: ReservationCap | None) -> int:
    """The nodes' worth of quota a pool's ClusterQueue holds: the reservation's size when every
    node comes from it (Kueue then never admits more than it holds), else maxNodes. Nodes of a
    Capacity Block that has ended (or drains today) are left out: Kueue assigns a Job the first
    flavor whose quota fits (whenCanBorrow MayStopSearch), so quota over an ended block would
    admit Jobs whose pods never get a node instead of letting them borrow."""
    if cap is not None and order and set(order) <= RESERVATIONS:
        return min(cap.live_nodes, pool.max_nodes)
    return pool.max_nodes


# The chart's default controller configuration (values.yaml managerConfig.
# controllerManagerConfigYaml, v0.19.2), which gpufleet sends whole with one key added: Helm
# replaces the string, it does not merge it (test_kueue compares it with the chart's).
CHART_MANAGER_CONFIG: dict[str, Any] = {
    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
    "kind": "Configuration",
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "controller": {
        "groupKindConcurrency": {
            "Job.batch": 5,
            "Pod": 5,
            "Workload.kueue.x-k8s.io": 10,
            "LocalQueue.kueue.x-k8s.io": 5,
            "ClusterQueue.kueue.x-k8s.io": 5,
            "ResourceFlavor.kueue.x-k8s.io": 1,
        }
    },
    "clientConnection": {"qps": 300, "burst": 500},
    "integrations": {
        "frameworks": [
            "batch/job",
            "kubeflow.org/mpijob",
            "ray.io/rayjob",
            "ray.io/rayservice",
            "ray.io/raycluster",
            "jobset.x-k8s.io/jobset",
            "workload.codeflare.dev/appwrapper",
            "trainer.kubeflow.org/trainjob",
            "pod",
            "deployment",
            "statefulset",
            "leaderworkerset.x-k8s.io/leaderworkerset",
        ]
    },
}
# Kueue refuses a managedJobsNamespaceSelector that selects these (pkg/config/validation.go
# validateManagedJobsNamespaceSelector: kube-system and its own namespace).
PROHIBITED_NAMESPACES = ("kube-system", PIN.namespace)
# Every cluster starts with these (kubernetes.io/docs/concepts/overview/working-with-objects/
# namespaces, "Initial namespaces"): a queue there needs no Namespace of gpufleet's.
INITIAL_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


def namespaces_to_create(namespaces: Sequence[str]) -> list[str]:
    """The queues' namespaces gpufleet ensures on a cluster it created: the API server refuses a
    LocalQueue in a namespace that does not exist (admission plugin NamespaceLifecycle). Only
    the cluster's first `up` knows none exists yet, so they are created through the adopting
    provider (components.kubernetes.cluster.KubernetesProviders). Each once, none the cluster
    starts with (gpufleet's own namespaces are refused as queue namespaces: queue_checks)."""
    return [ns for ns in dict.fromkeys(namespaces) if ns not in INITIAL_NAMESPACES]


def manager_config(namespaces: Sequence[str]) -> dict[str, Any]:
    """The chart's configuration, with Kueue's Jobs, Pods and the rest managed (and its
    webhooks, which refuse what they cannot reach, applied) in the queues' namespaces only:
    without it they cover every namespace but kube-system and Kueue's own, so a Kueue outage
    would stop Job and Pod creation across the cluster (charts/kueue templates/webhook/
    manifests.yaml: failurePolicy Fail, namespaceSelector from this key)."""
    return {
        **CHART_MANAGER_CONFIG,
        "managedJobsNamespaceSelector": {
            "matchExpressions": [
                {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": list(namespaces)}
            ]
        },
    }


def helm_values(node_selector: dict[str, str], namespaces: Sequence[str]) -> dict[str, Any]:
    """The chart's values: the released image, pinned, the controller on the CPU nodes, and
    the configuration confined to the queues' namespaces."""
    manager: dict[str, Any] = {
        "image": {
            "repository": IMAGE_REPOSITORY,
            "tag": IMAGE_TAG,
            "pullPolicy": "IfNotPresent",
        }
    }
    controller: dict[str, Any] = {"manager": manager}
    if node_selector:
        controller["nodeSelector"] = dict(node_selector)
    config = yaml.safe_dump(manager_config(namespaces), sort_keys=False)
    return {
        "controllerManager": controller,
        "managerConfig": {"controllerManagerConfigYaml": config},
    }


def _metadata(name: str, namespace: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": dict(MANAGED_BY)}
    if namespace is not None:
        metadata["namespace"] = namespace
    return metadata


def _queue(spec: PoolSpec) -> PoolQueue:
    if spec.queue is None:
        raise ValueError(f"pool {spec.name} is not queued")
    return spec.queue


def resource_flavor(spec: PoolSpec) -> dict[str, Any]:
    """The pool's nodes as a flavor: what pods select them by, and the taints they tolerate."""
    queue = _queue(spec)
    scheduling = spec.pod_scheduling
    taints = [t for t in spec.node_taints if t.effect in ("NoSchedule", "NoExecute")]
    flavor: dict[str, Any] = {"nodeLabels": dict(scheduling["nodeSelector"])}
    if taints:
        # The nodes' taints, and the tolerations Kueue adds to the pods it admits: with both,
        # the taints do not hold a Job back at admission (Kueue's ResourceFlavor API).
        flavor["nodeTaints"] = [t.to_dict() for t in taints]
        flavor["tolerations"] = [t.toleration() for t in taints]
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceFlavor",
        "metadata": _metadata(queue.cluster_queue),
        "spec": flavor,
    }


_QUANTITY = re.compile(r"(\d+)([A-Za-z]*)")


def times(quantity: str | int, count: int) -> str | int:
    """`count` nodes' worth of a quantity as allocatable lists it (`7910m`, `29853Mi`, 8)."""
    if isinstance(quantity, int):
        return quantity * count
    match = _QUANTITY.fullmatch(quantity)
    if match is None:
        raise ValueError(f"not a whole-number quantity: {quantity!r}")
    return f"{int(match.group(1)) * count}{match.group(2)}"


def node_resources(spec: PoolSpec) -> dict[str, str | int]:
    """One node's quota: its GPU resources, then cpu, memory and ephemeral storage.

    Allocatable where the cloud's reservations are known; on a cluster gpufleet did not create,
    the machine's size (an upper bound: the ProvisioningRequest check is what waits for nodes).
    """
    node: dict[str, str | int] = dict(sorted(spec.extended_resources.items()))
    allocatable = spec.allocatable_per_node
    if "cpu" in allocatable and "memory" in allocatable:
        node["cpu"] = str(allocatable["cpu"])
        node["memory"] = str(allocatable["memory"])
    else:
        vcpus, memory_gib = machine_shape(spec)
        node["cpu"] = vcpus
        node["memory"] = f"{round(memory_gib * 1024)}Mi"
    node["ephemeral-storage"] = spec.ephemeral_storage
    return node


def machine_shape(spec: PoolSpec) -> tuple[int, float]:
    """(vCPUs, GiB) of the pool's machine: the spec's, else a catalog machine it names."""
    if spec.vcpus > 0 and spec.memory_gib > 0:
        return spec.vcpus, spec.memory_gib
    for machine in all_machine_types():
        if machine.name in spec.machine_types:
            return machine.vcpus, machine.memory_gib
    raise ValueError(f"pool {spec.name}: the node's cpu and memory are not known")


def quota(spec: PoolSpec) -> dict[str, str | int]:
    """The ClusterQueue's nominal quota: `quota_nodes` nodes' worth of every resource."""
    queue = _queue(spec)
    return {name: times(value, queue.quota_nodes) for name, value in node_resources(spec).items()}


def _flavors(spec: PoolSpec, quota: dict[str, str | int]) -> list[dict[str, Any]]:
    """The pool's own flavor, then the lender's with no quota of its own (only borrowed)."""
    queue = _queue(spec)
    flavors: list[dict[str, Any]] = [
        {
            "name": queue.cluster_queue,
            "resources": [{"name": name, "nominalQuota": amount} for name, amount in quota.items()],
        }
    ]
    if queue.borrow_from is not None:
        flavors.append(
            {
                "name": cluster_queue_name(queue.borrow_from),
                "resources": [{"name": name, "nominalQuota": 0} for name in quota],
            }
        )
    return flavors


def cluster_queue(spec: PoolSpec) -> dict[str, Any]:
    """The pool's quota, open to the configured namespaces; a queued pool's behind the
    admission check, a borrower's and a lender's in their cohort."""
    queue = _queue(spec)
    amounts = quota(spec)
    body: dict[str, Any] = {}
    if queue.cohort is not None:
        body["cohortName"] = queue.cohort
    body.update(
        {
            # Null selects no namespace; only the teams' namespaces may submit here.
            "namespaceSelector": {
                "matchExpressions": [
                    {
                        "key": NAMESPACE_NAME_LABEL,
                        "operator": "In",
                        "values": list(queue.namespaces),
                    }
                ]
            },
            "resourceGroups": [
                {"coveredResources": list(amounts), "flavors": _flavors(spec, amounts)}
            ],
        }
    )
    if queue.requested:
        body["admissionChecksStrategy"] = {"admissionChecks": [{"name": queue.cluster_queue}]}
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterQueue",
        "metadata": _metadata(queue.cluster_queue),
        "spec": body,
    }


def local_queues(spec: PoolSpec) -> list[dict[str, Any]]:
    """The LocalQueue a Job names, one per namespace."""
    queue = _queue(spec)
    return [
        {
            "apiVersion": API_VERSION,
            "kind": "LocalQueue",
            "metadata": _metadata(queue.local_queue, namespace),
            "spec": {"clusterQueue": queue.cluster_queue},
        }
        for namespace in queue.namespaces
    ]


def admission_check(spec: PoolSpec) -> dict[str, Any]:
    queue = _queue(spec)
    return {
        "apiVersion": API_VERSION,
        "kind": "AdmissionCheck",
        "metadata": _metadata(queue.cluster_queue),
        "spec": {
            "controllerName": PROVISIONING_CONTROLLER,
            "parameters": {
                "apiGroup": API_GROUP,
                "kind": "ProvisioningRequestConfig",
                "name": queue.cluster_queue,
            },
        },
    }


def provisioning_request_config(spec: PoolSpec) -> dict[str, Any]:
    """The cloud's class; only pod sets asking for the pool's GPUs go into the request."""
    queue = _queue(spec)
    return {
        "apiVersion": API_VERSION,
        "kind": "ProvisioningRequestConfig",
        "metadata": _metadata(queue.cluster_queue),
        "spec": {
            "provisioningClassName": queue.provisioning_class,
            "managedResources": sorted(spec.extended_resources),
        },
    }


def pool_objects(spec: PoolSpec) -> list[dict[str, Any]]:
    """Every Kueue object of a pool with a queue, each after what it names (a borrower's
    ClusterQueue names the lender's flavor: Kueue admits nothing through a flavor that does not
    exist yet, and admits once it does)."""
    check = [provisioning_request_config(spec), admission_check(spec)]
    return [
        *(check if _queue(spec).requested else []),
        resource_flavor(spec),
        cluster_queue(spec),
        *local_queues(spec),
    ]
