"""A GKE pool whose `capacity` is a fallback list one node pool cannot express (`[reserved,
flex-start, spot, on-demand]`, `[spot, on-demand]`, ...) as a custom ComputeClass: facts with
their sources, the frozen `GkeComputeClass` the component maps, and its checks.

How it is built: one node pool per capacity, created by gpufleet (each carrying the settings a
node pool of that single capacity gets, `capacity.py`), and a ComputeClass whose priorities
name those pools in the list's order (`nodepools` rules). Not node pool auto-creation: a
manually created, autoscaled pool keeps what gpufleet checks and sends today (driver, sharing,
image streaming, the specific reservation, surge 0 upgrades, no auto-repair on flex-start),
scales from zero, takes a minimum (auto-created pools cannot), needs no cluster-wide node
auto-provisioning limits for GPUs and no GKE 1.33.3 for auto-creation without them, and works
on an adopted cluster as it is.

Sources, read 2026-11-28:

- GKE docs, concepts/about-custom-compute-classes: custom ComputeClasses on Standard and
  Autopilot from 1.30.3-gke.1451000; priorities tried in order; pods select a class with
  `nodeSelector: cloud.google.com/compute-class: NAME`; changing a class affects only nodes
  created afterwards; active migration (`activeMigration.optimizeRulePriority`) moves pods to
  nodes of a higher priority when that capacity can be had again, as a voluntary disruption
  that honours PodDisruptionBudgets.
- GKE docs, how-to/node-attributes-compute-classes (Limitations): a class's name must not start
  with `gke` or `autopilot`; Standard clusters need an autoscaled node pool or auto-creation.
- GKE docs, best-practices/computeclasses: classes work with manually created and auto-created
  node pools.
- GKE docs, concepts/node-auto-provisioning (node metadata): nodes of a class carry the label
  `cloud.google.com/compute-class=NAME`; a manually created pool must carry that label and the
  taint `cloud.google.com/compute-class=NAME:NoSchedule` to serve the class; GKE adds the
  matching toleration to pods that select the class.
- GKE docs, reference/crds/computeclass: `priorities[].nodepools`, `whenUnsatisfiable`
  (`ScaleUpAnyway`, `DoNotScaleUp`), `nodePoolAutoCreation.enabled` (default false),
  `activeMigration.optimizeRulePriority` (default false). tommy351/kubernetes-models-ts
  third-party/gke/crd/computeclasses.yaml @30506b9 (CRD dumped from a cluster): a rule with
  `nodepools` takes no other field (CEL `has(self.nodepools) ? size(self) == 1`).
- `whenUnsatisfiable`'s default moved (ScaleUpAnyway in the 2025-04 CRD dump, DoNotScaleUp in
  google/skills gke-compute-classes compute-class-crd-fields.md @1af7775, 2026-08), so it is
  always sent: DoNotScaleUp, because ScaleUpAnyway starts a node outside the priorities (no
  GPU of the pool's model) when none of them can be had, where a GPU pod could not run anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import Any, Final

from components.gcp.model import capacity as gke
from components.gcp.model import capacity_checks
from components.gcp.model import config as gcp_config
from components.model.capacity import CapacityOrder, shown_order
from components.model.catalog.gpus import MachineType
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

API_VERSION: Final[str] = "cloud.google.com/v1"
KIND: Final[str] = "ComputeClass"
CLASS_LABEL: Final[str] = "cloud.google.com/compute-class"
WHEN_UNSATISFIABLE: Final[str] = "DoNotScaleUp"
FLOOR: Final[gke.VersionFloor] = gke.VersionFloor(
    "a compute class",
    "1.30",
    "1.30.3-gke.1451000",
    "GKE docs concepts/about-custom-compute-classes ('available to use in GKE Autopilot mode "
    "and GKE Standard mode in version 1.30.3-gke.1451000 and later')",
)
RESERVED_NAME_PREFIXES: Final[tuple[str, ...]] = ("gke", "autopilot")
# GKE node pool names: 1-40 characters (components/gcp/model/cloud.py's name rule).
NODE_POOL_NAME_MAX: Final[int] = 40
# The node pool of each capacity: the pool's name and this suffix (short, to fit 40).
POOL_SUFFIXES: Final[dict[str, str]] = {
    "reserved": "res",
    "flex-start": "flex",
    "spot": "spot",
    "on-demand": "od",
}
# The capacities a class falls back over, each one node pool (queued stands alone: shared
# rules; a capacity block is EC2's).
CLASS_CAPACITIES: Final[tuple[str, ...]] = tuple(POOL_SUFFIXES)
# Every list of two or more of them, in any order, but the one a node pool already expresses
# (ANY_RESERVATION: [reserved, on-demand]).
ORDERS: Final[tuple[CapacityOrder, ...]] = tuple(
    order
    for size in range(2, len(CLASS_CAPACITIES) + 1)
    for order in permutations(CLASS_CAPACITIES, size)
    if order not in gke.ORDERS
)


def node_pool_name(pool_name: str, capacity: str) -> str:
    return f"{pool_name}-{POOL_SUFFIXES[capacity]}"


@dataclass(frozen=True)
class ClassPriority:
    """One priority of the class: the node pool gpufleet creates for one capacity."""

    capacity: str
    node_pool: str
    settings: gke.NodePoolCapacity
    # The pool's minimum stays on its first priority; the others start from zero.
    min_nodes: int

    @property
    def spot(self) -> bool:
        return self.capacity == "spot"


@dataclass(frozen=True)
class GkeComputeClass:
    """The class and its node pools, as GKE is sent them."""

    name: str
    priorities: tuple[ClassPriority, ...]
    # Move pods back up the list when preferred capacity returns (issue 33: on by default).
    optimize_rule_priority: bool = True
    when_unsatisfiable: str = WHEN_UNSATISFIABLE

    @property
    def taint(self) -> tuple[str, str, str]:
        return (CLASS_LABEL, self.name, "NoSchedule")

    def spec(self) -> dict[str, Any]:
        """The ComputeClass's `spec`."""
        return {
            "priorities": [{"nodepools": [p.node_pool]} for p in self.priorities],
            "activeMigration": {"optimizeRulePriority": self.optimize_rule_priority},
            "whenUnsatisfiable": self.when_unsatisfiable,
            # gpufleet's own pools only: no auto-created pool beside them.
            "nodePoolAutoCreation": {"enabled": False},
        }


def compute_class(
    pool_name: str,
    order: CapacityOrder,
    min_nodes: int,
    reservation: str | None,
    max_run_seconds: int | None,
) -> GkeComputeClass:
    """The class of a checked pool whose order is one of `ORDERS`."""
    priorities = tuple(
        ClassPriority(
            word,
            node_pool_name(pool_name, word),
            gke.node_pool_capacity((word,), reservation, max_run_seconds),
            min_nodes if index == 0 else 0,
        )
        for index, word in enumerate(order)
    )
    return GkeComputeClass(pool_name, priorities)


def class_problems(
    cluster: ClusterConfig,
    pool: GpuPoolConfig,
    order: CapacityOrder,
    path: str,
    machines: Sequence[MachineType],
) -> list[Problem]:
    """What GKE refuses of this class, every problem at once."""
    problems: list[Problem] = []
    if pool.name.startswith(RESERVED_NAME_PREFIXES):
        problems.append(
            Problem(
                f"{path}.name",
                f"names the pool's compute class, and GKE refuses class names starting with "
                f"{' or '.join(RESERVED_NAME_PREFIXES)}: rename the pool",
                pool.name,
            )
        )
    longest = max(order, key=lambda word: len(POOL_SUFFIXES[word]))
    if len(node_pool_name(pool.name, longest)) > NODE_POOL_NAME_MAX:
        problems.append(
            Problem(
                f"{path}.name",
                f"its node pool {node_pool_name(pool.name, longest)} would be longer than "
                f"GKE's {NODE_POOL_NAME_MAX} characters: shorten the pool's name to at most "
                f"{NODE_POOL_NAME_MAX - len(POOL_SUFFIXES[longest]) - 1}",
                pool.name,
            )
        )
    version = cluster.kubernetes_version
    if not gke.gke_version_at_least(version, FLOOR.minor):
        problems.append(
            Problem(
                "cluster.kubernetesVersion",
                f"{path}.capacity {shown_order(order)} is a GKE compute class, which needs GKE "
                f"{FLOOR.patch} or later: raise it to {FLOOR.minor} or later",
                version,
            )
        )
    options = gcp_config.pool_options(pool)
    if "reserved" in order:
        # Specific only: a class's `AnyBestEffort` falls back to on-demand VMs inside Compute
        # Engine, so the priorities below it are never reached (google/skills
        # compute-class-gotchas-and-cuds.md); gcp.reservation is then required.
        problems += capacity_checks.reservation_problems(pool, gke.RESERVED, path, machines)
    elif options.reservation is not None:
        problems.append(
            Problem(
                f"{path}.gcp.reservation",
                f"capacity {shown_order(order)} has no reserved priority, so no node consumes "
                "it; add reserved to capacity, or remove gcp.reservation",
                options.reservation.name,
            )
        )
    if "flex-start" in order:
        # Version floor and machine series; the flex-start pool's own run duration.
        problems += capacity_checks.dws_problems(cluster, pool, gke.FLEX_START, path, machines)
        problems += capacity_checks.run_duration_problems(pool, gke.FLEX_START, path)
    else:
        problems += capacity_checks.run_duration_problems(pool, order, path)
    return problems


def class_warnings(pool: GpuPoolConfig, order: CapacityOrder, path: str) -> list[str]:
    """What GKE does that gpufleet cannot check, said once per class pool."""
    return [
        f"{path}.capacity: {shown_order(order)} is GKE compute class {pool.name} over "
        f"{len(order)} node pools ({', '.join(node_pool_name(pool.name, w) for w in order)}); "
        f"maxNodes ({pool.max_nodes}) caps each of them, not their sum (GKE has no cap across a "
        "class's node pools); active migration moves pods back to a higher priority when it "
        "has room again, honouring PodDisruptionBudgets (a running job without one may be "
        "evicted; not checked whether GKE honours cluster-autoscaler.kubernetes.io/"
        "safe-to-evict there)"
    ]
