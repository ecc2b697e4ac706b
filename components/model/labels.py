"""Kubernetes label and taint rules, and the labels gpufleet itself puts on every GPU node."""

from __future__ import annotations

import re

GPU_RESOURCE = "nvidia.com/gpu"
POOL_LABEL = "gpufleet.io/pool"
ACCELERATOR_LABEL = "gpufleet.io/accelerator"
# NVIDIA's device plugin picks a node's entry of its config map by this label.
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
# The GPU Operator's MIG manager partitions a node's GPUs as this label says.
MIG_CONFIG_LABEL = "nvidia.com/mig.config"

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

# Prefixes a kubelet may not self-register (NodeRestriction) or that the clouds' node agents and
# gpufleet own: a user label under them would be refused or overwritten, on any cloud.
RESERVED_LABEL_PREFIXES = (
    "kubernetes.io",
    "k8s.io",
    "cloud.google.com",
    "kubernetes.azure.com",
    "eks.amazonaws.com",
    "k8s.amazonaws.com",
    "gpufleet.io",
)


def label_key_problem(key: str) -> str | None:
    """Why `key` is not a valid Kubernetes label/taint key, or None."""
    prefix, _, name = key.rpartition("/")
    if not name or len(name) > 63 or not _QUALIFIED_NAME.fullmatch(name):
        return "must be [prefix/]name, name 1-63 of A-Z a-z 0-9 - _ . (alphanumeric at both ends)"
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix)):
        return "prefix must be a DNS subdomain (lowercase, dots), at most 253 characters"
    return None


def label_value_problem(value: str) -> str | None:
    if len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
        return "must be at most 63 of A-Z a-z 0-9 - _ . (alphanumeric at both ends), or empty"
    return None
