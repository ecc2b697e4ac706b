"""`diff` marks values the offline mock made up (launch-template versions, add-on versions, AMI
ids, an image's patch) as the mock's, and only those: the change is real, its numbers are not."""

from __future__ import annotations

from components.tooling.diff import diff_plans
from components.tooling.diff_model import PlanDiff
from components.tooling.diff_render import render_markdown, render_text
from components.tooling.mockcloud import MOCKED_INPUTS, mocked_input
from components.tooling.stacks import load_stack
from tests.conftest import plan_of


def _minor_bump() -> PlanDiff:
    """aws-dev one minor up (the plan test_aws.py makes too, so it is planned once)."""
    cluster = dict(load_stack("aws-dev").config["gpufleet:cluster"])
    old = plan_of("aws-dev").to_json()
    new = plan_of("aws-dev", {"gpufleet:cluster": {**cluster, "kubernetesVersion": "1.36"}})
    return diff_plans(old, new.to_json())


def test_a_minor_bump_marks_the_mocks_versions_and_nothing_else() -> None:
    lines = render_text(_minor_bump()).splitlines()
    marked = [lines[i - 1].strip() for i, line in enumerate(lines) if line.startswith("      ^ ")]
    changed = {line.split(":", 1)[0] for line in marked}
    assert {"addonVersion", "releaseVersion", "imageId"} <= changed
    assert any(path.endswith("launchTemplateSpecification.version") for path in changed)
    # The minor itself, the autoscaler's pinned image, are gpufleet's: not marked.
    assert not any(path in changed for path in ("version", "values.image.tag"))
    assert (
        "      ^ the versions are the mock's: EKS's default build of the add-on for the minor is "
        "read at `pulumi up` (aws eks describe-addon-versions)"
    ) in lines


def test_the_mark_is_in_the_pull_request_comment_too() -> None:
    assert "^ the versions are the mock's" in render_markdown(_minor_bump())


def test_every_marked_path_is_one_of_the_types_inputs_the_mock_fills() -> None:
    assert mocked_input("aws:eks/addon:Addon", "addonVersion")
    assert mocked_input("aws:eks/addon:Addon", "addonName") is None
    assert mocked_input(
        "aws:autoscaling/group:Group",
        "mixedInstancesPolicy.launchTemplate.launchTemplateSpecification.version",
    )
    assert mocked_input("aws:autoscaling/group:Group", "launchTemplate.version")
    assert mocked_input("aws:autoscaling/group:Group", "launchTemplate.id") is None
    assert all(type_.startswith(("aws:", "gcp:", "azure-native:")) for type_ in MOCKED_INPUTS)
