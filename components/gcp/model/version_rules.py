"""What GKE refuses about a minor its calendar still lists, for this stack's settings.

Past the end of standard support GKE offers a minor only to clusters in the Extended release
channel ("around 14 months of standard support and approximately an additional 10 months of
extended support available with the Extended channel", cloud.google.com/kubernetes-engine/docs/
concepts/release-channels), and a version the cluster's channel does not offer fails at create
(reviews/gke.md). A cluster in RAPID, REGULAR or STABLE is refused such a minor at plan time;
`cluster.gcp.releaseChannel: EXTENDED` keeps it (billed as extended support; the calendar's
warning says until when).
"""

from __future__ import annotations

from components.gcp.model import config as gcp_config
from components.model.lifecycle import Assessment
from components.model.problems import Problem
from components.model.schema import ClusterConfig


def version_problems(cluster: ClusterConfig, verdict: Assessment) -> list[Problem]:
    if verdict.status != "extended":
        return []
    channel = gcp_config.cluster_options(cluster).release_channel
    if channel == "EXTENDED":
        return []
    return [
        Problem(
            "cluster.kubernetesVersion",
            f"is past GKE standard support, which only the Extended release channel offers; "
            f"the cluster is in {channel} (cluster.gcp.releaseChannel), so GKE would not create "
            "it: choose a minor in standard support, or set cluster.gcp.releaseChannel: "
            f"EXTENDED (extended support is billed). {verdict.message}",
            cluster.kubernetes_version,
        )
    ]
