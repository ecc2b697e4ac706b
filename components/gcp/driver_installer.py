"""Google's driver installer DaemonSet, vendored and pinned by commit, for the GKE pools the GPU
Operator serves."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.gcp.model import driver_installer


@dataclass(frozen=True)
class GkeDriverInstallerArgs:
    k8s_provider: k8s.Provider
    # The stack's GPU pools, the only nodes the DaemonSet may land on.
    pool_names: tuple[str, ...] = ()
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class GkeDriverInstaller(pulumi.ComponentResource):
    manifest: k8s.yaml.v2.ConfigGroup

    def __init__(
        self, name: str, args: GkeDriverInstallerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:gcp:DriverInstaller", name, None, opts)
        # The manifest text is part of the program (and of every plan and preview): nothing
        # is downloaded, and a review sees exactly what is applied.
        self.manifest = k8s.yaml.v2.ConfigGroup(
            f"{name}-daemonset",
            yaml=driver_installer.manifest_yaml(args.pool_names),
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.k8s_provider, depends_on=list(args.depends_on)
            ),
        )
        self.register_outputs({"source": driver_installer.SOURCE})
