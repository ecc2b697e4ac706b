"""Node bootstrap user data: how a self-managed GPU node joins the cluster with its labels and taints.

AL2023 nodes bootstrap with `nodeadm`, which reads a `NodeConfig` from a MIME multipart document;
Bottlerocket reads TOML settings. Both register the pool's labels and taints at kubelet start, so
they exist before any pod can be scheduled. `parse_registration` reads them back from the base64
user data of a launch template: the tests use it to compare the autoscaler's view (ASG tags) with
what the nodes will really register.
"""

from __future__ import annotations

import base64
import email
import ipaddress
import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import yaml

from components.aws.model.amis import AmiFamily as AmiFamily  # re-exported: callers name it here
from components.model.pools import Taint

NODEADM_CONTENT_TYPE = "application/node.eks.aws"
# Graceful node shutdown on every node version: kubelet's default is 0s (off), nodeadm turns it
# on with 150s only from Kubernetes 1.34 (review eks.md S2-4, nodeadm kubelet/config.go
# withVersionToggles), Bottlerocket not at all. With it, a stop or a Spot reclaim that shuts the
# OS down gives pods their termination grace (regular pods first, then critical ones) instead of
# losing them mid-write. Kubelet requires the critical share to be below the total
# (KubeletConfiguration, shutdownGracePeriodCriticalPods).
SHUTDOWN_GRACE_PERIOD = "150s"
SHUTDOWN_GRACE_PERIOD_CRITICAL_PODS = "30s"
_BOUNDARY = "GPUFLEET-NODEADM"


@dataclass(frozen=True)
class ClusterJoin:
    """What a node needs to find and trust the API server."""

    name: str
    endpoint: str
    certificate_authority: str  # base64 PEM, as EKS returns it
    service_cidr: str


def node_labels_flag(labels: Mapping[str, str]) -> str:
    return "--node-labels=" + ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def taints_flag(taints: Sequence[Taint]) -> str:
    return "--register-with-taints=" + ",".join(
        f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}" for t in taints
    )


def nodeadm_user_data(join: ClusterJoin, labels: Mapping[str, str], taints: Sequence[Taint]) -> str:
    """A MIME multipart document with one NodeConfig (AL2023); `/etc/eks/bootstrap.sh` is gone there."""
    flags = [node_labels_flag(labels)]
    if taints:
        flags.append(taints_flag(taints))
    node_config = {
        "apiVersion": "node.eks.aws/v1alpha1",
        "kind": "NodeConfig",
        "spec": {
            "cluster": {
                "name": join.name,
                "apiServerEndpoint": join.endpoint,
                "certificateAuthority": join.certificate_authority,
                "cidr": join.service_cidr,
            },
            "kubelet": {
                "config": {
                    "shutdownGracePeriod": SHUTDOWN_GRACE_PERIOD,
                    "shutdownGracePeriodCriticalPods": SHUTDOWN_GRACE_PERIOD_CRITICAL_PODS,
                },
                "flags": flags,
            },
        },
    }
    body = yaml.safe_dump(node_config, sort_keys=False)
    return (
        "MIME-Version: 1.0\n"
        f'Content-Type: multipart/mixed; boundary="{_BOUNDARY}"\n'
        "\n"
        f"--{_BOUNDARY}\n"
        f"Content-Type: {NODEADM_CONTENT_TYPE}\n"
        "\n"
        "---\n"
        f"{body}"
        "\n"
        f"--{_BOUNDARY}--\n"
    )


def bottlerocket_user_data(
    join: ClusterJoin, labels: Mapping[str, str], taints: Sequence[Taint]
) -> str:
    """Bottlerocket TOML settings: cluster coordinates, node labels and taints.

    No `settings.kubelet-device-plugins.nvidia` section, on purpose: the NVIDIA variant's own
    device plugin (which gpufleet's chart skips on these pools) then runs with Bottlerocket's
    defaults, one `nvidia.com/gpu` per physical GPU, no sharing, no MIG (bottlerocket.dev, API
    settings kubelet-device-plugins: device-sharing-strategy none, MIG off), which is what
    gpufleet's config allows on Bottlerocket and what the autoscaler's tags and `fit` assume
    (review eks-3.md R3-12). tests/test_aws.py pins it."""
    # json.dumps gives valid TOML basic strings for these (label keys, values and PEM base64).
    lines = [
        "[settings.kubernetes]",
        f"cluster-name = {json.dumps(join.name)}",
        f"api-server = {json.dumps(join.endpoint)}",
        f"cluster-certificate = {json.dumps(join.certificate_authority)}",
        # The service range's 10th address, as EKS assigns CoreDNS (saves a DescribeCluster call).
        f"cluster-dns-ip = {json.dumps(str(ipaddress.ip_network(join.service_cidr)[10]))}",
        f"shutdown-grace-period = {json.dumps(SHUTDOWN_GRACE_PERIOD)}",
        "shutdown-grace-period-for-critical-pods = "
        f"{json.dumps(SHUTDOWN_GRACE_PERIOD_CRITICAL_PODS)}",
        "",
        "[settings.kubernetes.node-labels]",
        *(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in sorted(labels.items())),
        "",
        "[settings.kubernetes.node-taints]",
    ]
    by_key: dict[str, list[str]] = {}
    for taint in taints:
        by_key.setdefault(taint.key, []).append(f"{taint.value}:{taint.effect}")
    lines += [f"{json.dumps(k)} = {json.dumps(v)}" for k, v in sorted(by_key.items())]
    return "\n".join(lines) + "\n"


def render(
    family: AmiFamily, join: ClusterJoin, labels: Mapping[str, str], taints: Sequence[Taint]
) -> str:
    if family == "bottlerocket":
        return bottlerocket_user_data(join, labels, taints)
    return nodeadm_user_data(join, labels, taints)


def encode(user_data: str) -> str:
    """Launch templates take user data base64-encoded."""
    return base64.b64encode(user_data.encode()).decode()


# --- reading it back ------------------------------------------------------------------------


@dataclass(frozen=True)
class Registration:
    """What a node registers with: the cluster it joins, its labels and taints."""

    cluster_name: str
    labels: dict[str, str]
    taints: tuple[Taint, ...]
    # (total, critical pods) of graceful node shutdown; None where the image's default applies.
    shutdown_grace: tuple[str, str] | None = None


def parse_registration(user_data_b64: str) -> Registration:
    """The labels and taints a node will register, from a launch template's base64 user data."""
    text = base64.b64decode(user_data_b64).decode()
    if text.lstrip().startswith("MIME-Version"):
        return _parse_nodeadm(text)
    return _parse_bottlerocket(text)


def _parse_nodeadm(text: str) -> Registration:
    message = email.message_from_string(text)
    configs = [
        yaml.safe_load(str(part.get_payload()))
        for part in message.walk()
        if part.get_content_type() == NODEADM_CONTENT_TYPE
    ]
    if len(configs) != 1:
        raise ValueError(f"expected one {NODEADM_CONTENT_TYPE} part, found {len(configs)}")
    spec = configs[0]["spec"]
    labels: dict[str, str] = {}
    taints: list[Taint] = []
    for flag in spec.get("kubelet", {}).get("flags", []):
        name, _, value = flag.partition("=")
        if name == "--node-labels":
            for item in filter(None, value.split(",")):
                key, _, label = item.partition("=")
                labels[key] = label
        elif name == "--register-with-taints":
            for item in filter(None, value.split(",")):
                key_value, _, effect = item.rpartition(":")
                key, _, taint_value = key_value.partition("=")
                taints.append(Taint(key, taint_value, effect))
    kubelet_config = spec.get("kubelet", {}).get("config", {})
    grace = (
        kubelet_config.get("shutdownGracePeriod"),
        kubelet_config.get("shutdownGracePeriodCriticalPods"),
    )
    return Registration(
        spec["cluster"]["name"], labels, tuple(taints), grace if all(grace) else None
    )


def _parse_bottlerocket(text: str) -> Registration:
    kubernetes = tomllib.loads(text)["settings"]["kubernetes"]
    taints = [
        Taint(key, *value.split(":", 1))
        for key, values in kubernetes.get("node-taints", {}).items()
        for value in ([values] if isinstance(values, str) else values)
    ]
    grace = (
        kubernetes.get("shutdown-grace-period"),
        kubernetes.get("shutdown-grace-period-for-critical-pods"),
    )
    return Registration(
        kubernetes["cluster-name"],
        dict(kubernetes.get("node-labels", {})),
        tuple(taints),
        grace if all(grace) else None,
    )
