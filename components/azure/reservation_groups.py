"""The capacity reservation groups the stack's GPU pools name, read while the program plans.

What the config cannot show (the group's region, zones, VM sizes and quantities) is read here,
during `pulumi preview` and `up`, and checked against each pool before anything is sent
(components/azure/model/reservations.py says what and why): AKS adds a pool to a group without
a reservation silently, and Azure refuses a VM whose size or zone the group does not reserve.
A group that cannot be read (no access) is said to be not checked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pulumi
from pulumi_azure_native import authorization, compute
from pulumi_azure_native.provider import Provider as AzureProvider

from components.azure.model.config import cluster_options, pool_options
from components.azure.model.reservations import (
    KEY,
    GroupFacts,
    GroupId,
    Reservation,
    group_id,
    group_problems,
    other_subscription,
)
from components.model.problems import ConfigError, Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

# ARM's answer for a group or resource group that does not exist.
_NOT_FOUND = re.compile(r"not ?found|could not be found", re.IGNORECASE)


def check_reservation_groups(
    cluster: ClusterConfig,
    pools: Sequence[GpuPoolConfig],
    parent: pulumi.Resource,
    provider: AzureProvider,
) -> None:
    """Stop the program on a pool its group cannot take; warn where a group cannot be read.
    Called before the cluster's component creates anything."""
    if not any(group_id(pool_options(pool).capacity_reservation_group_id) for pool in pools):
        return
    invoke = pulumi.InvokeOptions(parent=parent, provider=provider)
    # The subscription the provider reads and creates in (the config's, else the login's).
    subscription = (
        cluster_options(cluster).subscription_id
        or authorization.get_client_config(opts=invoke).subscription_id
    )
    problems: list[Problem] = []
    read: dict[str, GroupFacts | None] = {}
    for index, pool in enumerate(pools):
        value = pool_options(pool).capacity_reservation_group_id
        parts = group_id(value)
        if parts is None:
            continue  # no group, or a malformed id the config checks named
        path = f"gpuPools[{index}]"
        if parts.subscription != subscription.lower():
            problems.append(other_subscription(parts, subscription, f"{path}.{KEY}", value))
            continue
        key = (value or "").lower()
        if key not in read:
            read[key] = _read_or_say(parts, invoke, path, value, problems)
        facts = read[key]
        if facts is not None:
            problems += group_problems(facts, pool, cluster, path)
    if problems:
        raise pulumi.RunError(ConfigError(problems).render())


def _read_or_say(
    parts: GroupId,
    invoke: pulumi.InvokeOptions,
    path: str,
    value: str | None,
    problems: list[Problem],
) -> GroupFacts | None:
    """The group as Azure reports it; a problem when it does not exist, a warning when it
    cannot be read (None then)."""
    try:
        return _read(parts, invoke)
    except Exception as error:  # the provider's message says why
        if _NOT_FOUND.search(str(error)):
            problems.append(
                Problem(
                    f"{path}.{KEY}",
                    f"group {parts.name} was not found in resource group "
                    f"{parts.resource_group}; create it with a reservation for the pool's VM "
                    "size, or fix the id",
                    value,
                )
            )
        else:
            pulumi.log.warn(
                f"{path}.{KEY}: group {parts.name} could not be read ({error}): its region, "
                "zones and VM sizes are not checked against the pool"
            )
        return None


def _read(parts: GroupId, invoke: pulumi.InvokeOptions) -> GroupFacts:
    group = compute.get_capacity_reservation_group(
        resource_group_name=parts.resource_group,
        capacity_reservation_group_name=parts.name,
        opts=invoke,
    )
    members = []
    for member in group.capacity_reservations or ():
        name = str(getattr(member, "id", "") or "").rsplit("/", 1)[-1]
        found = compute.get_capacity_reservation(
            resource_group_name=parts.resource_group,
            capacity_reservation_group_name=parts.name,
            capacity_reservation_name=name,
            opts=invoke,
        )
        members.append(_reservation(found))
    return GroupFacts(
        name=group.name or parts.name,
        location=group.location or "",
        zones=tuple(group.zones or ()),
        reservations=tuple(members),
    )


def _reservation(found: Any) -> Reservation:
    sku = found.sku
    return Reservation(
        vm_size=str(getattr(sku, "name", "") or ""),
        zones=tuple(found.zones or ()),
        capacity=int(getattr(sku, "capacity", 0) or 0),
    )
