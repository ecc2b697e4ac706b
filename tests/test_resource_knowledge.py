"""Each cloud's resource knowledge: in its folder, one owner per type, and what `plan` shows."""

from __future__ import annotations

import importlib
from types import MappingProxyType

import pytest

from components.model import resource_index
from components.model.registry import CLOUDS
from components.model.resource_knowledge import ResourceKnowledge
from components.tooling import diff_nodes, diff_waits, mockcloud
from components.tooling.render import render_tree
from tests.conftest import plan_of

# The provider type tokens each cloud may describe besides Kubernetes objects of its own CRDs.
PROVIDER_PREFIX = {"aws": "aws:", "gcp": "gcp:", "azure": "azure-native:"}


@pytest.mark.parametrize("name", sorted(PROVIDER_PREFIX))
def test_a_cloud_describes_only_its_own_types(name: str) -> None:
    knowledge = CLOUDS[name].resource_knowledge
    own = (PROVIDER_PREFIX[name], f"pulumi:providers:{PROVIDER_PREFIX[name][:-1]}", "kubernetes:")
    tables = [
        knowledge.replacement_paths,
        knowledge.refused_in_place,
        knowledge.name_inputs,
        knowledge.downtime,
        knowledge.highlights,
        knowledge.clusters,
        knowledge.pool_readers,
        knowledge.moves_managed_resources,
        knowledge.node_effects,
        knowledge.control_plane_version,
        knowledge.version_bump_effects,
        knowledge.removal_effects,
        knowledge.split_from_roll,
    ]
    strays = [key for table in tables for key in table if not key.startswith(own)]
    assert strays == []
    assert all(key.startswith(f"gpufleet:{name}:") for key in knowledge.component_roles)
    assert knowledge.replacement_paths and knowledge.highlights and knowledge.clusters


def test_every_cloud_mock_lives_in_its_folder_and_answers_for_its_types() -> None:
    for name in PROVIDER_PREFIX:
        module = CLOUDS[name].resource_knowledge.mock_module
        assert module == f"components.{name}.mock"
        mock = importlib.import_module(module).MOCK
        assert mock.resources
        assert all(token.startswith(PROVIDER_PREFIX[name]) for token in mock.resources)


def test_a_type_described_twice_is_refused() -> None:
    twice = ResourceKnowledge(downtime=MappingProxyType({"aws:eks/cluster:Cluster": "x"}))
    with pytest.raises(ValueError, match="aws:eks/cluster:Cluster is described twice"):
        resource_index.merged(k.downtime for k in (*resource_index.KNOWLEDGE, twice))


def test_shared_highlights_are_merged_like_a_clouds() -> None:
    """Karpenter's NodePool is every cloud's: its highlights are the shared knowledge's, and a
    cloud describing it too is refused rather than silently overridden."""
    pool = "kubernetes:karpenter.sh/v1:NodePool"
    assert pool in resource_index.SHARED.highlights
    assert resource_index.HIGHLIGHTS[pool] == resource_index.SHARED.highlights[pool]
    twice = ResourceKnowledge(highlights=MappingProxyType({pool: ("metadata.name",)}))
    with pytest.raises(ValueError, match=f"{pool} is described twice"):
        resource_index.merged(k.highlights for k in (*resource_index.KNOWLEDGE, twice))


def test_day_two_tables_are_every_clouds_and_refuse_a_type_twice() -> None:
    """What changes do to running nodes is merged like the rest: each cloud's entries reach
    `diff`, and a type two clouds describe is a programming error, not last-wins."""
    for name in PROVIDER_PREFIX:
        knowledge = CLOUDS[name].resource_knowledge
        assert knowledge.node_effects
        assert all(
            diff_nodes.NODE_EFFECTS[token] == effects
            for token, effects in knowledge.node_effects.items()
        )
        assert all(
            diff_nodes.REMOVAL_EFFECTS[token] == effect
            for token, effect in knowledge.removal_effects.items()
        )
    assert dict(diff_waits.GRANT_WAITS) == dict(CLOUDS["azure"].resource_knowledge.grant_waits)
    token, effects = next(iter(CLOUDS["gcp"].resource_knowledge.node_effects.items()))
    twice = ResourceKnowledge(node_effects=MappingProxyType({token: effects}))
    with pytest.raises(ValueError, match="is described twice"):
        resource_index.merged(k.node_effects for k in (*resource_index.KNOWLEDGE, twice))


def test_a_type_two_mocks_answer_for_is_refused() -> None:
    aws = importlib.import_module("components.aws.mock").MOCK
    with pytest.raises(ValueError, match="is described twice"):
        resource_index.merged(m.resources for m in (*mockcloud.MOCKS, aws))
    assert set(mockcloud.RESOURCES) == {t for m in mockcloud.MOCKS for t in m.resources}


@pytest.mark.parametrize(
    ("stack", "node_class"),
    [("aws-karpenter", "EC2NodeClass"), ("aws-auto-mode", "eks.amazonaws.com/v1:NodeClass")],
)
def test_plan_shows_a_karpenter_pools_key_properties(stack: str, node_class: str) -> None:
    """As a GKE node pool, an ASG or an AKS agent pool shows its machines, size and taints."""
    tree = render_tree(plan_of(stack)).splitlines()
    pools = [i for i, line in enumerate(tree) if "kubernetes:karpenter.sh/v1:NodePool" in line]
    assert pools
    for at in pools:
        shown = [line.strip().split(":", 1)[0] for line in tree[at + 1 : at + 8]]
        assert shown[:4] == [
            "metadata.name",
            "spec.template.spec.requirements",
            "spec.limits",
            "spec.template.spec.taints",
        ]
    assert any('"nvidia.com/gpu":"' in line and "spec.limits" in line for line in tree)
    classes = [i for i, line in enumerate(tree) if node_class in line]
    assert classes and all("metadata.name:" in tree[at + 1] for at in classes)
