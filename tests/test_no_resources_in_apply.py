"""Never create resources inside `apply`: they would be invisible to `pulumi preview`.

A static check over the package: every callback given to `.apply(...)` (a lambda, or a function
defined in the same module) must not construct a resource class (a capitalised name reached
through a provider module, e.g. `gcp.container.NodePool(...)` or `k8s.core.v1.Namespace(...)`).
"""

from __future__ import annotations

import ast
from pathlib import Path

from components.tooling.stacks import PROJECT_DIR

PROVIDER_ROOTS = {"gcp", "aws", "azure", "k8s", "kubernetes", "pulumi_gcp", "pulumi_aws", "pulumi_kubernetes",
                  "pulumi_azure_native", "containerservice", "resources", "network", "helm", "pulumi"}  # fmt: skip
NOT_RESOURCES = {
    "Output",
    "ResourceOptions",
    "InvokeOptions",
    "RunError",
    "Config",
    "Alias",
    "Asset",
    "Archive",
}


def _root_and_leaf(node: ast.expr) -> tuple[str | None, str | None]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and parts:
        return node.id, parts[0]
    return None, None


def _constructs_resource(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            root, leaf = _root_and_leaf(node.func)
            if (
                root in PROVIDER_ROOTS
                and leaf
                and leaf[0].isupper()
                and not leaf.endswith("Args")
                and leaf not in NOT_RESOURCES
            ):
                found.append(f"{root}...{leaf} (line {node.lineno})")
    return found


def test_apply_callbacks_create_no_resources() -> None:
    offenders = []
    for path in sorted((PROJECT_DIR / "components").rglob("*.py")):
        module = ast.parse(path.read_text())
        functions = {n.name: n for n in ast.walk(module) if isinstance(n, ast.FunctionDef)}
        for node in ast.walk(module):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr != "apply" or not node.args:
                continue
            callback = node.args[0]
            body: ast.AST | None = callback if isinstance(callback, ast.Lambda) else None
            if isinstance(callback, ast.Name):
                body = functions.get(callback.id)
            if body is not None:
                offenders += [
                    f"{Path(path).relative_to(PROJECT_DIR)}: {c}"
                    for c in _constructs_resource(body)
                ]
    assert offenders == []


def test_the_check_catches_a_resource_built_in_apply() -> None:
    source = "x.apply(lambda v: k8s.core.v1.Namespace('n'))\ny.apply(lambda v: gcp.container.NodePoolNodeConfigArgs())"
    tree = ast.parse(source)
    lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
    assert _constructs_resource(lambdas[0]) and not _constructs_resource(lambdas[1])
