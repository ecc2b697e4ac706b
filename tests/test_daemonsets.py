"""The DaemonSet pods on a GPU node take their requests off what the user's pods can have.

`gpuPools[].allocatablePerNode` is the node's allocatable less the requests of gpufleet's GPU
software on that pool and of the cloud's own agents whose requests a source gives; the numbers
are the pinned charts' and Google's and AWS's published manifests.
"""

from __future__ import annotations

from typing import Any

from components.aws.model import allocatable as eks
from components.model import daemonsets
from components.model.allocatable import MIB, NodeAllocatable
from components.tooling.scheduling import quantity
from tests.conftest import chart_defaults, plan_of


def _pool(stack: str, name: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    (pool,) = [p for p in plan_of(stack, overrides).outputs["gpuPools"] if p["name"] == name]
    return pool


def _requests(values: dict[str, Any], key: str) -> tuple[int, int]:
    section = values[key] if key else values
    requests = section.get("resources", {}).get("requests", {})
    return (
        quantity.cpu_millis(str(requests.get("cpu", "0"))),
        quantity.memory_bytes(str(requests.get("memory", "0"))),
    )


def test_gpufleet_daemonset_requests_are_the_pinned_charts() -> None:
    # gpufleet sets no resources on its DaemonSets, so the charts' defaults are what runs.
    exporter = daemonsets.DCGM_EXPORTER_DAEMONSET
    assert _requests(chart_defaults("dcgm-exporter"), "") == (100, 128 * MIB)
    assert (exporter.cpu_millis, exporter.memory_bytes) == (100, 128 * MIB)
    assert _requests(chart_defaults("nvidia-device-plugin"), "") == (0, 0)
    assert (daemonsets.DEVICE_PLUGIN.cpu_millis, daemonsets.DEVICE_PLUGIN.memory_bytes) == (0, 0)
    operator = chart_defaults("gpu-operator")
    for operand in ("devicePlugin", "gfd", "validator", "dcgmExporter", "driver", "toolkit"):
        assert _requests(operator, operand) == (0, 0), operand
    assert _requests(operator, "migManager") == (0, 0)


def test_after_daemonsets_takes_requests_and_one_pod_each() -> None:
    node = NodeAllocatable(cpu_millis=3920, memory_bytes=15710 * MIB, pods=29, ephemeral_bytes=7)
    left = daemonsets.after_daemonsets(
        node, (daemonsets.DCGM_EXPORTER_DAEMONSET, daemonsets.DEVICE_PLUGIN)
    )
    assert left == NodeAllocatable(3820, (15710 - 128) * MIB, 27, 7)


def test_eks_pool_with_monitoring_leaves_room_after_its_daemonsets() -> None:
    # g4dn.xlarge: 3920m and 14481Mi allocatable (nodeadm, 29 pods, 92.5% of 16 GiB); then
    # aws-node (25m), kube-proxy (100m), the device plugin (no requests) and dcgm-exporter
    # (100m, 128Mi): four pods.
    software = {
        "gpufleet:gpuSoftware": {"mode": "device-plugin", "monitoring": {"dcgmExporter": True}}
    }
    pool = _pool("aws-dev", "t4-spot", software)
    node = eks.node_allocatable("g4dn.xlarge", 4, 16, 100).quantities()
    assert (node["cpu"], node["memory"], node["pods"]) == ("3920m", "14481Mi", "29")
    assert pool["allocatablePerNode"]["cpu"] == "3695m"
    assert pool["allocatablePerNode"]["memory"] == "14353Mi"
    assert pool["allocatablePerNode"]["pods"] == "25"
    # DaemonSets ask for no ephemeral storage: the autoscaler's tag and the pool agree on it.
    assert pool["allocatablePerNode"]["ephemeral-storage"] == node["ephemeral-storage"]


def test_gke_operator_pool_counts_the_driver_installer_and_the_operands() -> None:
    plain = _pool("gcp-dev", "t4")["allocatablePerNode"]
    operator = _pool("gcp-dev", "t4", {"gpufleet:gpuSoftware": {"mode": "gpu-operator"}})
    # GKE's device plugin (50m, 100Mi) is off on operator pools; Google's driver installer
    # (150m) and NFD's worker (5m, 64Mi) are on, with the operator's device plugin, GFD and
    # validator (no requests) and its toolkit (GKE's preset keeps the operator's driver off).
    left = operator["allocatablePerNode"]
    assert quantity.cpu_millis(plain["cpu"]) + 50 - 150 - 5 == quantity.cpu_millis(left["cpu"])
    assert quantity.memory_bytes(plain["memory"]) + 100 * MIB - 64 * MIB == quantity.memory_bytes(
        left["memory"]
    )
    assert int(plain["pods"]) + 1 - 6 == int(left["pods"])


def test_aks_pool_counts_aks_own_agents_on_every_node() -> None:
    # Standard_NC4as_T4_v3: 4 vCPU, 28 GiB: 3860m and 28672 - 5050 - 100 = 23522Mi allocatable,
    # 250 pods (Azure CNI Overlay); AKS's six agents (the CSI drivers 30m/60Mi each,
    # cloud-node-manager 50m/50Mi; kube-proxy, azure-cns, azure-ip-masq-agent a pod each) and
    # gpufleet's device plugin (no requests) come off (review aks-2.md A-P3).
    from components.azure.model import allocatable as aks

    node = aks.node_allocatable(4, 28).quantities()
    assert (node["cpu"], node["memory"], node["pods"]) == ("3860m", "23522Mi", "250")
    left = _pool("azure-dev", "t4")["allocatablePerNode"]
    assert (left["cpu"], left["memory"], left["pods"]) == ("3750m", "23352Mi", "243")
