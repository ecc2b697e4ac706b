"""A problem in a stack's config, and the error that carries every problem found at once."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def shown(value: Any) -> str:
    """A value as the user wrote it: dates as YAML writes them, not as Python's repr."""
    if isinstance(value, datetime.date | datetime.datetime | datetime.time):
        return value.isoformat()
    return repr(value)


@dataclass(frozen=True)
class Problem:
    path: str
    message: str
    value: Any = None
    has_value: bool = True
    # The value is gpufleet's default, not something the user wrote.
    is_default: bool = False

    def __str__(self) -> str:
        if not self.has_value:
            return f"{self.path}: {self.message}"
        got = "default" if self.is_default else "got"
        return f"{self.path}: {self.message} ({got} {shown(self.value)})"


class ConfigError(Exception):
    """Every problem found in a stack config."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__(self.render())

    def render(self) -> str:
        lines = [f"invalid gpufleet config ({len(self.problems)} problem(s)):"]
        lines += [f"  - {p}" for p in self.problems]
        return "\n".join(lines)
