"""The program's stages, one function each, dispatched to the chosen cloud.

`__main__.py` reads as the architecture by calling these in order. Each cloud names (in its
`Cloud.stack_module`) a module with `build_cluster` and `build_gpu_pools`; only the chosen
cloud's provider SDK is imported, which keeps a plan fast.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Protocol

import pulumi

from components.kubernetes.cluster import ClusterHandle
from components.kubernetes.sources import SoftwareSources
from components.model.pools import PoolSpec
from components.model.registry import cloud_of
from components.model.schema import StackConfig


class CloudStack(Protocol):
    def build_cluster(self, config: StackConfig, system_pool: PoolSpec | None) -> ClusterHandle: ...

    def build_gpu_pools(
        self, config: StackConfig, pools: Sequence[PoolSpec], cluster: ClusterHandle
    ) -> list[pulumi.Resource]: ...


def cloud_stack(config: StackConfig) -> CloudStack:
    return importlib.import_module(cloud_of(config).stack_module)


def pin_software_sources(config: StackConfig) -> SoftwareSources:
    """Every chart and image any stage installs: pinned by digest where known, and from
    `gpuSoftware.mirror` when set (one stack transformation, before anything is declared);
    its `export()` lists, under a mirror, what to copy there."""
    from components.kubernetes import sources

    return sources.install(config)


def build_cluster(config: StackConfig, system_pool: PoolSpec | None) -> ClusterHandle:
    return cloud_stack(config).build_cluster(config, system_pool)


def build_gpu_pools(
    config: StackConfig, pools: Sequence[PoolSpec], cluster: ClusterHandle
) -> list[pulumi.Resource]:
    return cloud_stack(config).build_gpu_pools(config, pools, cluster)


def build_gpu_software(
    config: StackConfig,
    pools: Sequence[PoolSpec],
    cluster: ClusterHandle,
    gpu_pools: Sequence[pulumi.Resource],
) -> pulumi.Resource | None:
    """NVIDIA's device plugin or GPU Operator (and monitoring); nothing when the cloud manages GPUs."""
    if (
        config.gpu_software_mode == "cloud-managed"
        and not config.gpu_software.monitoring.dcgm_exporter
    ):
        return None
    from components.kubernetes import software

    return software.build(config, pools, cluster, gpu_pools)


def build_queues(
    config: StackConfig,
    pools: Sequence[PoolSpec],
    cluster: ClusterHandle,
    gpu_pools: Sequence[pulumi.Resource] = (),
) -> pulumi.Resource | None:
    """Kueue and the queues of the queued pools (`capacity: queued`), when there are any; Kueue
    starts after the pools and what serves their ProvisioningRequests (it sets its admission
    check up only if the API server has the ProvisioningRequest CRD when it starts)."""
    if not any(spec.queue is not None for spec in pools):
        return None
    from components.kubernetes import queues

    return queues.build(config, pools, cluster, gpu_pools)


def build_samples(
    config: StackConfig,
    pools: Sequence[PoolSpec],
    cluster: ClusterHandle,
    software: pulumi.Resource | None,
    gpu_pools: Sequence[pulumi.Resource],
) -> pulumi.Resource | None:
    """CUDA sample workloads that prove each pool end to end, when enabled."""
    if not config.samples.enabled:
        return None
    from components.kubernetes import samples

    return samples.build(config, pools, cluster, software, gpu_pools)
