"""The GKE nodes' service account: an existing one (`cluster.gcp.nodeServiceAccount`), or
gpufleet's own with least-privilege roles (never Compute Engine's default)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class NodeIdentity:
    """The nodes' account email, and the grants nodes must wait for (none for a given one)."""

    email: pulumi.Input[str]
    grants: list[gcp.projects.IAMMember] = field(default_factory=list)


def account_id(cluster_name: str, project: str | None, region: str) -> str:
    """`<cluster>-nodes-<hash>`: unique to the project, region and cluster, so neither another
    cluster of the project (the same name in another region, or a long name's first 24
    characters) nor an owner's conventional `<cluster>-nodes` account can take it (IAM: 6-30
    of a-z 0-9 -; review gke-2.md N5)."""
    digest = hashlib.sha256(f"{project}/{region}/{cluster_name}".encode()).hexdigest()[:6]
    return f"{cluster_name[:16]}-nodes-{digest}"


def node_identity(
    name: str,
    cluster_name: str,
    project: str | None,
    region: str,
    given: str | None,
    child: pulumi.ResourceOptions,
    extra_roles: Sequence[str] = (),
) -> NodeIdentity:
    """The given account, untouched; or gpufleet's account and its role grants (GKE's
    minimum, and `extra_roles` the pools need: components/gcp/model/cluster_needs.py)."""
    if given is not None:
        return NodeIdentity(email=given)
    account = gcp.serviceaccount.Account(
        f"{name}-nodes",
        account_id=account_id(cluster_name, project, region),
        display_name=f"gpufleet nodes of {cluster_name}",
        opts=pulumi.ResourceOptions.merge(
            child,
            # Fixed at creation: an account created by an earlier gpufleet (`<cluster>-nodes`)
            # keeps its id, so upgrading gpufleet replaces neither it nor the pools that use it.
            pulumi.ResourceOptions(ignore_changes=["accountId"]),
        ),
    )
    grants = [
        gcp.projects.IAMMember(
            f"{name}-nodes-{role.split('/')[1].replace('.', '-').lower()}",
            project=project or account.project,
            role=role,
            member=account.email.apply(lambda email: f"serviceAccount:{email}"),
            opts=child,
        )
        for role in (*NODE_SERVICE_ACCOUNT_ROLES, *extra_roles)
    ]
    return NodeIdentity(email=account.email, grants=grants)
