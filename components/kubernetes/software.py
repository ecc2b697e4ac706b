"""The GPU software stage: device plugin or GPU Operator, plus optional DCGM monitoring.

One component per cluster (`gpufleet:kubernetes:GpuSoftware`), whatever the cloud:
- `device-plugin`: NVIDIA's device plugin chart, on exactly the GPU pools (`device_plugin.py`);
- `gpu-operator`: NVIDIA's GPU Operator with the cloud's preset (`gpu_operator.py`);
- `cloud-managed`: nothing, unless the standalone DCGM exporter is asked for (`dcgm.py`).
Every child uses the cluster's explicit Kubernetes provider and waits for the GPU pools.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.kubernetes import dcgm, device_plugin, gpu_operator, namespaces, targeting
from components.kubernetes.cluster import ClusterHandle
from components.model.pools import PoolSpec, system_pool
from components.model.registry import cloud_of, software_platform
from components.model.schema import StackConfig


@dataclass(frozen=True)
class GpuSoftwareArgs:
    config: StackConfig
    pools: Sequence[PoolSpec]
    provider: k8s.Provider
    system_pool: PoolSpec | None = None
    # Created before the software and deleted after it.
    gpu_pools: Sequence[pulumi.Resource] = field(default_factory=list)


class GpuSoftware(pulumi.ComponentResource):
    """Namespaces, GKE quotas and Helm releases of the cluster's GPU software."""

    releases: dict[str, k8s.helm.v3.Release]

    def __init__(
        self, name: str, args: GpuSoftwareArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:kubernetes:GpuSoftware", name, None, opts)
        config = args.config
        self._name = name
        self._args = args
        self._platform = software_platform(config)
        self.releases = {}
        mode = config.gpu_software_mode
        gpu_pools = [p for p in args.pools if p.kind == "gpu"]
        nvidia = targeting.nvidia_pools(args.pools)

        if mode == "device-plugin" and nvidia:
            ns, needs = self._namespace("device-plugin", device_plugin.PIN.namespace)
            self.releases["device-plugin"] = device_plugin.release(
                f"{name}-device-plugin", nvidia, ns, self._release_opts(needs)
            )
        elif mode == "gpu-operator":
            ns, needs = self._namespace("gpu-operator", gpu_operator.PIN.namespace)
            notice = self._platform.gpu_operator_notice()
            if notice:
                pulumi.log.warn(notice, resource=self)
            if cloud_of(config).adopted(config.cluster):
                pulumi.log.warn(
                    gpu_operator.adopted_cluster_notice(config.cluster.name), resource=self
                )
            self.releases["gpu-operator"] = gpu_operator.release(
                f"{name}-gpu-operator", config, nvidia, ns, self._release_opts(needs)
            )
        if config.gpu_software.monitoring.dcgm_exporter and mode != "gpu-operator" and gpu_pools:
            ns, needs = self._namespace("dcgm-exporter", dcgm.PIN.namespace)
            self.releases["dcgm-exporter"] = dcgm.release(
                f"{name}-dcgm-exporter", config, gpu_pools, ns, self._release_opts(needs)
            )
        self.register_outputs(
            {"mode": mode, "releases": {key: r.name for key, r in self.releases.items()}}
        )

    def _namespace(
        self, suffix: str, namespace_name: str
    ) -> tuple[pulumi.Output[str], list[pulumi.Resource]]:
        """The release's namespace (and, on GKE, its critical-pods quota), created explicitly.

        Returns the namespace name to install into and what the release must wait for.
        """
        child = pulumi.ResourceOptions(parent=self, provider=self._args.provider)
        ns = namespaces.namespace(f"{self._name}-{suffix}-ns", namespace_name, child)
        name: pulumi.Output[str] = ns.metadata.apply(lambda m: m.name or namespace_name)
        needs: list[pulumi.Resource] = [*self._args.gpu_pools]
        if self._platform.critical_pods_need_quota:
            pods = namespaces.critical_pods_needed(self._args.pools, self._args.system_pool)
            # The release's node-critical pods are admitted only once the quota exists.
            needs.append(
                namespaces.critical_pods_quota(f"{self._name}-{suffix}-quota", name, pods, child)
            )
        return name, needs

    def _release_opts(self, needs: list[pulumi.Resource]) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, provider=self._args.provider, depends_on=needs)


def build(
    config: StackConfig,
    pools: Sequence[PoolSpec],
    cluster: ClusterHandle,
    gpu_pools: Sequence[pulumi.Resource],
) -> pulumi.Resource:
    """The program's GPU-software stage (called unless nothing is to be installed)."""
    return GpuSoftware(
        f"{config.cluster.name}-gpu-software",
        GpuSoftwareArgs(
            config=config,
            pools=pools,
            provider=cluster.k8s_provider,
            system_pool=system_pool(config),
            gpu_pools=gpu_pools,
        ),
    )
