"""Every stack's graph follows the component rules: parents, unique names, outputs registered."""

from __future__ import annotations

import collections

from tests.conftest import over_every_stack, plan_of


@over_every_stack
def test_every_component_registers_its_outputs(stack: str) -> None:
    plan = plan_of(stack)
    components = [r for r in plan.resources if not r.custom]
    assert components, "the program builds components"
    for component in components:
        assert component.urn in plan.outputs_registered, component.urn


@over_every_stack
def test_every_resource_lives_in_a_component(stack: str) -> None:
    plan = plan_of(stack)
    component_urns = {r.urn for r in plan.resources if not r.custom}
    for resource in plan.resources:
        if resource.custom:
            assert resource.parent in component_urns, (
                f"{resource.urn} is not parented to a component"
            )


@over_every_stack
def test_child_names_are_unique_per_type(stack: str) -> None:
    plan = plan_of(stack)
    counts = collections.Counter((r.type, r.name) for r in plan.resources)
    assert [key for key, n in counts.items() if n > 1] == []
