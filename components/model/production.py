"""Stacks that look like production, and the protection their cluster needs.

The policy pack's `clusters-protected-in-production` refuses a preview whose cluster is not
protected when the stack is production: its file sets `gpufleet:cluster.protect: true`, or its
name says so (`prod`, `production`, `*-prod`, `prod-*`; policy/pack_config.py, which CI runs).
`new` writes `protect: true` for such a name, and `plan` warns before CI refuses, with the same
rule (tests/test_new_stack.py holds the two equal).
"""

from __future__ import annotations

import re

from components.model.cloud import Cloud
from components.model.schema import StackConfig

PRODUCTION_NAME = re.compile(r"(^|[-_.])(prod|production)($|[-_.])", re.IGNORECASE)


def looks_like_production(name: str) -> bool:
    return PRODUCTION_NAME.search(name) is not None


def creates_cluster(cloud: Cloud, config: StackConfig) -> bool:
    """Whether gpufleet creates the stack's cluster (a cloud with regions, not adopting one):
    only then is there a cluster resource to protect."""
    return cloud.region_rule is not None and not cloud.adopted(config.cluster)


def unprotected_warning(name: str, cloud: Cloud, config: StackConfig) -> str | None:
    """What `plan` says of a production-looking stack whose cluster is not protected."""
    if not looks_like_production(name) or config.cluster.protect:
        return None
    if not creates_cluster(cloud, config):
        return None
    return (
        f"cluster.protect: stack {name} looks like production by its name, and its cluster is "
        "not protected: the policy pack's clusters-protected-in-production refuses its preview "
        "in CI (a `pulumi destroy` or a replace would delete the cluster and every workload on "
        "it); set gpufleet:cluster.protect: true, or rename the stack"
    )
