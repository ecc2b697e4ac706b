"""Values held back until a new Azure RBAC grant has taken effect.

An ordering alone is not enough: Pulumi goes on right after ARM accepts a grant, while Azure can
take minutes to honour it (components/azure/model/rbac.py says how long, and why). What needs
the grant gets its value only once the grant is that old: the Kubernetes provider's kubeconfig
(every Kubernetes resource waits on it) after the deployer's grant, and a new pool's capacity
reservation group after the control plane's grant on the group's resource group. Everything
else goes on meanwhile, and previews never wait. Pulumi sends a resource only once all its
inputs are known, so a pool being replaced is deleted only when the wait is over.
"""

from __future__ import annotations

from asyncio import sleep
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pulumi
from pulumi_azure_native import authorization

from components.azure.model.rbac import PROPAGATION, remaining_wait

T = TypeVar("T")


def wait_for_propagation(
    value: pulumi.Input[T],
    grants: Sequence[authorization.RoleAssignment],
    propagation: timedelta = PROPAGATION,
    what: str = "the new Azure RBAC grant",
) -> pulumi.Output[T]:
    """`value`, once every grant in `grants` is `propagation` old (at once without grants)."""
    if not grants:
        return pulumi.Output.from_input(value)
    created = [grant.created_on for grant in grants]

    async def after(values: list[Any]) -> T:
        held, *created_on = values
        if not pulumi.runtime.is_dry_run():
            now = datetime.now(UTC)
            wait = max((remaining_wait(c, now, propagation) for c in created_on), default=0.0)
            if wait:
                pulumi.log.info(
                    f"waiting {wait / 60:.0f} min for {what} to take effect (up to "
                    f"{propagation.total_seconds() / 60:.0f} minutes after it is created)"
                )
                await sleep(wait)
        result: T = held
        return result

    return pulumi.Output.all(value, *created).apply(after)
