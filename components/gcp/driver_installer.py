"""Google's driver installer DaemonSet, pinned by commit, for GKE pools the GPU Operator serves."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.gcp.model import driver_installer


@dataclass(frozen=True)
class GkeDriverInstallerArgs:
    k8s_provider: k8s.Provider
    depends_on: list[pulumi.Resource] = field(default_factory=list)


class GkeDriverInstaller(pulumi.ComponentResource):
    manifest: k8s.yaml.v2.ConfigFile

    def __init__(
        self, name: str, args: GkeDriverInstallerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:gcp:DriverInstaller", name, None, opts)
        # yaml/v2 expands the manifest in the provider (at preview and up), so the program
        # never downloads it itself and previews show the DaemonSet.
        self.manifest = k8s.yaml.v2.ConfigFile(
            f"{name}-daemonset",
            file=driver_installer.MANIFEST_URL,
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.k8s_provider, depends_on=list(args.depends_on)
            ),
        )
        self.register_outputs({"manifest": driver_installer.MANIFEST_URL})
