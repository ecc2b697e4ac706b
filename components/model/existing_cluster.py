"""`cluster.existing`: a cluster gpufleet did not create and never changes.

Two uses, one section. On `cloud: existing` it says how to reach any cluster (gpufleet installs
GPU software only). On gcp, aws and azure its presence means *adopt*: gpufleet looks up the
cluster named `cluster.name` in `cluster.region` with the provider's get functions and adds GPU
pools to it, with the GPU software, the autoscaler pieces and the samples, as on a cluster it
created. Each cloud reads only its own keys of the section (`Cloud.existing_keys`); the config
check refuses the others by name.
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
    # aws: a cluster autoscaler or Karpenter (cluster.aws.provisioner says which) already runs
    # in the cluster; gpufleet creates only what it needs to see the new pools, not a second one.
    autoscaler_installed: bool = False
    # aws, with a Karpenter already installed: the node role that Karpenter's controller may
    # pass to the instances it launches (its IAM policy names it), by role name.
    karpenter_node_role: str | None = None
    # cloud existing, with a queued pool: the ProvisioningRequest class this cluster's
    # autoscaler serves (gpufleet does not manage that autoscaler, so it cannot check).
    provisioning_request_class: str | None = None
    # aws: security groups every gpufleet GPU node gets besides the cluster security group, for
    # clusters whose nodes reach CoreDNS and each other through a node security group of their
    # own (terraform-aws-modules/eks does not attach the cluster security group to nodes).
    node_security_group_ids: list[str] | None = None
    # gcp: where the adopted cluster is when it is zonal (a zone of cluster.region, such as
    # us-central1-a); unset: a regional cluster, in cluster.region.
    location: str | None = None


def cluster_options(cluster: ClusterConfig) -> ExistingClusterOptions:
    return section(cluster, SECTION, ExistingClusterOptions)
