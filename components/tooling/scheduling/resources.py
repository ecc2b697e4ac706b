"""The NodeResourcesFit filter: a pod's effective requests against a node's allocatable."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from components.tooling.scheduling import quantity
from components.tooling.scheduling.model import NodeTemplate


def is_extended(name: str) -> bool:
    # v1helper.IsExtendedResourceName: prefixed, not native (kubernetes.io/), not a quota name.
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


@dataclass(frozen=True)
class _Amount:
    """A requested amount and which container fields it came from, for the reasons."""

    total: int
    parts: tuple[str, ...]

    def __add__(self, other: _Amount) -> _Amount:
        return _Amount(self.total + other.total, self.parts + other.parts)


Requests = dict[str, _Amount]


def _add(into: Requests, other: Requests) -> None:
    for name, amount in other.items():
        into[name] = into[name] + amount if name in into else amount


def _max(into: Requests, other: Requests) -> None:
    for name, amount in other.items():
        if name not in into or amount.total > into[name].total:
            into[name] = amount


def _kind(name: str) -> str:
    """How the scheduler treats a resource name: cpu, bytes (memory), scalar, or ignored."""
    if name == "cpu":
        return "cpu"
    if name == "memory":
        return "memory"
    if name == "ephemeral-storage":
        return "ignored"  # node templates do not model disk
    if (
        is_extended(name)
        or name.startswith(("hugepages-", "attachable-volumes-"))
        or ("kubernetes.io/" in name)
    ):
        return "scalar"
    return "ignored"  # the scheduler does not account unknown unprefixed names


def _amount(name: str, value: object) -> int:
    if name == "cpu":
        return quantity.cpu_millis(value)
    if is_extended(name):
        return quantity.count(value)
    return quantity.memory_bytes(value)  # whole base units, rounded up


def all_containers(pod_spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for field, label in (("initContainers", "init container"), ("containers", "container")):
        listed = pod_spec.get(field) or []
        for index, container in enumerate(listed if isinstance(listed, list) else [], start=1):
            if isinstance(container, Mapping):
                yield f"{label} {container.get('name') or f'#{index}'}", container


def _container_requests(label: str, container: Mapping[str, Any]) -> tuple[Requests, list[str]]:
    """Requests after API defaulting (absent request = limit), plus validation failures."""
    resources = container.get("resources") or {}
    if not isinstance(resources, Mapping):
        return {}, [f"{label}: resources is not a mapping"]
    sections: dict[str, Mapping[str, Any]] = {}
    errors: list[str] = []
    for field in ("requests", "limits"):
        section = resources.get(field) or {}
        if not isinstance(section, Mapping):
            errors.append(f"{label}: resources.{field} is not a mapping")
            section = {}
        sections[field] = section
    parsed: dict[str, dict[str, int]] = {"requests": {}, "limits": {}}
    for field, section in sections.items():
        for name, value in section.items():
            name = str(name)
            if _kind(name) == "ignored" and name != "ephemeral-storage":
                continue
            try:
                parsed[field][name] = _amount(name, value)
            except ValueError as error:
                errors.append(f"{label}: {field} {name}: {error}")
    requests: Requests = {}
    for name in sorted(set(parsed["requests"]) | set(parsed["limits"])):
        request = parsed["requests"].get(name)
        limit = parsed["limits"].get(name)
        if is_extended(name) and request is not None and limit is None:
            errors.append(
                f"{label}: requests {name}={sections['requests'][name]} without limits {name}; "
                "Kubernetes requires a limit for extended resources"
            )
        elif is_extended(name) and request is not None and request != limit:
            errors.append(
                f"{label}: requests {name}={sections['requests'][name]} but limits "
                f"{name}={sections['limits'][name]}; Kubernetes requires them equal "
                "for extended resources"
            )
        elif request is not None and limit is not None and request > limit:
            errors.append(
                f"{label}: requests {name}={sections['requests'][name]} exceeds limits "
                f"{name}={sections['limits'][name]}"
            )
        field = "requests" if request is not None else "limits"
        amount = request if request is not None else limit
        if amount is not None and _kind(name) != "ignored":
            part = f"{label}: {field} {name}={sections[field][name]}"
            requests[name] = _Amount(amount, (part,) if amount else ())
    return requests, errors


def _pod_level(pod_spec: Mapping[str, Any]) -> tuple[Requests, list[str]]:
    """spec.resources (pod-level resources): its cpu/memory requests replace the containers'."""
    resources = pod_spec.get("resources")
    if not isinstance(resources, Mapping):
        return {}, []
    found: Requests = {}
    errors: list[str] = []
    for field in ("limits", "requests"):  # requests win; an absent request defaults to the limit
        section = resources.get(field)
        for name, value in section.items() if isinstance(section, Mapping) else []:
            if name not in ("cpu", "memory"):
                continue
            try:
                amount = _amount(name, value)
            except ValueError as error:
                errors.append(f"pod-level resources: {field} {name}: {error}")
                continue
            found[name] = _Amount(amount, (f"pod-level {field} {name}={value}",))
    return found, errors


def pod_requests(pod_spec: Mapping[str, Any]) -> tuple[Requests, list[str]]:
    """resourcehelper.PodRequests: containers summed; restartable (sidecar) init containers
    run alongside them; each other init container runs alone with the sidecars started
    before it; the pod needs the max of both, then pod-level overrides, plus overhead."""
    errors: list[str] = []
    total: Requests = {}
    sidecars: Requests = {}
    init_peak: Requests = {}
    for label, container in all_containers(pod_spec):
        requests, problems = _container_requests(label, container)
        errors.extend(problems)
        if not label.startswith("init "):
            _add(total, requests)
        elif container.get("restartPolicy") == "Always":
            _add(total, requests)
            _add(sidecars, requests)
            _max(init_peak, dict(sidecars))
        else:
            alone = dict(requests)
            _add(alone, sidecars)
            _max(init_peak, alone)
    _max(total, init_peak)
    pod_level, problems = _pod_level(pod_spec)
    errors.extend(problems)
    total.update(pod_level)
    overhead = pod_spec.get("overhead")
    for name, value in overhead.items() if isinstance(overhead, Mapping) else []:
        if _kind(str(name)) == "ignored":
            continue
        try:
            amount = _amount(str(name), value)
        except ValueError as error:
            errors.append(f"overhead {name}: {error}")
            continue
        _add(total, {str(name): _Amount(amount, (f"pod overhead {name}={value}",))})
    return total, errors


def _breakdown(amount: _Amount) -> str:
    return f" ({' + '.join(amount.parts)})" if amount.parts else ""


def fit_reasons(requested: Requests, node: NodeTemplate) -> list[str]:
    """NodeResourcesFit on an empty node: each non-zero request within allocatable."""
    reasons: list[str] = []
    has = "the machine has"
    if node.shape_is_allocatable:
        has = "a node's allocatable is"
        if node.after_daemonsets:
            has = "a node's allocatable less its DaemonSets is"
        if node.largest_type:
            has = has.replace("a node's", f"the largest allowed type's ({node.largest_type})")
    for name, amount in requested.items():
        if amount.total == 0:
            continue
        if name == "cpu" and amount.total > node.cpu_millis:
            reasons.append(
                f"requests cpu {quantity.format_cpu(amount.total)} but {has} "
                f"{quantity.format_cpu(node.cpu_millis)} vCPU{_breakdown(amount)}"
            )
        elif name == "memory" and amount.total > node.memory_bytes:
            want, have = quantity.format_gib(amount.total), quantity.format_gib(node.memory_bytes)
            if want == have:  # rounding hid the difference; show it exactly
                want, have = f"{amount.total} bytes", f"{node.memory_bytes} bytes"
            reasons.append(f"requests memory {want} but {has} {have}{_breakdown(amount)}")
        elif name not in ("cpu", "memory"):
            offered = node.allocatable.get(name, 0)
            if offered <= 0:
                reasons.append(
                    f"requests {name}: {amount.total} but the node offers none{_breakdown(amount)}"
                )
            elif amount.total > offered:
                reasons.append(
                    f"requests {name}: {amount.total} but a node offers {offered}"
                    f"{_breakdown(amount)}"
                )
    return reasons
