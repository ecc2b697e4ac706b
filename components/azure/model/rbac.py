"""How long what needs a new Azure RBAC grant waits for it to take effect.

A grant ARM has accepted is not yet one every Azure service honours. Two of gpufleet's grants
are used right after they are made, and each wait is counted from the grant's own `createdOn`,
so it costs nothing once the grant is older than that:

- The deployer's AKS RBAC Cluster Admin grant: "New role assignments can take up to five minutes
  to propagate and be updated by the authorization server" (learn.microsoft.com/azure/aks/
  entra-id-authorization, Limitations). On an Entra ID cluster with Azure RBAC the deployer's
  Kubernetes calls are authorized by that server, so the first `up` would meet 403 Forbidden on
  its first Namespace or Helm release if it went on right after creating the grant (review
  aks.md F5). The Kubernetes provider's kubeconfig waits for it.
- The control plane's Contributor grant on a capacity reservation group's resource group: "It
  can take up to _60 minutes_ for the role assignment to propagate" (learn.microsoft.com/azure/
  aks/use-capacity-reservation-groups, MicrosoftDocs/azure-aks-docs at 03076d3b). AKS places a
  pool's VMs in the group as that identity, so a pool created right after the grant fails
  (reviews capacity-cost-3 N-S1-1, aks-3 N-1). A pool that is created or replaced into a group
  waits for its grant; one that exists already does not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Final

PROPAGATION: Final = timedelta(minutes=5)
RESERVATION_GRANT_PROPAGATION: Final = timedelta(minutes=60)
ROLE_ASSIGNMENT: Final = "azure-native:authorization:RoleAssignment"
# What `diff` says of a resource whose inputs come from a grant the same `up` makes (or
# replaces), by (grant type, type of what waits): Pulumi sends it only once the wait is over.
GRANT_WAITS: Final[Mapping[tuple[str, str], str]] = MappingProxyType(
    {
        (ROLE_ASSIGNMENT, "azure-native:containerservice:AgentPool"): (
            "Azure takes up to 60 minutes to propagate the control plane's new Contributor grant "
            "on the reservation group's resource group (aks/use-capacity-reservation-groups), "
            "so `pulumi up` creates this pool only once the grant is 60 minutes old (counted "
            "from its creation; `up` takes up to an hour longer, and a pool being replaced keeps "
            "running until then). To skip the wait, have the grant made at least an hour beforehand and name "
            "reservation-groups in cluster.azure.grantsMadeElsewhere (docs/aks.md)"
        ),
        (ROLE_ASSIGNMENT, "pulumi:providers:kubernetes"): (
            "Azure RBAC takes up to five minutes to propagate the deployer's new grant "
            "(aks/entra-id-authorization), so the Kubernetes resources wait until it is five "
            "minutes old; the Azure resources go on meanwhile"
        ),
    }
)
# ARM writes seven fractional digits ("2026-11-25T15:20:31.1234567Z"); Python reads six.
_FRACTION = re.compile(r"(\.\d{6})\d+")


def created_at(created_on: str | None) -> datetime | None:
    """The grant's creation time from ARM's `createdOn` (None: unknown or unreadable)."""
    if not created_on:
        return None
    text = _FRACTION.sub(r"\1", created_on.strip()).replace("Z", "+00:00")
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def remaining_wait(
    created_on: str | None, now: datetime, propagation: timedelta = PROPAGATION
) -> float:
    """Seconds left until a grant created at `created_on` has surely propagated (0: none);
    never more than `propagation`, even when ARM's clock is ahead of this machine's."""
    moment = created_at(created_on)
    if moment is None:
        return 0.0
    left = (moment + propagation - now).total_seconds()
    return min(propagation.total_seconds(), max(0.0, left))
