"""gpufleet's CrossGuard policy pack: the promises gpufleet makes, enforced on every preview.

`POLICIES` is the whole pack; `policy/__main__.py` serves it to the Pulumi engine, and
`gpufleet_policy.offline` runs it over a `python -m components plan STACK --json` document.
"""

from __future__ import annotations

from pulumi_policy import Policy

from . import aws, charts, cost, defaults, exposure, karpenter, pools, protection

PACK_NAME = "gpufleet"
POLICIES: list[Policy] = [
    *pools.POLICIES,
    *aws.POLICIES,
    *karpenter.POLICIES,
    *defaults.POLICIES,
    *charts.POLICIES,
    *protection.POLICIES,
    *exposure.POLICIES,
    *cost.POLICIES,
]

__all__ = ["PACK_NAME", "POLICIES"]
