"""The one small interface through which shared code asks a cloud what it needs to know.

Each cloud folder (`components/<cloud>/model/`) subclasses `Cloud` and is listed once in
`components.model.registry`. Shared code (config checks, pool resolution, the GPU software, the
offline tooling) calls these methods and reads these attributes; it never tests a cloud's name.
"""

from __future__ import annotations

import importlib
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from components.model import admission, existing_cluster
from components.model import offerings as offering_tables
from components.model.admission import ExtendedResourceToleration
from components.model.allocatable import NodeAllocatable
from components.model.catalog.gpus import GpuModel, MachineCatalog, MachineType
from components.model.daemonsets import NodeDaemonSet
from components.model.fabric import FabricFacts, NcclTest, PoolFabric
from components.model.lifecycle import Assessment, VersionLifecycle
from components.model.pool_kind import PoolKind
from components.model.pool_spec import PoolSpec
from components.model.prices import Pricing
from components.model.problems import Problem
from components.model.resource_knowledge import ResourceKnowledge
from components.model.schema import (
    CloudSoftwareKeys,
    ClusterConfig,
    ConfigModel,
    GpuPoolConfig,
    GpuSoftwareConfig,
    SoftwareMode,
    StackConfig,
)
from components.model.starter import Starter, StarterChoices, StarterError

if TYPE_CHECKING:
    from components.model.cold_start import CloudColdStart


@dataclass(frozen=True)
class NameRule:
    """A name format a cloud's API accepts: the pattern and how to say it to a user."""

    pattern: str
    rule: str

    def accepts(self, name: str) -> bool:
        # fullmatch: `$` alone would let a trailing newline (from a YAML `|` block) through.
        return re.fullmatch(self.pattern, name) is not None


def zone_problems(
    rule: NameRule | None, region: str, zones: Sequence[str], path: str
) -> list[Problem]:
    """Zones that `rule` (the zone names valid in `region`; None: not checked) refuses, and
    repeats."""
    problems = []
    for index, zone in enumerate(zones):
        if rule is not None and not re.fullmatch(rule.pattern, zone):
            problems.append(
                Problem(
                    f"{path}[{index}]",
                    f"zone outside region {region}; allowed: {rule.rule}",
                    zone,
                )
            )
    if len(set(zones)) != len(zones):
        problems.append(Problem(path, "zones must not repeat", list(zones)))
    return problems


class Cloud(ABC):
    """What gpufleet knows about one cloud (or about a cluster it did not create)."""

    # The value of `gpufleet:cloud`, and the key of this cloud's own config sections.
    name: ClassVar[str]
    # `cluster.<name>` and `gpuPools[].<name>`: this cloud's own keys (None: it has none).
    cluster_options: ClassVar[type[ConfigModel] | None] = None
    pool_options: ClassVar[type[ConfigModel] | None] = None
    # The module with `build_cluster` and `build_gpu_pools` (imported only when planning this
    # cloud, so a plan loads one provider SDK).
    stack_module: ClassVar[str]
    catalog: ClassVar[MachineCatalog] = MachineCatalog(rows=(), defaults={})
    pool_name_rule: ClassVar[NameRule]
    cluster_name_rule: ClassVar[NameRule]
    # None: the cloud has no region (gpufleet does not create the cluster).
    region_rule: ClassVar[NameRule | None] = None
    # The dated table of its regions and where it sells each GPU machine (None: none).
    offerings: ClassVar[offering_tables.Offerings | None] = None
    # The minors this cloud creates, with their support dates (None: not gpufleet's to check).
    version_lifecycle: ClassVar[VersionLifecycle | None] = None
    # Whether the stack reaches the cluster through `gpufleet:kubeconfig` (else gpufleet builds
    # the kubeconfig from the cluster it creates or adopts).
    reads_kubeconfig: ClassVar[bool] = False
    # Which Kubernetes distribution the GPU software is configured for ("generic": none).
    distribution: ClassVar[str] = "generic"
    # What `gpuSoftware.mode: auto` means here.
    default_software_mode: ClassVar[SoftwareMode] = "device-plugin"
    # Whether the cloud itself shares GPUs (time-sharing, MPS, MIG) without NVIDIA's software.
    shares_gpus_itself: ClassVar[bool] = False
    # Whether `cluster.existing` here means adopting a cluster the user already runs: gpufleet
    # looks it up instead of creating it, and adds the GPU pools to it.
    adopts_clusters: ClassVar[bool] = False
    # The keys of `cluster.existing` this cloud reads besides its `existing_options` (field
    # names); the others are refused.
    existing_keys: ClassVar[tuple[str, ...]] = ()
    # This cloud's own keys of `cluster.existing` and of `gpuSoftware` (components/model/config.py
    # adds them to those sections).
    existing_options: ClassVar[type[ConfigModel] | None] = None
    software_options: ClassVar[type[CloudSoftwareKeys] | None] = None
    # The keys of this cloud's `cluster.<name>` that still mean something on an adopted cluster
    # (field names); the others set up a cluster gpufleet creates and are refused there.
    adopted_cluster_keys: ClassVar[tuple[str, ...]] = ()
    # How this cloud's nodes and control plane are priced (None: gpufleet prices nothing here).
    pricing: ClassVar[Pricing | None] = None
    # The cloud's own per-node agents whose requests no source gives: a GPU pool's
    # allocatablePerNode is an upper bound by their requests (said by `plan` and `fit`).
    uncounted_daemonsets: ClassVar[tuple[str, ...]] = ()
    # The taint this cloud puts on Spot nodes, where a pool's every node carries it even when
    # the pool falls back to on-demand (AKS node auto-provisioning's [spot, on-demand]: one
    # NodePool, one taint); `plan`'s spot column reads it (None: no such pool on this cloud).
    spot_taint_key: ClassVar[str | None] = None
    # What gpufleet knows of this cloud's resource types (components/<cloud>/model/resources.py).
    resource_knowledge: ClassVar[ResourceKnowledge] = ResourceKnowledge()
    # Every kind of pool this cloud makes (`pool_kind` returns one of them): together they are
    # what the cloud builds (docs/capacity.md's table of capacity orders per cloud).
    pool_kinds: ClassVar[tuple[PoolKind, ...]] = ()

    @property
    def extended_resource_toleration(self) -> ExtendedResourceToleration:
        """Whether the control plane runs the ExtendedResourceToleration admission plugin, which
        tolerates a GPU taint for a pod that requests the GPU: `EXTENDED_RESOURCE_TOLERATION` of
        `components/<cloud>/model/admission.py`, the cloud's data with its source (not known
        for a cloud without one)."""
        try:
            module = importlib.import_module(f"components.{self.name}.model.admission")
        except ModuleNotFoundError:
            return admission.NOT_KNOWN
        fact: ExtendedResourceToleration = module.EXTENDED_RESOURCE_TOLERATION
        return fact

    @property
    def cold_start(self) -> CloudColdStart | None:
        """How long a GPU pool at zero takes to run its first pod: `COLD_START` of
        `components/<cloud>/model/cold_start.py`, figures with their sources (None: the cloud
        keeps none)."""
        try:
            module = importlib.import_module(f"components.{self.name}.model.cold_start")
        except ModuleNotFoundError:
            return None
        model: CloudColdStart = module.COLD_START
        return model

    def adopted(self, cluster: ClusterConfig | None) -> bool:
        """Whether this stack adds GPU pools to a cluster it looks up rather than creates."""
        return self.adopts_clusters and existing_cluster.written(cluster)

    def software_mode(
        self, mode: SoftwareMode, cluster: ClusterConfig | None = None
    ) -> SoftwareMode:
        """`auto` resolved for this cloud (and, where it decides, the cluster's settings)."""
        return self.default_software_mode if mode == "auto" else mode

    # --- config checks (every method returns every problem it finds) ---------------------

    def zone_rule(self, region: str) -> NameRule | None:
        """The zone names valid in `region` (None: zones are not checked)."""
        return None

    def zone_problems(self, region: str, zones: Sequence[str], path: str) -> list[Problem]:
        """Zones outside `region` (by `zone_rule`), and repeats."""
        return zone_problems(self.zone_rule(region), region, zones, path)

    def region_known(self, cluster: ClusterConfig) -> bool:
        """Whether the cluster's region is one this cloud knows (its form, and its dated region
        table where it has one): zones, reservations and offerings are judged against a known
        region only, so a mistyped region is one mistake, not one per zone."""
        region = cluster.region
        if region is None or self.region_rule is None or not self.region_rule.accepts(region):
            return False
        return not any(p.path == "cluster.region" for p in self.region_problems(cluster))

    def check_cluster(self, cluster: ClusterConfig) -> list[Problem]:
        """This cloud's cluster rules, after the shared name, version, region and zone checks."""
        return []

    def region_problems(self, cluster: ClusterConfig) -> list[Problem]:
        """The cluster's region (and zones) against this cloud's dated region table
        (components/<cloud>/model/offerings.json), for a region of the right form."""
        return self.offerings.region_problems(cluster) if self.offerings else []

    def offered(self, machine: MachineType, region: str) -> bool | None:
        """Whether the cloud sells `machine` in `region` per its dated offerings table (None:
        the table has no answer there)."""
        return self.offerings.offered(machine, region) if self.offerings else None

    def offering_problems(
        self, cluster: ClusterConfig, pool: GpuPoolConfig, path: str, warnings: list[str]
    ) -> list[Problem]:
        """The pool's machine types where the cloud sells them, said "not checked" where the
        table has no answer (for machines of the cloud's catalog only)."""
        if self.offerings is None or not offering_tables.catalog_knows(self.catalog, pool):
            return []
        return self.offerings.pool_problems(cluster, pool, path, warnings)

    def sharing_strategies(self, model: GpuModel, mode: SoftwareMode) -> tuple[str, ...]:
        """The sharing strategies a pool of this GPU model may use here."""
        return model.sharing

    def cluster_warnings(self, cluster: ClusterConfig) -> list[str]:
        """What about the cluster's settings works but is likely not what the user meant, and
        what gpufleet cannot check about them and the user must (said by `plan`)."""
        return []

    def node_allocatable(
        self, machine: str, vcpus: int, memory_gib: float, disk_size_gb: int
    ) -> NodeAllocatable | None:
        """What the kubelet leaves pods on a node of this machine (None: not known here)."""
        return None

    def allocatable_notes(self, vcpus: int) -> tuple[str, ...]:
        """What of `node_allocatable` for a machine of `vcpus` is an estimate, said in `fit`."""
        return ()

    def node_daemonsets(
        self, config: StackConfig, pool: GpuPoolConfig | None
    ) -> tuple[NodeDaemonSet, ...]:
        """The cloud's own DaemonSet pods on a node of `pool` (None: the system pool) whose
        requests a source gives; gpufleet's charts are added by the caller."""
        return ()

    def version_problems(self, cluster: ClusterConfig, verdict: Assessment) -> list[Problem]:
        """What this cloud refuses about a minor its calendar still creates: a paid phase the
        stack does not buy, or a part gpufleet pins per minor that has no release for it."""
        return []

    def version_advice(self, cluster: ClusterConfig, verdict: Assessment) -> str:
        """What to do about a minor the calendar warns about, where the cloud acts on its own
        (appended to the warning; "" when the calendar's message says it all)."""
        return ""

    def check_pool_keys(self, pool: GpuPoolConfig, path: str) -> list[Problem]:
        """Rules on a pool's own keys that do not need the GPU catalog (names, taint values)."""
        return []

    @abstractmethod
    def check_pool(
        self,
        cluster: ClusterConfig,
        mode: SoftwareMode,
        pool: GpuPoolConfig,
        path: str,
        warnings: list[str],
    ) -> list[Problem]:
        """Zones, machine types and the cloud's limits for a pool whose GPU model is known."""

    def mig_partitions(self, model: GpuModel) -> Mapping[str, int]:
        """The MIG partition sizes this cloud builds on `model`, and how many per GPU (by
        default every size NVIDIA defines for it, as the GPU catalog lists them)."""
        return model.mig_partitions

    def check_mig(
        self, mode: SoftwareMode, pool: GpuPoolConfig, model: GpuModel, path: str
    ) -> list[Problem]:
        """How this cloud partitions MIG GPUs, for a partition size the GPU model supports."""
        return []

    def check_software(
        self,
        software: GpuSoftwareConfig,
        mode: SoftwareMode,
        pools: Sequence[GpuPoolConfig],
        cluster: ClusterConfig | None,
    ) -> list[Problem]:
        """This cloud's rules on the GPU software for these pools."""
        return []

    def gpu_health_warnings(
        self, software: GpuSoftwareConfig, mode: SoftwareMode, pools: Sequence[GpuPoolConfig]
    ) -> list[str]:
        """What `plan` says of GPU pools this cloud gives no GPU health signal (docs/gpu-health.md)."""
        return []

    # --- pools together -----------------------------------------------------------------

    def pools_warnings(
        self, cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]]
    ) -> list[str]:
        """What the valid pools (with their index) need together of the cluster's network or
        project that gpufleet neither creates nor checks offline (said "not checked")."""
        return []

    def pools_problems(
        self, cluster: ClusterConfig, pools: Sequence[tuple[int, GpuPoolConfig]]
    ) -> list[Problem]:
        """What the cloud refuses of the pools together (how many a cluster holds), for
        pools that passed their own checks (with their index)."""
        return []

    def concurrent_limits(self, cluster: ClusterConfig) -> dict[str, dict[str, Any]]:
        """Per resource type, how many of it the cloud holds at once for the stack (`limit`),
        what they are (`what`) and how to raise it (`raise`): an `up` that creates before it
        deletes may pass it for a moment, which `diff` checks (none by default)."""
        return {}

    # --- pools -----------------------------------------------------------------------------

    @abstractmethod
    def pool_kind(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> PoolKind:
        """How this cloud makes the pool (which provisioner, which pool object): the one place a
        cloud looks at its provisioner settings. Shared code asks the kind what differs per kind
        of pool: its traits and checks, node facts, selector keys and capacity
        (components/model/pool_kind.py)."""

    @abstractmethod
    def resolve_pool(self, config: StackConfig, pool: GpuPoolConfig) -> PoolSpec:
        """What every node of this GPU pool will look like, to the scheduler and autoscaler."""

    # --- GPU network fabric (`gpuPools[].interconnect`; components/model/fabric.py) -------

    def fabric_facts(self, machine_type: str) -> FabricFacts | None:
        """The machine type's GPU network, from the cloud's fabric table (None: it has none)."""
        return None

    def pool_fabric(
        self, config: StackConfig, pool: GpuPoolConfig, facts: FabricFacts, zone: str
    ) -> PoolFabric:
        """How this cloud places a fabric pool in `zone` and what its pods must carry."""
        return PoolFabric(facts=facts, zone=zone, placement="one zone", placement_max_nodes=None)

    def nccl_test(self, config: StackConfig, pool: PoolSpec, nodes: int) -> NcclTest | None:
        """The multi-node NCCL test `samples` prints for a fabric pool (None: none here)."""
        return None

    def system_pool(self, config: StackConfig) -> PoolSpec | None:
        """The CPU system pool the cluster keeps (None: gpufleet does not manage one)."""
        return None

    # --- GPU software ---------------------------------------------------------------------

    def software_distribution(self, config: StackConfig) -> str:
        """The Kubernetes distribution the GPU software is configured for (see the registry)."""
        return self.distribution

    def gpu_operator_preset(self, config: StackConfig) -> dict[str, Any]:
        """The GPU Operator's driver, toolkit and host-path values for this distribution."""
        return {}

    def dcgm_exporter_values(self) -> dict[str, Any]:
        """dcgm-exporter values this distribution needs (host driver mounts)."""
        return {}

    def gpu_operator_notice(self) -> str | None:
        """What the user must do by hand for the GPU Operator here, if anything."""
        return None

    # Whether system-node-critical pods outside kube-system need a ResourceQuota (GKE).
    critical_pods_need_quota: ClassVar[bool] = False

    # --- new stacks ------------------------------------------------------------------------

    def starter(self, choices: StarterChoices) -> Starter:
        """The config `python -m components new` writes for this cloud from the user's choices,
        by `components/<cloud>/model/starter.py` (raises StarterError naming each choice it
        cannot use)."""
        try:
            module = importlib.import_module(f"components.{self.name}.model.starter")
        except ModuleNotFoundError:
            raise StarterError(
                [f"--cloud {self.name}: gpufleet writes no new stacks for it"]
            ) from None
        starter: Starter = module.starter(choices, self)
        return starter


def options(owner: ConfigModel, cloud: Cloud) -> Mapping[str, Any]:
    """A cloud's section of `owner` as plain data (for messages and tooling)."""
    value = getattr(owner, cloud.name, None)
    return value.model_dump() if isinstance(value, ConfigModel) else {}
