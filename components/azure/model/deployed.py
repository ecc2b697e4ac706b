"""What AKS refuses of a change to a cluster gpufleet already created, judged on the live cluster.

On a stack whose cluster exists, the program reads it (`containerservice.get_managed_cluster`,
while `pulumi preview` and `up` plan) and stops before anything is sent when the change is one
AKS would refuse, naming the key and what to do:

- a lower minor than the cluster runs: "You can't downgrade the control plane or a node pool
  Kubernetes version" (learn.microsoft.com/azure/aks/upgrade-node-pools, Validation rules);
- more than one minor up: "When you upgrade a supported non-LTS AKS cluster, you can't skip
  Kubernetes minor versions" (upgrade-aks-control-plane, Kubernetes version upgrade rules);
  gpufleet creates no LTS cluster (components/azure/model/version_rules.py);
- local accounts on a cluster with Entra ID: "Microsoft Entra integration can't be disabled
  after it's enabled on a cluster" (entra-id-control-plane-authentication, Limitations);
- another control-plane identity (`cluster.azure.controlPlaneIdentityId`): AKS moves a running
  cluster only when a node image update is there to consume (user-assigned-managed-identity),
  and gpufleet does not (below).
- another VM size or other zones for the system pool (`cluster.systemPool.machineType`,
  `cluster.zones`): AKS fixes both when it creates a pool (the reasons and what to do instead
  are `diff`'s, components/azure/model/change_rules.py).

The same refusals are in `diff` (components/azure/model/change_rules.py) for two plans; this
catches the change even when nobody ran `diff`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from components.azure.model.change_rules import AKS_SYSTEM_POOL_FIXED, AKS_SYSTEM_POOL_INSTEAD
from components.azure.model.config import cluster_options
from components.model.adoption import minor_of
from components.model.pool_spec import PoolSpec
from components.model.problems import ConfigError, Problem
from components.model.schema import SYSTEM_POOL_NAME, ClusterConfig


@dataclass(frozen=True)
class FixedAtCreation:
    """What AKS fixes when it creates an agent pool: a change of any of these replaces the pool
    (components/azure/gpu_pool.py, replace_on_changes), so the replacement is a creation."""

    vm_size: str
    os_disk_size_gb: int | None
    spot: bool
    zones: tuple[str, ...]
    gpu_instance_profile: str | None = None
    driver: str | None = None
    # The capacity reservation group's ARM id, lowercased (ARM does not keep an id's case).
    capacity_reservation_group_id: str | None = None


@dataclass(frozen=True)
class DeployedCluster:
    """The stack's own AKS cluster as it runs (read at plan time)."""

    name: str
    # currentKubernetesVersion ("1.35.7"), else kubernetesVersion.
    kubernetes_version: str
    entra_id: bool
    # The agent pools that exist, by name, with what AKS fixed when it created them.
    pools: Mapping[str, FixedAtCreation] = field(default_factory=dict)
    # The control plane's user-assigned identity, lowercased (None: system-assigned).
    control_plane_identity_id: str | None = None


def kept(pools: Mapping[str, FixedAtCreation], name: str, wanted: FixedAtCreation) -> bool:
    """Whether the pool exists and stays (is not replaced): then gpufleet sends it no `count`,
    and AKS keeps the node count the autoscaler chose. A pool about to be created, or created
    anew by a replacement, gets one (AKS starts the pool at it)."""
    return pools.get(name) == wanted


def deployed_problems(
    deployed: DeployedCluster, cluster: ClusterConfig, system: PoolSpec | None = None
) -> list[Problem]:
    """What AKS would refuse of `cluster` (and its resolved system pool) on the running one."""
    problems = []
    running = minor_of(deployed.kubernetes_version)
    wanted = minor_of(cluster.kubernetes_version)
    if running and wanted and running != wanted:
        (old_major, old_minor), (new_major, new_minor) = (
            tuple(int(part) for part in v.split(".")) for v in (running, wanted)
        )
        if (new_major, new_minor) < (old_major, old_minor):
            problems.append(
                Problem(
                    "cluster.kubernetesVersion",
                    f"is older than the {running} cluster {deployed.name} runs "
                    f"({deployed.kubernetes_version}), and AKS can't downgrade a cluster; keep "
                    f"{running} (an older minor needs a new cluster, in a new stack)",
                    cluster.kubernetes_version,
                )
            )
        elif new_major == old_major and new_minor > old_minor + 1:
            problems.append(
                Problem(
                    "cluster.kubernetesVersion",
                    f"skips minors: cluster {deployed.name} runs {deployed.kubernetes_version} "
                    "and AKS upgrades a non-LTS cluster one minor at a time; set "
                    f"{old_major}.{old_minor + 1}, run `pulumi up`, then the next minor",
                    cluster.kubernetes_version,
                )
            )
    if deployed.entra_id and cluster_options(cluster).authentication != "entra-id":
        problems.append(
            Problem(
                "cluster.azure.authentication",
                f"cluster {deployed.name} has Microsoft Entra ID, which AKS can't turn off "
                "after it is enabled; keep entra-id (a cluster with local accounts only is a "
                "new cluster, in a new stack)",
                cluster_options(cluster).authentication,
            )
        )
    problems += _identity_problems(deployed, cluster)
    if system is not None:
        problems += _system_pool_problems(deployed, cluster, system.machine_types[0], system.zones)
    return problems


def _system_pool_problems(
    deployed: DeployedCluster, cluster: ClusterConfig, vm_size: str, zones: Sequence[str]
) -> list[Problem]:
    """The system pool keeps the VM size and zones AKS created it with: the cluster sends its
    profile on every update, and AKS refuses those changes there."""
    running = deployed.pools.get(SYSTEM_POOL_NAME)
    if running is None:
        return []
    reasons = dict(AKS_SYSTEM_POOL_FIXED)
    problems = []
    if running.vm_size and running.vm_size.lower() != vm_size.lower():
        written = cluster.system_pool.machine_type
        problems.append(
            Problem(
                "cluster.systemPool.machineType",
                f"cluster {deployed.name}'s system pool runs {running.vm_size}: "
                f"{reasons['vmSize']}; {AKS_SYSTEM_POOL_INSTEAD}",
                written if written is not None else vm_size,
                has_value=written is not None,
            )
        )
    if running.zones != tuple(sorted(zones)):
        shown = ", ".join(running.zones) or "no zones"
        problems.append(
            Problem(
                "cluster.zones",
                f"cluster {deployed.name}'s system pool runs in {shown}: "
                f"{reasons['availabilityZones']}; {AKS_SYSTEM_POOL_INSTEAD}",
                list(cluster.zones or []),
                has_value=cluster.zones is not None,
            )
        )
    return problems


def _identity_problems(deployed: DeployedCluster, cluster: ClusterConfig) -> list[Problem]:
    """A running cluster keeps the control-plane identity it was created with: AKS moves one
    to another identity only when a node image update is there to consume (aks/user-assigned-
    managed-identity, "Update cluster considerations"), and its control plane goes on with the
    old identity for hours after (aks/managed-identity-overview), while the Network Contributor
    grant gpufleet makes for it would move at once."""
    wanted = cluster_options(cluster).control_plane_identity_id
    if (wanted or "").lower() == (deployed.control_plane_identity_id or ""):
        return []
    running = deployed.control_plane_identity_id or "a system-assigned identity"
    keep = deployed.control_plane_identity_id or "it unset"
    return [
        Problem(
            "cluster.azure.controlPlaneIdentityId",
            f"cluster {deployed.name} runs its control plane as {running}; AKS moves a running "
            "cluster to another identity only when a node image update is available, and its "
            "control plane keeps the old identity for hours while the grants gpufleet makes "
            f"move at once, so gpufleet does not change it: keep {keep} (pools in a capacity "
            "reservation group need a cluster created with controlPlaneIdentityId, in a new "
            "stack)",
            wanted,
            has_value=wanted is not None,
        )
    ]


class DeployedClusterError(ConfigError):
    """A change AKS would refuse, found on the running cluster before anything is sent."""

    def __init__(self, cluster_name: str, problems: list[Problem]) -> None:
        self.cluster_name = cluster_name
        super().__init__(problems)

    def render(self) -> str:
        lines = [
            f"cluster {self.cluster_name} exists, and AKS would refuse this change "
            f"({len(self.problems)} problem(s)):"
        ]
        lines += [f"  - {p}" for p in self.problems]
        return "\n".join(lines)
