"""The `consumers` command line: pick the stack's GPU pools, print one tool's settings."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence

from components.model.pools import resolve_pools
from components.tooling.commands import EXIT_BAD_INPUT, EXIT_OK, load_validated, select_gpu_pools
from components.tooling.consumers.fiftyone import always_on_warnings, render_fiftyone
from components.tooling.consumers.flyte import render_flyte
from components.tooling.consumers.jupyterhub import FORMATS, render_jupyterhub
from components.tooling.consumers.pod import render_pod
from components.tooling.consumers.shared import (
    ConsumerError,
    Request,
    left_out,
    queue_guard,
    queued_warnings,
    unreachable_pools,
)

RENDERERS: Mapping[str, Callable[[Request], str]] = {
    "pod": render_pod,
    "fiftyone": render_fiftyone,
    "flyte": render_flyte,
    "jupyterhub": render_jupyterhub,
}
# Lines for stderr: consequences to see even when stdout goes to a file.
WARNINGS: Mapping[str, Callable[[Request], list[str]]] = {
    "fiftyone": lambda request: [*always_on_warnings(request), *queued_warnings(request)],
    "flyte": queued_warnings,
    "jupyterhub": queued_warnings,
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m components consumers",
        description="Print ready-to-paste settings that place workloads on STACK's GPU pools: a "
        "pod spec fragment (pod), FiftyOne Enterprise Helm values for delegated operators "
        "(fiftyone), Flyte propeller k8s plugin settings (flyte), or JupyterHub KubeSpawner "
        "profiles as Zero to JupyterHub Helm values (jupyterhub).",
    )
    parser.add_argument(
        "stack", metavar="STACK", help="stack name in stacks/ or path to a stack YAML"
    )
    parser.add_argument(
        "--for", dest="tool", required=True, choices=sorted(RENDERERS), help="the tool"
    )
    parser.add_argument(
        "--pool",
        action="append",
        metavar="NAME",
        help="only this GPU pool (repeatable); default: every GPU pool",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        help="jupyterhub only: Zero to JupyterHub Helm values for singleuser.profileList "
        "(helm, the default) or Python for jupyterhub_config.py (python)",
    )
    parser.add_argument(
        "--always-on",
        action="store_true",
        help="fiftyone only: also always-on delegated operator deployments (one replica each), "
        "which keep one node of every pool running around the clock; default: on-demand job "
        "templates only",
    )
    return parser


def main(argv: Sequence[str]) -> int:
    parser = _parser()
    options = parser.parse_args(list(argv))
    if options.format and options.tool != "jupyterhub":
        parser.error("--format applies to --for jupyterhub only")
    if options.always_on and options.tool != "fiftyone":
        parser.error("--always-on applies to --for fiftyone only")
    stack, config = load_validated(options.stack)
    every_pool = resolve_pools(config)
    pools = select_gpu_pools(every_pool, options.pool, stack.name)
    # A tool's own pods carry no queue label: queued pools they must not take are left out.
    unreachable = [] if options.tool == "pod" else unreachable_pools(pools, every_pool)
    for spec in unreachable:
        why = left_out(spec, f"{options.tool} settings", queue_guard(spec, every_pool))
        print(f"warning: {why}", file=sys.stderr)
    pools = [spec for spec in pools if spec not in unreachable]
    if not pools:
        print(f"error: no GPU pool {options.tool}'s pods can reach", file=sys.stderr)
        return EXIT_BAD_INPUT
    request = Request(
        stack.name,
        config,
        tuple(pools),
        always_on=options.always_on,
        format=options.format or "helm",
    )
    try:
        text = RENDERERS[options.tool](request)
    except ConsumerError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(text)
    for line in WARNINGS.get(options.tool, lambda _: [])(request):
        print(f"warning: {line}", file=sys.stderr)
    return EXIT_OK
