"""A new EKS stack from a few choices (`python -m components new NAME --cloud aws`)."""

from __future__ import annotations

from typing import Any

from components.aws.model.catalog import CATALOG
from components.aws.model.config import AwsClusterOptions
from components.aws.model.kinds import provisioner_kinds
from components.model.managed_cloud import ManagedCloud
from components.model.starter import (
    DEFAULT_KUBERNETES_VERSION,
    PLACEHOLDER_CIDR,
    Starter,
    StarterChoices,
    StarterError,
    gpu_pool,
    stack_config,
    unused,
)

READS = frozenset(
    {
        "region",
        "gpu",
        "spot",
        "max_nodes",
        "zones",
        "kubernetes_version",
        "existing_cluster",
        "provisioner",
        "api_cidrs",
    }
)
DEFAULT_REGION = "us-east-1"
DEFAULT_GPU = "l4"
# The provisioner a stack gets when it names none (cluster.aws.provisioner's default).
DEFAULT_PROVISIONER = AwsClusterOptions.model_fields["provisioner"].default


def starter(choices: StarterChoices, cloud: ManagedCloud) -> Starter:
    problems = unused(choices, READS, "aws")
    region = choices.region or DEFAULT_REGION
    gpu = choices.gpu or DEFAULT_GPU
    machine = CATALOG.defaults.get(gpu)
    notes = []
    if machine is None:
        problems.append(
            f"--gpu: {gpu} is not offered on aws; offered: {', '.join(CATALOG.models())}"
        )
    if choices.existing_cluster and choices.api_cidrs:
        problems.append(
            "--api-cidr: who reaches an existing cluster's API server is its owner's setting"
        )
    if problems:
        raise StarterError(problems)
    zones = list(choices.zones) or [f"{region}a", f"{region}b"]
    if not choices.zones:
        notes.append(
            f"zones {', '.join(zones)}: check that {machine} is offered there "
            f"(`aws ec2 describe-instance-type-offerings --location-type availability-zone "
            f"--filters Name=instance-type,Values={machine} --region {region}`)"
        )
    aws: dict[str, Any] = {}
    provisioner = choices.provisioner or DEFAULT_PROVISIONER
    if provisioner != DEFAULT_PROVISIONER:
        aws["provisioner"] = choices.provisioner
    cluster: dict[str, Any] = {
        "name": choices.existing_cluster or choices.name,
        "kubernetesVersion": choices.kubernetes_version or DEFAULT_KUBERNETES_VERSION,
        "region": region,
        "zones": zones,
    }
    if choices.existing_cluster:
        if aws:
            cluster["aws"] = aws
        cluster["existing"] = {}
    else:
        # The system nodes the provisioner's controller needs (Karpenter: two replicas).
        system_min = provisioner_kinds(provisioner)[0].system_nodes
        cluster["systemPool"] = {
            "machineType": cloud.default_system_machine,
            "minNodes": system_min,
            "maxNodes": 3,
        }
        aws["publicEndpointCidrs"] = list(choices.api_cidrs) or [PLACEHOLDER_CIDR]
        cluster["aws"] = aws
    pool = gpu_pool(choices, gpu, cloud.pool_name_rule.accepts, machineType=machine)
    return Starter(stack_config("aws", cluster, [pool]), tuple(notes))
