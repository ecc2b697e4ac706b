"""A node's allocatable per cloud, from each cloud's documented reservations, and what fit does
with it: a pod that asks for the whole machine does not fit, because the kubelet keeps part.

The worked numbers are the clouds' own where they publish them (GKE's 4 vCPU node at 3920m, AKS's
CPU table and memory examples) and otherwise the formulas' arithmetic written out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from components.aws.model import allocatable as eks
from components.azure.model import allocatable as aks
from components.gcp.model import allocatable as gke
from components.model.allocatable import GIB, MIB, NodeAllocatable, cpu_after_tiers
from components.tooling.cli import main
from components.tooling.stacks import STACKS_DIR


def test_cpu_tiers_gke_and_eks_share() -> None:
    # GKE's page: a 4 vCPU node reports `allocatable: cpu: 3920m` (60 + 10 + 10 reserved).
    assert cpu_after_tiers(4) == 3920
    assert cpu_after_tiers(8) == 7910  # + 0.25% of 4 more cores
    assert cpu_after_tiers(96) == 96000 - (60 + 10 + 10 + 230)


def test_gke_memory_tiers_on_two_machines() -> None:
    # 150 GiB: 1 + 0.8 + 0.8 + 6.72 + 0.44 GiB = 9.76 GiB, plus 100 MiB eviction.
    assert gke.memory_reserved_bytes(150) == round(9.76 * GIB) + 100 * MIB
    # n1-standard-8, 30 GiB: 1 + 0.8 + 0.8 + 0.84 GiB (6% of 14) + 100 MiB, after the
    # kernel's 613.76 MiB (480 + 16 + 64 + 53.76).
    node = gke.node_allocatable(8, 30)
    assert node.quantities() == {"cpu": "7910m", "memory": "26483Mi", "pods": "110"}


# kubernetes/autoscaler cluster-autoscaler/cloudprovider/gce/gce_reserved_test.go
# TestCalculateKernelReservedLinux, COS on x86: (physical memory, reserved before the
# correction term of min(0.175 %, 248 MiB)).
_AUTOSCALER_CASES = (
    (256 * MIB, 4 * MIB + 16 * MIB + 8 * MIB),
    (2 * GIB, 32 * MIB + 16 * MIB + 8 * MIB),
    (3 * GIB, 48 * MIB + 16 * MIB + 8 * MIB),
    (int(3.25 * GIB), 52 * MIB + 16 * MIB + 64 * MIB + 8 * MIB),
    (4 * GIB, 64 * MIB + 16 * MIB + 64 * MIB + 8 * MIB),
)


@pytest.mark.parametrize(("physical", "reserved"), _AUTOSCALER_CASES)
def test_gke_kernel_memory_is_the_autoscalers_estimate(physical: int, reserved: int) -> None:
    correction = int(min(0.00175 * physical, 248 * MIB))
    assert gke.kernel_reserved_bytes(physical) == reserved + correction


def test_gke_kernel_memory_on_gpu_machines_as_the_review_measured() -> None:
    # review gke-2.md N3: g2-standard-8 649 MiB, a2-ultragpu-8g 21.6 GiB, a4-highgpu-8g ~62 GiB.
    assert gke.kernel_reserved_bytes(32 * GIB) // MIB == 649
    assert round(gke.kernel_reserved_bytes(1360 * GIB) / GIB, 1) == 21.6
    assert round(gke.kernel_reserved_bytes(3968 * GIB) / GIB) == 62


def test_n_gke_pods_sized_to_a_node_fit_the_node_the_autoscaler_builds() -> None:
    """`consumers` sizes each 1-GPU pod of an 8-GPU a2-ultragpu-8g to 1/8 of the node: all eight
    (and the DaemonSets) must fit the node the autoscaler imagines at zero, which is the
    machine less the kernel's memory, kube-reserved and eviction, or the eighth pod waits for
    another 8-GPU node (review gke-2.md N3)."""
    from components.model.config import parse_config
    from components.model.pools import resolve_pools
    from components.tooling.consumers.sizing import DAEMONSET_MEMORY_BYTES, pod_share

    raw = yaml.safe_load((STACKS_DIR / "Pulumi.gcp-a100-mig.yaml").read_text())["config"]
    config = parse_config({k.removeprefix("gpufleet:"): v for k, v in raw.items()})
    (spec,) = [s for s in resolve_pools(config) if s.name == "a100-80-spot"]
    share = pod_share(spec)
    assert share is not None and share.shares == 8
    physical = 1360 * GIB
    autoscaler_node = physical - (
        gke.kernel_reserved_bytes(physical) + gke.memory_reserved_bytes(1360)
    )
    assert 8 * share.memory_bytes + DAEMONSET_MEMORY_BYTES <= autoscaler_node


def test_eks_reservations_follow_nodeadm_and_max_pods() -> None:
    # g5.xlarge: 4 vCPU, 16 GiB nominal of which a node reports 92.5% (Karpenter's estimate of
    # the hypervisor's share), 58 pods -> 11 * 58 + 255 = 893 MiB + 100 MiB eviction.
    g5 = eks.node_allocatable("g5.xlarge", 4, 16, 100)
    assert g5 == NodeAllocatable(
        cpu_millis=3920,
        memory_bytes=round(16 * GIB * 0.925) - 993 * MIB,
        pods=58,
        ephemeral_bytes=round(100 * GIB * 0.9) - GIB,
    )
    # p4d.24xlarge: 96 vCPU, 1152 GiB, 737 pods -> 8362 MiB + 100 MiB.
    p4d = eks.node_allocatable("p4d.24xlarge", 96, 1152, 300)
    assert p4d is not None
    memory = round(1152 * GIB * 0.925) - 8462 * MIB
    assert (p4d.cpu_millis, p4d.memory_bytes, p4d.pods) == (95690, memory, 737)
    # In a managed node group: at most 250 pods (30 vCPUs or more), the reservation unchanged.
    managed = eks.node_allocatable("p4d.24xlarge", 96, 1152, 300, pods=250)
    assert managed is not None and (managed.memory_bytes, managed.pods) == (memory, 250)
    # An instance type whose max pods gpufleet does not know gets no invented figure.
    assert eks.node_allocatable("x9.huge", 4, 16, 100) is None


def test_managed_node_groups_cap_max_pods() -> None:
    """110 below 30 vCPUs, 250 above, never more than the ENI figure, and a group's smallest
    value on every node (EKS user guide, create-managed-node-group)."""
    assert eks.managed_max_pods([("p4d.24xlarge", 96)]) == 250
    assert eks.managed_max_pods([("p5.48xlarge", 192)]) == 100  # its ENI figure is lower
    assert eks.managed_max_pods([("g6e.16xlarge", 64)]) == 250
    assert eks.managed_max_pods([("g5.12xlarge", 48)]) == 250
    assert eks.managed_max_pods([("g5.4xlarge", 16)]) == 110
    assert eks.managed_max_pods([("g4dn.xlarge", 4), ("g4dn.12xlarge", 48)]) == 29
    assert eks.managed_max_pods([("x9.huge", 4)]) is None


def test_every_aws_catalog_type_has_its_max_pods() -> None:
    from components.aws.model.catalog import CATALOG

    assert {m.name for m in CATALOG.rows} <= set(eks.MAX_PODS)


def test_aks_cpu_table_and_memory_examples() -> None:
    table = {1: 60, 2: 100, 4: 140, 8: 180, 16: 260, 32: 420, 64: 740}
    assert {cores: aks.cpu_reserved_millis(cores) for cores in table} == table
    # AKS's examples: 8 GB and 30 pods reserve 20 * 30 + 50 = 650; 4 GB and 70 pods reserve
    # 25% of the memory (1 GiB), the lesser of the two; each plus 100 Mi eviction.
    assert aks.memory_reserved_bytes(8, max_pods=30) == 650 * MIB + 100 * MIB
    assert aks.memory_reserved_bytes(4, max_pods=70) == 1 * GIB + 100 * MIB
    node = aks.node_allocatable(4, 28)  # Standard_NC4as_T4_v3, 250 pods: 5050 MiB reserved
    assert node.quantities() == {"cpu": "3860m", "memory": f"{28 * 1024 - 5150}Mi", "pods": "250"}


def test_the_stack_output_carries_allocatable_quantities() -> None:
    from tests.conftest import plan_of

    for stack in ("gcp-dev", "aws-dev", "azure-dev"):
        for pool in plan_of(stack).outputs["gpuPools"]:
            node = pool["allocatablePerNode"]
            assert {"cpu", "memory", "pods"} <= set(node), (stack, pool["name"])
            assert node["cpu"].endswith("m") and node["memory"].endswith("Mi")


def _jobs(tmp_path: Path, sizes: dict[str, tuple[str, str]]) -> Path:
    """One manifest with a one-GPU Job per (cpu, memory) size, named by the dict's keys."""
    path = tmp_path / "jobs.yaml"
    jobs = []
    for name, (cpu, memory) in sizes.items():
        container = {
            "name": "train",
            "image": "trainer",
            "resources": {
                "requests": {"cpu": cpu, "memory": memory},
                "limits": {"nvidia.com/gpu": 1},
            },
        }
        spec = {
            "restartPolicy": "Never",
            "tolerations": [{"operator": "Exists"}],
            "containers": [container],
        }
        jobs.append(
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": name},
                "spec": {"template": {"spec": spec}},
            }
        )
    path.write_text(yaml.safe_dump_all(jobs))
    return path


def _verdicts(
    capsys: pytest.CaptureFixture[str], stack: str, manifest: Path, pool: str
) -> dict[str, tuple[bool, list[str]]]:
    """Job name -> (fits the pool, reasons), from `fit --json`."""
    main(["fit", stack, str(manifest), "--json"])
    report = json.loads(capsys.readouterr().out)
    verdicts = {}
    for template in report["templates"]:
        (entry,) = [p for p in template["pools"] if p["pool"] == pool]
        verdicts[template["source"].split("/", 1)[1]] = (entry["fits"], entry["reasons"])
    return verdicts


def test_a_job_the_size_of_an_n1_standard_8_does_not_fit_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sizes = {"whole-machine": ("8", "30Gi"), "within-allocatable": ("7", "24Gi")}
    verdicts = _verdicts(capsys, "gcp-dev", _jobs(tmp_path, sizes), "t4")
    fits, reasons = verdicts["whole-machine"]
    assert not fits
    # 7910m and 25074Mi allocatable (image streaming's 1.38 GiB off), less GKE's device
    # plugin (50m, 100Mi).
    assert any("a node's allocatable less its DaemonSets is 7.86 vCPU" in r for r in reasons)
    assert any("a node's allocatable less its DaemonSets is 24.39 GiB" in r for r in reasons)
    assert verdicts["within-allocatable"][0], verdicts["within-allocatable"][1]


def test_gke_image_streaming_memory_is_not_allocatable() -> None:
    """A streaming node keeps memory for image streaming beyond GKE's tiers (review gke-3.md
    R3-2): 10% of the first 4 GiB, 8% of the next 4, 4% of the next 8, 2.4% up to 128 GiB and
    0.8% above, nothing at or below 1 GiB."""
    assert gke.image_streaming_reserved_bytes(1) == 0
    assert gke.image_streaming_reserved_bytes(1.5) == round(0.15 * GIB)
    assert gke.image_streaming_reserved_bytes(4) == round(0.4 * GIB)
    assert gke.image_streaming_reserved_bytes(8) == round(0.72 * GIB)
    assert gke.image_streaming_reserved_bytes(16) == round(1.04 * GIB)
    assert gke.image_streaming_reserved_bytes(128) == round(3.728 * GIB)
    # The review's figures: g2-standard-8 1.42 GiB, a2-ultragpu-8g 13.6, a3-highgpu-8g 17.7.
    assert gke.image_streaming_reserved_bytes(32) == round(1.424 * GIB)
    assert gke.image_streaming_reserved_bytes(1360) == round(13.584 * GIB)
    assert gke.image_streaming_reserved_bytes(1872) == round(17.68 * GIB)
    plain, streaming = gke.node_allocatable(8, 32), gke.node_allocatable(8, 32, True)
    assert plain.memory_bytes - streaming.memory_bytes == round(1.424 * GIB)


def test_a_job_sized_to_a_node_without_image_streaming_no_longer_fits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """gcp-dev's T4 pool streams by default: 25 GiB fit the node gpufleet reported before
    (25.76 GiB less the device plugin), not the one GKE gives (24.39 GiB); `consumers` and
    Kueue's quotas read the same figure. With imageStreaming off the pool has it again."""
    sizes = {"old-allocatable": ("7", "25Gi")}
    manifest = _jobs(tmp_path, sizes)
    fits, reasons = _verdicts(capsys, "gcp-dev", manifest, "t4")["old-allocatable"]
    assert not fits
    assert any("requests memory 25 GiB but a node's allocatable" in r for r in reasons)
    stack = yaml.safe_load((STACKS_DIR / "Pulumi.gcp-dev.yaml").read_text())
    for pool in stack["config"]["gpufleet:gpuPools"]:
        pool["gcp"] = {"imageStreaming": False}
    stack_file = tmp_path / "Pulumi.gcp-no-streaming.yaml"
    stack_file.write_text(yaml.safe_dump(stack))
    fits, reasons = _verdicts(capsys, str(stack_file), manifest, "t4")["old-allocatable"]
    assert fits, reasons


def test_a_job_the_size_of_a_g5_xlarge_does_not_fit_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    stack = yaml.safe_load((STACKS_DIR / "Pulumi.aws-dev.yaml").read_text())
    stack["config"]["gpufleet:gpuPools"] = [
        {
            "name": "a10g",
            "accelerator": "a10g",
            "machineTypes": ["g5.xlarge"],
            "maxNodes": 2,
            "zones": ["us-east-1a"],
        }
    ]
    stack_file = tmp_path / "Pulumi.aws-g5.yaml"
    stack_file.write_text(yaml.safe_dump(stack))
    sizes = {"whole-machine": ("4", "16Gi"), "within-allocatable": ("3", "13Gi")}
    verdicts = _verdicts(capsys, str(stack_file), _jobs(tmp_path, sizes), "a10g")
    fits, reasons = verdicts["whole-machine"]
    assert not fits
    # 3920m allocatable, less aws-node's 25m and kube-proxy's 100m.
    assert any("a node's allocatable less its DaemonSets is 3.795 vCPU" in r for r in reasons), (
        reasons
    )
    assert verdicts["within-allocatable"][0], verdicts["within-allocatable"][1]


def test_fit_calls_an_aks_cpu_reservation_off_the_documented_table_an_estimate() -> None:
    """AKS documents its CPU reservation for 1-64 cores at the table's rows only (review
    aks-2.md A-P3): the 24- and 96-core GPU VMs' figures are gpufleet's, and fit says so."""
    from components.model.config import parse_config
    from components.tooling.pool_views import pool_checks
    from components.tooling.stacks import load_stack

    config = parse_config(load_stack("azure-a100-mig").gpufleet)
    notes = {check.spec.name: " ".join(check.notes) for check in pool_checks(config)}
    assert "for 96 cores gpufleet continues the table's steps (1060m reserved)" in notes["h100"]
    assert "for 24 cores gpufleet follows the table's steps (340m reserved)" in notes["a100mig"]
    assert "estimate" not in notes["system"]  # Standard_D8s_v5: 8 cores, a row of the table
    assert aks.estimate_notes(64) == ()


def test_fit_never_says_fits_in_the_kernels_gap(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """a2-ultragpu-8g: 1360 GiB less kube-reserved and eviction left 1324.8 GiB before the kernel
    was counted; the node (and the autoscaler's template) has about 1303 GiB. A pod asking for
    1310 GiB is in that gap: it must not fit (review gke-2.md N3)."""
    sizes = {"in-the-gap": ("8", "1310Gi"), "below": ("8", "1290Gi")}
    verdicts = _verdicts(capsys, "gcp-a100-mig", _jobs(tmp_path, sizes), "a100-80-spot")
    fits, reasons = verdicts["in-the-gap"]
    assert not fits
    assert any("requests memory 1310 GiB but a node's allocatable" in r for r in reasons)
    assert verdicts["below"][0], verdicts["below"][1]
    # The plan and fit say the figure is an upper bound by GKE's own agents.
    main(["fit", "gcp-a100-mig", str(tmp_path / "jobs.yaml")])
    assert "the requests of the cloud's own DaemonSets kube-proxy" in capsys.readouterr().out
