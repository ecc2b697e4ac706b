"""GPUDirect's networks and node software for a GKE stack's fabric pools
(components/gcp/model/fabric.py says what each mode needs and why)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.gcp.model import gpudirect_installer
from components.gcp.model.fabric import FabricGroup

# The multi-network objects' API (cluster-toolkit gke-cluster templates; GKE docs
# setup-multinetwork-support-for-pods).
NETWORK_API = "networking.gke.io/v1"
# GKE's TCPX/TCPXO guide opens each GPU VPC to its own subnet (all TCP, UDP and ICMP); an RDMA
# VPC has an implicit allow rule and takes no firewall rules (rdma-network-profiles).
FIREWALL_SOURCE = (
    "https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx"
)


@dataclass(frozen=True)
class GkeGpuDirectArgs:
    groups: Sequence[FabricGroup]
    project: str
    provider: gcp.Provider | None
    k8s_provider: k8s.Provider


class GkeGpuDirect(pulumi.ComponentResource):
    # What a fabric pool waits for: its subnets exist before GKE attaches nodes to them.
    subnets: list[pulumi.Resource]

    def __init__(
        self, name: str, args: GkeGpuDirectArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("gpufleet:gcp:GpuDirect", name, None, opts)
        cloud = pulumi.ResourceOptions(parent=self, provider=args.provider)
        kube = pulumi.ResourceOptions(parent=self, provider=args.k8s_provider)
        self.subnets = []
        for group in args.groups:
            self._networks(group, args.project, cloud)
            self._network_objects(group, kube)
        for manifest in gpudirect_installer.manifests(args.groups):
            k8s.yaml.v2.ConfigGroup(
                f"{name}-{manifest['metadata']['name']}",
                objs=[manifest],
                opts=pulumi.ResourceOptions.merge(
                    kube, pulumi.ResourceOptions(depends_on=list(self.subnets))
                ),
            )
        self.register_outputs({"pools": [p for g in args.groups for p in g.pools]})

    def _networks(self, group: FabricGroup, project: str, opts: pulumi.ResourceOptions) -> None:
        mode = group.mode
        vpcs: dict[str, gcp.compute.Network] = {}
        for network in group.networks:
            rdma = network.device_mode == "RDMA"
            if network.vpc not in vpcs:
                vpcs[network.vpc] = gcp.compute.Network(
                    network.vpc,
                    name=network.vpc,
                    auto_create_subnetworks=False,
                    mtu=mode.mtu,
                    network_profile=f"projects/{project}/global/networkProfiles/"
                    f"{group.zone}-vpc-roce"
                    if rdma
                    else None,
                    opts=opts,
                )
                if not rdma:
                    gcp.compute.Firewall(
                        f"{network.vpc}-internal",
                        name=f"{network.vpc}-internal",
                        network=vpcs[network.vpc].id,
                        direction="INGRESS",
                        source_ranges=[network.cidr],
                        allows=[
                            gcp.compute.FirewallAllowArgs(protocol=protocol)
                            for protocol in ("tcp", "udp", "icmp")
                        ],
                        opts=opts,
                    )
            self.subnets.append(
                gcp.compute.Subnetwork(
                    network.subnet,
                    name=network.subnet,
                    network=vpcs[network.vpc].id,
                    region=group.region,
                    ip_cidr_range=network.cidr,
                    opts=opts,
                )
            )

    def _network_objects(self, group: FabricGroup, opts: pulumi.ResourceOptions) -> None:
        """A GKENetworkParamSet and a Network per network pods join (cluster-toolkit
        gke-network-paramset.yaml.tftpl and network-object.yaml.tftpl)."""
        for network in group.networks:
            if network.k8s_network is None:
                continue
            params = k8s.apiextensions.CustomResource(
                f"{network.k8s_network}-params",
                api_version=NETWORK_API,
                kind="GKENetworkParamSet",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=network.k8s_network),
                spec={
                    "vpc": network.vpc,
                    "vpcSubnet": network.subnet,
                    "deviceMode": network.device_mode,
                },
                opts=pulumi.ResourceOptions.merge(
                    opts, pulumi.ResourceOptions(depends_on=list(self.subnets))
                ),
            )
            k8s.apiextensions.CustomResource(
                f"{network.k8s_network}-network",
                api_version=NETWORK_API,
                kind="Network",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=network.k8s_network),
                spec={
                    "type": "Device",
                    "parametersRef": {
                        "group": "networking.gke.io",
                        "kind": "GKENetworkParamSet",
                        "name": network.k8s_network,
                    },
                },
                opts=pulumi.ResourceOptions.merge(
                    opts, pulumi.ResourceOptions(depends_on=[params])
                ),
            )
