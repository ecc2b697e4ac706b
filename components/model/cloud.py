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
from typing import Any, ClassVar

from components.model import existing_cluster
from components.model.allocatable import NodeAllocatable
from components.model.catalog.gpus import GpuModel, MachineCatalog
from components.model.daemonsets import NodeDaemonSet
from components.model.lifecycle import Assessment, VersionLifecycle
from components.model.pool_spec import PoolSpec
from components.model.problems import Problem
from components.model.schema import (
    ClusterConfig,
    ConfigModel,
    GpuPoolConfig,
    GpuSoftwareConfig,
    SoftwareMode,
    StackConfig,
)
from components.model.starter import Starter, StarterChoices, StarterError


@dataclass(frozen=True)
class NameRule:
    """A name format a cloud's API accepts: the pattern and how to say it to a user."""

    pattern: str
    rule: str

    def accepts(self, name: str) -> bool:
        # fullmatch: `$` alone would let a trailing newline (from a YAML `|` block) through.
        return re.fullmatch(self.pattern, name) is not None


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
    # The keys of `cluster.existing` this cloud reads (field names); the others are refused.
    existing_keys: ClassVar[tuple[str, ...]] = ()
    # The keys of this cloud's `cluster.<name>` that still mean something on an adopted cluster
    # (field names); the others set up a cluster gpufleet creates and are refused there.
    adopted_cluster_keys: ClassVar[tuple[str, ...]] = ()

    def adopted(self, cluster: ClusterConfig | None) -> bool:
        """Whether this stack adds GPU pools to a cluster it looks up rather than creates."""
        return (
            self.adopts_clusters
            and cluster is not None
            and existing_cluster.SECTION in cluster.model_fields_set
        )

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
        problems = []
        rule = self.zone_rule(region)
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

    def check_cluster(self, cluster: ClusterConfig) -> list[Problem]:
        """This cloud's cluster rules, after the shared name, version, region and zone checks."""
        return []

    def node_allocatable(
        self, machine: str, vcpus: int, memory_gib: float, disk_size_gb: int
    ) -> NodeAllocatable | None:
        """What the kubelet leaves pods on a node of this machine (None: not known here)."""
        return None

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

    def accepts_operator_driver(self, mode: SoftwareMode) -> bool:
        """Whether `gpuSoftware.operatorDriver` means anything here."""
        return False

    # --- pools -----------------------------------------------------------------------------

    @abstractmethod
    def resolve_pool(self, config: StackConfig, pool: GpuPoolConfig) -> PoolSpec:
        """What every node of this GPU pool will look like, to the scheduler and autoscaler."""

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
