"""What `fit` says of pods that ask for a GPU fabric (`gpuPools[].interconnect: fabric`).

A pod asks for the fabric when it requests a fabric's resource (`vpc.amazonaws.com/efa`,
`rdma/ib`; `PoolFabric.requested_by`). Such
a pod only runs well on a fabric pool: on a plain pool its NCCL traffic would take the default
network (or, with a device request, it never schedules). A workload of several such pods is a
gang: `gang_fit` judges it whole against the pool's placement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.model.fabric_checks import fabric_machine_types
from components.model.pool_spec import PoolSpec
from components.model.registry import CLOUDS
from components.tooling.scheduling.resources import pod_requests


def cloud_fabric_resources(cloud: str) -> frozenset[str]:
    """Every resource a fabric of the cloud's catalog offers pods."""
    known = CLOUDS.get(cloud)
    if known is None:
        return frozenset()
    found = (known.fabric_facts(name) for name in fabric_machine_types(known))
    return frozenset(f.resource for f in found if f is not None and f.resource is not None)


def asks_for_fabric(pod_spec: Mapping[str, Any], spec: PoolSpec) -> bool:
    """Whether the pod asks for a GPU fabric: this pool's (its resource or annotations), or a
    fabric resource of the pool's cloud that this pool does not offer."""
    requested, _ = pod_requests(pod_spec)
    # fit reads pod specs, not their templates' metadata: a fabric asked for by annotations
    # only (GKE multi-networking) is not seen here.
    if spec.fabric is not None and spec.fabric.requested_by(requested, {}):
        return True
    return any(name in requested for name in cloud_fabric_resources(spec.cloud))


def fabric_reasons(pod_spec: Mapping[str, Any], spec: PoolSpec, index: int | None) -> list[str]:
    """Why a pool without a fabric does not take a pod that asks for one (none otherwise)."""
    if spec.fabric is not None or not asks_for_fabric(pod_spec, spec):
        return []
    if spec.kind != "gpu":
        return ["no GPU fabric: the pod asks for one, and the system pool has none"]
    known = CLOUDS.get(spec.cloud)
    types = []
    if known is not None:
        types = fabric_machine_types(known, spec.accelerator) or fabric_machine_types(known)
    pool = f"gpuPools[{index}]" if index is not None else f"gpuPools[] (pool {spec.name})"
    on = f"a {', '.join(types)} pool" if types else "a machine type with a GPU network"
    return [f"no GPU fabric: set {pool}.interconnect: fabric on {on}"]
