"""gpufleet's managed node groups as EKS runs them, read while the program plans.

`pulumi up` does not refresh by default, so Pulumi's state holds the desired size a group had
when gpufleet last set it (its minimum, at creation), not the one the autoscaler chose since.
Reading the live size lets a bounds change send it instead (components/aws/model/groups.py,
scaling_to_send). Nothing is read on a cluster that does not exist yet: the clusters of the
region are listed first, so a first `up` plans without a failing look-up.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import pulumi
import pulumi_aws as aws

from components.aws.model.groups import LiveScaling, applied_bounds


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
            exists = self._cluster in (aws.eks.get_clusters(opts=self._invoke).names or [])
        if not exists:
            return frozenset()
        listed = aws.eks.get_node_groups(cluster_name=self._cluster, opts=self._invoke)
        return frozenset(listed.names or [])

    def scaling(self, group_name: str) -> LiveScaling | None:
        """The group's live scaling config (None: the group does not exist yet)."""
        if group_name not in self._names:
            return None
        return self._read(group_name)[0]

    def scaling_by_prefix(self, prefix: str, labels: Mapping[str, str]) -> LiveScaling | None:
        """The live scaling config of the one group named `prefix`... that carries `labels`
        (a group Pulumi named from a prefix). None when there is none, or more than one (a
        replacement that did not finish: which one Pulumi's state holds is not known here)."""
        found = [
            scaling
            for name in sorted(self._names)
            if name.startswith(prefix)
            for scaling, group_labels in [self._read(name)]
            if all(group_labels.get(key) == value for key, value in labels.items())
        ]
        return found[0] if len(found) == 1 else None

    def _read(self, group_name: str) -> tuple[LiveScaling, Mapping[str, str]]:
        group = aws.eks.get_node_group(
            cluster_name=self._cluster, node_group_name=group_name, opts=self._invoke
        )
        (config,) = group.scaling_configs
        applied = applied_bounds(dict(group.tags or {}))
        return (
            LiveScaling(config.min_size, config.max_size, config.desired_size, applied),
            dict(group.labels or {}),
        )
