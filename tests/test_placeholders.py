"""Placeholders (documentation IP ranges, the examples' ids) are named by `plan` and refused by a
real `pulumi preview` or `pulumi up`, while the examples keep them and still plan offline."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

import pulumi
import pytest
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.config import set_all_config

from components.model.placeholders import find_placeholders
from components.pulumi_config import load_from_pulumi, running_under_mocks
from components.tooling.commands import load_validated
from components.tooling.stacks import load_stack, shipped_stacks
from tests.conftest import plan_of

# Examples and the placeholder key paths each keeps (so they plan offline as shipped).
EXAMPLE_PLACEHOLDERS = {
    "gcp-dev": ["cluster.gcp.project"],
    "aws-dev": ["cluster.aws.publicEndpointCidrs[0]"],
    "azure-a100-mig": [
        "cluster.azure.subscriptionId",
        "cluster.azure.vnetSubnetId",
        "cluster.azure.apiServerAuthorizedCidrs[0]",
        "cluster.azure.apiServerAuthorizedCidrs[1]",
        "cluster.azure.adminGroupObjectIds[0]",
    ],
}


@pytest.mark.parametrize("stack", sorted(EXAMPLE_PLACEHOLDERS))
def test_plan_names_each_placeholder_of_an_example_and_still_plans(
    stack: str, capsys: pytest.CaptureFixture[str]
) -> None:
    load_validated(stack, name_placeholders=True)
    warnings = [line for line in capsys.readouterr().err.splitlines() if "is a placeholder" in line]
    assert [line.split(":", 2)[1].strip() for line in warnings] == EXAMPLE_PLACEHOLDERS[stack]
    for line in warnings:
        assert line.endswith("a real `pulumi preview` or `pulumi up` refuses this stack until then")
    # Under the mock engine the program warns and goes on: the example's graph is planned.
    plan = plan_of(stack)
    assert plan.resources
    assert [w.split(":", 1)[0] for w in plan.warnings if "is a placeholder" in w] == (
        EXAMPLE_PLACEHOLDERS[stack]
    )


def test_the_user_stacks_hold_no_placeholder() -> None:
    from tests.test_user_stacks import USER_STACKS

    for path in USER_STACKS.glob("Pulumi.*.yaml"):
        assert find_placeholders(load_stack(str(path)).gpufleet) == [], path.name


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("203.0.113.0/24", "RFC 5737 TEST-NET-3"),
        ("203.0.113.7/32", "RFC 5737 TEST-NET-3"),
        ("198.51.100.0/24", "RFC 5737 TEST-NET-2"),
        ("192.0.2.10", "RFC 5737 TEST-NET-1"),
        ("2001:db8:1::/48", "RFC 3849"),
        ("10.0.0.0/8", None),
        ("0.0.0.0/0", None),  # open to the world on purpose: it contains them, it is not one
        ("198.0.0.0/7", None),
        ("62.157.140.0/28", None),
        ("arn:aws:iam::123456789012:role/admins", "AWS's documentation account id"),
        ("arn:aws:iam::614871946825:role/admins", None),
        ("5F0C1A2B-3C4D-4E5F-8A9B-0C1D2E3F4A5B", "subscription id"),
    ],
)
def test_placeholder_values_are_found_anywhere(value: str, found: str | None) -> None:
    placeholders = find_placeholders({"cluster": {"x": {"list": [value]}}})
    if found is None:
        assert placeholders == []
    else:
        (placeholder,) = placeholders
        assert placeholder.path == "cluster.x.list[0]" and found in placeholder.what


def test_an_example_project_id_counts_only_as_a_project() -> None:
    assert (
        find_placeholders({"cluster": {"azure": {"resourceGroupName": "ml-platform-prod"}}}) == []
    )
    (found,) = find_placeholders({"cluster": {"gcp": {"project": "ml-platform-prod"}}})
    assert "gcloud config get-value project" in found.todo


def test_the_real_engine_is_not_the_mock_one(monkeypatch: pytest.MonkeyPatch) -> None:
    plan_of("gcp-dev")  # runs under the engine's mocks
    stub = pulumi_settings.Settings(project="gpufleet", stack="x", monitor="127.0.0.1:1").monitor
    monkeypatch.setattr(pulumi_settings.SETTINGS, "monitor", stub)
    assert not running_under_mocks()


def _load_as_real_preview(stack: str, monkeypatch: pytest.MonkeyPatch, **changes: Any) -> Any:
    """`load_from_pulumi` as the program runs it under `pulumi preview`: the stack's config,
    and a gRPC resource monitor (never called here) instead of the mock one."""
    raw = {**load_stack(stack).gpufleet, **changes}
    set_all_config({f"gpufleet:{key}": json.dumps(value) for key, value in raw.items()})
    stub = pulumi_settings.Settings(project="gpufleet", stack=stack, monitor="127.0.0.1:1").monitor
    monkeypatch.setattr(pulumi_settings.SETTINGS, "monitor", stub)
    return load_from_pulumi()


def test_a_real_preview_refuses_placeholders_with_key_paths_and_what_to_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(pulumi.RunError) as refused:
        _load_as_real_preview("azure-a100-mig", monkeypatch)
    message = str(refused.value)
    assert message.startswith("this stack still holds 5 placeholder value(s)")
    for path in EXAMPLE_PLACEHOLDERS["azure-a100-mig"]:
        assert f"  - {path}: " in message
    assert "az account show --query id -o tsv" in message
    assert "your office and CI egress" in message


def test_a_real_preview_goes_on_once_they_are_filled_in(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = load_stack("gcp-dev").gpufleet["cluster"]
    filled = {**cluster, "gcp": {**cluster["gcp"], "project": "acme-ml-4711"}}
    config = _load_as_real_preview("gcp-dev", monkeypatch, cluster=filled)
    assert config.cluster.name == "gpufleet-dev"


def test_only_plan_names_them(capsys: pytest.CaptureFixture[str]) -> None:
    load_validated("gcp-dev")
    assert "placeholder" not in capsys.readouterr().err


@pytest.mark.parametrize("stack", shipped_stacks())
def test_every_example_id_and_public_range_is_a_placeholder(stack: str) -> None:
    """A new example's project id or subscription must join components/model/placeholders.py,
    and its API ranges be documentation or private ones, or a copy of it would deploy into
    someone else's account, or open the API to real addresses."""
    raw = load_stack(stack).gpufleet
    flagged = {p.path for p in find_placeholders(raw)}
    cluster = raw["cluster"]
    for key in ("gcp.project", "azure.subscriptionId"):
        section, _, field = key.partition(".")
        if field in (cluster.get(section) or {}):
            assert f"cluster.{key}" in flagged, (stack, key)
    for key in ("aws.publicEndpointCidrs", "azure.apiServerAuthorizedCidrs"):
        section, _, field = key.partition(".")
        for index, cidr in enumerate((cluster.get(section) or {}).get(field) or []):
            path = f"cluster.{key}[{index}]"
            assert path in flagged or ipaddress.ip_network(cidr).is_private, (stack, path)
