"""gpufleet's managed node groups as EKS runs them, read while the program plans.

`pulumi up` does not refresh by default, so Pulumi's state holds the desired size a group had
when gpufleet last set it (its minimum, at creation), not the one the autoscaler chose since.
Reading the live size lets a bounds change send it instead (components/aws/model/groups.py,
scaling_to_send). Nothing is read on a cluster that does not exist yet: the clusters of the
region are listed first, so a first `up` plans without a failing look-up.

The reads need `eks:ListClusters` (on `*`), `eks:ListNodegroups` and `eks:DescribeNodegroup` of
the identity that runs `pulumi preview` or `up` (docs/eks.md, "Permissions"). A read that fails
stops the program with what was read, why, and that permission, never a traceback (review
eks-3.md R3-11).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TypeVar

import pulumi
import pulumi_aws as aws

from components.aws.model.groups import LiveScaling, applied_bounds

T = TypeVar("T")
READ_ACTIONS = ("eks:ListClusters", "eks:ListNodegroups", "eks:DescribeNodegroup")


def unreadable(cluster: str, what: str, why: object) -> pulumi.RunError:
    """The program's refusal when a read of the cluster's managed node groups fails."""
    return pulumi.RunError(
        f"cluster {cluster}: gpufleet reads its EKS managed node groups while planning (so "
        "`pulumi up` sends a group's live desired size, never a stale one) and could not "
        f"read {what}: {why}. The identity running pulumi needs {', '.join(READ_ACTIONS)} "
        "(ListClusters on *, the others on the cluster and its node groups; docs/eks.md, "
        "'Permissions'); for a group that failed to create, fix or delete it in EKS first"
    )


class LiveNodeGroups:
    """The managed node groups of one cluster (none when the cluster does not exist yet).

    One per cluster component, shared by the system group and the GPU pools, and read on first
    use only: a stack without managed groups makes no look-up. `exists` is None when the
    cluster may not exist yet (one gpufleet creates: the region's clusters are listed), True
    for an adopted cluster (already looked up; no eks:ListClusters on `*` needed)."""

    def __init__(
        self, cluster_name: str, invoke: pulumi.InvokeOptions, exists: bool | None = None
    ) -> None:
        self._cluster = cluster_name
        self._invoke = invoke
        self._exists = exists

    @functools.cached_property
    def _names(self) -> frozenset[str]:
        exists = self._exists
        if exists is None:
            listed_clusters = self._read(
                "the region's clusters (eks:ListClusters)",
                lambda: aws.eks.get_clusters(opts=self._invoke).names,
            )
            exists = self._cluster in (listed_clusters or [])
        if not exists:
            return frozenset()
        listed = self._read(
            "its node groups (eks:ListNodegroups)",
            lambda: aws.eks.get_node_groups(cluster_name=self._cluster, opts=self._invoke).names,
        )
        return frozenset(listed or [])

    @property
    def names(self) -> frozenset[str]:
        """Every managed node group of the cluster, gpufleet's and (adopted) its owner's."""
        return self._names

    def _read(self, what: str, read: Callable[[], T]) -> T:
        try:
            return read()
        except Exception as error:  # the provider's message says why (AccessDenied, ...)
            raise unreadable(self._cluster, what, error) from None

    def scaling(self, group_name: str) -> LiveScaling | None:
        """The group's live scaling config (None: the group does not exist yet)."""
        if group_name not in self._names:
            return None
        return self._describe(group_name)[0]

    def scaling_by_prefix(self, prefix: str, labels: Mapping[str, str]) -> LiveScaling | None:
        """The live scaling config of the one group named `prefix`... that carries `labels`
        (a group Pulumi named from a prefix). None when there is none, or more than one (a
        replacement that did not finish: which one Pulumi's state holds is not known here)."""
        found = [
            scaling
            for name in sorted(self._names)
            if name.startswith(prefix)
            for scaling, group_labels in [self._describe(name)]
            if all(group_labels.get(key) == value for key, value in labels.items())
        ]
        return found[0] if len(found) == 1 else None

    def _describe(self, group_name: str) -> tuple[LiveScaling, Mapping[str, str]]:
        what = f"node group {group_name} (eks:DescribeNodegroup)"
        group = self._read(
            what,
            lambda: aws.eks.get_node_group(
                cluster_name=self._cluster, node_group_name=group_name, opts=self._invoke
            ),
        )
        configs = list(group.scaling_configs or [])
        if len(configs) != 1:
            # EKS describes a group that failed to create (CREATE_FAILED) without one.
            status = getattr(group, "status", None) or "unknown"
            raise unreadable(self._cluster, what, f"it has no scaling config (status {status})")
        (config,) = configs
        applied = applied_bounds(dict(group.tags or {}))
        return (
            LiveScaling(config.min_size, config.max_size, config.desired_size, applied),
            dict(group.labels or {}),
        )
