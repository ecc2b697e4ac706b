"""The Kubernetes provider's kubeconfig, held back until the deployer's Azure RBAC grant works.

An ordering alone is not enough: Pulumi creates the provider right after the grant, while
Azure RBAC can take five minutes to authorize it (components/azure/model/rbac.py). The
kubeconfig is therefore resolved only once the grant is that old; every Kubernetes resource
waits on it, the Azure resources (GPU pools) go on meanwhile. Previews never wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pulumi
from pulumi_azure_native import authorization

from components.azure.model.rbac import remaining_wait


def wait_for_propagation(
    kubeconfig: pulumi.Output[str], grants: Sequence[authorization.RoleAssignment]
) -> pulumi.Output[str]:
    if not grants:
        return kubeconfig
    created = [grant.created_on for grant in grants]

    async def after(values: list[Any]) -> str:
        document, *created_on = values
        if not pulumi.runtime.is_dry_run():
            now = datetime.now(UTC)
            wait = max((remaining_wait(c, now) for c in created_on), default=0.0)
            if wait:
                pulumi.log.info(
                    f"waiting {wait:.0f} s for the new Azure RBAC grant to take effect "
                    "(up to five minutes after it is created)"
                )
                await asyncio.sleep(wait)
        return str(document)

    return pulumi.Output.all(kubeconfig, *created).apply(after)
