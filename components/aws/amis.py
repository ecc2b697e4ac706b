"""The pinned release of a managed node group's image, looked up while the program plans
(facts and sources: `components.aws.model.amis`)."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws

from components.aws.model import amis


def managed_release_version(
    family: amis.AmiFamily,
    kubernetes_version: str,
    invoke: pulumi.InvokeOutputOptions,
    variant: str = "nvidia",
) -> pulumi.Output[str]:
    """`releaseVersion` of the pinned image for a managed node group of the cluster's minor."""
    if family == "bottlerocket":
        parameter = aws.ssm.get_parameter_output(
            name=amis.bottlerocket_version_parameter(kubernetes_version), opts=invoke
        )
        # A version string is no secret, and a preview must show when it changes.
        return parameter.insecure_value
    image = aws.ec2.get_ami_output(
        owners=["amazon"],
        filters=[
            aws.ec2.GetAmiFilterArgs(
                name="name", values=[amis.al2023_ami_name(kubernetes_version, variant)]
            )
        ],
        opts=invoke,
    )
    return image.description.apply(amis.al2023_release_version)
