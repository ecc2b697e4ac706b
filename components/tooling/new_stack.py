"""`python -m components new NAME --cloud CLOUD ...`: write a new stack file from a few choices.

The stack is validated before it is written (the same checks as `plan`), so what lands in
stacks/ plans cleanly; values only the user knows and did not give (their API ranges, their
project id) are placeholders that `plan` names and a real preview refuses until filled in.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import textwrap
from pathlib import Path

import yaml

from components.model.cloud import Cloud
from components.model.config import ConfigError, parse_config
from components.model.placeholders import find_placeholders
from components.model.production import creates_cluster, looks_like_production
from components.model.registry import CLOUDS
from components.model.starter import DEFAULT_MAX_NODES, Starter, StarterChoices, StarterError
from components.tooling.commands import EXIT_OK, BadInput
from components.tooling.stacks import PROJECT_DIR, STACKS_DIR

# Pulumi's rule for stack names.
STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
PROVISIONERS = ("cluster-autoscaler", "karpenter", "auto-mode")

EPILOG = """\
examples:
  python -m components new ml-dev --cloud gcp --project my-project --spot
  python -m components new ml-eks --cloud aws --region us-west-2 --gpu l4 \\
      --provisioner karpenter --api-cidr 198.51.100.0/24
  python -m components new research --cloud azure --existing-cluster research-aks \\
      --resource-group rg-research --subscription <subscription id> --gpu a100-80gb
  python -m components new lab --cloud existing --gpu a10 --node-label hardware=a10

Every other key keeps gpufleet's default (docs/configuration.md); edit the file to change it.
Exit status: 0 written; 2 bad input (a choice the cloud refuses, a file that exists).
"""


def parser() -> argparse.ArgumentParser:
    parse = argparse.ArgumentParser(
        prog="python -m components new",
        description=textwrap.fill(
            "Write stacks/Pulumi.NAME.yaml, a stack of your own with one GPU pool that scales "
            "to zero, from a few choices. It is checked as `plan` checks it before it is "
            "written; what only you know and did not give is written as a placeholder that "
            "`plan` names and a real `pulumi preview` or `pulumi up` refuses until you fill it in.",
            96,
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parse.add_argument("name", metavar="NAME", help="the stack's name (and its cluster's)")
    parse.add_argument("--cloud", required=True, choices=sorted(CLOUDS), help="where it runs")
    parse.add_argument("--region", help="GCP region, AWS region or Azure location")
    parse.add_argument("--gpu", help="GPU model: l4, t4, a10g, a100-80gb, h100-80gb, ...")
    parse.add_argument("--spot", action="store_true", help="a Spot pool (cheaper, reclaimable)")
    parse.add_argument(
        "--max-nodes", type=int, default=DEFAULT_MAX_NODES, help="the pool's largest size"
    )
    parse.add_argument("--zones", nargs="+", default=[], metavar="ZONE", help="zones to use")
    parse.add_argument("--kubernetes-version", metavar="MINOR", help='e.g. "1.35"')
    parse.add_argument(
        "--existing-cluster",
        metavar="CLUSTER",
        help="add the GPU pool to this GKE, EKS or AKS cluster you already run (adopt it)",
    )
    parse.add_argument("--provisioner", choices=PROVISIONERS, help="aws: what scales GPU nodes")
    parse.add_argument("--project", help="gcp: your project id")
    parse.add_argument("--resource-group", help="azure: the resource group")
    parse.add_argument(
        "--subscription",
        metavar="ID",
        help="azure: the subscription (a GUID) the cluster is in or goes to; else "
        "ARM_SUBSCRIPTION_ID or the az CLI's default, which may not be an adopted cluster's",
    )
    parse.add_argument(
        "--api-cidr",
        action="append",
        default=[],
        metavar="CIDR",
        help="aws, azure: a range that may reach the API server (repeatable)",
    )
    parse.add_argument("--node-label", metavar="KEY=VALUE", help="existing: the GPU nodes' label")
    parse.add_argument("--context", help="existing: the kubeconfig context")
    parse.add_argument(
        "--output",
        metavar="PATH",
        help="write here instead of stacks/Pulumi.NAME.yaml (- for stdout)",
    )
    parse.add_argument("--force", action="store_true", help="overwrite an existing file")
    return parse


class _StackDumper(yaml.SafeDumper):
    """Block mappings, and lists of plain values on one line (`zones: [a, b]`), as the
    examples are written."""


def _list(dumper: yaml.SafeDumper, items: list[object]) -> yaml.SequenceNode:
    flow = all(not isinstance(item, dict | list) for item in items)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=flow)


_StackDumper.add_representer(list, _list)


def render(name: str, command: str, starter: Starter) -> str:
    """The stack file: a header saying what to fill in, then the config."""
    placeholders = find_placeholders(starter.config)
    header = [f"{name}: written by `{command}`."]
    header.append(
        "Every key not written here keeps gpufleet's default; docs/configuration.md names them all."
    )
    header += [f"Chosen for you: {note}." for note in starter.notes]
    if placeholders:
        header.append(
            "Fill in before a real `pulumi preview` or `pulumi up` (which refuse this stack "
            "until then; `python -m components plan` names them too):"
        )
        header += [f"- {placeholder}" for placeholder in placeholders]
    lines = []
    for paragraph in header:
        indent = "    " if paragraph.startswith("- ") else ""
        lines += textwrap.wrap(paragraph, 96, subsequent_indent=indent, break_on_hyphens=False)
    config = {f"gpufleet:{key}": value for key, value in starter.config.items()}
    body = yaml.dump(
        {"config": config}, Dumper=_StackDumper, sort_keys=False, default_flow_style=False
    )
    return "".join(f"# {line}\n" for line in lines) + body


def protected_if_production(name: str, cloud: Cloud, starter: Starter) -> Starter:
    """A stack named like production gets `cluster.protect: true` where gpufleet creates the
    cluster: the policy pack (policy/pack_config.py) treats it as production and refuses it
    unprotected."""
    if not looks_like_production(name):
        return starter
    try:
        config = parse_config(starter.config)
    except ConfigError:
        return starter  # reported below, as for any other stack
    if not creates_cluster(cloud, config):
        return starter
    cluster = {**starter.config["cluster"], "protect": True}
    note = (
        "cluster.protect: true, as the name looks like production (the policy pack refuses a "
        "production stack whose cluster is not protected); to delete the cluster later, set "
        "it false and run `pulumi up` first"
    )
    return Starter({**starter.config, "cluster": cluster}, (*starter.notes, note))


def main(argv: list[str]) -> int:
    options = parser().parse_args(argv)
    if not STACK_NAME.fullmatch(options.name):
        raise BadInput(
            f"error: NAME: {options.name!r} is not a stack name (1-100 of letters, digits, "
            "- _ and ., as Pulumi allows)"
        )
    choices = StarterChoices(
        name=options.name,
        region=options.region,
        gpu=options.gpu,
        spot=options.spot,
        max_nodes=options.max_nodes,
        zones=tuple(options.zones),
        kubernetes_version=options.kubernetes_version,
        existing_cluster=options.existing_cluster,
        provisioner=options.provisioner,
        project=options.project,
        resource_group=options.resource_group,
        subscription=options.subscription,
        api_cidrs=tuple(options.api_cidr),
        node_label=options.node_label,
        context=options.context,
    )
    try:
        starter = CLOUDS[options.cloud].starter(choices)
    except StarterError as error:
        problems = "\n".join(f"  - {problem}" for problem in error.problems)
        raise BadInput(f"error: cannot write stack {options.name}:\n{problems}") from None
    starter = protected_if_production(options.name, CLOUDS[options.cloud], starter)
    try:
        config = parse_config(starter.config)
    except ConfigError as error:
        raise BadInput(
            f"error: these choices make a stack gpufleet refuses (nothing written):\n"
            f"{error.render()}"
        ) from None
    command = f"python -m components new {shlex.join(argv)}"
    text = render(options.name, command, starter)
    if options.output == "-":
        sys.stdout.write(text)
        return EXIT_OK
    path = Path(options.output) if options.output else STACKS_DIR / f"Pulumi.{options.name}.yaml"
    if path.exists() and not options.force:
        raise BadInput(f"error: {path} exists; choose another NAME, or --force to overwrite it")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except OSError as error:
        raise BadInput(f"error: cannot write {path}: {error.strerror or error}") from None
    for warning in config.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    shown = path.relative_to(PROJECT_DIR) if path.is_relative_to(PROJECT_DIR) else path
    ref = options.name if not options.output else str(path)
    print(f"wrote {shown}")
    placeholders = find_placeholders(starter.config)
    if placeholders:
        print("fill in before a real `pulumi preview` or `pulumi up`:")
        for placeholder in placeholders:
            print(f"  - {placeholder}")
    print(f"next: .venv/bin/python -m components plan {ref}")
    return EXIT_OK
