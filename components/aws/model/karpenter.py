"""Karpenter on EKS, as data: the pinned chart, the Kubernetes minors it supports, its IAM, the
interruption queue's events, and one NodePool and EC2NodeClass per GPU pool.

Sources (aws/karpenter-provider-aws at v1.14.1, and its docs for v1.14):
- chart `oci://public.ecr.aws/karpenter/karpenter` 1.14.1 (getting-started guide,
  KARPENTER_VERSION="1.14.1"); values `settings.clusterName`, `settings.interruptionQueue`,
  `serviceAccount.annotations`, `replicas`, `nodeSelector` (chart values.yaml).
- compatibility (website upgrading/compatibility.md): Kubernetes 1.33 needs Karpenter >= 1.5, 1.34
  >= 1.6, 1.35 >= 1.9, 1.36 >= 1.13; no row yet for 1.37.
- IAM and the interruption queue: website v1.14 getting-started cloudformation.yaml (the node
  role's managed policies, the controller's scoped EC2, IAM and EKS statements, the queue with
  SSE and a 300 s retention, EventBridge rules for AWS Health, Spot interruption, rebalance,
  instance state change and capacity reservation interruption).
- NodePool `karpenter.sh/v1` and EC2NodeClass `karpenter.k8s.aws/v1`: the v1.14.1 CRDs (the tests
  validate what is built here against them when ../shared/reference/karpenter is present).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from components.aws.model.amis import RELEASES, AmiFamily
from components.model.catalog.charts import ChartPin
from components.model.pool_spec import PoolSpec

CHART_REPOSITORY = "oci://public.ecr.aws/karpenter"
CHART = "karpenter"
CHART_VERSION = "1.14.1"
# The CRDs as their own release, so that a Karpenter bump upgrades them too: Helm installs a
# chart's crds/ directory only on first install and never upgrades it (Karpenter's v1.14
# upgrade guide, "CRD Upgrades", recommends this chart at the controller's version).
CRD_CHART = "karpenter-crd"
NAMESPACE = "kube-system"
PIN = ChartPin(CHART, CHART_VERSION, CHART_REPOSITORY, NAMESPACE)
CRD_PIN = ChartPin(CRD_CHART, CHART_VERSION, CHART_REPOSITORY, NAMESPACE)
SERVICE_ACCOUNT = "karpenter"
NODE_POOL_API_VERSION = "karpenter.sh/v1"
NODE_CLASS_API_VERSION = "karpenter.k8s.aws/v1"
# NodeOverlay: alpha in 1.14 (karpenter-crd chart 1.14.1 ships its CRD), behind the chart's
# settings.featureGates.nodeOverlay, off by default (values.yaml). Its `capacity` is merged over
# the instance type's in Karpenter's scheduling simulation (kubernetes-sigs/karpenter
# pkg/cloudprovider/types.go ApplyCapacityOverlay: lo.Assign, the overlay's value wins), so
# `nvidia.com/gpu: 4` replaces the 1 Karpenter reads from EC2 for a g6.xlarge.
NODE_OVERLAY_API_VERSION = "karpenter.sh/v1alpha1"

# The oldest Karpenter release that supports each Kubernetes minor (compatibility.md).
MIN_KARPENTER_FOR_MINOR: Mapping[str, str] = {
    "1.33": "1.5",
    "1.34": "1.6",
    "1.35": "1.9",
    "1.36": "1.13",
}

# Labels Karpenter puts on every node it launches (karpenter.sh/v1 well-known labels).
NODEPOOL_LABEL = "karpenter.sh/nodepool"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
NODECLASS_LABEL = "karpenter.k8s.aws/ec2nodeclass"
GPU_MANUFACTURER_LABEL = "karpenter.k8s.aws/instance-gpu-manufacturer"
GPU_COUNT_LABEL = "karpenter.k8s.aws/instance-gpu-count"
# Tag on the private subnets and the cluster security group the node class selects.
DISCOVERY_TAG = "karpenter.sh/discovery"

# Karpenter plans a new node with this fraction of the instance's memory taken off for the
# hypervisor (chart values settings.vmMemoryOverheadPercent, default 0.075; gpufleet keeps it).
# gpufleet's allocatable takes the same off every EKS node (components/aws/model/allocatable.py),
# so Karpenter's picture of a new node is the node's.
VM_MEMORY_OVERHEAD = 0.075
# How long a node with no pods (other than DaemonSets) stays before Karpenter removes it.
EMPTY_NODE_TTL = "5m"
# AL2023 keeps the root volume on /dev/xvda; Bottlerocket its OS there and data on /dev/xvdb.
_BOTTLEROCKET_OS_VOLUME_GIB = 4


# NodePool template labels the v1.14.1 CRD refuses (its x-kubernetes-validations on
# spec.template.metadata.labels): the karpenter.sh and karpenter.k8s.aws domains (gpufleet sets
# none of their few allowed keys as labels) and kubernetes.io/hostname.
_RESERVED_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws")
_RESERVED_KEYS = ("kubernetes.io/hostname",)


def reserved_label(key: str) -> bool:
    domain = key.split("/", 1)[0] if "/" in key else ""
    return key in _RESERVED_KEYS or domain.endswith(_RESERVED_DOMAINS)


def _minor_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def supports(kubernetes_version: str) -> bool:
    """Whether the pinned Karpenter release supports the cluster's minor."""
    needed = MIN_KARPENTER_FOR_MINOR.get(kubernetes_version)
    return needed is not None and _minor_tuple(CHART_VERSION)[:2] >= _minor_tuple(needed)


def ami_alias(family: AmiFamily) -> str:
    """The node class's AMI alias pinned to gpufleet's reviewed release (never `latest`, which
    drifts every node when AWS publishes)."""
    release = RELEASES[family]
    return f"{family}@{release if release.startswith('v') else 'v' + release}"


# karpenter.sh/capacity-type values in the order Karpenter tries them, whatever the order of
# a requirement's values: reserved, then Spot, then on-demand (website docs/concepts/
# nodepools.md, Capacity Type); `reserved` is On-Demand Capacity Reservations and Capacity
# Blocks alike (docs/tasks/odcrs.md), behind the reservedCapacity gate.
CAPACITY_PRIORITY = ("reserved", "spot", "on-demand")
# The `gpuPools[].capacity` words Karpenter builds, by its name for each.
CAPACITY_VALUES = {
    "reserved": "reserved",
    "capacity-block": "reserved",
    "spot": "spot",
    "on-demand": "on-demand",
}


def capacity_types(order: Sequence[str], on_demand_fallback: bool) -> tuple[str, ...]:
    """The NodePool's capacity types for a pool's order (a Spot pool with onDemandFallback may
    launch on-demand too), in the order Karpenter tries them."""
    wanted = {CAPACITY_VALUES[word] for word in order if word in CAPACITY_VALUES}
    if on_demand_fallback and "spot" in wanted:
        wanted.add("on-demand")
    return tuple(value for value in CAPACITY_PRIORITY if value in wanted)


def _limits(pool: PoolSpec, vcpus: int, memory_gib: float) -> dict[str, str]:
    """At most maxNodes nodes' worth of GPUs, CPUs and memory (of the largest allowed type)."""
    return {
        pool.gpu_resource: str(pool.max_nodes * pool.gpus_allocatable),
        "cpu": str(pool.max_nodes * vcpus),
        "memory": f"{int(pool.max_nodes * memory_gib)}Gi",
    }


def node_pool(
    pool: PoolSpec,
    node_class: str,
    *,
    capacity: Sequence[str],
    largest: tuple[int, float],
    consolidate_underutilized: bool,
    node_class_ref: Mapping[str, str] | None = None,
    os_requirement: bool = True,
    lifetime: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The pool's `karpenter.sh/v1` NodePool (metadata.name is the pool's name). Auto Mode's
    NodePools name its NodeClass, take no `kubernetes.io/os` requirement, and state its node
    lifetime (`lifetime`: expireAfter and terminationGracePeriod)."""
    requirements: list[dict[str, Any]] = [
        {
            "key": "node.kubernetes.io/instance-type",
            "operator": "In",
            "values": list(pool.machine_types),
        },
        {"key": CAPACITY_TYPE_LABEL, "operator": "In", "values": list(capacity)},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
    ]
    if os_requirement:
        requirements.append({"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]})
    if pool.zones:
        zone_values = pool.label_choices.get("topology.kubernetes.io/zone") or (
            pool.node_labels["topology.kubernetes.io/zone"],
        )
        requirements.append(
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": list(zone_values)}
        )
    return {
        "apiVersion": NODE_POOL_API_VERSION,
        "kind": "NodePool",
        "metadata": {"name": pool.name},
        "spec": {
            "template": {
                "metadata": {"labels": dict(sorted(pool.declared_labels.items()))},
                "spec": {
                    "nodeClassRef": dict(
                        node_class_ref
                        or {
                            "group": "karpenter.k8s.aws",
                            "kind": "EC2NodeClass",
                            "name": node_class,
                        }
                    ),
                    "requirements": requirements,
                    "taints": [
                        {"key": t.key, "value": t.value, "effect": t.effect}
                        if t.value
                        else {"key": t.key, "effect": t.effect}
                        for t in pool.declared_taints
                    ],
                    # Karpenter's default replaces every node after 720h: a month-long
                    # training job would be drained for it. Nodes go when empty instead.
                    **(lifetime or {"expireAfter": "Never"}),
                },
            },
            "limits": _limits(pool, *largest),
            "disruption": {
                # Empty GPU nodes go; busy ones are only repacked if the pool opts in.
                "consolidationPolicy": "WhenEmptyOrUnderutilized"
                if consolidate_underutilized
                else "WhenEmpty",
                "consolidateAfter": EMPTY_NODE_TTL,
                # A NodePool or EC2NodeClass edit (a new AMI release, another instance type)
                # marks running nodes Drifted; Karpenter would drain them to replace them. None
                # is drained for drift: they go when empty, and new nodes come up as edited.
                "budgets": [{"nodes": "10%"}, {"nodes": "0", "reasons": ["Drifted"]}],
            },
        },
    }


def node_overlay(pool: PoolSpec) -> dict[str, Any] | None:
    """The pool's NodeOverlay when its nodes advertise another GPU count than EC2 says (time-
    sharing, MPS or MIG): Karpenter sizes instance types from EC2's GPU count alone
    (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go, `nvidia.com/gpu`
    = the GPUs EC2 lists), so without it a pod asking for 2 shares of an L4 never gets a node
    launched and 4 pods asking for one share each get 4 nodes (kubernetes-sigs/karpenter#729,
    review eks-2.md N3). Applied to this pool's NodePool and instance types only."""
    if pool.gpus_allocatable == pool.gpus_per_node:
        return None
    return {
        "apiVersion": NODE_OVERLAY_API_VERSION,
        "kind": "NodeOverlay",
        "metadata": {"name": pool.name},
        "spec": {
            "requirements": [
                {"key": NODEPOOL_LABEL, "operator": "In", "values": [pool.name]},
                {
                    "key": "node.kubernetes.io/instance-type",
                    "operator": "In",
                    "values": list(pool.machine_types),
                },
            ],
            "capacity": {pool.gpu_resource: str(pool.gpus_allocatable)},
        },
    }


def planned_gpus(physical: int, overlay: Mapping[str, Any] | None, resource: str) -> int:
    """The GPU count Karpenter plans a new node of the pool with: EC2's, or the overlay's."""
    if overlay is None:
        return physical
    return int(overlay["spec"]["capacity"].get(resource, physical))


def selector_terms(ids: Sequence[str]) -> list[dict[str, Any]]:
    """Subnet or security group selector terms, one per id: never by a tag, which anyone with
    `ec2:CreateTags` in the account could put on a public subnet or an open security group
    (security review SEC-18). Karpenter hashes no selector term (`hash:"ignore"` in
    pkg/apis/v1/ec2nodeclass.go, v1.14.1) and drifts a node only when its subnet or security
    groups leave the resolved sets (pkg/cloudprovider/drift.go): moving from the discovery tag
    to the same resources by id drifts nothing."""
    if not ids:
        raise ValueError("a node class selects at least one subnet and one security group")
    return [{"id": resource_id} for resource_id in ids]


def ec2_node_class(
    name: str,
    *,
    family: AmiFamily,
    node_role: str,
    disk_size_gb: int,
    tags: Mapping[str, str],
    subnet_ids: Sequence[str],
    security_group_ids: Sequence[str],
    capacity_reservations: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The pool's `karpenter.k8s.aws/v1` EC2NodeClass: pinned image, IMDSv2 with one hop,
    encrypted gp3, the cluster's private subnets and node security groups (by id), and the reservations its NodePool may launch into (selector terms:
    by id or by tags; Karpenter uses no reservation the node class does not select, open ones
    included, docs/tasks/odcrs.md)."""
    root = {
        "volumeSize": f"{disk_size_gb}Gi",
        "volumeType": "gp3",
        "encrypted": True,
        "deleteOnTermination": True,
    }
    if family == "bottlerocket":
        devices = [
            {
                "deviceName": "/dev/xvda",
                "ebs": {**root, "volumeSize": f"{_BOTTLEROCKET_OS_VOLUME_GIB}Gi"},
            },
            {"deviceName": "/dev/xvdb", "ebs": root},
        ]
    else:
        devices = [{"deviceName": "/dev/xvda", "ebs": root}]
    return {
        "apiVersion": NODE_CLASS_API_VERSION,
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": {
            "amiSelectorTerms": [{"alias": ami_alias(family)}],
            "role": node_role,
            "subnetSelectorTerms": selector_terms(subnet_ids),
            "securityGroupSelectorTerms": selector_terms(security_group_ids),
            "metadataOptions": {
                "httpEndpoint": "enabled",
                "httpProtocolIPv6": "disabled",
                "httpPutResponseHopLimit": 1,
                "httpTokens": "required",
            },
            "blockDeviceMappings": devices,
            "tags": dict(tags),
            **(
                {"capacityReservationSelectorTerms": [dict(t) for t in capacity_reservations]}
                if capacity_reservations
                else {}
            ),
        },
    }


def helm_values(
    cluster_name: str,
    queue_name: str,
    role_arn: str,
    node_selector: Mapping[str, str],
    replicas: int,
    node_overlays: bool = False,
) -> dict[str, Any]:
    return {
        "settings": {
            "clusterName": cluster_name,
            "interruptionQueue": queue_name,
            # Helm merges this map over the chart's gates: the others keep their defaults.
            # nodeRepair (alpha): replace nodes the node monitoring agent finds broken, a GPU
            # among them (components/aws/model/health.py). reservedCapacity (beta, on by
            # default): reserved pools need it, so it is stated, not assumed.
            "featureGates": {
                "nodeOverlay": node_overlays,
                "nodeRepair": True,
                "reservedCapacity": True,
            },
        },
        "serviceAccount": {
            "name": SERVICE_ACCOUNT,
            "annotations": {"eks.amazonaws.com/role-arn": role_arn},
        },
        # The chart asks for two replicas on different hosts: as many as the system pool has.
        "replicas": replicas,
        "nodeSelector": {"kubernetes.io/os": "linux", **node_selector},
    }
