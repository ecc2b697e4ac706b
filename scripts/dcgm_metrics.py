"""Generate components/kubernetes/dcgm_default_metrics.json: the pinned dcgm-exporter chart's
default metrics list, as data.

gpufleet adds one metric (`DCGM_EXP_XID_ERRORS_COUNT`, components/model/gpu_health.py) to the
standalone exporter. The chart's `customMetrics` replaces its default list rather than adding to
it (values.yaml: "Must be the complete list and is not additive"), so gpufleet sends the default
list plus that line. The default list lives in the chart's template
`templates/metrics-configmap.yaml` (the `else` branch, used while `customMetrics` is unset), not
in values.yaml; it is read from there, never typed by hand.

Source: NVIDIA/dcgm-exporter (Apache-2.0), the chart under `deployment/` at the tag of the pinned
chart's default image. Either a chart directory holding `templates/metrics-configmap.yaml` or a
git checkout of NVIDIA/dcgm-exporter (read with `git show TAG:deployment/...`):

    .venv/bin/python scripts/dcgm_metrics.py --git /path/to/dcgm-exporter[.git]
    .venv/bin/python scripts/dcgm_metrics.py --chart-dir ../shared/reference/helm/dcgm-exporter
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

PROJECT_DIR = Path(__file__).resolve().parent.parent
DATA_FILE = PROJECT_DIR / "components" / "kubernetes" / "dcgm_default_metrics.json"
CHART_VERSION = "4.8.2"  # components/model/catalog/charts.py DCGM_EXPORTER
SOURCE_TAG = "4.5.3-4.8.2"  # the chart's default image tag, and the repository tag it ships from
TEMPLATE = "templates/metrics-configmap.yaml"
REPOSITORY_TEMPLATE = f"deployment/{TEMPLATE}"


def default_metrics(template: str) -> list[str]:
    """The metric lines (no comments, no blank lines) of the template's default list."""
    lines = template.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "{{- else }}")
    end = next(i for i, line in enumerate(lines) if i > start and line.strip() == "{{- end }}")
    metrics = []
    for line in lines[start + 1 : end]:
        text = line.strip()
        if text and not text.startswith("#") and text != "metrics: |":
            metrics.append(text)
    return metrics


def build(template: str) -> dict[str, Any]:
    return {
        "chart": "dcgm-exporter",
        "version": CHART_VERSION,
        "source": f"NVIDIA/dcgm-exporter tag {SOURCE_TAG} {REPOSITORY_TEMPLATE} (Apache-2.0), "
        "scripts/dcgm_metrics.py",
        "metrics": default_metrics(template),
    }


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1) + "\n"


def read_template(chart_dir: Path | None, git_dir: Path | None) -> str:
    if chart_dir is not None:
        return (chart_dir / TEMPLATE).read_text()
    assert git_dir is not None
    return subprocess.run(
        ["git", "-C", str(git_dir), "show", f"{SOURCE_TAG}:{REPOSITORY_TEMPLATE}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--chart-dir", type=Path)
    source.add_argument("--git", type=Path)
    options = parser.parse_args(argv)
    try:
        template = read_template(options.chart_dir, options.git)
    except (OSError, subprocess.CalledProcessError) as error:
        print(f"error: cannot read the chart's metrics template: {error}", file=sys.stderr)
        return 2
    DATA_FILE.write_text(render(build(template)))
    print(f"wrote {DATA_FILE.relative_to(PROJECT_DIR)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
