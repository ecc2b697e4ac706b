"""Google's NVIDIA driver installer for GKE pools whose driver GKE does not install.

With `gpuSoftware.mode: gpu-operator` GKE's pools are created with
`gpu_driver_version: INSTALLATION_DISABLED` and the operator's own driver is off (it does not
support COS), so nothing installed a driver and no GPU ever appeared (review gke.md S2-1).
NVIDIA's "GPU Operator with Google GKE" guide and GKE's "Install NVIDIA GPU device drivers
manually" both apply Google's installer DaemonSet; gpufleet applies it from a fixed commit.

Source: GoogleCloudPlatform/container-engine-accelerators, nvidia-driver-installer/cos/
daemonset-preloaded.yaml at the commit below (repository HEAD on 2026-06-11; the file last
changed in f2cf4197, 2025-07-02). Its DaemonSet runs in kube-system on nodes that carry
`cloud.google.com/gke-accelerator` and no `cloud.google.com/gke-gpu-driver-version` (GKE sets
that label only on pools whose driver it installs, so GKE-managed pools are left alone), and
uses the COS image's preloaded installer (`cos-nvidia-installer:fixed`): COS node images only.
"""

from __future__ import annotations

REPOSITORY = "GoogleCloudPlatform/container-engine-accelerators"
COMMIT = "992db81257553607f1477945f1b3219632991829"
PATH = "nvidia-driver-installer/cos/daemonset-preloaded.yaml"
MANIFEST_URL = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/{PATH}"
# What the manifest creates (checked by the tests against the mirrored file when present).
DAEMONSET = ("kube-system", "nvidia-driver-installer")
