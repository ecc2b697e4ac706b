"""Outputs the program reads from mocked aws resources and calls."""

from __future__ import annotations

from typing import Any

RESOURCES: dict[str, Any] = {}
CALLS: dict[str, Any] = {}
