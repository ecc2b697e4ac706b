"""What AKS refuses about a minor its calendar still creates, for this stack's settings.

Past a minor's end of life AKS creates it only under long-term support: "Non-LTS versions past
end of life cannot be used to create a cluster", and LTS needs the Premium tier with the
AKSLongTermSupport support plan (https://learn.microsoft.com/azure/aks/long-term-support;
reviews/aks.md F1, G14). gpufleet does not set that plan, so such a minor is refused at plan time
rather than by ARM.
"""

from __future__ import annotations

from components.model.lifecycle import Assessment
from components.model.problems import Problem
from components.model.schema import ClusterConfig


def version_problems(cluster: ClusterConfig, verdict: Assessment) -> list[Problem]:
    if verdict.status != "extended":
        return []
    return [
        Problem(
            "cluster.kubernetesVersion",
            "is past AKS end of life and AKS creates it only as long-term support (Premium tier "
            "and the AKSLongTermSupport plan), which gpufleet does not configure; a new cluster "
            "takes a minor in standard support, while a cluster that runs this one moves one "
            "minor at a time (set the next minor, run `pulumi up`, then the next: AKS refuses "
            f"to skip a minor on a non-LTS cluster). {verdict.message}",
            cluster.kubernetes_version,
        )
    ]
