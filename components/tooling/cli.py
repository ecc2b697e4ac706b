"""`python -m components`: the offline engine's command line.

Each command lives in its own module with a `main(argv) -> int`; this module only dispatches,
and turns every expected failure into a message and an exit status, never a traceback.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from components.model.schema import StackConfig
from components.tooling.commands import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    BadInput,
    config_warnings,
    load_validated,
)
from components.tooling.stacks import EXAMPLE_STACKS, all_stacks, user_stacks

if TYPE_CHECKING:
    from components.tooling.engine import Plan

# command -> (module with main(argv), one-line summary)
COMMANDS: dict[str, tuple[str, str]] = {
    "new": (
        "components.tooling.new_stack",
        "write stacks/Pulumi.NAME.yaml, a stack of your own, from a few choices",
    ),
    "plan": (
        "components.tooling.cli",
        "show what `pulumi up` would create for STACK (offline, mocked)",
    ),
    "samples": (
        "components.tooling.samples_command",
        "print STACK's sample CUDA workloads as YAML",
    ),
    "fit": (
        "components.tooling.fit",
        "tell whether the pods in MANIFEST will schedule on STACK's pools",
    ),
    "consumers": (
        "components.tooling.consumers.command",
        "print ready-to-paste GPU pool settings for a tool",
    ),
    "diff": (
        "components.tooling.diff",
        "compare two `plan --json` documents, warning on replacements",
    ),
}

USAGE = """usage: python -m components COMMAND [ARGS]

gpufleet's offline engine: runs the real Pulumi program under mocks (no Pulumi CLI, no cloud
credentials) and answers questions about a stack before anything is deployed.

commands:
{commands}

STACK is a stack name in stacks/ or a path to a stack config YAML file:
  your stacks: {yours}
  examples:    {examples}
`python -m components new NAME --cloud CLOUD ...` writes a stack of your own.
`python -m components COMMAND --help` explains each command's options.
Exit status: 0 ok, 1 a check failed, 2 bad input (config, stack, manifest).
An unexpected error prints one line; GPUFLEET_DEBUG=1 in the environment shows its traceback.
"""


def usage() -> str:
    commands = "\n".join(f"  {name:<10} {summary}" for name, (_, summary) in COMMANDS.items())
    examples = [name for name in all_stacks() if name in EXAMPLE_STACKS]
    return USAGE.format(
        commands=commands,
        yours=", ".join(user_stacks()) or "none yet",
        examples=", ".join(examples) or "none",
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return EXIT_OK if args else EXIT_BAD_INPUT
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(f"error: unknown command {command!r}\n\n{usage()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    module_name = COMMANDS[command][0]
    entry: Callable[[list[str]], int] = (
        plan_main if command == "plan" else importlib.import_module(module_name).main
    )
    try:
        return entry(rest)
    except BadInput as error:
        print(error, file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except Exception as error:
        if os.environ.get("GPUFLEET_DEBUG"):
            raise
        print(
            f"error: {type(error).__name__}: {error} (set GPUFLEET_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return EXIT_FAILED


def plan_main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m components plan",
        description="Run the Pulumi program for STACK under mocks and print the resources `pulumi up` "
        "would create, grouped by component, and a table of the GPU pools.",
    )
    parser.add_argument(
        "stack", metavar="STACK", help="stack name in stacks/ or path to a stack YAML"
    )
    view = parser.add_mutually_exclusive_group()
    view.add_argument(
        "--json", action="store_true", help="one sorted, stable JSON document (secrets masked)"
    )
    view.add_argument("--mermaid", action="store_true", help="a Mermaid diagram of the stack")
    from components.tooling.cold_start_view import add_image_gb_option, render_cold_start

    add_image_gb_option(parser)
    options = parser.parse_args(argv)

    from components.tooling.engine import plan_stack

    stack, config = load_validated(options.stack, name_placeholders=True)
    _warn_stale_prices(config)

    plan = plan_stack(stack, image_gb=options.image_gb)
    _warn_program(plan, config_warnings(stack, config))
    mirror = config.gpu_software.mirror
    if options.json:
        print(json.dumps(plan.to_json(), indent=2, sort_keys=True))
    elif options.mermaid:
        from components.tooling.mermaid import render_mermaid

        print(render_mermaid(plan))
    else:
        from components.tooling.render import render_pool_table, render_tree

        print(render_tree(plan))
        print()
        print(render_pool_table(plan.outputs.get("gpuPools", [])))
        cold = render_cold_start(plan.cold_start)
        if cold:
            print()
            print(cold)
        if plan.cost is not None:
            from components.tooling.cost_view import render_cost

            print()
            print(render_cost(plan.cost))
        if mirror is not None:
            from components.kubernetes.sources import OUTPUT
            from components.tooling.mirror_list import render_mirror_list

            print()
            print(render_mirror_list(plan.outputs.get(OUTPUT, []), mirror))
    return EXIT_OK


def _warn_program(plan: Plan, shown: set[str]) -> None:
    """The program's own warnings (an adopted cluster's, the samples', ...) on stderr, in every
    format, after the config's: each once, none that `load_validated` already printed."""
    for warning in plan.distinct_warnings():
        if warning not in shown:
            print(f"warning: {warning}", file=sys.stderr)


def _warn_stale_prices(config: StackConfig) -> None:
    """Prices older than the model allows make every `plan` warn (stderr, all formats)."""
    from components.model import config as model_config
    from components.model.cost import stale_prices

    warning = stale_prices(config, model_config.clock_today())
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
