"""A key whose namespace is a typo of `gpufleet` is an error; other programs' keys are not."""

from __future__ import annotations

import pytest

from components.model.config_namespace import edit_distance, namespace_problems
from tests.conftest import plan_of


@pytest.mark.parametrize(
    "key",
    [
        "gpuflet:gpuPools",
        "GPUfleet:cloud",
        "gpufleet-dev:cluster",
        "gpufleeet:samples",
        "gpuflete:cluster",
    ],
)
def test_near_misses_of_our_namespace_are_errors(key: str) -> None:
    (problem,) = namespace_problems([key])
    assert str(problem).startswith(f"{key}: unknown namespace")
    assert str(problem).endswith(f"did you mean gpufleet:{key.partition(':')[2]}?")


@pytest.mark.parametrize(
    "key", ["gpufleet:cluster", "gcp:project", "aws:region", "kubernetes:context", "pulumi:tags"]
)
def test_our_own_and_other_programs_keys_are_left_alone(key: str) -> None:
    assert namespace_problems([key, 7, ("not", "a", "string")]) == []


def test_edit_distance_counts_a_swap_as_one() -> None:
    assert edit_distance("gpuflete", "gpufleet") == 1
    assert edit_distance("gpuflet", "gpufleet") == 1
    assert edit_distance("gcp", "gpufleet") == 7


def test_a_typo_in_the_namespace_stops_the_plan_with_every_problem() -> None:
    # The program's RunError, as the offline engine reports it: the stack's bad input.
    from components.tooling.commands import BadInput

    with pytest.raises(BadInput) as caught:
        plan_of("gcp-dev", {"gpuflet:gpuPools": [{"name": "x", "accelerator": "l4"}]})
    message = str(caught.value)
    assert (
        "gpuflet:gpuPools: unknown namespace 'gpuflet'; did you mean gpufleet:gpuPools?" in message
    )
