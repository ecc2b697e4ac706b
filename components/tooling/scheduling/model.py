"""What the scheduling simulator knows about a node pool, as plain frozen data.

These types describe *templates* (what any node of a pool looks like), not live nodes:
the `fit` check runs before anything is deployed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


@dataclass(frozen=True)
class Taint:
    """A node taint; `value` may be empty, as in Kubernetes."""

    key: str
    value: str
    effect: str

    def __post_init__(self) -> None:
        if self.effect not in TAINT_EFFECTS:
            raise ValueError(
                f"taint {self.key}: effect {self.effect!r} is not one of {TAINT_EFFECTS}"
            )

    def __str__(self) -> str:
        # kubectl's notation: key=value:Effect, or key:Effect when the value is empty.
        value = f"={self.value}" if self.value else ""
        return f"{self.key}{value}:{self.effect}"


@dataclass(frozen=True)
class NodeTemplate:
    """What one node of a pool looks like to the scheduler.

    `labels` hold on every node; `label_choices` vary per node (zone, instance type), so a
    selector naming any one choice can be met by some node.
    """

    pool: str
    labels: Mapping[str, str] = field(default_factory=dict)
    label_choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    allocatable: Mapping[str, int] = field(default_factory=dict)
    cpu_millis: int = 0
    memory_bytes: int = 0
    # Whether cpu/memory are the kubelet's allocatable (the cloud's reservations taken off)
    # or, where those are unknown, the machine's size.
    shape_is_allocatable: bool = False
    # Whether the pool's DaemonSet pods' requests are already taken off cpu/memory.
    after_daemonsets: bool = False
    # cpu/memory are the largest of the machine types the provisioner picks from per pod.
    largest_type: str | None = None

    def __post_init__(self) -> None:
        # A key that is both fixed and varying has no single meaning; catch it at build time
        # rather than let the simulator pick one silently.
        both = sorted(set(self.labels) & set(self.label_choices))
        if both:
            raise ValueError(
                f"pool {self.pool}: labels {both} are in both labels and label_choices"
            )
        empty = sorted(key for key, choices in self.label_choices.items() if not choices)
        if empty:
            raise ValueError(f"pool {self.pool}: label_choices {empty} have no choices")


@dataclass(frozen=True)
class PoolView:
    """A pool as the fit check sees it: running nodes and, at zero, the autoscaler's view."""

    name: str
    kind: str  # "gpu" | "system"
    min_nodes: int
    node: NodeTemplate
    # None: the cluster autoscaler cannot build a template for the empty pool, so it never
    # scales it up from zero.
    scale_from_zero: NodeTemplate | None
    # Whether the API server's ExtendedResourceToleration admission plugin runs (None: not
    # known; judged as if it did not).
    extended_resource_toleration: bool | None
    # What scales the pool up from zero, by name.
    provisioner: str = "the cluster autoscaler"


@dataclass(frozen=True)
class FitResult:
    """Whether a pod template can be placed on a pool, and every reason it cannot."""

    pool: str
    fits: bool
    reasons: list[str]
    via: str  # "running nodes" | "autoscaler template at zero"
