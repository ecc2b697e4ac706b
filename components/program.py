"""The program's stages, one function each, dispatched to the chosen cloud.

`__main__.py` reads as the architecture by calling these in order. Each cloud package has a
`stack` module with `build_cluster` and `build_gpu_pools`; only the chosen cloud's provider SDK
is imported, which keeps a plan fast.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import pulumi
import pulumi_kubernetes as k8s

from components.config import StackConfig
from components.pools import PoolSpec


@dataclass(frozen=True)
class ClusterHandle:
    """What the later stages need from a cluster, whatever the cloud."""

    name: pulumi.Input[str]
    kubeconfig: pulumi.Output[str]
    k8s_provider: k8s.Provider
    # The cloud's own cluster component; that cloud's later stages read what they need from it.
    component: pulumi.Resource

    @classmethod
    def of(cls, component: ClusterComponent, name: pulumi.Input[str]) -> ClusterHandle:
        """The handle of a cluster component that built its kubeconfig and Kubernetes provider."""
        assert isinstance(component, pulumi.Resource)
        return cls(
            name=name,
            kubeconfig=component.kubeconfig,
            k8s_provider=component.k8s_provider,
            component=component,
        )


class ClusterComponent(Protocol):
    """What every cloud's cluster component offers the later stages."""

    kubeconfig: pulumi.Output[str]
    k8s_provider: k8s.Provider


class CloudStack(Protocol):
    def build_cluster(self, config: StackConfig, system_pool: PoolSpec | None) -> ClusterHandle: ...

    def build_gpu_pools(
        self, config: StackConfig, pools: Sequence[PoolSpec], cluster: ClusterHandle
    ) -> list[pulumi.Resource]: ...


def cloud_stack(config: StackConfig) -> CloudStack:
    module = "kubernetes.existing" if config.cloud == "existing" else f"{config.cloud}.stack"
    return importlib.import_module(f"components.{module}")


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
