"""Entry point of `python -m components`.

Run with a Python that lacks gpufleet's dependencies (outside the project's virtual environment),
the first import fails; that is said with the commands that fix it, not as a traceback.
"""

import sys

VENV_COMMANDS = (
    "  python3 -m venv .venv && .venv/bin/pip install -q --require-hashes -r requirements.lock\n"
    "  .venv/bin/python -m components {args}\n"
    "(or `source .venv/bin/activate` once, then `python -m components ...`)"
)


def _not_in_venv(missing: ModuleNotFoundError) -> str:
    args = " ".join(sys.argv[1:]) or "--help"
    return (
        f"error: {missing} in {sys.executable} (Python {sys.version.split()[0]}): gpufleet's "
        "dependencies are installed in the project's virtual environment, not in this Python. "
        "From the repository root, create it once and run gpufleet with it:\n"
        + VENV_COMMANDS.format(args=args)
    )


if sys.version_info < (3, 11):  # noqa: UP036 (this file must run on older Pythons to say so)
    print(
        f"error: gpufleet needs Python 3.11 or newer; {sys.executable} is "
        f"{sys.version.split()[0]}. Create the virtual environment with a newer one:\n"
        + VENV_COMMANDS.format(args=" ".join(sys.argv[1:]) or "--help").replace(
            "python3 -m venv", "python3.11 -m venv"
        ),
        file=sys.stderr,
    )
    sys.exit(2)

try:
    from components.tooling.cli import main
except ModuleNotFoundError as missing:
    if (missing.name or "").split(".")[0] == "components":
        raise
    print(_not_in_venv(missing), file=sys.stderr)
    sys.exit(2)

sys.exit(main())
