"""Kubernetes resource quantities (``500m``, ``1Gi``, ``1e9``, ``2``) as integers.

The scheduler compares cpu in millicores and every other resource in whole base units,
rounding fractions up (``Quantity.MilliValue`` / ``Quantity.Value``); so do we. Fractions
keep the arithmetic exact, so ``0.1`` cpu is 100m and never 99m.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

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
            raise ValueError(f"invalid quantity {value!r}: exponent out of range")
        number *= Fraction(10) ** exponent
    elif match["suffix"] is not None:
        number *= _SUFFIX[match["suffix"]]
    if abs(number) > _MAX:
        raise ValueError(f"invalid quantity {value!r}: too large")
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
