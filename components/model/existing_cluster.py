"""`cluster.existing`: a cluster gpufleet did not create and never changes.

Two uses, one section. On `cloud: existing` it says how to reach any cluster (gpufleet installs
GPU software only). On gcp, aws and azure its presence means *adopt*: gpufleet looks up the
cluster named `cluster.name` in `cluster.region` with the provider's get functions and adds GPU
pools to it, with the GPU software, the autoscaler pieces and the samples, as on a cluster it
created. The keys here are those of `cloud: existing`; an adopting cloud that needs keys of its
own declares them in its folder (`Cloud.existing_options`) and `components.model.config` adds
them to this section, so their paths stay `cluster.existing.<key>`. Each cloud reads only
its own keys of the section (`config_checks.existing_keys_of`); the config check refuses the
others by name.
"""

from __future__ import annotations

from typing import Literal

from components.model.schema import ClusterConfig, ConfigModel, section

# The key of the section under `cluster` (also the name of the cloud that only reaches a cluster).
SECTION = "existing"


class ExistingClusterOptions(ConfigModel):
    # cloud existing: a kubeconfig comes from the secret key `gpufleet:kubeconfig`; `context`
    # picks one of its contexts (or of the ambient kubeconfig when no secret is given).
    context: str | None = None
    # cloud existing: the device plugin and operator DaemonSets must tolerate these too (CPU-pool
    # taints are not ours to know on an existing cluster).
    distribution: Literal["generic", "gke", "eks", "aks"] = "generic"
    # cloud existing, with a queued pool: the ProvisioningRequest class this cluster's
    # autoscaler serves (gpufleet does not manage that autoscaler, so it cannot check).
    provisioning_request_class: str | None = None


def written(cluster: ClusterConfig | None) -> bool:
    """Whether the stack writes `cluster.existing` (on an adopting cloud: adopts the cluster)."""
    return cluster is not None and SECTION in cluster.model_fields_set


def cluster_options(cluster: ClusterConfig) -> ExistingClusterOptions:
    return section(cluster, SECTION, ExistingClusterOptions)
