"""A problem in a stack's config, and the error that carries every problem found at once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    path: str
    message: str
    value: Any = None
    has_value: bool = True

    def __str__(self) -> str:
        shown = f" (got {self.value!r})" if self.has_value else ""
        return f"{self.path}: {self.message}{shown}"


class ConfigError(Exception):
    """Every problem found in a stack config."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__(self.render())

    def render(self) -> str:
        lines = [f"invalid gpufleet config ({len(self.problems)} problem(s)):"]
        lines += [f"  - {p}" for p in self.problems]
        return "\n".join(lines)
