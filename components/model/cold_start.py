"""How long the first GPU pod waits on a pool at zero nodes: an estimate from sourced figures.

The wait is three parts, one after the other: a node starts and turns Ready, the NVIDIA driver
gets ready on it (in the node image already, installed by the cloud at boot, or installed by
the GPU Operator's driver container), and the pod's image is pulled (or streamed, preloaded,
pulled in parallel). Each cloud keeps its figures as data with their source in
`components/<cloud>/model/cold_start.py` (`COLD_START`, a `CloudColdStart`) and says, per
pool, which driver path and image-start mode its nodes use. Where no first-party figure exists
the figure says "estimate" and what it rests on: the result is an estimate, always labelled so
(docs/cold-start.md).

What shortens the wait is said too: a warm node (`minNodes: 1`) and what it costs per hour
(the stack's cost model, `components.model.cost`), and the faster image starts the cloud
offers for the pool. This module holds the shapes; `cold_start_estimate` computes the estimate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from components.model.schema import GpuPoolConfig, StackConfig

ImageStart = Literal["pull", "streaming", "preloaded", "parallel-pull"]
DriverPath = Literal["in-image", "cloud-install", "gpu-operator"]

# Issue 34: CUDA/PyTorch images are 15-20 GB; the lower end is the default image size.
DEFAULT_IMAGE_GB = 15.0


@dataclass(frozen=True)
class Figure:
    """One sourced figure, a range where sources differ (low == high: one figure)."""

    low: float
    high: float
    source: str
    # Not empty: no first-party figure; what the estimate rests on.
    estimate: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "low": self.low,
            "high": self.high,
            "source": self.source,
            "estimate": self.estimate or None,
        }


@dataclass(frozen=True)
class ImageStartFigure:
    """How fast an image starts in one mode: a throughput (MB/s, the time grows with the
    image) or a time (seconds, whatever the image's size)."""

    mb_per_second: Figure | None = None
    seconds: Figure | None = None

    def time(self, image_gb: float) -> tuple[float, float]:
        if self.seconds is not None:
            return self.seconds.low, self.seconds.high
        assert self.mb_per_second is not None
        megabytes = image_gb * 1000
        # The slowest throughput gives the longest time.
        return megabytes / self.mb_per_second.high, megabytes / self.mb_per_second.low


@dataclass(frozen=True)
class ColdStartFigures:
    """A cloud's figures, as of a date."""

    as_of: date
    node_ready: Figure  # a GPU VM from create to node Ready
    driver: Mapping[DriverPath, Figure]
    image_start: Mapping[ImageStart, ImageStartFigure]


class CloudColdStart:
    """What a cloud says of a pool's cold start: its figures, and per pool the driver path,
    the image-start mode and the faster modes it offers (with the key that turns each on)."""

    figures: ColdStartFigures

    def driver_path(self, config: StackConfig, pool: GpuPoolConfig) -> DriverPath:
        raise NotImplementedError

    def image_start(self, config: StackConfig, pool: GpuPoolConfig) -> ImageStart:
        return "pull"

    def faster_image_start(self, config: StackConfig, pool: GpuPoolConfig) -> tuple[str, ...]:
        """What would start the pool's images faster here, naming the key (none by default)."""
        return ()

    def notes(self, config: StackConfig, pool: GpuPoolConfig) -> tuple[str, ...]:
        """What the estimate assumes of this pool (e.g. where streaming falls back)."""
        return ()


@dataclass(frozen=True)
class Span:
    low: float
    high: float

    def to_json(self) -> dict[str, float]:
        return {"low": round(self.low), "high": round(self.high)}


@dataclass(frozen=True)
class PoolColdStart:
    """One GPU pool's first-pod wait, or why there is no estimate."""

    pool: str
    min_nodes: int
    image_gb: float
    total: Span | None = None
    parts: Mapping[str, Span] = field(default_factory=dict)
    image_start: ImageStart | None = None
    driver: DriverPath | None = None
    shorten: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    not_estimated: str | None = None  # why there is no estimate

    @property
    def at_zero(self) -> bool:
        return self.min_nodes == 0

    def to_json(self) -> dict[str, Any]:
        """A pool's `coldStart` object in `plan --json` (docs/commands.md: keep its keys)."""
        return {
            "minNodes": self.min_nodes,
            "estimateSeconds": self.total.to_json() if self.total else None,
            "parts": {name: span.to_json() for name, span in self.parts.items()},
            "imageGb": self.image_gb,
            "imageStart": self.image_start,
            "driver": self.driver,
            "shorten": list(self.shorten),
            "notes": list(self.notes),
            "notEstimated": self.not_estimated,
        }
