"""Every EKS limit in gpufleet's tables at its exact edge: the limit passes, one more is refused
(or, for names, shortened as `components/aws/model/names.py` intends). A flipped comparison
(`<` for `<=`) or an off-by-one limit fails one of these (issue 30, "Tests that a broken line
fails": an autoname exactly at the AWS length limit lived through a mutation run). Limits tested
at their edges elsewhere: the 50 tags of an auto scaling group and a managed pool's name
(test_aws_config.py), the managed node group quotas (test_eks_quotas.py), a Capacity Block's
warning days (test_eks_capacity.py), NodePool limits (test_karpenter_limits.py)."""

from __future__ import annotations

import copy
import ipaddress
from typing import Any

import pytest

from components.aws.model import allocatable, names
from components.aws.model.autoscaler_tags import MAX_TAG_KEY_LENGTH, TEMPLATE_PREFIX
from components.aws.model.groups import MANAGED_LABEL_MAX
from components.model.config import ConfigError, parse_config
from components.tooling.stacks import load_stack
from tests.conftest import PINNED_TODAY, plan_of

AUTONAMED = [token for token, rule in names.NAME_LIMITS.items() if rule.autoname_max is not None]


def _logical(length: int) -> str:
    return "n" * length


@pytest.mark.parametrize("token", AUTONAMED)
def test_an_autoname_exactly_at_the_aws_limit_is_kept(token: str) -> None:
    rule = names.NAME_LIMITS[token]
    at_limit = _logical(rule.limit - names.AUTONAME_SUFFIX)
    assert names.name_args(token, at_limit) == {}
    assert names.physical_length(token, at_limit, {}) == rule.limit


@pytest.mark.parametrize("token", AUTONAMED)
def test_one_character_more_gets_a_shortened_name_that_fits(token: str) -> None:
    rule = names.NAME_LIMITS[token]
    over = _logical(rule.limit - names.AUTONAME_SUFFIX + 1)
    args = names.name_args(token, over)
    assert args, "past the limit the name is no longer left to Pulumi's autoname"
    inputs = {_camel(key): value for key, value in args.items()}
    assert names.physical_length(token, over, inputs) == rule.limit
    # Two long names stay distinct (a hash of the whole logical name).
    assert names.name_args(token, over + "x") != args


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


@pytest.mark.parametrize(("length", "autonamed"), [(48, True), (49, False)])
def test_the_cluster_role_s_autoname_at_64_characters_in_a_whole_plan(
    length: int, autonamed: bool
) -> None:
    """`<cluster>-cluster` autonamed is the cluster name plus 16 characters: 64 at 48."""
    name = "c" * length
    cluster = {**load_stack("aws-dev").gpufleet["cluster"], "name": name}
    plan = plan_of("aws-dev", {"gpufleet:cluster": cluster})
    (role,) = [r for r in plan.of_type(names.ROLE) if r.name == f"{name}-cluster"]
    assert ("namePrefix" not in role.inputs) is autonamed
    assert names.physical_length(role.type, role.name, role.inputs) == 64


# --- config limits --------------------------------------------------------------------------

BASE = load_stack("aws-dev").gpufleet


def _parse(**edit: Any) -> list[str]:
    """The problems of aws-dev with its first pool or its cluster edited ([] when valid)."""
    raw = copy.deepcopy(dict(BASE))
    raw["gpuPools"][0].update(edit.pop("pool", {}))
    raw["cluster"].update(edit.pop("cluster", {}))
    raw["cluster"]["aws"].update(edit.pop("aws", {}))
    try:
        parse_config(raw, today=PINNED_TODAY)
    except ConfigError as error:
        return [str(p) for p in error.problems]
    return []


def _managed(**pool: Any) -> dict[str, Any]:
    return {"aws": {"nodeGroup": "managed"}, "machineTypes": ["g4dn.xlarge"], **pool}


def test_cluster_names_of_100_characters_pass_and_101_are_refused() -> None:
    assert _parse(cluster={"name": "c" * 100}) == []
    (problem,) = _parse(cluster={"name": "c" * 101})
    assert problem.startswith("cluster.name: not a valid cluster name")


def test_pool_names_of_63_characters_pass_and_64_are_refused() -> None:
    assert _parse(pool={"name": "p" * 63}) == []
    assert any(p.startswith("gpuPools[0].name:") for p in _parse(pool={"name": "p" * 64}))


@pytest.mark.parametrize("kind", ["labels", "taints"])
def test_managed_group_label_and_taint_keys_at_63_and_64(kind: str) -> None:
    def edit(length: int) -> dict[str, Any]:
        key = "example.com/" + "k" * (length - len("example.com/"))
        if kind == "labels":
            return _managed(labels={key: "x"})
        return _managed(taints=[{"key": key, "value": "x"}])

    assert _parse(pool=edit(MANAGED_LABEL_MAX)) == []
    (problem,) = _parse(pool=edit(MANAGED_LABEL_MAX + 1))
    assert f"at most {MANAGED_LABEL_MAX} characters" in problem


def _key(length: int) -> str:
    """A valid Kubernetes label key of `length` characters: a long DNS prefix, a short name."""
    chars = ["." if (index + 1) % 40 == 0 else "d" for index in range(length - len("/k"))]
    chars[-1] = "d"  # a DNS label ends alphanumeric
    return "".join(chars) + "/k"


@pytest.mark.parametrize("kind", ["label", "taint"])
def test_self_managed_tag_keys_at_128_and_129(kind: str) -> None:
    prefix = f"{TEMPLATE_PREFIX}/{kind}/"

    def edit(length: int) -> dict[str, Any]:
        key = _key(length - len(prefix))
        assert len(prefix + key) == length
        if kind == "label":
            return {"labels": {key: "x"}}
        return {"taints": [{"key": key, "value": "x"}]}

    assert _parse(pool=edit(MAX_TAG_KEY_LENGTH)) == []
    (problem,) = _parse(pool=edit(MAX_TAG_KEY_LENGTH + 1))
    assert f"at most {MAX_TAG_KEY_LENGTH - len(prefix)} characters" in problem


def test_max_nodes_equal_to_the_zones_passes_and_one_fewer_is_refused() -> None:
    assert _parse(pool={"maxNodes": 3}) == []  # t4-spot: three zones
    (problem,) = _parse(pool={"maxNodes": 2})
    assert problem.startswith("gpuPools[0].maxNodes: must be at least the number of zones (3)")


@pytest.mark.parametrize("max_nodes", [5, 7])
def test_max_nodes_per_zone_times_zones_exactly(max_nodes: int) -> None:
    assert _parse(pool={"maxNodes": 6, "aws": {"maxNodesPerZone": 2}}) == []
    (problem,) = _parse(pool={"maxNodes": max_nodes, "aws": {"maxNodesPerZone": 2}})
    assert "set maxNodes: 6" in problem


@pytest.mark.parametrize(
    ("key", "widest", "narrowest"),
    [("vpcCidr", "10.0.0.0/12", "10.0.0.0/20"), ("serviceCidr", "172.16.0.0/12", "172.20.0.0/24")],
)
def test_cidr_prefix_limits_at_both_ends(key: str, widest: str, narrowest: str) -> None:
    for cidr in (widest, narrowest):
        extra = {"vpcCidr": "10.0.0.0/16"} if key == "serviceCidr" else {}
        assert _parse(aws={key: cidr, **extra}) == [], cidr
    too_wide = str(ipaddress.ip_network(widest).supernet())
    too_narrow = str(next(ipaddress.ip_network(narrowest).subnets()))
    for cidr in (too_wide, too_narrow):
        assert any(
            p.startswith(f"cluster.aws.{key}: must be an IPv4 CIDR from /12")
            for p in _parse(aws={key: cidr})
        ), cidr


def test_two_zones_pass_and_one_is_refused() -> None:
    pools = copy.deepcopy(BASE["gpuPools"])
    raw = copy.deepcopy(dict(BASE))
    raw["cluster"]["zones"] = ["us-east-1a", "us-east-1b"]
    raw["gpuPools"] = [{**pool, "zones": ["us-east-1a", "us-east-1b"]} for pool in pools]
    parse_config(raw, today=PINNED_TODAY)
    raw["cluster"]["zones"] = ["us-east-1a"]
    raw["gpuPools"] = [{**pool, "zones": ["us-east-1a"]} for pool in pools]
    with pytest.raises(ConfigError, match="EKS needs subnets in at least two zones"):
        parse_config(raw, today=PINNED_TODAY)


def test_managed_pods_cap_changes_at_30_vcpus() -> None:
    """EKS gives managed nodes maxPods 110 below 30 vCPUs, 250 from 30 (the ENI figure if lower)."""
    small, large = allocatable.MANAGED_MAX_PODS
    edge = allocatable.MANAGED_MAX_PODS_VCPUS
    big_eni = "g6e.48xlarge"  # an ENI figure above both caps
    assert allocatable.MAX_PODS[big_eni] > large
    assert allocatable.managed_max_pods([(big_eni, edge - 1)]) == small
    assert allocatable.managed_max_pods([(big_eni, edge)]) == large
