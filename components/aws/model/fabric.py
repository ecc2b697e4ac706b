"""EFA, the GPU network fabric of EC2 (`gpuPools[].interconnect: fabric` on EKS), as data.

Per instance type of gpufleet's EKS catalog that has EFA: how many EFA devices it takes (EC2's
`EfaInfo.MaximumEfaInterfaces`, which the EFA device plugin advertises as
`vpc.amazonaws.com/efa`), its network cards, its network bandwidth, and the published NCCL
figure where there is one. Sources:

- EFA count and bandwidth: Karpenter's generated reference
  `website/content/en/docs/reference/instance-types.md` (aws/karpenter-provider-aws @1d927085,
  `vpc.amazonaws.com/efa` = MaximumEfaInterfaces, `karpenter.k8s.aws/instance-network-bandwidth`
  in Mbit/s); network cards: `pkg/providers/instancetype/zz_generated.vpclimits.go` (same commit).
- Every type here is in the EFA device plugin chart's `supportedInstanceLabels.values`
  (aws/eks-charts `stable/aws-efa-k8s-device-plugin/values.yaml` @5239609242f3430be50fb0b714a24d3ef2b47983,
  chart v0.5.30), so the plugin runs on its nodes.
- EFA-only interfaces: "available on all EFA supported instances", secondary interfaces only,
  with no IP address (AWS What's New 2024-10-28, "Amazon EC2 announces EFA updates for
  scalability"; docs.aws.amazon.com/AWSEC2/latest/UserGuide/create-efa.html); at most one EFA
  per network card (docs.aws.amazon.com/eks/latest/userguide/node-efa.html).
- NCCL: aws-samples/awsome-distributed-training `micro-benchmarks/nccl-tests/README.md`
  @0162aacd (all_reduce_perf, 2 nodes x 8 GPUs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from components.aws.model import capacity
from components.model.catalog.charts import ChartPin
from components.model.fabric import FabricFacts, NcclFigure, PoolFabric
from components.model.problems import Problem
from components.model.schema import GpuPoolConfig

EFA_RESOURCE: Final = "vpc.amazonaws.com/efa"
KARPENTER_TYPES_SOURCE: Final = (
    "aws/karpenter-provider-aws @1d927085 website/content/en/docs/reference/instance-types.md "
    "(vpc.amazonaws.com/efa, instance-network-bandwidth) and "
    "pkg/providers/instancetype/zz_generated.vpclimits.go (network cards)"
)
NCCL_SOURCE: Final = (
    "aws-samples/awsome-distributed-training @0162aacd micro-benchmarks/nccl-tests/README.md"
)

# The EFA Kubernetes device plugin: advertises `vpc.amazonaws.com/efa` on each node.
# aws/eks-charts @5239609242f3430be50fb0b714a24d3ef2b47983, stable/aws-efa-k8s-device-plugin
# (Chart.yaml version v0.5.30, appVersion v0.5.20; values.yaml keys image.repository,
# image.tag, nodeSelector (default {}), tolerations (default []; the template adds
# CriticalAddonsOnly), supportedInstanceLabels, imagePullSecrets). Its DaemonSet's node affinity
# excludes `eks.amazonaws.com/compute-type: auto` (templates/daemonset.yaml).
DEVICE_PLUGIN: Final = ChartPin(
    "aws-efa-k8s-device-plugin", "v0.5.30", "https://aws.github.io/eks-charts", "kube-system"
)
# The chart's image (its default repository, a us-west-2 ECR registry) is listed with the other
# charts' images in components/model/catalog/images.py for `mirror-list`.
DELIVERED_BY: Final = f"{DEVICE_PLUGIN.chart} {DEVICE_PLUGIN.version} (Helm chart, gpufleet)"

# The placement that keeps a fabric pool's nodes close: one cluster placement group per pool
# and zone ("a logical grouping of instances within a single Availability Zone",
# docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-strategies.html). EC2 documents no
# instance cap per cluster placement group, only 500 groups per account and Region
# (limitations-placement-groups.html).
PLACEMENT: Final = "cluster placement group"
PLACEMENT_STRATEGY: Final = "cluster"
# A pool on a reservation gets no gpufleet placement group. A Capacity Block's instances "are
# automatically placed close together inside Amazon EC2 UltraClusters"
# (docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CapacityBlock.html). An On-Demand Capacity
# Reservation places its instances in a cluster placement group only if it was created in one
# (EC2 user guide cr-cpg: "To reserve capacity in a placement group, you must create the
# Capacity Reservation in the placement group"; an existing one cannot be moved into one), and
# instances that find no room in it "run using On-Demand capacity and they are not placed in any
# cluster placement group" (using-cpg-odcr-crg).
BLOCK_PLACEMENT: Final = "the Capacity Block's EC2 UltraCluster"
ODCR_PLACEMENT: Final = (
    "no placement group, unless the On-Demand Capacity Reservation was created in one (not checked)"
)


@dataclass(frozen=True)
class EfaType:
    """One EFA instance type as EC2 describes it."""

    efa_interfaces: int
    network_cards: int
    bandwidth_gbps: int
    nccl: NcclFigure | None = None


_P5_NCCL = NcclFigure(
    collective="all_reduce",
    busbw_gbytes_per_s=487.1,
    message_bytes=17_179_869_184,
    nodes=2,
    source=f"{NCCL_SOURCE} (p5.48xlarge, EFA, 16 GiB message)",
)
_P4DE_NCCL = NcclFigure(
    collective="all_reduce",
    busbw_gbytes_per_s=78.3,
    message_bytes=2_147_483_648,
    nodes=2,
    source=f"{NCCL_SOURCE} (p4de.24xlarge, EFA, 2 GiB message)",
)


def _one_card(bandwidth: Mapping[str, int]) -> dict[str, EfaType]:
    """Sizes with one EFA on one network card."""
    return {name: EfaType(1, 1, gbps) for name, gbps in bandwidth.items()}


EFA_TYPES: Final[Mapping[str, EfaType]] = MappingProxyType(
    {
        "p4d.24xlarge": EfaType(4, 4, 400),
        "p4de.24xlarge": EfaType(4, 4, 400, _P4DE_NCCL),
        "p5.48xlarge": EfaType(32, 32, 3200, _P5_NCCL),
        "p5.4xlarge": EfaType(1, 1, 100),
        "p5e.48xlarge": EfaType(32, 32, 3200),
        "p5en.48xlarge": EfaType(16, 16, 3200),
        "p6-b200.48xlarge": EfaType(8, 8, 3200),
        "g6e.48xlarge": EfaType(4, 4, 400),
        "g6e.24xlarge": EfaType(2, 2, 200),
        **_one_card({"g6e.12xlarge": 100, "g6e.16xlarge": 35, "g6e.8xlarge": 25}),
        **_one_card(
            {
                "g6.48xlarge": 100,
                "g6.24xlarge": 50,
                "g6.12xlarge": 40,
                "g6.16xlarge": 25,
                "g6.8xlarge": 25,
            }
        ),
        **_one_card(
            {
                "g5.48xlarge": 100,
                "g5.24xlarge": 50,
                "g5.12xlarge": 40,
                "g5.16xlarge": 25,
                "g5.8xlarge": 25,
            }
        ),
        **_one_card(
            {"g4dn.metal": 100, "g4dn.16xlarge": 50, "g4dn.12xlarge": 50, "g4dn.8xlarge": 50}
        ),
    }
)


def fabric_facts(machine_type: str) -> FabricFacts | None:
    """The instance type's EFA, or None when it has none."""
    efa = EFA_TYPES.get(machine_type)
    if efa is None:
        return None
    return FabricFacts(
        machine_type=machine_type,
        kind="EFA",
        interfaces=efa.efa_interfaces,
        bandwidth_gbps=efa.bandwidth_gbps,
        resource=EFA_RESOURCE,
        resource_per_node=efa.efa_interfaces,
        delivered_by=DELIVERED_BY,
        expected_busbw=efa.nccl,
        source=KARPENTER_TYPES_SOURCE,
    )


@dataclass(frozen=True)
class EfaInterface:
    """One network interface of a fabric node's launch template."""

    network_card_index: int
    device_index: int
    # `efa`: EFA with ENA (the primary, with the node's IP); `efa-only`: the EFA device alone.
    interface_type: str


EFA_WITH_ENA: Final = "efa"
EFA_ONLY: Final = "efa-only"


def efa_interfaces(machine_type: str) -> tuple[EfaInterface, ...]:
    """The launch template's interfaces: one per network card, as terraform-aws-modules/eks
    lays them out with `enable_efa_support` (modules/eks-managed-node-group/main.tf L43-87 @bef29c4d):
    card 0 device 0 is EFA with ENA (the node's primary interface and IP), every other card
    device 1 an EFA-only interface (no IP, so a p5 takes no 31 extra VPC addresses). One EFA per
    network card, as many as the type's EFA count."""
    efa = EFA_TYPES[machine_type]
    return tuple(
        EfaInterface(card, 0, EFA_WITH_ENA) if card == 0 else EfaInterface(card, 1, EFA_ONLY)
        for card in range(efa.network_cards)
    )


@dataclass(frozen=True)
class EksFabric:
    """What one fabric group pool is built with (None on a pool without fabric)."""

    machine_type: str
    interfaces: tuple[EfaInterface, ...]
    # Whether gpufleet makes a cluster placement group per zone (not on a reservation).
    placement_group: bool

    @property
    def efa_devices(self) -> int:
        return len(self.interfaces)


def layout_problems(machine_types: Sequence[str], where: str) -> list[Problem]:
    """Instance types of one fabric group pool whose EFA layouts differ (types without EFA are
    the shared check's to refuse)."""
    cards = {name: EFA_TYPES[name].network_cards for name in machine_types if name in EFA_TYPES}
    if len(set(cards.values())) <= 1:
        return []
    return [
        Problem(
            where,
            "a fabric pool's launch template (or EC2NodeClass) has one EFA interface per network "
            f"card, so every instance type must have the same number of cards; got {cards}: make "
            "a pool per type",
            list(machine_types),
        )
    ]


def refusal(path: str, why: str) -> Problem:
    """`interconnect: fabric` under a provisioner gpufleet does not build EFA for."""
    return Problem(f"{path}.interconnect", f"{why}; {GROUPS_INSTEAD}", "fabric")


GROUPS_INSTEAD: Final = (
    "use cluster.aws.provisioner: cluster-autoscaler (gpuPools[].aws.nodeGroup managed or "
    "self-managed), where gpufleet builds the EFA interfaces, the cluster placement group and "
    "the EFA device plugin"
)
INSTALLED_KARPENTER_WHY: Final = (
    "gpufleet builds EFA only on the Karpenter it runs (1.14.1): EC2NodeClass "
    "spec.networkInterfaces and spec.placementGroupSelector need Karpenter >= v1.11 "
    "(aws/karpenter-provider-aws PRs #9027 and #9030), and gpufleet cannot check the version "
    "of the one this cluster runs; let gpufleet run Karpenter "
    "(cluster.existing.autoscalerInstalled: false)"
)
AUTO_MODE_WHY: Final = (
    "EKS Auto Mode has no per-interface EFA settings and no placement groups (its NodeClass "
    "has neither field, docs.aws.amazon.com/eks/latest/userguide/create-node-class.html; the "
    "EKS user guide's device-management-efa page lists both as coming to Auto Mode), and the "
    "EFA device plugin chart skips Auto Mode nodes (eks.amazonaws.com/compute-type NotIn auto)"
)


# What turning the fabric on or off does to a running pool (`PoolFabric.notes`). EFA interfaces
# are set when an instance launches: they cannot be attached to a running one
# (docs.aws.amazon.com/AWSEC2/latest/UserGuide/create-efa.html).
GROUP_CHANGE_NOTE: Final = (
    "EFA interfaces are set when an instance launches (they cannot be attached to a running "
    "one, docs.aws.amazon.com/AWSEC2/latest/UserGuide/create-efa.html): turning the fabric "
    "on makes a new launch template version, onto which EKS rolls a managed group's nodes "
    "while a self-managed group's running nodes keep their interfaces until replaced; "
    "turning it off deletes the pool's placement and EFA security groups, which EC2 refuses "
    "while instances use them, so `diff` refuses it unless the pool is at 0 nodes"
)
# Karpenter marks a node Drifted when its node class's hashed fields (networkInterfaces among
# them), its resolved placement group or its security groups change (aws/karpenter-provider-aws
# pkg/cloudprovider/drift.go and pkg/apis/v1/ec2nodeclass.go @v1.14.1); gpufleet's NodePools allow 0
# Drifted disruptions (components/model/karpenter_pool.py), so running nodes stay until empty.
KARPENTER_CHANGE_NOTE: Final = (
    "EFA interfaces are set when an instance launches (docs.aws.amazon.com/AWSEC2/latest/"
    "UserGuide/create-efa.html): turning the fabric on changes the pool's EC2NodeClass, so "
    "Karpenter marks its running nodes Drifted, and gpufleet's NodePool allows 0 Drifted "
    "disruptions: they keep running without EFA, outside the placement group, until empty "
    "(consolidation removes them); new nodes get EFA; turning it off deletes the pool's "
    "placement and EFA security groups, which EC2 refuses while instances use them, so "
    "`diff` refuses it unless the pool is at 0 nodes"
)


def pool_fabric(
    pool: GpuPoolConfig, facts: FabricFacts, zone: str, change_note: str = GROUP_CHANGE_NOTE
) -> PoolFabric:
    """A fabric pool's EFA in `zone`: its cluster placement group, or a reservation's;
    `change_note` says what turning it on or off does to running nodes (the pool kind's)."""
    word = capacity.reservation_word(capacity.order_of(pool))
    reserved = _reservation_places(pool)
    notes: tuple[str, ...] = (change_note,)
    placement = PLACEMENT
    if reserved and word == capacity.CAPACITY_BLOCK:
        placement = BLOCK_PLACEMENT
    elif reserved:
        placement = ODCR_PLACEMENT
        fallback = len(capacity.order_of(pool)) > 1
        notes += (
            "no gpufleet placement group: the On-Demand Capacity Reservation places its "
            "instances in a cluster placement group only if it was created in one (EC2 user "
            "guide, cr-cpg; not checked), else anywhere in the zone"
            + (
                "; nodes launched on-demand beyond the reservation land in no placement group "
                "(using-cpg-odcr-crg), so a job spanning both runs across placements"
                if fallback
                else ""
            ),
        )
    return PoolFabric(
        facts=facts,
        zone=zone,
        placement=placement,
        placement_max_nodes=None,
        notes=notes,
    )


def fabric_resources(fabric: EksFabric | None) -> dict[str, int]:
    """The extended resources a fabric node adds (what the EFA device plugin advertises)."""
    return {EFA_RESOURCE: fabric.efa_devices} if fabric is not None else {}


# The node label gpufleet declares on a fabric group pool's nodes: the EFA device plugin's
# DaemonSet selects it, so it runs on fabric pools only.
FABRIC_LABEL: Final = "gpufleet.io/fabric"
FABRIC_LABEL_VALUE: Final = "efa"
DEVICE_PLUGIN_RELEASE: Final = "aws-efa-k8s-device-plugin"


def device_plugin_values(tolerations: Sequence[Mapping[str, str]]) -> dict[str, object]:
    """The chart's values (keys of its values.yaml @5239609242f3): its pods go to fabric nodes
    only, through the pools' taints (the chart tolerates CriticalAddonsOnly alone)."""
    return {
        "nodeSelector": {FABRIC_LABEL: FABRIC_LABEL_VALUE},
        "tolerations": [dict(t) for t in tolerations],
    }


def fabric_group(pool: GpuPoolConfig) -> EksFabric | None:
    """A fabric pool's interfaces (its first type's: the types' layouts match, checked by
    `layout_problems`), with a placement group unless a reservation places the instances
    (group pools lay them out in a launch template, Karpenter pools in the EC2NodeClass)."""
    if pool.interconnect != "fabric":
        return None
    machine = capacity.pool_machine_types(pool)[0]
    if machine not in EFA_TYPES:
        return None
    return EksFabric(
        machine_type=machine,
        interfaces=efa_interfaces(machine),
        placement_group=not _reservation_places(pool),
    )


def _reservation_places(pool: GpuPoolConfig) -> bool:
    """The pool launches into reservations first, by id or by tags (Karpenter): they place the
    instances, and a placement group of gpufleet's would keep them out of a reservation made in
    its own cluster placement group (EC2 user guide, using-cpg-odcr-crg; review fix8-eks
    F8E-2), so none is made."""
    return (
        capacity.launch_target(pool) is not None
        or capacity.reservation_word(capacity.order_of(pool)) is not None
    )
