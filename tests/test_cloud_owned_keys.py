"""Keys a cloud declares in its own folder but users write in a shared section
(`cluster.existing.autoscalerInstalled`, `cluster.existing.location`, `gpuSoftware.operatorDriver`;
review design-1 L4, L5): same paths, same refusals elsewhere, read back through the cloud's model."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.aws.model.config import existing_options as eks_existing
from components.azure.model.config import software_options as aks_software
from components.gcp.model.config import existing_options as gke_existing
from components.model.config import ConfigError, parse_config
from components.tooling.stacks import load_stack


def raw(stack: str) -> dict[str, Any]:
    return copy.deepcopy(dict(load_stack(stack).gpufleet))


def problems(config: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(config)
    return [str(problem) for problem in caught.value.problems]


@pytest.mark.parametrize(
    ("stack", "key", "value", "expected"),
    [
        (
            "azure-existing",
            "autoscalerInstalled",
            True,
            "cluster.existing.autoscalerInstalled: does not apply to cloud azure; "
            "allowed here: none (an empty existing: {} adopts) (got True)",
        ),
        (
            "gcp-existing",
            "nodeSecurityGroupIds",
            ["sg-1"],
            "cluster.existing.nodeSecurityGroupIds: does not apply to cloud gcp; "
            "allowed here: location (got ['sg-1'])",
        ),
        (
            "existing-dev",
            "karpenterNodeRole",
            "r",
            "cluster.existing.karpenterNodeRole: does not apply to cloud existing; "
            "allowed here: context, distribution, provisioningRequestClass (got 'r')",
        ),
        (
            "aws-existing",
            "location",
            "us-central1-a",
            "cluster.existing.location: does not apply to cloud aws; allowed here: "
            "autoscalerInstalled, karpenterNodeRole, nodeSecurityGroupIds (got 'us-central1-a')",
        ),
    ],
)
def test_a_clouds_existing_key_is_refused_on_another_cloud_as_before(
    stack: str, key: str, value: Any, expected: str
) -> None:
    config = raw(stack)
    config["cluster"].setdefault("existing", {})[key] = value
    assert problems(config) == [expected]


def test_an_unknown_existing_key_lists_every_clouds_keys() -> None:
    config = raw("aws-existing")
    config["cluster"]["existing"]["autoscalerInstaled"] = True
    assert (
        "cluster.existing.autoscalerInstaled: unknown key; allowed here: autoscalerInstalled, "
        "context, distribution, karpenterNodeRole, location, nodeSecurityGroupIds, "
        "provisioningRequestClass; did you mean autoscalerInstalled?"
    ) in problems(config)


def test_the_moved_keys_read_back_through_their_clouds_model() -> None:
    config = raw("aws-existing")
    config["cluster"]["existing"] = {
        "autoscalerInstalled": True,
        "nodeSecurityGroupIds": ["sg-0123456789abcdef0"],
    }
    eks = eks_existing(parse_config(config).cluster)
    assert eks.autoscaler_installed is True
    assert eks.node_security_group_ids == ["sg-0123456789abcdef0"]
    # A cluster gpufleet creates has the defaults.
    assert eks_existing(parse_config(raw("aws-dev")).cluster).autoscaler_installed is False
    gke = raw("gcp-existing")
    gke["cluster"]["existing"] = {"location": "us-central1-a"}
    assert gke_existing(parse_config(gke).cluster).location == "us-central1-a"


REFUSED = "gpuSoftware.operatorDriver: only applies to azure with mode gpu-operator (got True)"


@pytest.mark.parametrize(
    ("stack", "mode"),
    [
        ("gcp-dev", None),
        ("aws-dev", "gpu-operator"),
        ("existing-dev", "gpu-operator"),
        ("azure-dev", None),
        ("azure-dev", "device-plugin"),
        ("azure-existing", "cloud-managed"),
    ],
)
def test_operator_driver_is_refused_off_aks_or_without_the_operator(
    stack: str, mode: str | None
) -> None:
    config = raw(stack)
    software = config.get("gpuSoftware") or {}
    config["gpuSoftware"] = {**software, "operatorDriver": True, **({"mode": mode} if mode else {})}
    assert REFUSED in problems(config)


def test_operator_driver_is_taken_on_aks_with_the_operator_and_false_anywhere() -> None:
    config = raw("azure-dev")
    config["gpuSoftware"] = {"mode": "gpu-operator", "operatorDriver": True}
    assert aks_software(parse_config(config).gpu_software).operator_driver is True
    gke = raw("gcp-dev")
    gke["gpuSoftware"] = {"operatorDriver": False}
    assert aks_software(parse_config(gke).gpu_software).operator_driver is False
