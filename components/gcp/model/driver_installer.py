"""Google's NVIDIA driver installer for GKE pools whose driver GKE does not install.

With `gpuSoftware.mode: gpu-operator` GKE's pools are created with
`gpu_driver_version: INSTALLATION_DISABLED` and the operator's own driver is off (it does not
support COS), so nothing installed a driver and no GPU ever appeared (review gke.md S2-1).
NVIDIA's "GPU Operator with Google GKE" guide and GKE's "Install NVIDIA GPU device drivers
manually" both apply Google's installer DaemonSet.

Source: GoogleCloudPlatform/container-engine-accelerators, nvidia-driver-installer/cos/
daemonset-preloaded.yaml at the commit below (repository HEAD on 2026-06-11; the file last
changed in f2cf4197, 2025-07-02), Apache-2.0, vendored unchanged in `data/` (see
data/README.md): the program applies it from there, so previews and `up` need no download
(review gke-2.md N7: the provider fetched the URL at every preview). Its DaemonSet runs in
kube-system on nodes that carry `cloud.google.com/gke-accelerator` and no
`cloud.google.com/gke-gpu-driver-version` (GKE sets that label only on pools whose driver it
installs), and uses the COS image's preloaded installer (`cos-nvidia-installer:fixed`,
`imagePullPolicy: Never`): COS node images only. Its installer skips a node whose driver module
is already loaded.

gpufleet's changes: the DaemonSet and its labels are `gpufleet-nvidia-driver-installer`, so it
never takes over or collides with an owner's `nvidia-driver-installer` on an adopted cluster,
and it also requires `gpufleet.io/pool` to name one of the stack's GPU pools, so it never lands
on another team's GPU nodes (an Ubuntu pool would hang in ErrImageNeverPull).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from components.model.labels import POOL_LABEL

REPOSITORY = "GoogleCloudPlatform/container-engine-accelerators"
COMMIT = "992db81257553607f1477945f1b3219632991829"
PATH = "nvidia-driver-installer/cos/daemonset-preloaded.yaml"
SOURCE = f"https://github.com/{REPOSITORY}/blob/{COMMIT}/{PATH}"
VENDORED = Path(__file__).parent / "data" / "daemonset-preloaded.yaml"
VENDORED_SHA256 = "41c303c5f1c1279eae47f5e183591b12e2cc4176523ad5764ab1081c1b9d27ee"
NAME = "gpufleet-nvidia-driver-installer"
# What the applied manifest creates.
DAEMONSET = ("kube-system", NAME)


@cache
def upstream() -> dict[str, Any]:
    """The vendored DaemonSet as Google publishes it."""
    document: dict[str, Any] = yaml.safe_load(VENDORED.read_text())
    return document


def manifest(pool_names: Sequence[str]) -> dict[str, Any]:
    """The DaemonSet gpufleet applies: Google's, renamed, on the named pools only."""
    daemonset = copy.deepcopy(upstream())
    daemonset["metadata"]["name"] = NAME
    for labels in (
        daemonset["metadata"]["labels"],
        daemonset["spec"]["selector"]["matchLabels"],
        daemonset["spec"]["template"]["metadata"]["labels"],
    ):
        for key in labels:
            labels[key] = NAME
    affinity = daemonset["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
    for term in affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]:
        term["matchExpressions"].append(
            {"key": POOL_LABEL, "operator": "In", "values": sorted(pool_names)}
        )
    return daemonset


def manifest_yaml(pool_names: Sequence[str]) -> str:
    return yaml.safe_dump(manifest(pool_names), sort_keys=False)
