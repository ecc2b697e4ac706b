"""The multi-node NCCL test `samples` prints for each fabric pool (`Cloud.nccl_test`): its
manifests, then, as YAML comments, the command that reads the result, the published bus
bandwidth to compare it with, and what the test needs that gpufleet does not install.

A cloud without a test for the pool (None) prints nothing for it: no placeholder.
"""

from __future__ import annotations

from collections.abc import Sequence

import yaml

from components.model.fabric import NcclFigure, NcclTest
from components.model.pool_spec import PoolSpec
from components.model.registry import cloud_of
from components.model.schema import StackConfig

# Two nodes: the smallest test that crosses the fabric (the published figures are two-node).
NCCL_TEST_NODES = 2


def message_size(size: int) -> str:
    """Bytes as NCCL tests print sizes in the docs: 16 GiB, 512 MiB, 8 B."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def figure_line(figure: NcclFigure) -> str:
    """The published figure a working fabric reaches, in one line."""
    return (
        f"published: {figure.collective} busbw {figure.busbw_gbytes_per_s:g} GB/s at "
        f"{message_size(figure.message_bytes)} messages on {figure.nodes} nodes "
        f"({figure.source})"
    )


def nccl_test_text(pool: PoolSpec, test: NcclTest) -> str:
    """One pool's test: a comment header, the manifests, then how to read and judge it."""
    lines = [
        f"# NCCL test of fabric pool {pool.name} ({NCCL_TEST_NODES} nodes): kubectl apply, then",
        f"#   {test.result_command}",
    ]
    if test.expected is not None:
        lines.append(f"# {figure_line(test.expected)}")
        lines.append(
            f"# compare the {test.expected.collective} busbw column at that size; far below "
            "it, the pods are not on the fabric"
        )
    lines += [f"# not checked: {need}" for need in test.requires]
    lines += [f"# source: {source}" for source in test.sources]
    body = yaml.safe_dump_all([dict(m) for m in test.manifests], sort_keys=False)
    return "\n".join(lines) + "\n" + body


def nccl_tests(config: StackConfig, pools: Sequence[PoolSpec]) -> list[str]:
    """Every fabric pool's NCCL test, rendered (pools whose cloud has none are left out)."""
    cloud = cloud_of(config)
    rendered = []
    for pool in pools:
        if pool.fabric is None:
            continue
        test = cloud.nccl_test(config, pool, NCCL_TEST_NODES)
        if test is not None:
            rendered.append(nccl_test_text(pool, test))
    return rendered
