"""The GKE nodes' own service account with least-privilege roles (never Compute Engine's default)."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

# Least privilege for the nodes' own service account (GKE hardening guide; the first is GKE's
# documented minimum for a node service account, cloud.google.com/kubernetes-engine/docs/how-to/
# service-accounts#default-gke-service-agent).
NODE_SERVICE_ACCOUNT_ROLES = (
    "roles/container.defaultNodeServiceAccount",
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
    "roles/artifactregistry.reader",
)


def node_service_account(
    name: str, cluster_name: str, project: str | None, child: pulumi.ResourceOptions
) -> tuple[gcp.serviceaccount.Account, list[gcp.projects.IAMMember]]:
    """The account (`<name>-nodes`) and its role grants; nodes should start only once the grants
    exist, so callers make their pools depend on them."""
    account = gcp.serviceaccount.Account(
        f"{name}-nodes",
        account_id=f"{cluster_name[:24]}-nodes",
        display_name=f"gpufleet nodes of {cluster_name}",
        opts=child,
    )
    grants = [
        gcp.projects.IAMMember(
            f"{name}-nodes-{role.split('/')[1].replace('.', '-').lower()}",
            project=project or account.project,
            role=role,
            member=account.email.apply(lambda email: f"serviceAccount:{email}"),
            opts=child,
        )
        for role in NODE_SERVICE_ACCOUNT_ROLES
    ]
    return account, grants
