"""EKS cluster checks: zones, the VPC and service ranges, given subnets, the API endpoint's
ranges, admin principals and the cluster autoscaler's expander."""

from __future__ import annotations

import ipaddress
import re

from components.aws.model import config as aws_config
from components.model.networks import cidr_list_problems
from components.model.problems import Problem
from components.model.schema import ClusterConfig

# Expanders cluster-autoscaler knows (FAQ "What are Expanders?").
AUTOSCALER_EXPANDERS = ("random", "most-pods", "least-waste", "price", "priority", "least-nodes")
IAM_PRINCIPAL_ARN = re.compile(
    r"arn:aws(-cn|-us-gov)?:iam::[0-9]{12}:(role|user)/[\w+=,.@/-]{1,512}"
)


def cluster_problems(cluster: ClusterConfig, adopted: bool) -> list[Problem]:
    """Zones, network ranges, subnets, admins and the autoscaler expander of an EKS cluster."""
    aws = aws_config.cluster_options(cluster)
    problems: list[Problem] = []
    if not cluster.zones:
        problems.append(
            Problem(
                "cluster.zones",
                "is required on aws (the VPC spans these zones), e.g. [us-east-1a, us-east-1b]",
                has_value=False,
            )
        )
    if aws.private_subnet_ids is not None and not aws.private_subnet_ids:
        problems.append(Problem("cluster.aws.privateSubnetIds", "must not be empty", []))
    ranges: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for key, cidr, max_prefix in (
        ("vpcCidr", aws.vpc_cidr, 20),
        ("serviceCidr", aws.service_cidr, 24),
    ):
        try:
            network = ipaddress.ip_network(cidr)
        except ValueError:
            problems.append(
                Problem(f"cluster.aws.{key}", "must be an IPv4 CIDR such as 10.0.0.0/16", cidr)
            )
            continue
        if network.version != 4 or not 12 <= network.prefixlen <= max_prefix:
            problems.append(
                Problem(
                    f"cluster.aws.{key}",
                    f"must be an IPv4 CIDR from /12 to /{max_prefix}",
                    cidr,
                )
            )
        else:
            ranges.append(network)
    if len(ranges) == 2 and ranges[0].overlaps(ranges[1]):
        problems.append(
            Problem(
                "cluster.aws.serviceCidr",
                f"must not overlap vpcCidr {aws.vpc_cidr}",
                aws.service_cidr,
            )
        )
    if cluster.zones is not None and len(cluster.zones) < 2:
        problems.append(
            Problem("cluster.zones", "EKS needs subnets in at least two zones", list(cluster.zones))
        )
    if aws.public_subnet_ids is not None and aws.private_subnet_ids is None:
        problems.append(
            Problem(
                "cluster.aws.publicSubnetIds",
                "needs privateSubnetIds too (nodes run in private subnets)",
                aws.public_subnet_ids,
            )
        )
    if aws.public_endpoint_cidrs is None and not adopted:
        problems.append(
            Problem(
                "cluster.aws.publicEndpointCidrs",
                "is required on aws: the ranges that may reach the API server (where pulumi "
                "and your users run), [] for a private endpoint only, or [0.0.0.0/0] to open "
                "it to the internet on purpose",
                has_value=False,
            )
        )
    elif aws.public_endpoint_cidrs is not None:
        problems += cidr_list_problems("cluster.aws.publicEndpointCidrs", aws.public_endpoint_cidrs)
    slugs: dict[str, int] = {}
    for index, arn in enumerate(aws.admin_principal_arns):
        where = f"cluster.aws.adminPrincipalArns[{index}]"
        if not IAM_PRINCIPAL_ARN.fullmatch(arn):
            problems.append(
                Problem(
                    where,
                    "must be an IAM role or user ARN (arn:aws:iam::<account>:role/<name>)",
                    arn,
                )
            )
        elif aws_config.principal_slug(arn) in slugs:
            problems.append(
                Problem(
                    where,
                    f"names the same role or user as adminPrincipalArns"
                    f"[{slugs[aws_config.principal_slug(arn)]}]",
                    arn,
                )
            )
        slugs.setdefault(aws_config.principal_slug(arn), index)
    expanders = [e.strip() for e in aws.autoscaler_expander.split(",")]
    unknown = [e for e in expanders if e not in AUTOSCALER_EXPANDERS]
    if unknown or len(set(expanders)) != len(expanders):
        problems.append(
            Problem(
                "cluster.aws.autoscalerExpander",
                f"comma-separated, no repeats, from: {', '.join(AUTOSCALER_EXPANDERS)}",
                aws.autoscaler_expander,
            )
        )
    return problems
