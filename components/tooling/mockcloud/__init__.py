"""Plausible cloud answers for the offline engine's mocked resources and calls.

Each cloud module maps a resource type token to a function giving the output properties the
real provider would add (endpoints, ARNs, certificates) and an invoke token to its result.
Only what the program reads needs to be here; everything else echoes the inputs. The answers
follow the `World` of the stack: its region (a us-west-2 stack gets us-west-2 endpoints and
ARNs) and the cluster it adopts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from components.tooling.mockcloud import aws, azure, gcp, kubernetes
from components.tooling.mockcloud.world import World

ResourceFake = Callable[[str, Mapping[str, Any], World], dict[str, Any]]
CallFake = Callable[[Mapping[str, Any]], dict[str, Any]]
LookupFake = Callable[[Mapping[str, Any], World], dict[str, Any]]

RESOURCES: dict[str, ResourceFake] = {}
CALLS: dict[str, CallFake] = {}
# Calls whose answer depends on the world: the stack's region, or the cluster a stack adopts.
LOOKUPS: dict[str, LookupFake] = {}
for _module in (gcp, aws, azure, kubernetes):
    RESOURCES.update(_module.RESOURCES)
    CALLS.update(_module.CALLS)
    LOOKUPS.update(getattr(_module, "LOOKUPS", {}))


def resource_state(
    type_: str, name: str, inputs: Mapping[str, Any], world: World | None = None
) -> tuple[str, dict[str, Any]]:
    """(id, state) for a mocked resource: its inputs plus the outputs the provider would add."""
    world = world or World()
    state: dict[str, Any] = dict(inputs)
    fake = RESOURCES.get(type_)
    if fake is not None:
        state.update(fake(name, inputs, world))
    if type_.startswith("aws:") and "arn" not in state:
        service = type_.split(":")[1].split("/")[0]
        state["arn"] = f"arn:aws:{service}:{aws.region(world)}:{aws.ACCOUNT}:{name}"
    return str(state.pop("__id", f"{name}-id")), state


def call_result(token: str, args: Mapping[str, Any], world: World | None = None) -> dict[str, Any]:
    lookup = LOOKUPS.get(token)
    if lookup is not None:
        return lookup(args, world or World())
    fake = CALLS.get(token)
    return fake(args) if fake is not None else {}
