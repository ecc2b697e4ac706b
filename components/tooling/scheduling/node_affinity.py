"""The NodeAffinity filter: nodeSelector and required node affinity against a node template."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from components.tooling.scheduling.model import NodeTemplate

Labels = Mapping[str, str]


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


def label_reasons(pod_spec: Mapping[str, Any], node: NodeTemplate) -> list[str]:
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
