"""The layout is the architecture: layers import one way, no cycles, no cloud names in shared code.

Read from the source (ast), so an import hidden in a function or a TYPE_CHECKING block counts too.
Layers: the stack model (`components/model/`, and each cloud's `model/` folder: pure data and
rules) <- the Pulumi components (cloud folders, `kubernetes/`, `program.py`) <- the offline
tooling (`components/tooling/`, `components/__main__.py`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from components.model.registry import CLOUDS

PACKAGE = Path(__file__).resolve().parents[1] / "components"
LAYERS = {"model": 0, "components": 1, "tooling": 2}
# Third-party packages the model may not use: it is pure data and rules, no Pulumi.
NOT_IN_MODEL = ("pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_azure_native", "pulumi_kubernetes")
MAX_MODULE_LINES = 450


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> str:
    parts = [*module.split("."), "", ""]
    if module == "components.__main__" or parts[1] == "tooling":
        return "tooling"
    if parts[1] == "model" or (parts[1] in CLOUDS and parts[2] == "model"):
        return "model"
    return "components"


def imports_of(path: Path, known: set[str]) -> set[str]:
    """Every module imported anywhere in the file, absolute names (components.* resolved to the
    module, `from package import module` included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            # `from package import module` depends on the module; any other name, on the
            # package (or module) that defines it.
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in known else node.module)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    names = set(known)
    return {
        # A package's __init__ importing its own submodules is not an edge to itself.
        name: {imported for imported in imports_of(path, names) if imported in names} - {name}
        for name, path in known.items()
    }


def test_the_classifier_knows_each_layer() -> None:
    assert layer("components.model.pools") == "model"
    assert layer("components.gcp.model.cloud") == "model"
    assert layer("components.gcp.gpu_pool") == "components"
    assert layer("components.kubernetes.software") == "components"
    assert layer("components.tooling.fit") == "tooling"


def test_imports_only_go_from_tooling_to_components_to_model() -> None:
    wrong = [
        f"{module} ({layer(module)}) imports {imported} ({layer(imported)})"
        for module, imported_modules in import_graph().items()
        for imported in sorted(imported_modules)
        if LAYERS[layer(imported)] > LAYERS[layer(module)]
    ]
    assert wrong == []


def test_the_model_never_imports_pulumi() -> None:
    known = set(modules())
    wrong = [
        f"{name} imports {imported}"
        for name, path in modules().items()
        if layer(name) == "model"
        for imported in sorted(imports_of(path, known))
        if imported.split(".")[0] in NOT_IN_MODEL
    ]
    assert wrong == []


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph`, as the modules along it, or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "open"
        stack.append(module)
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == "open":
                return [*stack[stack.index(imported) :], imported]
            if imported not in state:
                cycle = visit(imported)
                if cycle:
                    return cycle
        stack.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def test_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles() -> None:
    # Importing a package's submodule runs the package's __init__ first; those stay empty of
    # imports, so module-to-module edges are the whole story.
    assert find_cycle(import_graph()) is None


def cloud_name_branches(source: str) -> list[int]:
    """Lines comparing with a cloud's name (`cloud == "gcp"`, `x in ("aws", "azure")`) or its
    provider's (`token.split(":")[0] == "azure-native"`)."""
    names = set(CLOUDS) | {"azure-native"}
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        for operand in (node.left, *node.comparators):
            values = (
                operand.elts if isinstance(operand, ast.Tuple | ast.List | ast.Set) else [operand]
            )
            if any(isinstance(v, ast.Constant) and v.value in names for v in values):
                found.append(node.lineno)
                break
    return found


def test_branch_finder_finds_a_cloud_branch() -> None:
    source = (
        'if cloud == "gcp":\n    pass\nok = mode == "auto"\nif name in ("aws", "x"):\n    pass\n'
        'ours = token.split(":")[0] == "azure-native"\n'
    )
    assert cloud_name_branches(source) == [1, 4, 6]


@pytest.mark.parametrize(
    "folder", ["model", "kubernetes", "tooling"], ids=lambda folder: f"components/{folder}"
)
def test_shared_code_never_branches_on_a_cloud_name(folder: str) -> None:
    shared = sorted((PACKAGE / folder).rglob("*.py"))
    shared += [PACKAGE / "program.py", PACKAGE / "__init__.py", PACKAGE / "__main__.py"]
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in shared
        for line in cloud_name_branches(path.read_text())
    ]
    assert found == []


# A Pulumi type or invoke token of a cloud's provider (`aws:eks/cluster:Cluster`,
# `azure-native:containerservice:AgentPool`, `gcp:container/getCluster:getCluster`), a bare
# prefix to test tokens against (`"aws:"`), a cloud's explicit provider, or a gpufleet component
# of a cloud (`gpufleet:aws:Cluster`). Config keys (`gcp:project`) and IAM condition keys
# (`aws:SourceArn`) have one colon and are not tokens.
_CLOUD_PROVIDERS = "aws|gcp|azure-native"
CLOUD_TOKEN = re.compile(
    rf"(?:{_CLOUD_PROVIDERS}):(?:[\w.-]+(?:/\w+)?:\w+)?"
    rf"|pulumi:providers:(?:{_CLOUD_PROVIDERS})"
    rf"|gpufleet:(?:{'|'.join(CLOUDS)}):\w+"
)
# A piece of a token being built (an f-string's or a `+`'s constant part, a `startswith`
# argument): a cloud token's start (`f"aws:{module}/..."`, `t.startswith("gpufleet:aws:")`), or
# the rest of one after the provider (`f"{cloud}:eks/cluster:Cluster"`).
CLOUD_TOKEN_PIECE = re.compile(
    rf"^(?:(?:{_CLOUD_PROVIDERS}|gpufleet:(?:{'|'.join(CLOUDS)})):"
    rf"|pulumi:providers:(?:{_CLOUD_PROVIDERS})"
    r"|:[a-z][\w.-]*/\w+:[A-Z]\w*$)"
)
# Where provider type tokens belong: each cloud's own folder. (policy/ and scripts/, outside
# `components`, keep theirs and say why: the policy pack runs in Pulumi's analyzer without
# gpufleet's program.)
CLOUD_FOLDERS = tuple(PACKAGE / name for name in CLOUDS)
# Each cloud's Kubernetes custom resource API groups, as it declares them (`karpenter.sh` is
# every cloud's Karpenter and is declared by none).
CRD_GROUPS = {
    group: name for name, cloud in CLOUDS.items() for group in cloud.resource_knowledge.crd_groups
}


def _crd_group_pattern(groups: set[str]) -> re.Pattern[str] | None:
    """A custom resource token or apiVersion of one of `groups`
    (`kubernetes:karpenter.k8s.aws/v1:EC2NodeClass`, `eks.amazonaws.com/v1`)."""
    if not groups:
        return None
    alternatives = "|".join(re.escape(group) for group in sorted(groups))
    return re.compile(rf"^(?:kubernetes:)?(?:{alternatives})/v\w*")


def _string_pieces(tree: ast.AST) -> list[tuple[int, str, bool]]:
    """(line, text, whole) of every string constant: whole for a string standing on its own,
    not for a piece of an f-string, a `+` concatenation or a `startswith`/`endswith` argument."""
    pieces: dict[int, tuple[int, str, bool]] = {}
    for node in ast.walk(tree):
        parts: list[ast.expr] = []
        if isinstance(node, ast.JoinedStr):
            parts = list(node.values)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            parts = [node.left, node.right]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith")
        ):
            for argument in node.args:
                parts += argument.elts if isinstance(argument, ast.Tuple) else [argument]
        for part in parts:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                pieces[id(part)] = (part.lineno, part.value, False)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in pieces
        ):
            pieces[id(node)] = (node.lineno, node.value, True)
    return list(pieces.values())


def cloud_tokens(source: str) -> list[int]:
    """Lines holding a cloud's type token, a prefix of one, or a piece of one being built."""
    return sorted(
        {
            line
            for line, text, whole in _string_pieces(ast.parse(source))
            if (CLOUD_TOKEN.fullmatch(text) if whole else CLOUD_TOKEN_PIECE.search(text))
        }
    )


def crd_tokens(source: str, groups: set[str]) -> list[int]:
    """Lines holding (or building) a custom resource token or apiVersion of one of `groups`."""
    pattern = _crd_group_pattern(groups)
    if pattern is None:
        return []
    return sorted(
        {line for line, text, _ in _string_pieces(ast.parse(source)) if pattern.search(text)}
    )


def test_token_finder_finds_a_provider_type_token() -> None:
    source = (
        'POOL = "gcp:container/nodePool:NodePool"\n'
        'ok = key == "gcp:project"\n'
        'if type_.startswith("aws:"):\n    pass\n'
        'roles = {"gpufleet:azure:GpuAgentPool": "x", "kubernetes:batch/v1:Job": "y"}\n'
        'PROVIDER = "pulumi:providers:azure-native"\n'
        'doc = "a token such as azure-native:containerservice:AgentPool, in prose"\n'
        'condition = "aws:SourceArn"\n'
    )
    assert cloud_tokens(source) == [1, 3, 5, 6]


@pytest.mark.parametrize(
    "slip",
    [
        'token = f"aws:{module}/group:Group"',
        'token = f"{cloud}:eks/cluster:Cluster"',
        'token = "aws" + ":autoscaling/group:Group"',
        'token = "azure-native:" + module',
        'ours = t.startswith("aws:eks/")',
        'ours = t.startswith("gpufleet:aws:")',
        'ours = t.endswith(("x", "gpufleet:gcp:"))',
        'token = f"gpufleet:azure:{name}"',
        'token = f"pulumi:providers:aws{suffix}"',
        'ours = t.startswith("pulumi:providers:azure-native")',
        'node_class = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"',
        'node_class = f"kubernetes:eks.amazonaws.com/v1:{kind}"',
        'api_version = "karpenter.azure.com/v1beta1"',
        'compute_class = "kubernetes:cloud.google.com/v1:ComputeClass"',
    ],
)
def test_token_finder_finds_a_token_being_built(slip: str) -> None:
    foreign = {"karpenter.k8s.aws", "eks.amazonaws.com", "karpenter.azure.com", "cloud.google.com"}
    assert sorted({*cloud_tokens(slip), *crd_tokens(slip, foreign)}) == [1]


def test_token_finder_leaves_shared_and_own_tokens_alone() -> None:
    source = (
        'pool = "kubernetes:karpenter.sh/v1:NodePool"\n'
        'node_class = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"\n'
        'label = "karpenter.k8s.aws/instance-family"\n'
    )
    assert cloud_tokens(source) == []
    assert crd_tokens(source, {"eks.amazonaws.com"}) == []


def test_every_cloud_declares_its_own_crd_groups() -> None:
    declared = [g for cloud in CLOUDS.values() for g in cloud.resource_knowledge.crd_groups]
    assert len(declared) == len(set(declared))
    assert {"karpenter.k8s.aws", "eks.amazonaws.com"} <= set(declared)
    assert "karpenter.sh" not in declared


def test_provider_type_tokens_stay_in_their_cloud_folder() -> None:
    """Shared code asks the registry (`Cloud.resource_knowledge`, `model/resource_index.py`)
    what a type means; only the cloud's own folder names it, or its custom resources."""
    found = []
    for path in [*sorted(PACKAGE.rglob("*.py")), PACKAGE.parent / "__main__.py"]:
        owner = next((name for name in CLOUDS if path.is_relative_to(PACKAGE / name)), None)
        foreign = {group for group, cloud in CRD_GROUPS.items() if cloud != owner}
        source = path.read_text()
        lines = set(crd_tokens(source, foreign))
        if owner is None:
            lines |= set(cloud_tokens(source))
        found += [f"{path.relative_to(PACKAGE.parent)}:{line}" for line in sorted(lines)]
    assert found == []


def test_every_cloud_lives_in_its_own_folder() -> None:
    for name, cloud in CLOUDS.items():
        assert type(cloud).__module__ == f"components.{name}.model.cloud"
        assert cloud.stack_module == f"components.{name}.stack"
        assert (PACKAGE / name / "stack.py").is_file()


def test_modules_stay_small() -> None:
    too_long = {
        name: lines
        for name, path in modules().items()
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert too_long == {}
