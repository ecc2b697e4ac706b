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
from typing import Any

import yaml

from components.aws.model.amis import AmiFamily as AmiFamily  # re-exported: callers name it here
from components.aws.model.image_start import EksImageStart
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


def _mime(node_config: Mapping[str, object]) -> str:
    body = yaml.safe_dump(dict(node_config), sort_keys=False)
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


def _node_config(spec: Mapping[str, object]) -> dict[str, object]:
    return {"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig", "spec": dict(spec)}


def nodeadm_user_data(
    join: ClusterJoin,
    labels: Mapping[str, str],
    taints: Sequence[Taint],
    image_start: EksImageStart | None = None,
) -> str:
    """A MIME multipart document with one NodeConfig (AL2023); `/etc/eks/bootstrap.sh` is gone there."""
    flags = [node_labels_flag(labels)]
    if taints:
        flags.append(taints_flag(taints))
    spec: dict[str, object] = {
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
    }
    gates = image_start.nodeadm_feature_gates() if image_start else {}
    if gates:
        spec["featureGates"] = gates
    return _mime(_node_config(spec))


def _settings_toml(settings: Mapping[str, Mapping[str, str]]) -> list[str]:
    lines: list[str] = []
    for table, values in settings.items():
        lines += ["", f"[{table}]", *(f"{k} = {json.dumps(v)}" for k, v in values.items())]
    return lines


def bottlerocket_user_data(
    join: ClusterJoin,
    labels: Mapping[str, str],
    taints: Sequence[Taint],
    image_start: EksImageStart | None = None,
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
    if image_start:
        lines += _settings_toml(image_start.bottlerocket_settings())
    return "\n".join(lines) + "\n"


def render(
    family: AmiFamily,
    join: ClusterJoin,
    labels: Mapping[str, str],
    taints: Sequence[Taint],
    image_start: EksImageStart | None = None,
) -> str:
    if family == "bottlerocket":
        return bottlerocket_user_data(join, labels, taints, image_start)
    return nodeadm_user_data(join, labels, taints, image_start)


def merged_user_data(image_start: EksImageStart, join: ClusterJoin | None = None) -> str | None:
    """Only the fast image start settings, for user data that EKS (managed node groups) or
    Karpenter merge with their own bootstrap (components/aws/model/image_start.py has the
    sources): an AL2023 NodeConfig with the feature gate; a Bottlerocket TOML with the soci
    settings, naming the cluster where `join` is given (a managed group's must). None when
    the pool needs none, so such pools keep the user data they had."""
    if not image_start.adds_user_data:
        return None
    if image_start.family == "al2023":
        return _mime(_node_config({"featureGates": image_start.nodeadm_feature_gates()}))
    lines = []
    if join is not None:
        lines = [
            "[settings.kubernetes]",
            f"cluster-name = {json.dumps(join.name)}",
            f"api-server = {json.dumps(join.endpoint)}",
            f"cluster-certificate = {json.dumps(join.certificate_authority)}",
        ]
    lines += _settings_toml(image_start.bottlerocket_settings())
    return "\n".join(lines).lstrip("\n") + "\n"


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


def fast_image_pull(user_data: str) -> bool:
    """Whether user data (plain, as an EC2NodeClass carries it, or base64, as a launch template
    does) turns on SOCI parallel pull: nodeadm's feature gate, or Bottlerocket's soci settings."""
    text = user_data if user_data.lstrip().startswith(("MIME", "[")) else _decode(user_data)
    if text.lstrip().startswith("MIME-Version"):
        return any(c["spec"].get("featureGates", {}).get("FastImagePull") for c in _configs(text))
    settings = tomllib.loads(text).get("settings", {})
    soci = settings.get("container-runtime-plugins", {}).get("soci-snapshotter", {})
    return bool(
        settings.get("container-runtime", {}).get("snapshotter") == "soci"
        and soci.get("pull-mode") == "parallel-pull-unpack"
    )


def _decode(user_data_b64: str) -> str:
    return base64.b64decode(user_data_b64).decode()


def _configs(text: str) -> list[dict[str, Any]]:
    message = email.message_from_string(text)
    return [
        yaml.safe_load(str(part.get_payload()))
        for part in message.walk()
        if part.get_content_type() == NODEADM_CONTENT_TYPE
    ]


def parse_registration(user_data_b64: str) -> Registration:
    """The labels and taints a node will register, from a launch template's base64 user data."""
    text = _decode(user_data_b64)
    if text.lstrip().startswith("MIME-Version"):
        return _parse_nodeadm(text)
    return _parse_bottlerocket(text)


def _parse_nodeadm(text: str) -> Registration:
    configs = _configs(text)
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
