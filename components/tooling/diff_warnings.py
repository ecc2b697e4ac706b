"""The new plan's warnings in a plan diff: what the program and its config say the user must know
about the stack as changed (an adopted cluster's security groups, an owner's autoscaler, a
placeholder to fill in), for a terminal and for the pull-request comment."""

from __future__ import annotations

import re

from components.tooling.diff_model import PlanDiff

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def warning_lines(diff: PlanDiff) -> list[str]:
    """Plain text: every warning of the new plan, those the old plan lacked marked new."""
    if not diff.warnings:
        return []
    new = set(diff.new_warnings)
    count = f"{len(diff.warnings)}, {len(new)} new" if new else f"{len(diff.warnings)}"
    return [
        f"Warnings of the new plan ({count}):",
        *(f"  - {warning}{' (new)' if warning in new else ''}" for warning in diff.warnings),
    ]


def _markdown_text(text: str) -> str:
    """``text`` as Markdown prose: code spans kept, and outside them the characters GitHub would
    read as HTML escaped (`az vm list-skus --location <region>` must not lose `<region>`)."""
    parts, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        parts += [text[last : span.start()].translate(_HTML), span.group(0)]
        last = span.end()
    parts.append(text[last:].translate(_HTML))
    return "".join(parts).replace("\n", " ")


def warning_markdown(diff: PlanDiff) -> tuple[list[str], list[str]]:
    """For the pull-request comment: an alert listing the warnings this change brings (shown
    above the diff), and every warning of the new plan in a collapsed block (below it)."""
    new = diff.new_warnings
    alert: list[str] = []
    if new:
        noun = "warning" if len(new) == 1 else "warnings"
        alert = [
            "",
            "> [!WARNING]",
            f"> {len(new)} new {noun} from the program or its config for this stack:",
            *(f"> - {_markdown_text(warning)}" for warning in new),
        ]
    every: list[str] = []
    if diff.warnings:
        noun = "warning" if len(diff.warnings) == 1 else "warnings"
        every = [
            "",
            f"<details><summary>{len(diff.warnings)} {noun} of the new plan</summary>",
            "",
            *(f"- {_markdown_text(warning)}" for warning in diff.warnings),
            "",
            "</details>",
        ]
    return alert, every
