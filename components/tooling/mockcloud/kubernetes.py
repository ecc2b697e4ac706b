"""Outputs the program reads from mocked kubernetes resources and calls."""

from __future__ import annotations

from typing import Any

RESOURCES: dict[str, Any] = {}
CALLS: dict[str, Any] = {}
