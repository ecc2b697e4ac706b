"""How long the Kubernetes provider waits for a new Azure RBAC grant to take effect.

"New role assignments can take up to five minutes to propagate and be updated by the
authorization server" (learn.microsoft.com/azure/aks/entra-id-authorization, Limitations). On an
Entra ID cluster with Azure RBAC the deployer's Kubernetes calls are authorized by that server,
so the first `up` would meet 403 Forbidden on its first Namespace or Helm release if it went on
right after creating the grant (review aks.md F5). The wait is counted from the grant's own
`createdOn`, so it costs nothing once the grant is older than that.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

PROPAGATION = timedelta(minutes=5)
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


def remaining_wait(created_on: str | None, now: datetime) -> float:
    """Seconds left until a grant created at `created_on` has surely propagated (0: none)."""
    moment = created_at(created_on)
    if moment is None:
        return 0.0
    return max(0.0, (moment + PROPAGATION - now).total_seconds())
