"""Launch template pieces every node of the cluster shares: IMDSv2, encrypted gp3 disks, tags.

Used by the self-managed GPU groups (full templates with AMI and user data) and by the managed
node groups (templates without AMI: EKS supplies it from `ami_type` and merges its own bootstrap).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi_aws as aws

from components.aws.model.image_start import DATA_VOLUME_DEVICE, EksImageStart
from components.aws.user_data import AmiFamily

# Pods must not borrow the node's role: IMDSv2 only, one hop (pods get AWS access through IRSA).
METADATA_OPTIONS = aws.ec2.LaunchTemplateMetadataOptionsArgs(
    http_endpoint="enabled",
    http_tokens="required",
    http_put_response_hop_limit=1,
    instance_metadata_tags="disabled",
)


def _volume(
    device: str, size_gib: int | None, snapshot_id: str | None = None
) -> aws.ec2.LaunchTemplateBlockDeviceMappingArgs:
    return aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
        device_name=device,
        ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
            snapshot_id=snapshot_id,
            volume_size=size_gib,
            volume_type="gp3",
            # Strings in pulumi-aws (FACTS: EBS fields of launch templates).
            encrypted="true",
            delete_on_termination="true",
        ),
    )


def block_devices(
    family: AmiFamily, disk_size_gb: int, image_start: EksImageStart | None = None
) -> list[aws.ec2.LaunchTemplateBlockDeviceMappingArgs]:
    """The disk that holds container images, sized for GPU images, and every other disk encrypted.

    AL2023 keeps images on its root volume; Bottlerocket on a second data volume (`/dev/xvdb`)
    next to a small OS volume whose size comes from the AMI. The data volume may start from a
    snapshot with the pool's images preloaded (gpuPools[].aws.dataVolumeSnapshot).
    """
    if family == "bottlerocket":
        snapshot = image_start.data_volume_snapshot if image_start else None
        return [
            _volume("/dev/xvda", None),
            _volume(DATA_VOLUME_DEVICE, disk_size_gb, snapshot),
        ]
    return [_volume("/dev/xvda", disk_size_gb)]


def tag_specifications(
    tags: Mapping[str, object],
) -> list[aws.ec2.LaunchTemplateTagSpecificationArgs]:
    """Tags for what instances create (provider default tags do not reach them)."""
    return [
        aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=dict(tags))
        for kind in ("instance", "volume", "network-interface")
    ]


def reservation_args(
    reservation_id: str | None, capacity_block: bool, instance_types: Sequence[str] = ()
) -> dict[str, Any]:
    """Launch template arguments that put every instance into one reservation: its target
    (an instance launched so goes into it or fails: no fallback), and for a Capacity Block the
    `capacity-block` market type and the block's instance type (EKS user guide
    capacity-blocks-mng.adoc and capacity-blocks.adoc, LaunchTemplateData)."""
    if reservation_id is None:
        return {}
    found: dict[str, Any] = {
        "capacity_reservation_specification": (
            aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
                capacity_reservation_target=(
                    aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                        capacity_reservation_id=reservation_id
                    )
                )
            )
        )
    }
    if capacity_block:
        found["instance_market_options"] = aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(
            market_type="capacity-block"
        )
    if len(instance_types) == 1:
        found["instance_type"] = instance_types[0]
    return found
