"""`plan`'s list of what to copy to `gpuSoftware.mirror`, from the `softwareSources` output.

Charts with their versions, then images with the digest the cluster pulls (or why there is
none), where the copy goes and which namespaces need the pull Secret.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from components.model.schema import MirrorConfig


def _table(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip() for row in rows]


def render_mirror_list(sources: Sequence[Mapping[str, Any]], mirror: MirrorConfig) -> str:
    charts = [r for r in sources if r["kind"] == "chart"]
    images = [r for r in sources if r["kind"] == "image"]
    lines = ["to copy to the mirror (gpuSoftware.mirror):"]
    if charts:
        lines += _table(
            [("chart", "version", "from", "to")]
            + [(r["name"], r["version"], r["from"], r["to"]) for r in charts]
        )
    if images:
        if charts:
            lines.append("")
        lines += _table(
            [("image", "digest", "to")]
            + [(r["from"], r["digest"] or "none: by tag", r["to"]) for r in images]
        )
        unpinned = sorted({f"{r['from']}: {r['note']}" for r in images if r["note"]})
        lines += [f"  {line}" for line in unpinned]
    files = [r for r in sources if r["kind"] == "file"]
    if files:
        lines += [
            "",
            "not mirrored: files pulumi itself downloads at preview and up (the machine "
            "running pulumi must reach them):",
        ]
        lines += [f"  {r['from']}" for r in files]
    if mirror.pull_secret:
        spaces = sorted({space for r in images for space in r["namespaces"]})
        lines += [
            "",
            f"pull Secret {mirror.pull_secret} (kubernetes.io/dockerconfigjson) must exist in: "
            f"{', '.join(spaces)} (not checked); gpufleet creates its own namespaces in the same "
            "`up` as what runs in them: on a first `up`, add the Secret as each namespace "
            "appears, or `up` the namespaces first (docs/configuration.md, gpuSoftware.mirror)",
        ]
    return "\n".join(lines)
