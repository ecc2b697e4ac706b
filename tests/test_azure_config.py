"""AKS config checks, MIG guard and the kubeconfig rewrite, without planning a whole stack."""

from __future__ import annotations

import base64
import dataclasses
import re
from typing import Any

import pytest
import yaml

from components.azure import credentials
from components.azure import mock as mock_azure
from components.azure.gpu_pool import mig_profile
from components.mock_world import World
from components.model.catalog import index as gpus
from components.model.config import ConfigError, parse_config
from components.model.pools import resolve_pools
from components.tooling.stacks import load_stack


def dev_config(**cluster_azure: Any) -> dict[str, Any]:
    raw = {k: v for k, v in load_stack("azure-dev").gpufleet.items()}
    raw["cluster"] = dict(raw["cluster"], azure={**raw["cluster"]["azure"], **cluster_azure})
    return raw


def problem_paths(raw: dict[str, Any]) -> set[str]:
    with pytest.raises(ConfigError) as error:
        parse_config(raw)
    return {p.path for p in error.value.problems}


def test_shipped_aks_stacks_are_valid() -> None:
    for stack in ("azure-dev", "azure-a100-mig"):
        assert parse_config(load_stack(stack).gpufleet).cloud == "azure"


@pytest.mark.parametrize(
    ("azure", "path"),
    [
        ({"podCidr": "10.224.0.0/16"}, "cluster.azure.podCidr"),  # inside the VNet
        ({"serviceCidr": "10.230.0.0/16"}, "cluster.azure.serviceCidr"),  # inside the VNet
        ({"podCidr": "10.0.0.0/16"}, "cluster.azure.podCidr"),  # overlaps services
        ({"dnsServiceIp": "10.1.0.10"}, "cluster.azure.dnsServiceIp"),  # outside services
        ({"subnetCidr": "10.100.0.0/16"}, "cluster.azure.subnetCidr"),  # outside the VNet
        ({"vnetCidr": "nonsense"}, "cluster.azure.vnetCidr"),
        ({"vnetSubnetId": "aks-nodes"}, "cluster.azure.vnetSubnetId"),
        ({"resourceGroupName": "bad/name"}, "cluster.azure.resourceGroupName"),
        ({"scaleDownUnneededTime": "600s"}, "cluster.azure.scaleDownUnneededTime"),
        ({"adminGroupObjectIds": ["admins"]}, "cluster.azure.adminGroupObjectIds[0]"),
        ({"subscriptionId": "my-sub"}, "cluster.azure.subscriptionId"),
        ({"apiServerAuthorizedCidrs": ["office"]}, "cluster.azure.apiServerAuthorizedCidrs[0]"),
        (
            {
                "authentication": "local-accounts",
                "adminGroupObjectIds": ["7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"],
            },
            "cluster.azure.adminGroupObjectIds",
        ),
        ({"kubeloginMode": "devicecode"}, "cluster.azure.kubeloginMode"),
    ],
)
def test_bad_aks_cluster_settings_are_rejected_with_their_path(
    azure: dict[str, Any], path: str
) -> None:
    assert path in problem_paths(dev_config(**azure))


def test_a_given_subnet_skips_the_vnet_ranges() -> None:
    subnet = (
        "/subscriptions/5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b/resourceGroups/net/providers/"
        "Microsoft.Network/virtualNetworks/vnet/subnets/nodes"
    )
    parse_config(dev_config(vnetSubnetId=subnet, vnetCidr="unused"))


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"name": "T4-Pool"}, "gpuPools[0].name"),  # AKS: lowercase alphanumeric
        ({"name": "t4averylongname"}, "gpuPools[0].name"),  # AKS: at most 12
        ({"machineType": "Standard_D4s_v5"}, "gpuPools[0].machineType"),  # not a T4 size
        ({"migPartitionSize": "1g.5gb"}, "gpuPools[0].migPartitionSize"),  # T4 has no MIG
        ({"zones": ["4"]}, "gpuPools[0].zones[0]"),
        ({"taints": [{"key": "dedicated", "effect": "NoSchedule"}]}, "gpuPools[0].taints[0].value"),
    ],
)
def test_bad_aks_gpu_pools_are_rejected(change: dict[str, Any], path: str) -> None:
    raw = dev_config()
    raw["gpuPools"] = [dict(raw["gpuPools"][0], **change)]
    assert path in problem_paths(raw)


def test_mig_only_on_sizes_aks_partitions() -> None:
    # Sizes whose GPU model has MIG but which AKS does not partition (per the catalog).
    without_mig = [
        m
        for m in gpus.MACHINE_TYPES.values()
        if m.cloud == "azure" and gpus.GPU_MODELS[m.gpu].mig_partitions and not m.mig_capable
    ]
    raw = dev_config()
    for machine in without_mig:
        size = next(iter(gpus.GPU_MODELS[machine.gpu].mig_partitions))
        entry = {"name": "mig", "accelerator": machine.gpu, "migPartitionSize": size}
        raw["gpuPools"] = [dict(entry, machineType=machine.name)]
        assert "gpuPools[0].migPartitionSize" in problem_paths(raw)
        if gpus.DEFAULT_MACHINE_TYPES[("azure", machine.gpu)] == machine.name:
            raw["gpuPools"] = [entry]  # the default size is checked too
            assert "gpuPools[0].migPartitionSize" in problem_paths(raw)
    raw["gpuPools"] = [{"name": "a100", "accelerator": "a100-80gb", "migPartitionSize": "3g.40gb"}]
    (pool,) = resolve_pools(parse_config(raw))
    assert mig_profile(pool) == "MIG3g"
    # The component refuses a profile on a size without MIG even if config let one through.
    with pytest.raises(ValueError, match="does not support MIG"):
        mig_profile(dataclasses.replace(pool, machine_types=("Standard_NC4as_T4_v3",)))


def _aks_user_kubeconfig(fmt: str | None) -> str:
    result = mock_azure.LOOKUPS["azure-native:containerservice:listManagedClusterUserCredentials"](
        {"resourceGroupName": "rg", "resourceName": "gpufleet-dev", "format": fmt}, World()
    )
    return credentials.decode(result["kubeconfigs"][0]["value"])


def test_entra_id_kubeconfig_uses_non_interactive_kubelogin() -> None:
    aks = yaml.safe_load(_aks_user_kubeconfig("exec"))
    converted = yaml.safe_load(
        credentials.kubelogin_kubeconfig(_aks_user_kubeconfig("exec"), "gpufleet-dev", "azurecli")
    )
    (cluster,) = converted["clusters"]
    assert cluster["cluster"] == aks["clusters"][0]["cluster"]  # AKS's server and CA
    (user,) = converted["users"]
    exec_ = user["user"]["exec"]
    assert exec_["command"] == "kubelogin"
    args = exec_["args"]
    assert args[:3] == ["get-token", "--login", "azurecli"]
    assert args[args.index("--server-id") + 1] == mock_azure.AKS_SERVER_ID
    assert args[args.index("--tenant-id") + 1] == mock_azure.TENANT
    assert "devicecode" not in args and "--client-id" not in args
    assert exec_["interactiveMode"] == "Never"
    assert set(user["user"]) == {"exec"}  # no static credential


def test_a_kubeconfig_without_kubelogin_is_refused() -> None:
    with pytest.raises(credentials.CredentialsError):
        credentials.kubelogin_kubeconfig(_aks_user_kubeconfig(None), "gpufleet-dev", "azurecli")


def test_user_credentials_are_decoded_from_base64() -> None:
    document = "apiVersion: v1\nkind: Config\n"
    assert credentials.decode(base64.b64encode(document.encode()).decode()) == document


def test_a_minor_past_aks_end_of_life_is_refused_not_warned() -> None:
    from datetime import date

    raw = copy_of_azure_dev()
    raw["cluster"]["kubernetesVersion"] = "1.33"  # AKS end of life July 2026; LTS only since
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, today=date(2026, 11, 22))
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.startswith("cluster.kubernetesVersion: is past AKS end of life")
    assert "AKSLongTermSupport" in problem and "(got '1.33')" in problem


def test_aks_1_37_can_be_chosen() -> None:
    from datetime import date

    raw = copy_of_azure_dev()
    raw["cluster"]["kubernetesVersion"] = "1.37"
    assert parse_config(raw, today=date(2026, 11, 22)).cluster.kubernetes_version == "1.37"


def copy_of_azure_dev() -> dict[str, Any]:
    import copy

    return copy.deepcopy(dict(load_stack("azure-dev").gpufleet))


# ---------------------------------------------------- the first AKS review's NITs (issue 21)


@pytest.mark.parametrize(
    ("name", "region", "refused"),
    [
        ("gpufleet-", "eastus2", "cluster.name"),  # AKS: must end with a letter or digit
        ("_gpufleet", "eastus2", "cluster.name"),
        ("g" * 40, "germanywestcentral", "cluster.name"),  # MC_<rg>_<name>_<region> > 80
        ("g" * 24, "germanywestcentral", None),
    ],
)
def test_cluster_names_follow_aks_rules_and_fit_the_node_resource_group(
    name: str, region: str, refused: str | None
) -> None:
    raw = dev_config()
    raw["cluster"] = dict(raw["cluster"], name=name, region=region)
    if refused is None:
        parse_config(raw)
    else:
        assert refused in problem_paths(raw)


def test_zero_minutes_is_a_valid_autoscaler_delay() -> None:
    # AKS's own bursty profile sets scale-down-delay-after-add=0m (aks/cluster-autoscaler).
    parse_config(dev_config(scaleDownDelayAfterAdd="0m", scaleDownUnneededTime="0m"))


def test_private_authorized_ranges_are_named_as_admitting_nobody() -> None:
    config = parse_config(dev_config(apiServerAuthorizedCidrs=["10.0.0.0/8", "203.0.113.0/24"]))
    (warning,) = [w for w in config.warnings if "apiServerAuthorizedCidrs" in w]
    assert "10.0.0.0/8 is private" in warning and "203.0.113.0/24" not in warning
    assert not [w for w in parse_config(dev_config()).warnings if "AuthorizedCidrs" in w]


def test_a_refused_minor_says_what_aks_creates_and_moves_one_minor_at_a_time() -> None:
    """The message lists the cloud's own calendar, not a stale static list (review aks-2.md
    A-N1), and a running cluster past end of life is told to move one minor per change (A-N3)."""
    raw = dev_config()
    raw["cluster"] = dict(raw["cluster"], kubernetesVersion="1.33")
    with pytest.raises(ConfigError) as error:
        parse_config(raw)
    (problem,) = error.value.problems
    assert "moves one minor at a time" in problem.message
    assert "1.34, 1.35, 1.36, 1.37 in standard support" in problem.message
    assert "allowed:" not in problem.message


def test_a_patch_version_is_refused_naming_the_minor_to_write() -> None:
    """`1.35.7` read as if 1.35 were unknown (review aks-3 N-7): AKS's `patch` channel keeps the
    patch current, so gpufleet takes the minor and says which."""
    raw = dev_config()
    raw["cluster"] = dict(raw["cluster"], kubernetesVersion="1.35.7")
    with pytest.raises(ConfigError) as error:
        parse_config(raw)
    (problem,) = error.value.problems
    assert problem.path == "cluster.kubernetesVersion"
    assert "1.35.7 is a patch version: write the minor, 1.35" in str(problem)
    assert "not in gpufleet's" not in str(problem)
    # A patch of a minor the table does not have is still said to be unknown.
    raw["cluster"] = dict(raw["cluster"], kubernetesVersion="1.29.1")
    with pytest.raises(ConfigError, match=re.escape("1.29.1 is not in gpufleet's AKS table")):
        parse_config(raw)
