"""Plausible cloud answers for the offline engine's mocked resources and calls.

Each cloud's mock (`components/<cloud>/mock.py`, a `CloudMock` its resource knowledge names)
maps a resource type token to a function giving the output properties the real provider would
add (endpoints, ARNs, certificates) and an invoke token to its result.
Only what the program reads needs to be here; everything else echoes the inputs. The answers
follow the `World` of the stack: its region (a us-west-2 stack gets us-west-2 endpoints and
ARNs) and the cluster it adopts.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import re
from collections.abc import Mapping
from typing import Any

from components.mock_world import CallFake, CloudMock, LookupFake, ResourceFake, World
from components.model.resource_index import MOCK_MODULES, merged

# Every cloud's mock, as its resource knowledge names it (imported here, not by the model).
MOCKS: tuple[CloudMock, ...] = tuple(
    importlib.import_module(module).MOCK for module in MOCK_MODULES
)
# Every cloud's answers, merged as the resource knowledge is: a token two mocks answer for is
# refused (resource_index.merged).
RESOURCES: Mapping[str, ResourceFake] = merged(mock.resources for mock in MOCKS)
CALLS: Mapping[str, CallFake] = merged(mock.calls for mock in MOCKS)
# Calls whose answer depends on the world: the stack's region, or the cluster a stack adopts.
LOOKUPS: Mapping[str, LookupFake] = merged(mock.lookups for mock in MOCKS)
# What a rotated control plane answers instead (World.endpoint_rotated), from every cloud.
ROTATED: tuple[tuple[str, str], ...] = tuple(pair for mock in MOCKS for pair in mock.rotated)
# Input paths (regular expressions) of each resource type whose values the mock makes up, with
# what the real value will be (`diff` marks them).
MOCKED_INPUTS: Mapping[str, Mapping[str, str]] = merged(mock.mocked_inputs for mock in MOCKS)


def mocked_input(type_: str, path: str) -> str | None:
    """What the real value of a resource's input at `path` will be, where the mock made it up."""
    for pattern, says in MOCKED_INPUTS.get(type_, {}).items():
        if re.fullmatch(pattern, path):
            return says
    return None


def resource_state(
    type_: str, name: str, inputs: Mapping[str, Any], world: World | None = None
) -> tuple[str, dict[str, Any]]:
    """(id, state) for a mocked resource: its inputs plus the outputs the provider would add."""
    world = world or World()
    state: dict[str, Any] = dict(inputs)
    fake = RESOURCES.get(type_)
    if fake is not None:
        state.update(_rotated(fake(name, inputs, world), world))
    for mock in MOCKS:
        if mock.finish is not None:
            state.update(mock.finish(type_, name, state, world))
    return str(state.pop("__id", f"{name}-id")), state


def call_result(token: str, args: Mapping[str, Any], world: World | None = None) -> dict[str, Any]:
    lookup = LOOKUPS.get(token)
    if lookup is not None:
        return dict(_rotated(lookup(args, world or World()), world))
    fake = CALLS.get(token)
    return dict(_rotated(fake(args), world)) if fake is not None else {}


def _rotated(value: Any, world: World | None) -> Any:
    """``value`` as a rotated control plane answers it: every ROTATED text replaced, inside
    base64 documents too (AKS returns its kubeconfig base64-encoded)."""
    if world is None or not world.endpoint_rotated:
        return value
    if isinstance(value, Mapping):
        return {key: _rotated(item, world) for key, item in value.items()}
    if isinstance(value, list):
        return [_rotated(item, world) for item in value]
    if not isinstance(value, str):
        return value
    rotated = _replaced(value)
    try:
        decoded = base64.b64decode(rotated, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return rotated
    inner = _replaced(decoded)
    return base64.b64encode(inner.encode()).decode() if inner != decoded else rotated


def _replaced(text: str) -> str:
    for before, after in ROTATED:
        text = text.replace(before, after)
    return text
