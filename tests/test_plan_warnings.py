"""The program's own warnings reach the user (review eks-3 R3-3): `plan` prints them after the
config's, each once; `plan --json` carries every warning as a top-level `warnings` list; `diff`
shows the new plan's, and the pull-request comment (built from `diff --format markdown`) with
them.

An adopted cluster's warnings (its security groups, an owner's autoscaler or termination
handler, no maintenance window) come from the program while it reads the cluster, not from the
config: before, `Plan.warnings` collected them and no command showed them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from components.model.cold_start import DEFAULT_IMAGE_GB
from components.model.config import parse_config
from components.model.placeholders import find_placeholders
from components.tooling import engine
from components.tooling.cli import main as cli_main
from components.tooling.diff import diff_plans, render_markdown, render_text
from components.tooling.diff import main as diff_main
from components.tooling.diff_warnings import warning_markdown
from components.tooling.engine import Plan
from components.tooling.stacks import StackFile, load_stack
from tests.conftest import plan_of

# Each adopted example, what its cluster is like beyond what the stack describes (World fields;
# none: as described), and a piece of every program warning that plan must show for it.
ADOPTED: dict[str, tuple[Mapping[str, Any], tuple[str, ...]]] = {
    "aws-existing": (
        {},
        (
            "whether the cluster security group alone lets gpufleet's GPU nodes reach CoreDNS",
            "whether its owner already runs a cluster autoscaler or aws-node-termination-handler",
            "an autoscaler of the owner's with the default discovery",
        ),
    ),
    "gcp-existing": (
        {"maintenance_window": False},
        ("has no maintenance window", "samples: the sharing Deployments keep one node"),
    ),
    "azure-existing": (
        {"maintenance_window": False},
        ("no aksManagedAutoUpgradeSchedule window", "no aksManagedNodeOSUpgradeSchedule window"),
    ),
    "existing-dev": ({}, ("samples: the sharing Deployments keep one node of l40s-shared",)),
}


def _planner(world: Mapping[str, Any]) -> Callable[[StackFile], Plan]:
    """`plan_stack` as the CLI calls it, on a cluster as `world` says (the cached plan when it
    is as the stack describes it), made once for the text and the JSON runs."""
    made: dict[str, Plan] = {}
    plan_stack = engine.plan_stack

    def plan(stack: StackFile, image_gb: float = DEFAULT_IMAGE_GB) -> Plan:
        assert image_gb == DEFAULT_IMAGE_GB  # the cached plans are made at the default
        if stack.name not in made:
            if not world:
                made[stack.name] = plan_of(stack.name)
            else:
                described = engine.described_world(stack.config)
                made[stack.name] = plan_stack(stack, world=dataclasses.replace(described, **world))
        return made[stack.name]

    return plan


def _program_warnings(stack: str, plan: Plan) -> list[str]:
    """The warnings only the program gives: not its config's, nor its placeholders'."""
    gpufleet = load_stack(stack).gpufleet
    config = parse_config(dict(gpufleet))
    known = {*config.warnings, *(str(p) for p in find_placeholders(gpufleet))}
    return [w for w in plan.distinct_warnings() if w not in known]


@pytest.mark.parametrize("stack", sorted(ADOPTED))
def test_plan_prints_the_programs_warnings_once_each_and_json_carries_them_all(
    stack: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    world, expected = ADOPTED[stack]
    planner = _planner(world)
    monkeypatch.setattr(engine, "plan_stack", planner)

    assert cli_main(["plan", stack, "--json"]) == 0
    out, json_err = capsys.readouterr()
    document = json.loads(out)
    assert cli_main(["plan", stack]) == 0
    _, text_err = capsys.readouterr()

    plan = planner(load_stack(stack))
    program = _program_warnings(stack, plan)
    for piece in expected:
        assert any(piece in warning for warning in program), (piece, program)
    # Every warning, the config's and the program's, as the list of strings the issue names.
    assert document["warnings"] == sorted(set(plan.warnings))
    assert set(program) <= set(document["warnings"])
    for err in (json_err, text_err):
        lines = err.splitlines()
        for warning in program:
            assert lines.count(f"warning: {warning}") == 1, (warning, err)
        # Nothing twice: the config's warnings are printed before planning, and not again.
        assert len(lines) == len(set(lines)), err


def test_the_plan_document_lists_each_warning_once_sorted() -> None:
    plan = dataclasses.replace(plan_of("existing-dev"), warnings=["b", "a", "b"])
    assert plan.to_json()["warnings"] == ["a", "b"]
    assert plan_of("gcp-dev").to_json()["warnings"] == [
        "cluster.gcp.project: 'gpufleet-dev-project' is a placeholder (the gcp-dev example's "
        "project id); set your GCP project id (`gcloud config get-value project`)"
    ]


def _adopted_aws() -> tuple[dict[str, Any], dict[str, Any]]:
    """aws-dev's plan, and aws-existing's: the latter brings the adoption warnings."""
    return plan_of("aws-dev").to_json(), plan_of("aws-existing").to_json()


def test_diff_shows_every_warning_of_the_new_plan_and_which_are_new() -> None:
    old, new = _adopted_aws()
    diff = diff_plans(old, new)
    assert diff.warnings == tuple(new["warnings"])
    added = [w for w in new["warnings"] if w not in old["warnings"]]
    assert added and diff.new_warnings == tuple(added)
    assert all("platform-prod" in w for w in added)

    text = render_text(diff).splitlines()
    start = text.index(f"Warnings of the new plan ({len(new['warnings'])}, {len(added)} new):")
    listed = text[start + 1 : start + 1 + len(new["warnings"])]
    assert listed == [f"  - {w}{' (new)' if w in added else ''}" for w in new["warnings"]]

    markdown = render_markdown(diff)
    alert, every = warning_markdown(diff)
    assert "\n".join(alert) in markdown and "\n".join(every) in markdown
    assert alert[1:3] == [
        "> [!WARNING]",
        f"> {len(added)} new warnings from the program or its config for this stack:",
    ]
    assert len(alert) == 3 + len(added)
    assert f"<details><summary>{len(new['warnings'])} warnings of the new plan</summary>" in every
    assert len([line for line in every if line.startswith("- ")]) == len(new["warnings"])
    # The warnings of a change come before its diff, the whole list after it.
    assert markdown.index("> [!WARNING]") < markdown.index("```diff") < markdown.index("<details>")


def test_diff_marks_none_new_against_a_plan_that_carries_no_warnings(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A base plan written before plans carried warnings (or the workflow's empty stand-in for
    a new stack) says nothing about them: every warning is listed, none called new."""
    old, new = _adopted_aws()
    del old["warnings"]
    diff = diff_plans(old, new)
    assert diff.new_warnings == ()
    assert warning_markdown(diff)[0] == []
    paths = []
    for name, document in (("old", old), ("new", new)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(document))
        paths.append(str(path))
    assert diff_main([*paths, "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "new warnings" not in out
    assert f"{len(new['warnings'])} warnings of the new plan" in out


def test_a_plan_whose_warnings_are_not_strings_is_refused(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = _adopted_aws()
    new["warnings"] = [{"text": "x"}]
    for name, document in (("old", old), ("new", new)):
        (tmp_path / f"{name}.json").write_text(json.dumps(document))
    assert diff_main([str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 2
    assert '"warnings" is not a list of strings' in capsys.readouterr().err


def test_markdown_keeps_what_github_would_read_as_html() -> None:
    """A warning's `<vm size>` outside a code span would vanish as an HTML tag on GitHub."""
    old, new = _adopted_aws()
    new["warnings"] = ["set <region> & `az vm list-skus --location <region>` then a<b"]
    (item,) = [line for line in warning_markdown(diff_plans(old, new))[1] if line.startswith("- ")]
    assert item == ("- set &lt;region&gt; &amp; `az vm list-skus --location <region>` then a&lt;b")
