"""`plan STACK --mermaid`: a diagram of every shipped stack that Mermaid can parse."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

import pytest

from components.tooling.cli import main
from components.tooling.engine import Plan
from components.tooling.mermaid import render_mermaid
from components.tooling.stacks import PROJECT_DIR, load_stack
from tests.conftest import over_every_stack, plan_of

NODE_ID = r"[A-Za-z_][A-Za-z0-9_]*"
LABEL = r'"[^"]*"'
# Every line the renderer may write, as Mermaid's flowchart grammar accepts it.
NODE = re.compile(rf"^  +({NODE_ID})(\[{LABEL}\]|\({LABEL}\)|\(\[{LABEL}\]\))$")
SUBGRAPH = re.compile(rf"^  subgraph ({NODE_ID}) \[{LABEL}\]$")
EDGE = re.compile(rf"^  ({NODE_ID}) (-->|-\. [a-z ]+ \.->) ({NODE_ID})$")


def parse(diagram: str) -> tuple[dict[str, str], list[tuple[str, str]], set[str]]:
    """Node id -> label, edges, subgraph ids; fails on any line outside the grammar."""
    lines = diagram.splitlines()
    assert lines[0] == "flowchart LR"
    nodes: dict[str, str] = {}
    subgraphs: set[str] = set()
    edges: list[tuple[str, str]] = []
    depth = 0
    for line in lines[1:]:
        if match := SUBGRAPH.match(line):
            depth += 1
            subgraphs.add(match[1])
            nodes[match[1]] = line.split('"')[1]
        elif line == "  end":
            depth -= 1
            assert depth >= 0, "`end` without `subgraph`"
        elif match := NODE.match(line):
            assert match[1] not in nodes, f"node id {match[1]} defined twice"
            nodes[match[1]] = match[2].split('"')[1]
        elif match := EDGE.match(line):
            edges.append((match[1], match[3]))
        else:
            pytest.fail(f"line outside the flowchart grammar: {line!r}")
    assert depth == 0, "unbalanced subgraph/end"
    assert not {"end", "subgraph", "graph", "flowchart"} & {n.lower() for n in nodes}
    for a, b in edges:
        assert a in nodes and b in nodes, f"edge {a} -> {b} names an undefined node"
    return nodes, edges, subgraphs


@over_every_stack
def test_diagram_shows_every_pool_with_accelerator_and_range(stack: str) -> None:
    plan = plan_of(stack)
    nodes, edges, _ = parse(render_mermaid(plan))
    cluster = next(node for node, label in nodes.items() if "cluster" in label)
    for pool in plan.outputs["gpuPools"]:
        expected = f"{pool['name']}: {pool['accelerator']} x{pool['gpusPerNode']}, {pool['minNodes']}..{pool['maxNodes']}"
        matches = [node for node, label in nodes.items() if label.startswith(expected)]
        assert len(matches) == 1, f"{stack}: no single node for pool {expected!r}"
        label = nodes[matches[0]]
        assert (", spot" in label.split("<br/>")[0]) == pool["spot"]
        assert (cluster, matches[0]) in edges


@over_every_stack
def test_managed_clusters_show_their_system_pool(stack: str) -> None:
    plan = plan_of(stack)
    nodes, edges, _ = parse(render_mermaid(plan))
    system = [node for node, label in nodes.items() if label.startswith("system: ")]
    adopted = "existing" in load_stack(stack).gpufleet["cluster"]
    if plan.outputs["cloud"] == "existing" or adopted:
        assert system == [], "gpufleet manages no system pool on an existing cluster"
        return
    assert len(system) == 1
    assert ("cluster", system[0]) in edges
    assert re.search(r"\d+\.\.\d+", nodes[system[0]]), "system pool size missing"


@over_every_stack
def test_gpu_software_releases_show_chart_and_pinned_version(stack: str) -> None:
    plan = plan_of(stack)
    nodes, edges, subgraphs = parse(render_mermaid(plan))
    labels = "\n".join(nodes.values())
    for release in plan.of_type("kubernetes:helm.sh/v3:Release"):
        chart = release.inputs["chart"].rsplit("/", 1)[-1]  # an OCI reference by its name
        assert f"{chart}@{release.inputs['version']}" in labels
    if plan.outputs["gpuPools"]:
        assert subgraphs == {"gpu_software"}
        targets = Counter(a for a, b in edges if b == "gpu_software")
        assert len(targets) == len(plan.outputs["gpuPools"]), "every GPU pool leads to its software"


def test_diagram_follows_the_plan_not_the_config() -> None:
    plan = plan_of("gcp-dev")
    pools = [dict(p) for p in plan.outputs["gpuPools"]]
    pools[0]["maxNodes"] = 17
    changed = dataclasses.replace(plan, outputs={**plan.outputs, "gpuPools": pools})
    assert f"{pools[0]['name']}: {pools[0]['accelerator']} x1, 0..17" in render_mermaid(changed)

    without = Plan(
        plan.project,
        plan.stack,
        [r for r in plan.resources if "system" not in r.name],
        plan.outputs,
    )
    nodes, _, _ = parse(render_mermaid(without))
    assert not any(label.startswith("system") for label in nodes.values())


def test_labels_with_quotes_stay_inside_the_grammar() -> None:
    plan = plan_of("gcp-dev")
    pools = [{**plan.outputs["gpuPools"][0], "name": 'say "hi"'}]
    nodes, _, _ = parse(
        render_mermaid(dataclasses.replace(plan, outputs={**plan.outputs, "gpuPools": pools}))
    )
    assert any("say #quot;hi#quot;" in label for label in nodes.values())


def test_cli_prints_the_diagram(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "gcp-dev", "--mermaid"]) == 0
    out = capsys.readouterr().out
    assert out == render_mermaid(plan_of("gcp-dev")) + "\n"


DIAGRAM_BLOCK = re.compile(
    r"```mermaid\n%% python -m components plan ([\w-]+) --mermaid\n(.*?)\n```", re.S
)


def documented_diagrams() -> list[tuple[str, str, str]]:
    """(file, stack, diagram) for every diagram block the docs mark as `plan STACK --mermaid`."""
    found = []
    for name in ("docs/diagrams.md", "docs/capacity.md", "docs/aks.md"):
        path = PROJECT_DIR / name
        if path.is_file():
            found += [
                (name, stack, body) for stack, body in DIAGRAM_BLOCK.findall(path.read_text())
            ]
    return found


def test_docs_show_one_diagram_per_cloud() -> None:
    clouds = {
        plan_of(stack).outputs["cloud"]
        for file, stack, _ in documented_diagrams()
        if file == "docs/diagrams.md"
    }
    assert clouds == {"gcp", "aws", "azure", "existing"}


@pytest.mark.parametrize(
    ("file", "stack", "diagram"), documented_diagrams(), ids=lambda v: v if "\n" not in v else ""
)
def test_documented_diagrams_are_what_the_command_prints(
    file: str, stack: str, diagram: str
) -> None:
    current = render_mermaid(plan_of(stack))
    assert diagram == current, (
        f"{file}: regenerate with `python -m components plan {stack} --mermaid`:\n{current}"
    )
