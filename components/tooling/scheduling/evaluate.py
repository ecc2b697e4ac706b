"""Would kube-scheduler place this pod on a node of this pool? Every reason why not.

Mirrors the scheduler filters that depend only on the pod and the node: NodeAffinity
(nodeSelector and required node affinity), TaintToleration and NodeResourcesFit, plus the
API-server checks that would reject the pod before it is ever scheduled. Filters that depend
on other pods or on volumes (inter-pod affinity, topology spread, ports) are out of scope.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from components.tooling.scheduling import quantity
from components.tooling.scheduling.model import FitResult, NodeTemplate, PoolView, Taint

Labels = Mapping[str, str]

# --------------------------------------------------------------------------- entry points


def evaluate(
    pod_spec: Mapping[str, Any], node: NodeTemplate, *, extended_resource_toleration: bool
) -> list[str]:
    """Every reason the pod cannot be placed on a node like `node`; [] means it fits."""
    reasons: list[str] = []
    if pod_spec.get("nodeName"):
        reasons.append(
            f"spec.nodeName pins the pod to node {pod_spec['nodeName']}, "
            "which a pool template cannot promise"
        )
    reasons.extend(_label_reasons(pod_spec, node))
    requested, resource_reasons = _pod_requests(pod_spec)
    reasons.extend(_taint_reasons(pod_spec, node, extended_resource_toleration))
    reasons.extend(resource_reasons)
    reasons.extend(_fit_reasons(requested, node))
    return reasons


def fit_pool(pod_spec: Mapping[str, Any], pool: PoolView) -> FitResult:
    """Evaluate against what the scheduler or, at zero nodes, the autoscaler would see."""
    admission = pool.extended_resource_toleration
    live = evaluate(pod_spec, pool.node, extended_resource_toleration=admission)
    if pool.min_nodes > 0:
        return FitResult(pool.name, not live, live, "running nodes")
    via = "autoscaler template at zero"
    template = pool.scale_from_zero
    if template is None:
        reasons = [
            "pool has 0 nodes and the cluster autoscaler cannot see its template, "
            "so it would never scale up for this pod",
            *live,
        ]
        return FitResult(pool.name, False, reasons, via)
    at_zero = evaluate(pod_spec, template, extended_resource_toleration=admission)
    if at_zero and not live:
        # The pod is fine for a real node; only the autoscaler's picture of the empty pool
        # (e.g. a missing GPU resource tag or label hint) stops it from scaling up.
        at_zero = [
            "a running node of this pool would fit, but the pool is at 0 nodes and the "
            "cluster autoscaler's template of it (what it believes a new node would have) "
            "blocks the pod, so it would not scale up; fix the pool's scale-from-zero labels, "
            "taints or resource tags",
            *(f"autoscaler template: {reason}" for reason in at_zero),
        ]
    elif live and not at_zero:
        # Scale-up happens, then the real node still refuses the pod: it stays Pending.
        at_zero = [
            "the cluster autoscaler would add a node for this pod, but the real node differs "
            "from its template and would not take it",
            *(f"running node: {reason}" for reason in live),
        ]
    return FitResult(pool.name, not at_zero, at_zero, via)


# --------------------------------------------------------------------------- labels


def _describe(node: NodeTemplate, key: str) -> str:
    if key in node.labels:
        return f"node has {key}={node.labels[key]}"
    if key in node.label_choices:
        return f"nodes have {key} in [{', '.join(node.label_choices[key])}]"
    return f"node has no {key} label"


def _candidates(node: NodeTemplate, keys: set[str]) -> Iterator[Labels]:
    """Every label set a node could have, varying only the `label_choices` among `keys`
    (choices of other keys cannot change the outcome, so they are not enumerated)."""
    varying = sorted(keys & set(node.label_choices))
    for combo in itertools.product(*(node.label_choices[key] for key in varying)):
        yield {**node.labels, **dict(zip(varying, combo, strict=True))}


_INT64 = re.compile(r"[+-]?\d+")


def _int64(text: str) -> int | None:
    # strconv.ParseInt(s, 10, 64): no spaces, no underscores, must fit in int64.
    if not _INT64.fullmatch(text):
        return None
    number = int(text)
    return number if -(2**63) <= number < 2**63 else None


@dataclass(frozen=True)
class _Requirement:
    """One matchExpressions entry, as labels.Requirement."""

    key: str
    operator: str
    values: tuple[str, ...]

    def __str__(self) -> str:
        if self.operator in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.operator}"
        return f"{self.key} {self.operator} [{', '.join(self.values)}]"

    def matches(self, labels: Labels) -> bool:
        present = self.key in labels
        if self.operator == "In":
            return present and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        # Gt/Lt: a label that is absent or not an integer does not match.
        have = _int64(labels[self.key]) if present else None
        want = _int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if self.operator == "Gt" else have < want


def _parse_requirement(raw: object) -> _Requirement | str:
    """A requirement, or why the API server would reject it (then the term never matches)."""
    if not isinstance(raw, Mapping):
        return "matchExpressions entry is not a mapping"
    key, operator, values = raw.get("key"), raw.get("operator"), raw.get("values") or []
    if not isinstance(key, str) or not key:
        return "matchExpressions entry has no key"
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return f"{key} {operator}: values must be a list of strings (quote numbers in YAML)"
    if operator in ("In", "NotIn") and not values:
        return f"{key} {operator}: needs at least one value"
    if operator in ("Exists", "DoesNotExist") and values:
        return f"{key} {operator}: must not have values"
    if operator in ("Gt", "Lt") and (len(values) != 1 or _int64(values[0]) is None):
        return f"{key} {operator}: needs exactly one integer value"
    if operator not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
        return f"{key}: unknown operator {operator!r}"
    return _Requirement(key, operator, tuple(values))


@dataclass(frozen=True)
class _Term:
    """One nodeSelectorTerm: expressions and fields are ANDed."""

    requirements: tuple[_Requirement, ...]
    pinned_names: tuple[str, ...]  # matchFields metadata.name In: names a template lacks
    errors: tuple[str, ...]
    empty: bool

    @property
    def keys(self) -> set[str]:
        return {requirement.key for requirement in self.requirements}

    def matches(self, labels: Labels) -> bool:
        if self.errors or self.empty or self.pinned_names:
            return False
        return all(requirement.matches(labels) for requirement in self.requirements)


def _parse_term(raw: object) -> _Term:
    if not isinstance(raw, Mapping):
        return _Term((), (), ("term is not a mapping",), False)
    expressions = raw.get("matchExpressions") or []
    fields = raw.get("matchFields") or []
    requirements: list[_Requirement] = []
    pinned: list[str] = []
    errors: list[str] = []
    for expression in expressions if isinstance(expressions, list) else [expressions]:
        parsed = _parse_requirement(expression)
        if isinstance(parsed, str):
            errors.append(f"invalid expression {parsed}")
        else:
            requirements.append(parsed)
    for field in fields if isinstance(fields, list) else [fields]:
        # metadata.name is the only field the scheduler supports, with In/NotIn and one value.
        key = field.get("key") if isinstance(field, Mapping) else None
        operator = field.get("operator") if isinstance(field, Mapping) else None
        values = (field.get("values") or []) if isinstance(field, Mapping) else []
        if (
            key != "metadata.name"
            or operator not in ("In", "NotIn")
            or not isinstance(values, list)
            or len(values) != 1
        ):
            errors.append(f"invalid matchFields entry {field!r} (only metadata.name In/NotIn)")
        elif operator == "In":
            pinned.append(str(values[0]))
        # NotIn one name: any freshly created node satisfies it.
    return _Term(tuple(requirements), tuple(pinned), tuple(errors), not expressions and not fields)


def _explain_term(term: _Term, node: NodeTemplate) -> str:
    if term.errors:
        return " and ".join(term.errors)
    if term.empty:
        return "empty term matches no node"
    problems = [
        f"{requirement} but {_describe(node, requirement.key)}"
        for requirement in term.requirements
        if not any(requirement.matches(labels) for labels in _candidates(node, {requirement.key}))
    ]
    problems.extend(
        f"matchFields metadata.name In [{name}] names a specific node, "
        "which a pool template cannot promise"
        for name in term.pinned_names
    )
    if not problems:  # each expression holds on some node, never all on the same one
        shown = ", ".join(str(requirement) for requirement in term.requirements)
        described = ", ".join(_describe(node, key) for key in sorted(term.keys))
        problems.append(f"{shown} cannot all hold on one node ({described})")
    return " and ".join(problems)


def _node_selector(pod_spec: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    raw = pod_spec.get("nodeSelector") or {}
    if not isinstance(raw, Mapping):
        return {}, ["nodeSelector is not a mapping"]
    selector: dict[str, str] = {}
    errors: list[str] = []
    for key, value in raw.items():
        if value is None:  # Go decodes null into "" for map[string]string
            value = ""
        if not isinstance(value, str):
            errors.append(
                f"nodeSelector {key}: value {value!r} is not a string "
                "(Kubernetes rejects the pod; quote it in YAML)"
            )
        else:
            selector[str(key)] = value
    return selector, errors


def _required_terms(pod_spec: Mapping[str, Any]) -> list[_Term] | None:
    """The required nodeSelectorTerms, or None when the pod sets no required node affinity."""
    affinity = pod_spec.get("affinity")
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else None
    required = (
        node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node_affinity, Mapping)
        else None
    )
    if required is None:
        return None
    terms = required.get("nodeSelectorTerms") if isinstance(required, Mapping) else None
    return [_parse_term(term) for term in terms] if isinstance(terms, list) else []


def _label_reasons(pod_spec: Mapping[str, Any], node: NodeTemplate) -> list[str]:
    selector, reasons = _node_selector(pod_spec)

    def selector_holds(labels: Labels) -> bool:
        return all(labels.get(key) == value for key, value in selector.items())

    for key, value in selector.items():
        if value not in _values(node, key):
            detail = "no such label on pool's nodes" if _absent(node, key) else _describe(node, key)
            reasons.append(f"nodeSelector {key}={value}: {detail}")
    terms = _required_terms(pod_spec)
    if terms is None:
        return reasons
    if not terms:
        return [
            *reasons,
            "required node affinity: nodeSelectorTerms is empty, which matches no node",
        ]
    alone = [any(term.matches(c) for c in _candidates(node, term.keys)) for term in terms]
    if not any(alone):
        explained = "; ".join(
            f"term {index}: {_explain_term(term, node)}" for index, term in enumerate(terms, 1)
        )
        return [*reasons, f"required node affinity: no term matches ({explained})"]
    if reasons:  # the nodeSelector already fails on its own
        return reasons
    # Both hold somewhere; they must hold on the same node (label_choices vary per node).
    together = any(
        selector_holds(labels) and term.matches(labels)
        for term in terms
        for labels in _candidates(node, term.keys | set(selector))
    )
    if together:
        return []
    keys = sorted(set(selector).union(*(term.keys for term in terms)) & set(node.label_choices))
    return [
        "nodeSelector and required node affinity each match some node of the pool but never "
        f"the same one ({', '.join(_describe(node, key) for key in keys)})"
    ]


def _absent(node: NodeTemplate, key: str) -> bool:
    return key not in node.labels and key not in node.label_choices


def _values(node: NodeTemplate, key: str) -> tuple[str, ...]:
    if key in node.labels:
        return (node.labels[key],)
    return node.label_choices.get(key, ())


# --------------------------------------------------------------------------- taints


def _is_extended(name: str) -> bool:
    # v1helper.IsExtendedResourceName: prefixed, not native (kubernetes.io/), not a quota name.
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def _requested_extended(pod_spec: Mapping[str, Any]) -> set[str]:
    """Extended resources any container or init container requests or limits (API defaulting
    copies limits into absent requests before admission plugins run)."""
    names: set[str] = set()
    for _, container in _all_containers(pod_spec):
        resources = container.get("resources")
        if not isinstance(resources, Mapping):
            continue
        for field in ("requests", "limits"):
            listed = resources.get(field)
            if isinstance(listed, Mapping):
                names.update(str(name) for name in listed if _is_extended(str(name)))
    return names


def _tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    """core/v1 Toleration.ToleratesTaint, line for line."""
    effect = toleration.get("effect") or ""
    key = toleration.get("key") or ""
    if effect and effect != taint.effect:
        return False
    if key and key != taint.key:
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Equal":
        return (toleration.get("value") or "") == taint.value
    return operator == "Exists"


def _tolerations(pod_spec: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], list[str]]:
    raw = pod_spec.get("tolerations") or []
    if not isinstance(raw, list):
        return [], ["tolerations is not a list"]
    tolerations: list[Mapping[str, Any]] = []
    errors: list[str] = []
    for index, toleration in enumerate(raw, start=1):
        if not isinstance(toleration, Mapping):
            errors.append(f"toleration {index} is not a mapping")
            continue
        bad = [
            f"{field} {toleration[field]!r}"
            for field in ("key", "operator", "value", "effect")
            if toleration.get(field) is not None and not isinstance(toleration[field], str)
        ]
        if bad:
            errors.append(
                f"toleration {index}: {', '.join(bad)} is not a string "
                "(Kubernetes rejects the pod; quote it in YAML)"
            )
            continue
        tolerations.append(toleration)
    return tolerations, errors


def _taint_reasons(
    pod_spec: Mapping[str, Any], node: NodeTemplate, extended_resource_toleration: bool
) -> list[str]:
    tolerations, reasons = _tolerations(pod_spec)
    extended = _requested_extended(pod_spec)
    if extended_resource_toleration:
        # GKE's ExtendedResourceToleration admission plugin.
        tolerations += [
            {"key": name, "operator": "Exists", "effect": "NoSchedule"} for name in sorted(extended)
        ]
    for taint in node.taints:
        if taint.effect == "PreferNoSchedule":  # soft: lowers the score, never filters
            continue
        if any(_tolerates(toleration, taint) for toleration in tolerations):
            continue
        reason = f"taint {taint} is not tolerated"
        if taint.key in extended and not extended_resource_toleration:
            reason += (
                f" (this cluster does not add a toleration for requested {taint.key} "
                "automatically as GKE does; the pod must list one)"
            )
        reasons.append(reason)
    return reasons


# --------------------------------------------------------------------------- resources


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
        _is_extended(name)
        or name.startswith(("hugepages-", "attachable-volumes-"))
        or ("kubernetes.io/" in name)
    ):
        return "scalar"
    return "ignored"  # the scheduler does not account unknown unprefixed names


def _amount(name: str, value: object) -> int:
    if name == "cpu":
        return quantity.cpu_millis(value)
    if _is_extended(name):
        return quantity.count(value)
    return quantity.memory_bytes(value)  # whole base units, rounded up


def _all_containers(pod_spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
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
        if _is_extended(name) and request is not None and limit is None:
            errors.append(
                f"{label}: requests {name}={sections['requests'][name]} without limits {name}; "
                "Kubernetes requires a limit for extended resources"
            )
        elif _is_extended(name) and request is not None and request != limit:
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


def _pod_requests(pod_spec: Mapping[str, Any]) -> tuple[Requests, list[str]]:
    """resourcehelper.PodRequests: containers summed; restartable (sidecar) init containers
    run alongside them; each other init container runs alone with the sidecars started
    before it; the pod needs the max of both, then pod-level overrides, plus overhead."""
    errors: list[str] = []
    total: Requests = {}
    sidecars: Requests = {}
    init_peak: Requests = {}
    for label, container in _all_containers(pod_spec):
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


def _fit_reasons(requested: Requests, node: NodeTemplate) -> list[str]:
    """NodeResourcesFit on an empty node: each non-zero request within allocatable."""
    reasons: list[str] = []
    for name, amount in requested.items():
        if amount.total == 0:
            continue
        if name == "cpu" and amount.total > node.cpu_millis:
            reasons.append(
                f"requests cpu {quantity.format_cpu(amount.total)} but the machine has "
                f"{quantity.format_cpu(node.cpu_millis)} vCPU{_breakdown(amount)}"
            )
        elif name == "memory" and amount.total > node.memory_bytes:
            want, have = quantity.format_gib(amount.total), quantity.format_gib(node.memory_bytes)
            if want == have:  # rounding hid the difference; show it exactly
                want, have = f"{amount.total} bytes", f"{node.memory_bytes} bytes"
            reasons.append(f"requests memory {want} but the machine has {have}{_breakdown(amount)}")
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
