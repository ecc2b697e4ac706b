"""EKS's pool kinds as the example stacks' plans show them: each kind's traits are what its
stack's pools resolve to (fit, the device plugin's placement and consumers read these), and
the provisioner string is mapped to a kind in one place only."""

from __future__ import annotations

import ast
from collections.abc import Collection
from pathlib import Path
from typing import get_args

import pytest
from pydantic import BaseModel

from components.aws.model import kinds
from components.aws.model.kinds.auto_mode import AUTO_MODE
from components.aws.model.kinds.karpenter import KARPENTER
from components.aws.model.kinds.managed import MANAGED
from components.aws.model.kinds.self_managed import SELF_MANAGED
from components.model.pool_spec import DO_NOT_DISRUPT, SAFE_TO_EVICT
from components.model.pools import resolve_pools
from components.model.registry import CLOUDS
from components.tooling.consumers.shared import keep_running
from tests.test_spot_labels import config_of

PACKAGE = Path(__file__).resolve().parents[1] / "components"
STACKS = PACKAGE.parent / "stacks"


@pytest.mark.parametrize(
    ("stack", "kind"),
    [
        ("aws-dev", SELF_MANAGED),
        ("aws-training", MANAGED),
        ("aws-karpenter", KARPENTER),
        ("aws-auto-mode", AUTO_MODE),
    ],
)
def test_each_example_stack_gets_the_kind_its_provisioner_names(stack: str, kind: object) -> None:
    config = config_of(stack)
    found = {kinds.pool_kind(config.cluster, pool) for pool in config.gpu_pools}
    assert kind in found


@pytest.mark.parametrize(
    ("stack", "provisioner", "per_pod", "scale_from_zero", "keep"),
    [
        ("aws-dev", "the cluster autoscaler", False, "node-template-tags", SAFE_TO_EVICT),
        ("aws-karpenter", "Karpenter", True, "pool", DO_NOT_DISRUPT),
        ("aws-auto-mode", "EKS Auto Mode", True, "pool", DO_NOT_DISRUPT),
    ],
)
def test_pools_carry_their_kinds_traits(
    stack: str, provisioner: str, per_pod: bool, scale_from_zero: str, keep: object
) -> None:
    """What fit names, how a type is sized, where the autoscaler's view at zero comes from,
    and the annotation consumers put on jobs, per kind (a flipped trait fails here)."""
    config = config_of(stack)
    specs = [s for s in resolve_pools(config) if s.kind == "gpu"]
    assert specs
    for spec in specs:
        assert spec.provisioner == provisioner
        assert spec.scale_from_zero == scale_from_zero
        assert spec.keep_running_annotations == keep
        if len(spec.machine_types) > 1:
            # Karpenter picks per pod: sized by the largest type; the autoscaler: the first.
            assert (spec.sized_by is not None) == per_pod
        if per_pod:
            assert spec.zone_max_nodes is None
    assert keep_running(specs) == dict(keep)


def test_auto_mode_nodes_bring_their_own_plugin_and_unpublished_reservations() -> None:
    specs = [s for s in resolve_pools(config_of("aws-auto-mode")) if s.kind == "gpu"]
    assert all(s.own_device_plugin for s in specs)
    # Auto Mode's image reservations are not published: only GPUs are known.
    assert all(set(s.allocatable_per_node) == {"nvidia.com/gpu"} for s in specs)


def test_group_kinds_split_max_nodes_over_their_zones() -> None:
    config = config_of("aws-dev")
    for pool in config.gpu_pools:
        traits = SELF_MANAGED.traits(config.cluster, pool)
        assert traits.zone_max_nodes is not None
        assert traits.zone_max_nodes <= pool.max_nodes
        assert not traits.picks_type_per_pod
        assert KARPENTER.traits(config.cluster, pool).zone_max_nodes is None


def test_capacity_orders_differ_per_kind() -> None:
    config = config_of("aws-dev")
    pool = config.gpu_pools[0]
    assert ("queued",) in SELF_MANAGED.traits(config.cluster, pool).capacity_orders
    assert ("queued",) not in KARPENTER.traits(config.cluster, pool).capacity_orders
    assert ("reserved", "spot", "on-demand") in KARPENTER.traits(
        config.cluster, pool
    ).capacity_orders
    # Auto Mode: an ODCR alone or before on-demand (issue 33), no Capacity Block, no Spot after it.
    assert AUTO_MODE.traits(config.cluster, pool).capacity_orders == (
        ("on-demand",),
        ("spot",),
        ("reserved",),
        ("reserved", "on-demand"),
    )


# The config fields that choose what makes a cloud's GPU nodes (`cluster.aws.provisioner`,
# `gpuPools[].aws.nodeGroup`, and the same field of any cloud that gets one).
CHOOSING_FIELDS = ("provisioner", "node_group")


def _literal_words(model: type[BaseModel] | None) -> set[str]:
    words: set[str] = set()
    for name, field in (model.model_fields if model else {}).items():
        if name in CHOOSING_FIELDS:
            words |= {arg for arg in get_args(field.annotation) if isinstance(arg, str)}
    return words


def _display_names() -> set[str]:
    """What `plan` and `fit` call each provisioner the example stacks use ("Karpenter")."""
    return {
        spec.provisioner
        for path in sorted(STACKS.glob("Pulumi.*.yaml"))
        for spec in resolve_pools(config_of(path.name[len("Pulumi.") : -len(".yaml")]))
    }


# Every cloud's words for its provisioners, from its config's Literals (via the registry), and
# their display names: compared or dispatched on only where the config is mapped to a kind.
PROVISIONER_WORDS = {
    word
    for cloud in CLOUDS.values()
    for model in (cloud.cluster_options, cloud.pool_options)
    for word in _literal_words(model)
} | _display_names()
# Where the words are the config's own: each cloud's schema, and its one mapping to a kind.
MAPPED_IN = tuple(
    folder for name in CLOUDS for folder in (f"{name}/model/config.py", f"{name}/model/kinds/")
)
# Comparisons whose other side means something else, by file: the AWS mock's fake vpc-cni add-on
# is "self-managed" (the cloud's add-on state), not a node group.
OTHER_MEANING = {"aws/mock.py": {"world.vpc_cni"}}


def _words_in(node: ast.AST) -> list[str]:
    values = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return [v.value for v in values if isinstance(v, ast.Constant) and v.value in PROVISIONER_WORDS]


def _prefixes_a_word(node: ast.AST, attr: str) -> list[str]:
    values = node.elts if isinstance(node, ast.Tuple) else [node]
    return [
        v.value
        for v in values
        if isinstance(v, ast.Constant)
        and isinstance(v.value, str)
        and len(v.value) >= 4
        and any(getattr(word, attr)(v.value) for word in PROVISIONER_WORDS)
    ]


def _dispatching_dicts(tree: ast.AST) -> set[int]:
    """The dict literals code looks a value up in (`{...}[p]`, `{...}.get(p)`, or a name bound
    to one that the module looks up with a key computed at run time)."""
    looked_up: set[str] = set()
    found: set[int] = set()
    for node in ast.walk(tree):
        table, key = None, None
        if isinstance(node, ast.Subscript):
            table, key = node.value, node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            table, key = node.func.value, node.args[0]
        if isinstance(table, ast.Dict):
            found.add(id(table))
        elif isinstance(table, ast.Name) and not isinstance(key, ast.Constant):
            looked_up.add(table.id)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in looked_up for t in targets):
                found.add(id(node.value))
    return found


def provisioner_comparisons(source: str, other_meaning: Collection[str] = ()) -> list[str]:
    """Branches on a provisioner word: comparisons (==, !=, in), `match` cases, sets, dict keys,
    `startswith`/`endswith` of a word's start or end. `other_meaning`: operands (as written)
    whose comparisons mean something else."""
    tree = ast.parse(source)
    dispatching = _dispatching_dicts(tree)
    found = []
    for node in ast.walk(tree):
        words: list[str] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if not set(other_meaning) & {ast.unparse(operand) for operand in operands}:
                words = [word for operand in operands for word in _words_in(operand)]
        elif isinstance(node, ast.MatchValue):
            words = _words_in(node.value)
        elif isinstance(node, ast.Set):
            words = _words_in(node)
        elif isinstance(node, ast.Dict) and id(node) in dispatching:
            words = [word for key in node.keys if key is not None for word in _words_in(key)]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith")
        ):
            words = [w for a in node.args for w in _prefixes_a_word(a, node.func.attr)]
        found += [f"line {getattr(node, 'lineno', 0)}: {word}" for word in words]
    return sorted(set(found))


def test_the_finder_finds_a_provisioner_branch() -> None:
    assert provisioner_comparisons('if kind == "karpenter": pass') == ["line 1: karpenter"]
    assert provisioner_comparisons('x in ("auto-mode", "y")') == ["line 1: auto-mode"]
    assert provisioner_comparisons('x = "karpenter"') == []
    # A table of charts named like a provisioner, read by constant keys, is no dispatch.
    assert provisioner_comparisons('CHARTS = {"karpenter": a}\npin = CHARTS["karpenter"]') == []


@pytest.mark.parametrize(
    "slip",
    [
        'match p:\n    case "x":\n        pass\n    case "karpenter":\n        pass',
        'match p:\n    case "x" | "auto-mode":\n        pass',
        'ours = p.startswith("karp")',
        'ours = p.endswith(("x", "-mode"))',
        'ours = p in {"karpenter"}',
        'build = {"karpenter": a, "x": b}[p]',
        'build = {"cluster-autoscaler": a}.get(p)',
        'BUILDERS = {"auto-mode": a}\nbuild = BUILDERS[provisioner]',
        'ours = spec.provisioner == "Karpenter"',
        'ours = spec.provisioner != "EKS Auto Mode"',
        'ours = group not in ["managed"]',
    ],
)
def test_the_finder_finds_each_way_to_branch_on_a_provisioner(slip: str) -> None:
    assert provisioner_comparisons(slip)


def test_the_words_are_every_clouds_config_and_display_names() -> None:
    assert {"karpenter", "auto-mode", "cluster-autoscaler", "managed", "self-managed"} <= (
        PROVISIONER_WORDS
    )
    assert {"Karpenter", "EKS Auto Mode"} <= PROVISIONER_WORDS


def test_the_mock_is_exempt_only_where_its_word_means_its_fake_cloud() -> None:
    exempt = OTHER_MEANING["aws/mock.py"]
    assert provisioner_comparisons('ok = world.vpc_cni == "self-managed"', exempt) == []
    assert provisioner_comparisons('ok = pool.group == "self-managed"', exempt) != []


def test_only_each_clouds_kinds_compare_a_provisioner_string() -> None:
    wrong = {
        relative: found
        for path in sorted(PACKAGE.rglob("*.py"))
        if not (relative := str(path.relative_to(PACKAGE))).startswith(MAPPED_IN)
        and (found := provisioner_comparisons(path.read_text(), OTHER_MEANING.get(relative, ())))
    }
    assert wrong == {}
