"""The multi-node NCCL test `samples` prints for each fabric pool (`Cloud.nccl_test`): its
manifests, then, as YAML comments, the command that reads the result, the published bus
bandwidth to compare it with, and what the test needs that gpufleet does not install.

The tests run in their own namespace (`NCCL_NAMESPACE`), printed first, enforcing the most
restrictive Pod Security level their pods pass (computed with `pod_security`): the NCCL pods
need root, host paths or added capabilities, which the CUDA samples' restricted namespace
refuses, and that namespace is not loosened for them.

A cloud without a test for the pool (None) prints nothing for it: no placeholder. A pool whose
maxNodes is below the test's nodes gets no test, which could never schedule, but one comment
line saying so (`nccl_left_out`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from components.model import pod_security
from components.model.catalog.charts import NCCL_NAMESPACE
from components.model.fabric import FABRIC_MIN_NODES, NcclFigure, NcclTest
from components.model.pool_spec import PoolSpec
from components.model.registry import cloud_of
from components.model.schema import StackConfig
from components.tooling.scheduling.workload_objects import mpi_replicas

# Two nodes: the smallest test that crosses the fabric (the published figures are two-node).
NCCL_TEST_NODES = FABRIC_MIN_NODES


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


def pod_specs(manifest: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The pod specs an NCCL test object runs: a Pod's own, an MPIJob's Launcher and Worker
    templates, a workload's template; none for a Service or ConfigMap."""
    spec = manifest.get("spec")
    if not isinstance(spec, Mapping):
        return []
    if manifest.get("kind") == "Pod":
        return [spec]
    if manifest.get("kind") == "MPIJob":
        return [r.pod_spec for r in mpi_replicas(manifest) if isinstance(r.pod_spec, Mapping)]
    template = spec.get("template")
    inner = template.get("spec") if isinstance(template, Mapping) else None
    return [inner] if isinstance(inner, Mapping) else []


def namespace_level(tests: Sequence[NcclTest]) -> pod_security.Level:
    """The most restrictive Pod Security level that admits every pod of `tests`."""
    return pod_security.strictest(
        spec for test in tests for manifest in test.manifests for spec in pod_specs(manifest)
    )


def namespace_text(tests: Sequence[NcclTest]) -> str:
    """The NCCL tests' namespace, enforcing `namespace_level`, with why as comments: what the
    next stricter level would refuse."""
    level = namespace_level(tests)
    lines = [f"# The NCCL tests run in namespace {NCCL_NAMESPACE}, Pod Security {level}"]
    if level != "restricted":
        stricter = pod_security.LEVELS[pod_security.LEVELS.index(level) + 1]
        refused = sorted(
            {
                found
                for test in tests
                for manifest in test.manifests
                for spec in pod_specs(manifest)
                for found in pod_security.violations(spec, stricter)
            }
        )
        lines.append(f"# ({stricter} would refuse: {'; '.join(refused)})")
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": NCCL_NAMESPACE,
            "labels": {"app.kubernetes.io/managed-by": "gpufleet", **pod_security.labels(level)},
        },
    }
    return "\n".join(lines) + "\n" + yaml.safe_dump(namespace, sort_keys=False)


def fabric_tests(config: StackConfig, pools: Sequence[PoolSpec]) -> list[tuple[PoolSpec, NcclTest]]:
    """Every fabric pool with its cloud's NCCL test (pools whose cloud has none are left out)."""
    cloud = cloud_of(config)
    found = []
    for pool in pools:
        if pool.fabric is None or pool.max_nodes < NCCL_TEST_NODES:
            continue
        test = cloud.nccl_test(config, pool, NCCL_TEST_NODES)
        if test is not None:
            found.append((pool, test))
    return found


def nccl_left_out(pools: Sequence[PoolSpec]) -> list[str]:
    """One line per fabric pool too small for the test: why `samples` prints none for it."""
    return [
        f"no NCCL test for fabric pool {pool.name}: maxNodes {pool.max_nodes}, and the test "
        f"needs {NCCL_TEST_NODES} nodes"
        for pool in pools
        if pool.fabric is not None and pool.max_nodes < NCCL_TEST_NODES
    ]


def nccl_tests(config: StackConfig, pools: Sequence[PoolSpec]) -> list[str]:
    """Every fabric pool's NCCL test, rendered (pools whose cloud has none are left out)."""
    return [nccl_test_text(pool, test) for pool, test in fabric_tests(config, pools)]


def nccl_documents(config: StackConfig, pools: Sequence[PoolSpec]) -> list[str]:
    """What `samples` prints after the CUDA samples: the NCCL tests' namespace, then each test
    (nothing when no pool has one)."""
    found = fabric_tests(config, pools)
    if not found:
        return []
    return [
        namespace_text([test for _, test in found]),
        *(nccl_test_text(pool, test) for pool, test in found),
    ]
