"""EKS's pool kinds as the example stacks' plans show them: each kind's traits are what its
stack's pools resolve to (fit, the device plugin's placement and consumers read these), and
the provisioner string is mapped to a kind in one place only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from components.aws.model import kinds
from components.aws.model.kinds.auto_mode import AUTO_MODE
from components.aws.model.kinds.karpenter import KARPENTER
from components.aws.model.kinds.managed import MANAGED
from components.aws.model.kinds.self_managed import SELF_MANAGED
from components.model.pool_spec import DO_NOT_DISRUPT, SAFE_TO_EVICT
from components.model.pools import resolve_pools
from components.tooling.consumers.shared import keep_running
from tests.test_spot_labels import config_of

PACKAGE = Path(__file__).resolve().parents[1] / "components"


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
    assert AUTO_MODE.traits(config.cluster, pool).capacity_orders == (
        ("on-demand",),
        ("spot",),
    )


PROVISIONER_WORDS = {"karpenter", "auto-mode", "cluster-autoscaler", "managed", "self-managed"}
# Where the words are the config's own: its schema, and the one mapping to a kind; the mock
# cloud's words are its fake world's (a vpc-cni add-on "self-managed"), not the config's.
# aws/mock.py: its "self-managed" is the fake cloud's vpc-cni add-on state, not a provisioner.
MAPPED_IN = ("aws/model/config.py", "aws/model/kinds/", "aws/mock.py")


def provisioner_comparisons(source: str) -> list[str]:
    """Comparisons (==, !=, in) of a value with a provisioner or node group word."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for operand in operands:
            values = operand.elts if isinstance(operand, ast.Tuple | ast.List) else [operand]
            for value in values:
                if isinstance(value, ast.Constant) and value.value in PROVISIONER_WORDS:
                    found.append(f"line {node.lineno}: {value.value}")
    return found


def test_the_finder_finds_a_provisioner_branch() -> None:
    assert provisioner_comparisons('if kind == "karpenter": pass') == ["line 1: karpenter"]
    assert provisioner_comparisons('x in ("auto-mode", "y")') == ["line 1: auto-mode"]
    assert provisioner_comparisons('x = "karpenter"') == []


def test_only_the_eks_kinds_compare_a_provisioner_string() -> None:
    wrong = {
        str(path.relative_to(PACKAGE)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if not str(path.relative_to(PACKAGE)).startswith(MAPPED_IN)
        and (found := provisioner_comparisons(path.read_text()))
    }
    assert wrong == {}
