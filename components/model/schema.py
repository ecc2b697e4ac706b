"""The config sections every cloud shares, as typed models, and the validated `StackConfig`.

Each cloud adds its own `cluster.<cloud>` and `gpuPools[].<cloud>` sections (its `Cloud`
declares them); `components.model.config` assembles the full models from the registry. Code
annotates with the classes here and reads a cloud's section through that cloud's accessor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from components.model.capacity import spot_from_capacity
from components.model.fabric import Interconnect
from components.model.problems import Problem

TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
SoftwareMode = Literal["auto", "device-plugin", "gpu-operator", "cloud-managed"]
# The CPU pool every managed cluster keeps; no GPU pool may take its name.
SYSTEM_POOL_NAME = "system"


class ConfigModel(BaseModel):
    """camelCase keys like Pulumi's own, and only those: unknown keys and snake_case spellings
    are rejected (typos must not pass silently)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=False, extra="forbid", frozen=True
    )


class TaintConfig(ConfigModel):
    key: str
    value: str = ""
    effect: TaintEffect = "NoSchedule"


class SharingConfig(ConfigModel):
    """GPU sharing between containers: time-slicing or MPS, N clients per physical GPU."""

    strategy: Literal["time-sharing", "mps"]
    max_shared_clients_per_gpu: int


class GpuPoolConfig(ConfigModel):
    """A GPU pool's keys common to every cloud (each cloud adds its own section)."""

    name: str
    accelerator: str
    machine_type: str | None = None
    machine_types: list[str] | None = None
    gpus_per_node: int | None = Field(default=None, ge=1)
    min_nodes: int = Field(default=0, ge=0)
    max_nodes: int = Field(default=2, ge=1)
    spot: bool = False
    # How the pool gets nodes: a word of `components.model.capacity.CAPACITY_TYPES`, or a list
    # of them in fallback order (checked there, with the cloud's own rules).
    capacity: Any = None
    zones: list[str] | None = None
    sharing: SharingConfig | None = None
    mig_partition_size: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[TaintConfig] = Field(default_factory=list)
    disk_size_gb: int = Field(default=100, ge=30, le=65536)
    # The GPU network between the pool's nodes: the default network, or the machine type's
    # fabric (EFA, GPUDirect, InfiniBand; components/model/fabric.py).
    interconnect: Interconnect = "none"

    @model_validator(mode="before")
    @classmethod
    def _spot_from_capacity(cls, data: Any) -> Any:
        # `capacity: spot` alone means what `spot: true` means to every cloud's pool code.
        if isinstance(data, dict) and "spot" not in data:
            spot = spot_from_capacity(data.get("capacity"))
            if spot is not None:
                return {**data, "spot": spot}
        return data


class SystemPoolConfig(ConfigModel):
    machine_type: str | None = None
    min_nodes: int = Field(default=1, ge=1)
    max_nodes: int = Field(default=3, ge=1)


Weekday = Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
WEEKDAYS: tuple[Weekday, ...] = (
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
)


class MaintenanceConfig(ConfigModel):
    """The weekly window in which the cloud may upgrade the control plane and nodes (UTC).

    Outside it, GKE and AKS start no automatic upgrade, so a training job is never drained at
    an arbitrary hour. EKS upgrades nothing on its own.
    """

    day: Weekday = "Saturday"
    start_time: str = "02:00"
    duration_hours: int = Field(default=12, ge=4, le=24)


class ClusterConfig(ConfigModel):
    """The cluster's keys common to every cloud (each cloud adds its own section)."""

    name: str
    # The newest minor GKE, EKS and AKS all have in standard support on 2026-11-22 (GKE Regular
    # offers 1.35-1.36; EKS and AKS 1.34-1.37): lifecycle.common_default of the three tables,
    # pinned here so a stack relying on it never moves minor without a commit (tested).
    kubernetes_version: str = "1.36"
    region: str | None = None
    zones: list[str] | None = None
    system_pool: SystemPoolConfig = Field(default_factory=SystemPoolConfig)
    # Production stacks set this: the cluster cannot be deleted by `pulumi destroy` or a replace.
    protect: bool = False
    # The API endpoint's ranges admit the whole internet (0.0.0.0/0) on purpose: the policy
    # pack then accepts it in a production stack (components/model/exposure.py).
    allow_public_api_endpoint: bool = False
    maintenance: MaintenanceConfig = Field(default_factory=MaintenanceConfig)


class MonitoringConfig(ConfigModel):
    dcgm_exporter: bool = False
    # Needs the Prometheus Operator CRDs on the cluster.
    service_monitor: bool = False


class MirrorConfig(ConfigModel):
    """`gpuSoftware.mirror`: where charts and images come from instead of the public
    repositories (rules: components/model/mirror.py)."""

    charts: str | None = None
    images: str | None = None
    pull_secret: str | None = None


class GpuSoftwareConfig(ConfigModel):
    """`gpuSoftware`'s keys common to every cloud (a cloud may add its own: CloudSoftwareKeys)."""

    mode: SoftwareMode = "auto"
    monitoring: MonitoringConfig = Field(default_factory=MonitoringConfig)
    mirror: MirrorConfig | None = None


class CloudSoftwareKeys(ConfigModel):
    """A cloud's own keys of `gpuSoftware` (its `Cloud.software_options`).
    `components.model.config` adds them to that section, so their paths stay
    `gpuSoftware.<key>`; the cloud that declares them says where they mean nothing."""

    def misplaced(self, cloud: str, mode: SoftwareMode) -> list[Problem]:
        """These keys, as set, on a stack of `cloud` whose GPU software runs in `mode`: a
        problem for each that means nothing there (another cloud, another mode)."""
        return []


class SamplesConfig(ConfigModel):
    enabled: bool = False


class QueuePoolConfig(ConfigModel):
    """`queues.pools[]`: a pool of paid capacity (reserved, capacity-block, flex-start, or an
    on-demand pool to borrow from) that gets a Kueue queue like a queued pool's, without the
    ProvisioningRequest admission check (components/model/kueue.py)."""

    pool: str
    # The on-demand pool (itself in `queues.pools`) whose unused quota this pool's Jobs borrow
    # when its own is used up: both ClusterQueues join one cohort.
    borrow_from: str | None = None


class QueuesConfig(ConfigModel):
    """`queues`: the namespaces whose Jobs may use the queued pools (`capacity: queued`), and
    the other pools that get a queue (`pools`).

    Each such pool gets a Kueue LocalQueue named after it in every one of these namespaces
    (the teams': gpufleet creates them, and keeps them on delete, only on a cluster it creates).
    """

    namespaces: list[str] = Field(default_factory=lambda: ["default"])
    pools: list[QueuePoolConfig] = Field(default_factory=list)


class CostConfig(ConfigModel):
    """`cost`: the stack's budget, in USD per hour, that the policy pack's
    `gpu-cost-at-full-scale` rule holds the plan's figures to (docs/cost.md). Unset: no budget."""

    # The most the stack may cost per hour with every pool at maxNodes.
    max_per_hour: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    # The most it may cost per hour idle (no GPU node running; committed capacity counts).
    max_idle_per_hour: float | None = Field(default=None, ge=0, allow_inf_nan=False)


@dataclass(frozen=True)
class StackConfig:
    """The validated stack config. `gpu_software_mode` is `auto` resolved for the cloud."""

    cloud: str
    cluster: ClusterConfig
    gpu_pools: tuple[GpuPoolConfig, ...]
    gpu_software: GpuSoftwareConfig
    samples: SamplesConfig
    gpu_software_mode: SoftwareMode
    warnings: tuple[str, ...] = ()
    queues: QueuesConfig = field(default_factory=QueuesConfig)
    cost: CostConfig = field(default_factory=CostConfig)
    # The day the stack is planned on (a Capacity Block that has ended by then gives no quota
    # and costs nothing); None: not known, every reservation counted as live.
    today: date | None = None


Section = TypeVar("Section", bound=ConfigModel)


def section(owner: ConfigModel, key: str, kind: type[Section]) -> Section:
    """The `key` section of `owner` (a cloud's own keys), typed as that cloud declares it."""
    value = getattr(owner, key)
    if not isinstance(value, kind):
        raise TypeError(f"{type(owner).__name__}.{key} is {type(value).__name__}, not {kind}")
    return value
