"""Pod Security Standards for the namespaces gpufleet creates, as data and one checker.

Sources: Kubernetes docs, "Pod Security Standards" (the baseline and restricted controls, v1.36)
and "Enforce Pod Security Standards with namespace labels" (`pod-security.kubernetes.io/<mode>`,
modes enforce, audit and warn; warn and audit also judge the pod templates of workload objects);
NVIDIA GPU Operator docs, "Security considerations" and the install notes (its namespace needs
`enforce=privileged` where Pod Security admission is in force).

Each namespace gets the least privileged level its pods need. Where a DaemonSet needs the node
(host paths, device files, added capabilities), `enforce` is privileged and `warn`/`audit` stay at
baseline, so what runs there and would not pass baseline is reported, never refused.

`violations` checks the controls the pod specs gpufleet writes can touch (host namespaces and
ports, privileged, capabilities, host paths and volume types, privilege escalation, running as
root, seccomp); it is not a full admission plugin.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

Level = Literal["privileged", "baseline", "restricted"]
LEVELS: Final[tuple[Level, ...]] = ("privileged", "baseline", "restricted")
LABEL_PREFIX: Final = "pod-security.kubernetes.io/"
MODES: Final = ("enforce", "audit", "warn")

# Why each namespace of gpufleet's own software has its level (chart pins: catalog/charts.py).
NEEDS: Final[Mapping[str, tuple[Level, str]]] = {
    "nvidia-device-plugin": (
        "privileged",
        "the device plugin DaemonSet mounts the kubelet's device-plugins host path "
        "(chart nvidia-device-plugin 0.20.0 templates/daemonset-device-plugin.yml)",
    ),
    "gpu-operator": (
        "privileged",
        "the GPU Operator's operands are privileged, use hostPID and host paths (NVIDIA GPU "
        "Operator docs, Security considerations)",
    ),
    "gpu-monitoring": (
        "privileged",
        "the DCGM exporter adds SYS_ADMIN and mounts the kubelet's pod-resources host path "
        "(chart dcgm-exporter 4.8.2 values.yaml securityContext, templates/daemonset.yaml)",
    ),
    "network-operator": (
        "privileged",
        "the Network Operator's DOCA driver and device plugin DaemonSets load kernel modules "
        "and mount host paths; Azure's InfiniBand guide labels the namespace privileged "
        "(Azure/aks-rdma-infiniband website/docs/configurations/01-network-operator.md)",
    ),
    "kueue-system": (
        "restricted",
        "Kueue's controller runs as non-root with RuntimeDefault seccomp, no privilege "
        "escalation and all capabilities dropped (chart kueue 0.19.2 values.yaml "
        "controllerManager.manager.podSecurityContext and containerSecurityContext)",
    ),
}
# What a namespace whose `enforce` is privileged still reports at.
DRIFT_LEVEL: Final[Level] = "baseline"

# Baseline: capabilities a container may add (Pod Security Standards, "Capabilities").
BASELINE_CAPABILITIES: Final = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
# Restricted: the only volume types allowed ("Volume Types").
RESTRICTED_VOLUMES: Final = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)
_VOLUME_KEYS_IGNORED: Final = frozenset({"name"})


def labels(enforce: Level) -> dict[str, str]:
    """The namespace labels for `enforce`: warn and audit at the same level, or at baseline when
    the namespace must be privileged."""
    report = DRIFT_LEVEL if enforce == "privileged" else enforce
    return {
        f"{LABEL_PREFIX}enforce": enforce,
        f"{LABEL_PREFIX}audit": report,
        f"{LABEL_PREFIX}warn": report,
    }


def enforced(namespace_labels: Mapping[str, str]) -> Level | None:
    """The level a namespace's labels enforce (None: unlabelled, the cluster's default)."""
    value = namespace_labels.get(f"{LABEL_PREFIX}enforce")
    return next((level for level in LEVELS if level == value), None)


def level_for(namespace: str) -> Level:
    """The level of one of gpufleet's own software namespaces."""
    return NEEDS[namespace][0]


def violations(pod_spec: Mapping[str, Any], level: Level) -> list[str]:
    """What in `pod_spec` the `level` forbids (empty: admitted)."""
    if level == "privileged":
        return []
    found = _baseline(pod_spec)
    if level == "restricted":
        found += _restricted(pod_spec)
    return found


def strictest(pod_specs: Iterable[Mapping[str, Any]]) -> Level:
    """The most restrictive level that admits every pod."""
    specs = list(pod_specs)
    for level in reversed(LEVELS):
        if not any(violations(spec, level) for spec in specs):
            return level
    return "privileged"


def _containers(pod_spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [
        *pod_spec.get("initContainers", []),
        *pod_spec.get("containers", []),
        *pod_spec.get("ephemeralContainers", []),
    ]


def _baseline(pod_spec: Mapping[str, Any]) -> list[str]:
    found = [f"{key}: true" for key in ("hostNetwork", "hostPID", "hostIPC") if pod_spec.get(key)]
    for volume in pod_spec.get("volumes", []):
        if "hostPath" in volume:
            found.append(f"volume {volume.get('name')}: hostPath")
    if _seccomp(pod_spec) == "Unconfined":
        found.append("seccompProfile: Unconfined")
    for container in _containers(pod_spec):
        name = container.get("name")
        context = container.get("securityContext") or {}
        if context.get("privileged"):
            found.append(f"container {name}: privileged")
        added = set((context.get("capabilities") or {}).get("add") or ())
        if added - BASELINE_CAPABILITIES:
            found.append(f"container {name}: adds {sorted(added - BASELINE_CAPABILITIES)}")
        if any(port.get("hostPort") for port in container.get("ports", [])):
            found.append(f"container {name}: hostPort")
        if (context.get("seccompProfile") or {}).get("type") == "Unconfined":
            found.append(f"container {name}: seccompProfile Unconfined")
    return found


def _restricted(pod_spec: Mapping[str, Any]) -> list[str]:
    found = []
    for volume in pod_spec.get("volumes", []):
        kinds = set(volume) - _VOLUME_KEYS_IGNORED
        if kinds - RESTRICTED_VOLUMES:
            found.append(f"volume {volume.get('name')}: {sorted(kinds - RESTRICTED_VOLUMES)}")
    pod_context = pod_spec.get("securityContext") or {}
    for container in _containers(pod_spec):
        name = container.get("name")
        context = container.get("securityContext") or {}
        if context.get("allowPrivilegeEscalation") is not False:
            found.append(f"container {name}: allowPrivilegeEscalation not false")
        if not context.get("runAsNonRoot", pod_context.get("runAsNonRoot")):
            found.append(f"container {name}: runAsNonRoot not true")
        if context.get("runAsUser", pod_context.get("runAsUser")) == 0:
            found.append(f"container {name}: runAsUser 0")
        if _seccomp(pod_spec, context) not in ("RuntimeDefault", "Localhost"):
            found.append(f"container {name}: no RuntimeDefault or Localhost seccompProfile")
        capabilities = context.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or ()):
            found.append(f"container {name}: does not drop ALL capabilities")
        if set(capabilities.get("add") or ()) - {"NET_BIND_SERVICE"}:
            found.append(f"container {name}: adds capabilities other than NET_BIND_SERVICE")
    return found


def _seccomp(pod_spec: Mapping[str, Any], container: Mapping[str, Any] | None = None) -> str | None:
    """The container's seccomp profile type, else the pod's."""
    own = ((container or {}).get("seccompProfile") or {}).get("type")
    pod = ((pod_spec.get("securityContext") or {}).get("seccompProfile") or {}).get("type")
    return own or pod
