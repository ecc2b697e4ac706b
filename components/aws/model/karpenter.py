"""Karpenter on EKS, as data: the pinned chart, the Kubernetes minors it supports, its IAM, the
interruption queue's events, and the EC2NodeClass per GPU pool (its NodePool and NodeOverlay are
Karpenter's cloud-neutral shape: `components/model/karpenter_pool.py`).

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
- EC2NodeClass `karpenter.k8s.aws/v1`: the v1.14.1 CRD (the tests validate what is built here
  against it when ../shared/reference/karpenter is present).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from components.aws.model.amis import RELEASES, AmiFamily
from components.model import karpenter_pool
from components.model.catalog.charts import ChartPin

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
NODE_CLASS_API_VERSION = "karpenter.k8s.aws/v1"
NODE_CLASS_GROUP = "karpenter.k8s.aws"
NODE_CLASS_KIND = "EC2NodeClass"

# The oldest Karpenter release that supports each Kubernetes minor (compatibility.md).
MIN_KARPENTER_FOR_MINOR: Mapping[str, str] = {
    "1.33": "1.5",
    "1.34": "1.6",
    "1.35": "1.9",
    "1.36": "1.13",
}

# Labels Karpenter on EKS puts on every node it launches (karpenter.k8s.aws/v1 well-known labels).
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
# AL2023 keeps the root volume on /dev/xvda; Bottlerocket its OS there and data on /dev/xvdb.
_BOTTLEROCKET_OS_VOLUME_GIB = 4


def reserved_label(key: str) -> bool:
    """Whether an EKS Karpenter NodePool refuses `key` as a template label."""
    return karpenter_pool.reserved_label(key, NODE_CLASS_GROUP)


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


# EFA under Karpenter (EC2NodeClass spec.networkInterfaces and spec.placementGroupSelector,
# aws/karpenter-provider-aws PRs #9027 and #9030, both first released in v1.11.0: `git log
# v1.10.0..v1.11.0`). gpufleet builds a fabric pool's EFA only on a Karpenter it pins itself.
FABRIC_MIN_VERSION = "1.11"
# The CRD's interface types (v1.14.1 karpenter.k8s.aws_ec2nodeclasses.yaml, networkInterfaces
# interfaceType enum). Karpenter passes the type to EC2 as written
# (pkg/providers/launchtemplate/launchtemplate.go generateNetworkInterfaces @v1.14.1), so the
# primary `interface` is a plain ENA with the node's IP, not an EFA: every EFA device is an
# `efa-only` interface, card 0's as device 1 beside the primary, as the v1.14 docs' example
# lays it out (website docs/concepts/nodeclasses.md, spec.networkInterfaces).
PRIMARY_INTERFACE = "interface"
EFA_ONLY_INTERFACE = "efa-only"


def builds_fabric(version: str = CHART_VERSION) -> bool:
    """Whether a Karpenter release builds EFA interfaces and placement groups from its node
    class (the pinned one by default)."""
    return _minor_tuple(version)[:2] >= _minor_tuple(FABRIC_MIN_VERSION)


def efa_network_interfaces(network_cards: int) -> list[dict[str, Any]]:
    """A fabric node class's `networkInterfaces`: the primary ENA on card 0, and one EFA-only
    interface per network card (the CRD's rules: a primary of type `interface` on card 0
    device 0, no duplicate card and device pair, at most one EFA-only interface per card), so
    the node has as many EFA devices as the type's EFA count."""
    primary = {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": PRIMARY_INTERFACE}
    efa = [
        {"networkCardIndex": card, "deviceIndex": 1, "interfaceType": EFA_ONLY_INTERFACE}
        for card in range(network_cards)
    ]
    return [primary, *efa]


def efa_only_on_card0(interfaces: list[dict[str, Any]]) -> int:
    """The node class's EFA-only interfaces on network card 0, each taking one of the card's
    interface slots from pods (components/aws/model/allocatable.py `karpenter_max_pods`)."""
    return sum(
        1
        for interface in interfaces
        if interface["networkCardIndex"] == 0 and interface["interfaceType"] == EFA_ONLY_INTERFACE
    )


def with_fabric(
    spec: Mapping[str, Any],
    network_cards: int,
    efa_security_group_id: str,
    placement_group_name: str | None,
) -> dict[str, Any]:
    """A node class spec with a fabric pool's EFA: its interfaces, the EFA security group
    (Karpenter puts every selected group on every interface, launchtemplate.go), and the pool's
    cluster placement group by name (none on a reservation, which places the instances)."""
    fabric_spec = dict(spec)
    fabric_spec["networkInterfaces"] = efa_network_interfaces(network_cards)
    fabric_spec["securityGroupSelectorTerms"] = [
        *spec["securityGroupSelectorTerms"],
        *selector_terms([efa_security_group_id]),
    ]
    if placement_group_name is not None:
        fabric_spec["placementGroupSelector"] = {"name": placement_group_name}
    return fabric_spec


def ec2_node_class_ref(name: str) -> dict[str, str]:
    """A NodePool's reference to the pool's EC2NodeClass (named after the pool)."""
    return {"group": NODE_CLASS_GROUP, "kind": NODE_CLASS_KIND, "name": name}


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
    data_volume_snapshot: str | None = None,
    user_data: str | None = None,
) -> dict[str, Any]:
    """The pool's `karpenter.k8s.aws/v1` EC2NodeClass: pinned image, IMDSv2 with one hop,
    encrypted gp3 (Bottlerocket's data volume from `data_volume_snapshot` when given), the
    fast image start `user_data` (components/aws/model/image_start.py), the cluster's private subnets and node security groups (by id), and the reservations its NodePool may launch into (selector terms:
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
            {
                "deviceName": "/dev/xvdb",
                "ebs": {
                    **root,
                    **({"snapshotID": data_volume_snapshot} if data_volume_snapshot else {}),
                },
            },
        ]
    else:
        devices = [{"deviceName": "/dev/xvda", "ebs": root}]
    return {
        "apiVersion": NODE_CLASS_API_VERSION,
        "kind": NODE_CLASS_KIND,
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
            # Fast image start settings, which Karpenter merges with its own bootstrap.
            **({"userData": user_data} if user_data else {}),
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
