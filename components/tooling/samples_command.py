"""`python -m components samples STACK`: a stack's sample CUDA workloads as YAML."""

from __future__ import annotations

import argparse

import yaml

from components.kubernetes.sample_manifests import NAMESPACE, has_samples, manifests
from components.model.pools import resolve_pools
from components.tooling.commands import load_validated, select_gpu_pools
from components.tooling.consumers.shared import left_out
from components.tooling.nccl_sample import nccl_documents, nccl_left_out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m components samples",
        description="Print STACK's sample CUDA workloads (a vector-add and an nvidia-smi Job per "
        "GPU pool, and a sharing Deployment for shared pools) as YAML, ready for "
        "`kubectl apply -f -` on any cluster whose nodes match the stack's pools.",
    )
    parser.add_argument(
        "stack", metavar="STACK", help="stack name in stacks/ or path to a stack YAML"
    )
    parser.add_argument(
        "--pool", action="append", metavar="NAME", help="only this GPU pool (repeatable)"
    )
    options = parser.parse_args(argv)
    stack, config = load_validated(options.stack)
    pools = select_gpu_pools(resolve_pools(config), options.pool, stack.name)
    print(f"# Sample CUDA workloads of stack {stack.name}: kubectl apply -f <this file>")
    print(f"# Then: kubectl -n {NAMESPACE} logs job/<pool>-vectoradd  (expect 'Test PASSED')")
    for pool in pools:
        if not has_samples(pool):
            print(f"# {left_out(pool, 'samples')}")
    for line in nccl_left_out(pools):
        print(f"# {line}")
    print(yaml.safe_dump_all(manifests(pools), sort_keys=False), end="")
    for test in nccl_documents(config, pools):
        print("---")
        print(test, end="")
    return 0
