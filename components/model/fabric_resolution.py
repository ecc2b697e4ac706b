"""A fabric pool's `PoolSpec`: its `PoolFabric`, and the fabric's devices in what the scheduler
and the autoscaler see of a node.

The fabric's resource (`vpc.amazonaws.com/efa`, `rdma/ib`) is advertised by its device plugin
on every node of the pool, so pods and `fit` count it in the node's allocatable; where the
autoscaler's picture of the pool at zero comes from the pool object (`scale_from_zero ==
"pool"`), it carries the resource too (an EKS self-managed group's picture is its node-template
tags, which the EKS pool code writes).
"""

from __future__ import annotations

from dataclasses import replace

from components.model.cloud import Cloud
from components.model.fabric_checks import pool_machine_names, pool_zones
from components.model.pool_spec import PoolSpec
from components.model.schema import GpuPoolConfig, StackConfig


def with_fabric(cloud: Cloud, config: StackConfig, pool: GpuPoolConfig, spec: PoolSpec) -> PoolSpec:
    """`spec` with the pool's fabric (unchanged for `interconnect: none`; the config checks
    refuse a fabric pool without facts or with other than one zone)."""
    if pool.interconnect != "fabric":
        return spec
    _, names = pool_machine_names(cloud, pool)
    facts = cloud.fabric_facts(names[0])
    _, zones = pool_zones(config.cluster, pool)
    if facts is None or len(zones) != 1:
        return spec
    fabric = cloud.pool_fabric(config, pool, facts, zones[0])
    if facts.resource is None:
        return replace(spec, fabric=fabric)
    allocatable = {**spec.allocatable_per_node, facts.resource: facts.resource_per_node}
    at_zero = dict(spec.autoscaler_resources)
    if spec.scale_from_zero == "pool":
        at_zero[facts.resource] = facts.resource_per_node
    return replace(
        spec, fabric=fabric, allocatable_per_node=allocatable, autoscaler_resources=at_zero
    )
