"""Docs that say what the code does, checked against the code (issue 31 item 7): the keys an
adopted cluster refuses and takes, and what capacity each cloud builds."""

from __future__ import annotations

import re

from components.gcp.model import compute_class as gke_class
from components.model.capacity import shown_order
from components.model.config import ClusterModel
from components.model.config_checks import _OWNER_KEYS, existing_keys_of
from components.model.existing_cluster import SECTION
from components.model.registry import CLOUDS
from components.tooling.stacks import PROJECT_DIR

DOCS = PROJECT_DIR / "docs"


def _bullet(text: str, title: str) -> str:
    return text.split(f"- **{title}**", 1)[1].split("\n- **", 1)[0]


def test_adopted_clusters_lists_the_keys_the_code_refuses_and_allows() -> None:
    refused = _bullet((DOCS / "adopted-clusters.md").read_text(), "Refused keys.")
    for key in _OWNER_KEYS.values():
        assert f"`{key}`" in refused, key
    said = set(re.findall(r"`((?:gcp|aws|azure)\.\w+)`", refused))
    allowed = set()
    for name, cloud in CLOUDS.items():
        options = cloud.cluster_options
        for field in cloud.adopted_cluster_keys:
            assert options is not None
            allowed.add(f"{name}.{options.model_fields[field].alias or field}")
    assert said == allowed
    existing = set(re.findall(r"`existing\.(\w+)`", refused))
    # The section as assembled: the shared keys and each adopting cloud's own.
    fields = ClusterModel.model_fields[SECTION].annotation.model_fields  # type: ignore[union-attr]
    taken = {
        name: existing_keys_of(CLOUDS[name])
        for name in ("aws", "gcp", "azure")
        if existing_keys_of(CLOUDS[name])
    }
    assert existing == {fields[key].alias or key for keys in taken.values() for key in keys}
    assert set(taken) == {"aws", "gcp"}  # the bullet says azure takes none


def built(cloud: str) -> list[tuple[str, ...]]:
    """What a cloud builds: the capacity orders of every kind of pool it makes."""
    orders = (order for kind in CLOUDS[cloud].pool_kinds for order in kind.capacity_orders)
    return list(dict.fromkeys(orders))


def test_the_capacity_table_lists_what_each_cloud_builds() -> None:
    text = (DOCS / "capacity.md").read_text()
    table = text.split("### What each cloud builds today", 1)[1].split("\n### ", 1)[0]
    rows: dict[str, str] = {}
    for line in table.splitlines():
        if line.startswith("| `"):
            cloud, builds, _ = line.strip("| ").split(" | ", 2)
            rows[cloud.strip("`")] = builds
    # GKE's compute classes take any list of two or more of their capacities: the row says so
    # in words (CLASS_CAPACITIES) rather than listing every order.
    classes = set(gke_class.ORDERS)
    for name in ("gcp", "azure", "existing"):
        listed = re.findall(r"`([^`]+)`", rows[name])
        expected = [shown_order(o) for o in built(name) if name != "gcp" or o not in classes]
        if name == "gcp":
            expected += list(gke_class.CLASS_CAPACITIES)
            assert "any list of two or more of" in rows[name]
        assert sorted(listed) == sorted(expected)
    words = {word for order in built("aws") for word in order}
    assert all(f"`{word}`" in rows["aws"] for word in words)
    assert "come next" not in table
