"""Plan synthetic GKE stacks of 1, 10, 100 and 500 GPU pools; print wall time and peak memory.

Each size runs in a fresh process so peak memory is that plan's own. Not a timed test: run it
by hand (`python scripts/benchmark.py`); docs/development.md says what it is for.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent
SIZES = (1, 10, 100, 500)
ACCELERATORS = (("l4", "g2-standard-8"), ("t4", "n1-standard-8"), ("a100-40gb", "a2-highgpu-1g"))


def synthetic_pools(count: int) -> list[dict[str, object]]:
    pools = []
    for index in range(count):
        accelerator, machine = ACCELERATORS[index % len(ACCELERATORS)]
        pools.append(
            {
                "name": f"gpu-{index:04d}",
                "accelerator": accelerator,
                "machineType": machine,
                "maxNodes": 4,
                "spot": index % 2 == 0,
                "zones": ["us-central1-a", "us-central1-b"],
            }
        )
    return pools


def run_one(count: int) -> dict[str, float]:
    """Plan gcp-dev with `count` GPU pools in this process; report times and peak RSS."""
    started = time.perf_counter()
    sys.path.insert(0, str(PROJECT_DIR))
    from components.tooling.engine import plan_stack
    from components.tooling.stacks import load_stack

    imported = time.perf_counter()
    plan = plan_stack(load_stack("gcp-dev"), {"gpufleet:gpuPools": synthetic_pools(count)})
    finished = time.perf_counter()
    assert len(plan.outputs["gpuPools"]) == count
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "pools": count,
        "resources": len(plan.resources),
        "import_s": round(imported - started, 3),
        "plan_s": round(finished - imported, 3),
        "total_s": round(finished - started, 3),
        "peak_mib": round(peak_kib / 1024, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: child process
    options = parser.parse_args()
    if options.one is not None:
        print(json.dumps(run_one(options.one)))
        return 0
    print(
        f"{'pools':>6} {'resources':>9} {'import s':>9} {'plan s':>8} {'total s':>8} {'peak MiB':>9}"
    )
    for size in options.sizes:
        output = subprocess.run(
            [sys.executable, __file__, "--one", str(size)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        row = json.loads(output.strip().splitlines()[-1])
        print(
            f"{row['pools']:>6} {row['resources']:>9} {row['import_s']:>9} {row['plan_s']:>8} "
            f"{row['total_s']:>8} {row['peak_mib']:>9}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
