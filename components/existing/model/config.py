"""Config keys of a cluster gpufleet did not create: `cluster.existing`."""

from __future__ import annotations

from typing import Literal

from components.model.schema import ClusterConfig, ConfigModel, section


class ExistingClusterOptions(ConfigModel):
    # A kubeconfig comes from the secret key `gpufleet:kubeconfig`; `context` picks one of it
    # (or of the ambient kubeconfig when no secret is given).
    context: str | None = None
    # The device plugin and operator DaemonSets must tolerate these too (CPU-pool taints are
    # not ours to know on an existing cluster).
    distribution: Literal["generic", "gke", "eks", "aks"] = "generic"


def cluster_options(cluster: ClusterConfig) -> ExistingClusterOptions:
    return section(cluster, "existing", ExistingClusterOptions)
