"""The EFA Kubernetes device plugin on a cluster with fabric group pools: it advertises each
node's EFA devices as `vpc.amazonaws.com/efa` (components/aws/model/fabric.py has the pin and
its values), on the fabric pools' nodes only."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.aws.model import fabric
from components.kubernetes.helm import pinned_release
from components.kubernetes.targeting import tolerations
from components.model.pool_spec import PoolSpec


class EfaDevicePlugin(pulumi.ComponentResource):
    """One release for every fabric pool (they share the node label it selects), tolerating
    each pool's taints."""

    release: k8s.helm.v3.Release

    def __init__(
        self,
        name: str,
        pools: Sequence[PoolSpec],
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource],
    ) -> None:
        super().__init__("gpufleet:aws:EfaDevicePlugin", name, None, None)
        pin = fabric.DEVICE_PLUGIN
        self.release = pinned_release(
            f"{name}-release",
            pin,
            fabric.DEVICE_PLUGIN_RELEASE,
            pin.namespace,
            fabric.device_plugin_values(tolerations(pools)),
            pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(depends_on)),
        )
        self.register_outputs({"release": self.release.name})
