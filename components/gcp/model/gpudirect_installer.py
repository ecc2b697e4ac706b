"""The NCCL plugin installers of GPUDirect (and the NRI device injector TCPX/TCPXO need), as
gpufleet applies them: Google's DaemonSets, pinned by commit, on the stack's fabric pools only.

Source: GoogleCloudPlatform/container-engine-accelerators at commit `COMMIT` (repository HEAD on
2026-06-11), Apache-2.0, vendored unchanged in `data/` (see data/README.md):
- gpudirect-tcpx/nccl-tcpx-installer.yaml (last changed 22f1e653; plugin image
  nccl-plugin-gpudirecttcpx-dev:v3.1.9),
- gpudirect-tcpxo/nccl-tcpxo-installer.yaml (685dca25; nccl-plugin-gpudirecttcpx-dev:v1.0.15),
- gpudirect-rdma/nccl-rdma-installer.yaml (2da1c92f; nccl-plugin-gib:v1.1.1),
- nri_device_injector/nri-device-injector.yaml (3491157a; image pinned by digest).
cluster-toolkit applies the same files (modules/compute/gke-node-pool/gpu_direct.tf).

Upstream, each DaemonSet selects every node of its accelerator (`cloud.google.com/gke-accelerator
In [...]`), so it would also land on an owner's own H100 pools and on gpufleet's non-fabric
ones. gpufleet renames each (`gpufleet-` + name, labels too) and requires `gpufleet.io/pool` to
name one of the mode's fabric pools.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, Final

import yaml

from components.gcp.model.fabric import FabricGroup, GpuDirectMode
from components.model.labels import POOL_LABEL

REPOSITORY = "GoogleCloudPlatform/container-engine-accelerators"
COMMIT = "992db81257553607f1477945f1b3219632991829"
DATA = Path(__file__).parent / "data"
NRI_DEVICE_INJECTOR = "nri-device-injector.yaml"
# sha256 of each vendored file as published (data/README.md).
VENDORED_SHA256: Final = {
    "nccl-tcpx-installer.yaml": "8bbaeb56fccc3e42abcb09a3e56086ff813ed57721dd4c09aa7ac9894922d7b5",
    "nccl-tcpxo-installer.yaml": "c5eee59c22b48e01cddabd7d2a51a4903baeb4cf93e6949bc72aa2135771653e",
    "nccl-rdma-installer.yaml": "0c60c38129ff19bbe471252ab07dcda353192ff1bdbeb51c2138d3405de9db5a",
    NRI_DEVICE_INJECTOR: "44b410770b9528737172b61f5ad64f0c53e469e5066ac471863caa0ef2965d18",
}
PREFIX = "gpufleet-"


@cache
def upstream(file: str) -> dict[str, Any]:
    """The vendored DaemonSet as Google publishes it."""
    document: dict[str, Any] = yaml.safe_load((DATA / file).read_text())
    return document


def daemonset(file: str, pool_names: Sequence[str]) -> dict[str, Any]:
    """Google's DaemonSet, renamed, on the named pools only."""
    manifest = copy.deepcopy(upstream(file))
    name = PREFIX + manifest["metadata"]["name"]
    manifest["metadata"]["name"] = name
    template = manifest["spec"]["template"]
    for labels in (
        manifest["metadata"]["labels"],
        manifest["spec"]["selector"]["matchLabels"],
        template["metadata"]["labels"],
    ):
        for key in labels:
            labels[key] = name
    affinity = template["spec"]["affinity"]["nodeAffinity"]
    for term in affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]:
        term["matchExpressions"].append(
            {"key": POOL_LABEL, "operator": "In", "values": sorted(pool_names)}
        )
    return manifest


def manifests(groups: Sequence[FabricGroup]) -> tuple[dict[str, Any], ...]:
    """What the fabric pools need on their nodes: each mode's installer on that mode's pools,
    and the NRI device injector, which gives the TCPX/TCPXO sidecar its GPU devices (CEA README
    of each mode), on the pools whose mode runs a sidecar."""
    by_mode: dict[str, tuple[GpuDirectMode, list[str]]] = {}
    for group in groups:
        by_mode.setdefault(group.mode.key, (group.mode, []))[1].extend(group.pools)
    built = [daemonset(mode.installer, pools) for mode, pools in by_mode.values()]
    sidecar_pools = [p for mode, pools in by_mode.values() if mode.sidecar for p in pools]
    if sidecar_pools:
        built.append(daemonset(NRI_DEVICE_INJECTOR, sidecar_pools))
    return tuple(built)


def source(file: str) -> str:
    folder = "nri_device_injector" if file == NRI_DEVICE_INJECTOR else _folder(file)
    return f"https://github.com/{REPOSITORY}/blob/{COMMIT}/{folder}/{file}"


def _folder(file: str) -> str:
    return "gpudirect-" + file.removeprefix("nccl-").removesuffix("-installer.yaml")
