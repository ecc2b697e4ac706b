"""Kubernetes resource quantities (``500m``, ``1Gi``, ``1e9``, ``2``) as integers.

The scheduler compares cpu in millicores and every other resource in whole base units,
rounding fractions up (``Quantity.MilliValue`` / ``Quantity.Value``); so do we. Fractions
keep the arithmetic exact, so ``0.1`` cpu is 100m and never 99m.

`resource_problems` applies the API server's rules to a container's `resources` (names,
quantities, extended resources whole and with requests equal to limits), so `fit` can refuse a
manifest `kubectl apply` would refuse, with the key, the value as written and what is allowed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

# Kubernetes' grammar: signed decimal number, then a binary/decimal SI suffix or an exponent.
# "1E" is exa, "1E3" is an exponent: the exponent alternative is tried first.
_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:[eE](?P<exponent>[+-]?\d+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E))?"
)
_SUFFIX = {
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
# Kubernetes stores quantities in int64; bounding the exponent also keeps Fraction cheap.
_MAX = 2**63 - 1
_MAX_EXPONENT = 100
GIB = 2**30


class QuantityRangeError(ValueError):
    """A well-formed quantity too large (or with too large an exponent) to compare exactly."""


def parse_quantity(value: object) -> Fraction:
    """Parse a quantity as written in YAML (string or number) into an exact signed value."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"invalid quantity {value!r}: expected a string or a number")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"invalid quantity {value!r}: not a finite number")
        # repr() is the shortest text that round-trips, i.e. what the user wrote.
        text = repr(value)
    else:
        text = str(value)
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise ValueError(f"invalid quantity {value!r}: expected e.g. 500m, 2, 1.5, 1Gi, 1e9")
    number = Fraction(match["number"])
    if match["exponent"] is not None:
        exponent = int(match["exponent"])
        if abs(exponent) > _MAX_EXPONENT:
            raise QuantityRangeError(f"invalid quantity {value!r}: exponent out of range")
        number *= Fraction(10) ** exponent
    elif match["suffix"] is not None:
        number *= _SUFFIX[match["suffix"]]
    if abs(number) > _MAX:
        raise QuantityRangeError(f"invalid quantity {value!r}: too large")
    return number


def _non_negative(value: object, scale: int) -> int:
    amount = parse_quantity(value) * scale
    if amount < 0:
        raise ValueError(f"invalid quantity {value!r}: must not be negative")
    return math.ceil(amount)


def cpu_millis(value: object) -> int:
    """``"500m"`` -> 500, ``"1.5"`` -> 1500, ``2`` -> 2000 (rounded up, as the scheduler does)."""
    return _non_negative(value, 1000)


def memory_bytes(value: object) -> int:
    """``"1Gi"`` -> 1073741824, ``"1G"``/``"1e9"`` -> 10**9, ``"100k"`` -> 100000."""
    return _non_negative(value, 1)


def count(value: object) -> int:
    """A whole, non-negative amount such as ``nvidia.com/gpu: 1``; fractions are rejected
    because Kubernetes rejects them for extended resources."""
    amount = parse_quantity(value)
    if amount < 0:
        raise ValueError(f"invalid quantity {value!r}: must not be negative")
    if amount.denominator != 1:
        raise ValueError(f"invalid quantity {value!r}: must be a whole number")
    return int(amount)


def format_cpu(millis: int) -> str:
    """Cores without trailing zeros: 64000 -> ``64``, 1500 -> ``1.5``, 250 -> ``0.25``."""
    whole, frac = divmod(millis, 1000)
    return f"{whole}.{frac:03d}".rstrip("0").rstrip(".") if frac else str(whole)


def format_gib(size: int) -> str:
    """Bytes as GiB with at most two decimals: 1610612736 -> ``1.5 GiB``."""
    text = f"{size / GIB:.2f}".rstrip("0").rstrip(".")
    return f"{text} GiB"


# --------------------------------------------------------------------------- API server rules
#
# What kube-apiserver's ValidateResourceRequirements (pkg/apis/core/validation) refuses, so that
# `fit` reports a pod that could never be created as bad input, not as "does not fit":
#
# * container resource names: cpu, memory, ephemeral-storage, hugepages-<size>, a name with a
#   kubernetes.io/ prefix, or an extended resource (a domain-prefixed name such as
#   nvidia.com/gpu); an unprefixed `gpu` is "must be a standard resource for containers";
# * every value a quantity ("quantities must match the regular expression ..."), not negative;
# * extended resources are integers ("must be an integer") and cannot be overcommitted: a
#   request needs a limit ("Limit must be set for non overcommitable resources") and must equal
#   it ("must be equal to nvidia.com/gpu limit"); a limit alone is enough, the request defaults
#   to it. Hugepages cannot be overcommitted either, and need cpu or memory set.
#   https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/#extended-resources
#   https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
# * any other request must not exceed its limit ("must be less than or equal to cpu limit").

_STANDARD = ("cpu", "memory", "ephemeral-storage")


def _is_extended(name: str) -> bool:
    # v1helper.IsExtendedResourceName: prefixed, not native (kubernetes.io/), not a quota name.
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def _overcommit_allowed(name: str) -> bool:
    # helper.IsOvercommitAllowed: native resources other than hugepages.
    native = "/" not in name or "kubernetes.io/" in name
    return native and not name.startswith("hugepages-")


def written(value: object) -> str:
    """A value as the user wrote it in YAML: strings quoted, numbers bare (``"abc"``, ``0.5``)."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _allowed(name: str) -> str:
    if name == "cpu":
        return "cpu takes cores, e.g. 2, 1.5 or 500m"
    if _is_extended(name):
        return f"{name} is an extended resource, which takes a whole number such as 1 or 2"
    if name in ("memory", "ephemeral-storage") or name.startswith("hugepages-"):
        return (
            f"{name} takes bytes: a number with an optional suffix and no space, "
            "e.g. 512Mi, 1Gi, 1G or 1e9"
        )
    return "a quantity such as 1, 500m or 1Gi"


def value_problem(name: str, value: object) -> str | None:
    """Why the API server refuses `value` for resource `name`, or None."""
    if value is None:
        # The API server reads a null quantity as 0, which is never what an empty key meant.
        return f"no value (null); {_allowed(name)} (write 0 to ask for none)"
    try:
        amount = parse_quantity(value)
    except QuantityRangeError:
        return f"{written(value)} is out of the range fit compares (up to 2^63-1 base units)"
    except ValueError:
        return f"{written(value)} is not a Kubernetes quantity; {_allowed(name)}"
    if amount < 0:
        return f"{written(value)} is negative; quantities must be 0 or more"
    if _is_extended(name) and amount.denominator != 1:
        return (
            f"{written(value)} is not a whole number; {_allowed(name)} (Kubernetes hands out "
            "extended resources whole; to share a GPU, use a pool with GPU sharing)"
        )
    return None


def _name_problem(name: str) -> str | None:
    if "/" in name or name in _STANDARD or name.startswith("hugepages-"):
        return None
    return (
        f"{name} is not a container resource; use cpu, memory, ephemeral-storage, "
        "hugepages-<size> or an extended resource with a domain, e.g. nvidia.com/gpu"
    )


def resource_problems(resources: object, *, check_names: bool) -> list[str]:
    """The problems of one `resources` block (a container's, or the pod-level one)."""
    if resources is None:
        return []
    if not isinstance(resources, Mapping):
        return [f"resources: {written(resources)} is not a mapping of requests and limits"]
    problems: list[str] = []
    sections: dict[str, Mapping[str, Any]] = {}
    for section in ("limits", "requests"):
        value = resources.get(section)
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            problems.append(
                f"resources.{section}: {written(value)} is not a mapping of resource names "
                "to quantities"
            )
            value = {}
        sections[section] = value
    valid: dict[str, dict[str, object]] = {"limits": {}, "requests": {}}
    for section, values in sections.items():
        for raw_name, value in values.items():
            name = str(raw_name)
            key = f"resources.{section}[{name}]"
            problem = _name_problem(name) if check_names else None
            problem = problem or value_problem(name, value)
            if problem:
                problems.append(f"{key}: {problem}")
            else:
                valid[section][name] = value
    limits = sections["limits"]
    for name, request in valid["requests"].items():
        request_key, limit_key = f"resources.requests[{name}]", f"resources.limits[{name}]"
        if name not in limits:
            if not _overcommit_allowed(name):
                problems.append(
                    f"{request_key}: {written(request)} has no {limit_key}; {name} cannot be "
                    "overcommitted, so Kubernetes requires a limit for it (set limits only: "
                    "the request defaults to the limit)"
                )
            continue
        if name not in valid["limits"]:
            continue  # the limit's own problem is reported
        limit = valid["limits"][name]
        asked, cap = parse_quantity(request), parse_quantity(limit)
        if asked != cap and not _overcommit_allowed(name):
            problems.append(
                f"{request_key}: {written(request)} differs from {limit_key}: {written(limit)}; "
                f"{name} cannot be overcommitted, so requests must equal limits (or set limits "
                "only)"
            )
        elif asked > cap:
            problems.append(
                f"{request_key}: {written(request)} is more than {limit_key}: {written(limit)}; "
                "a request must be at most its limit"
            )
    names = {str(name) for section in sections.values() for name in section}
    if any(name.startswith("hugepages-") for name in names) and not names & {"cpu", "memory"}:
        problems.append("resources: hugepages require a cpu or memory request or limit as well")
    return problems
