"""How `plan` and `fit` say the cold-start estimate (components/model/cold_start.py), and their
`--image-gb` option."""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

from components.model.cold_start import DEFAULT_IMAGE_GB, PoolColdStart


class _Verdict(Protocol):
    """`fit`'s TemplateVerdict as this module reads it (fit imports this module)."""

    @property
    def pools(self) -> tuple[Any, ...]: ...


V = TypeVar("V", bound=_Verdict)


def image_gb(text: str) -> float:
    """`--image-gb`: a size in GB above zero (argparse refuses anything else, exit 2)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of GB") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the image size must be above 0 GB")
    return value


def add_image_gb_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--image-gb",
        type=image_gb,
        default=DEFAULT_IMAGE_GB,
        metavar="N",
        help="image size in GB the cold-start estimate of a pool at zero pulls (default "
        f"{DEFAULT_IMAGE_GB:g}: a CUDA/PyTorch image is 15-20 GB)",
    )


def render_cold_start(document: Mapping[str, Any] | None) -> str:
    """`plan`'s lines: one per GPU pool at zero nodes (pools with warm nodes get none)."""
    pools = (document or {}).get("pools", {})
    lines = []
    for name, start in pools.items():
        if start["minNodes"] > 0:
            continue
        if start["estimateSeconds"] is None:
            lines.append(f"  {name}: not estimated: {start['notEstimated']}")
            continue
        lines.append(f"  {name}: {_estimate_text(start)}")
        lines.extend(f"      shorten: {item}" for item in start["shorten"])
        lines.extend(f"      note: {note}" for note in start["notes"])
    if not lines:
        return ""
    header = (
        "cold start of GPU pools at zero (an estimate from sourced figures, docs/cold-start.md):"
    )
    return "\n".join([header, *lines])


def _estimate_text(start: Mapping[str, Any]) -> str:
    total = start["estimateSeconds"]
    parts = ", ".join(
        f"{part} {_span(span['low'], span['high'])}" for part, span in start["parts"].items()
    )
    return (
        f"estimate {_span(total['low'], total['high'])} before the first pod runs ({parts}; "
        f"{start['imageGb']:g} GB image, {start['imageStart']})"
    )


def _span(low: float, high: float) -> str:
    def one(seconds: float) -> str:
        return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{round(seconds)} s"

    return one(low) if round(low) == round(high) else f"{one(low)}-{one(high)}"


def with_waits(verdicts: Sequence[V], starts: Sequence[PoolColdStart]) -> list[V]:
    """`fit`'s verdicts, with the estimated wait on each pool at zero that takes the pod."""
    at_zero = {start.pool: start for start in starts if start.at_zero}
    result = []
    for verdict in verdicts:
        pools = tuple(
            dataclasses.replace(pool, notes=(*pool.notes, _wait(at_zero[pool.pool])))
            if pool.fits and pool.pool in at_zero
            else pool
            for pool in verdict.pools
        )
        result.append(dataclasses.replace(verdict, pools=pools))  # type: ignore[type-var]
    return result


def _wait(start: PoolColdStart) -> str:
    if start.total is None:
        return f"pool at zero: wait before the pod runs not estimated: {start.not_estimated}"
    return (
        f"pool at zero: estimated wait before the pod runs "
        f"{_span(start.total.low, start.total.high)} (node, driver, {start.image_gb:g} GB "
        f"image {start.image_start}; docs/cold-start.md); {start.shorten[0]}"
    )
