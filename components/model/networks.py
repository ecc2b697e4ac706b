"""IP ranges in config: parsed once, with the messages every cloud's checks share."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence

from components.model.problems import Problem

IPv4 = ipaddress.IPv4Network


def parse_ipv4_cidr(
    path: str, value: str, problems: list[Problem], prefixes: tuple[int, int] = (0, 32)
) -> IPv4 | None:
    """`value` as an IPv4 network, or None with the reason added to `problems`."""
    if "," in value or " " in value.strip():
        problems.append(Problem(path, "must be one CIDR; list several as a YAML list", value))
        return None
    try:
        network = ipaddress.ip_network(value.strip())
    except ValueError:
        problems.append(Problem(path, "must be an IPv4 CIDR such as 10.0.0.0/16", value))
        return None
    low, high = prefixes
    if not isinstance(network, IPv4) or not low <= network.prefixlen <= high:
        size = f"/{low}" if low == high else f"from /{low} to /{high}"
        problems.append(Problem(path, f"must be an IPv4 CIDR {size}", value))
        return None
    return network


def cidr_list_problems(path: str, values: Sequence[str]) -> list[Problem]:
    """Each entry of a list of source ranges is one valid CIDR."""
    problems: list[Problem] = []
    for index, value in enumerate(values):
        parse_ipv4_cidr(f"{path}[{index}]", value, problems)
    return problems


def overlap_problems(prefix: str, ranges: Mapping[str, IPv4 | None]) -> list[Problem]:
    """Each pair of ranges that must not overlap, named by its config key under `prefix`."""
    problems = []
    known = [(key, network) for key, network in ranges.items() if network is not None]
    for index, (key, network) in enumerate(known):
        clash = [other for other, earlier in known[:index] if network.overlaps(earlier)]
        if clash:
            problems.append(
                Problem(f"{prefix}.{key}", f"must not overlap {', '.join(clash)}", str(network))
            )
    return problems
