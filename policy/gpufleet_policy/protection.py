"""Production stacks protect their cluster from deletion (`protect` resource option).

Which stack is production comes from the pack's config (`production: true` for this policy),
which `policy/pack_config.py` writes from the stack file; the policy then checks the option the
program actually set on the cluster resource, so a program that forgets it is caught.
"""

from __future__ import annotations

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from .resources import CLUSTERS

POLICY_NAME = "clusters-protected-in-production"


def check_cluster_protected(resource_type: str, protect: bool, production: bool) -> list[str]:
    """In a production stack every cluster resource has `protect` set."""
    if not production or resource_type not in CLUSTERS:
        return []
    if protect:
        return []
    return [
        f"{resource_type} is not protected in a production stack: `pulumi destroy` or a replace "
        "would delete the cluster and every workload on it (set gpufleet:cluster.protect: true)"
    ]


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    production = bool(args.get_config().get("production", False))
    for message in check_cluster_protected(args.resource_type, bool(args.opts.protect), production):
        report_violation(message, None)


clusters_protected = ResourceValidationPolicy(
    name=POLICY_NAME,
    description="In stacks marked production, every Kubernetes cluster resource is protected from deletion.",
    validate=_validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(
        properties={
            "production": {
                "type": "boolean",
                "default": False,
                "description": "This stack is production: its clusters must be protected.",
            }
        }
    ),
)

POLICIES = [clusters_protected]
