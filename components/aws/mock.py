"""AWS outputs the program reads: EKS endpoint, CA, OIDC issuer, cluster security group, ARNs,
launch template versions, the AMI from SSM, the partition and subnet look-ups, in the stack's
region (`World.region`)."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from components.mock_world import CloudMock, NotFound, World

ACCOUNT = "123456789012"
# The region when the world names none (a stack always does: cluster.region is required).
REGION = "us-east-1"
FAKE_CA = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nMOCK-EKS\n-----END CERTIFICATE-----\n"
).decode()
# A rotated control plane (World.endpoint_rotated): another endpoint host and CA.
ROTATED = (
    (".gr7.", ".yl4."),
    (
        FAKE_CA,
        base64.b64encode(
            b"-----BEGIN CERTIFICATE-----\nROTATED\n-----END CERTIFICATE-----\n"
        ).decode(),
    ),
)


def fake_ami(parameter: object) -> str:
    """A stable AMI id per SSM parameter, so a pinned release bump shows as a new image id."""
    digest = hashlib.sha256(str(parameter).encode()).hexdigest()
    return f"ami-0{digest[:16]}"


def region(world: World) -> str:
    return world.region or REGION


OIDC_ID = "0123456789ABCDEF0123456789ABCDEF"
CLUSTER_SECURITY_GROUP = "sg-0c1a5e7e4c1a5e7e4"
AUTONAME_SUFFIX = "-0a1b2c3"
# What the Terraform provider appends to a `namePrefix` (26 characters, unique per resource).
PREFIX_SUFFIX = "20261125000000000000000001"


def physical_name(name: str, inputs: Mapping[str, Any]) -> str:
    """A resource's AWS name as Pulumi and the provider make it: given, prefixed or autonamed."""
    given = inputs.get("name")
    if given:
        return str(given)
    prefix = inputs.get("namePrefix")
    return f"{prefix}{PREFIX_SUFFIX}" if prefix else f"{name}{AUTONAME_SUFFIX}"


def _cluster(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    cluster, where = inputs.get("name", name), region(world)
    return {
        "arn": f"arn:aws:eks:{where}:{ACCOUNT}:cluster/{cluster}",
        "endpoint": f"https://{OIDC_ID}.gr7.{where}.eks.amazonaws.com",
        "certificateAuthority": {"data": FAKE_CA},
        "identities": [
            {"oidcs": [{"issuer": f"https://oidc.eks.{where}.amazonaws.com/id/{OIDC_ID}"}]}
        ],
        "vpcConfig": {
            **inputs.get("vpcConfig", {}),
            "clusterSecurityGroupId": CLUSTER_SECURITY_GROUP,
            "vpcId": f"vpc-{cluster}",  # the VPC of the subnets it was given
        },
        "status": "ACTIVE",
    }


def _named(kind: str) -> Any:
    """IAM things: autonamed like Pulumi does (name + suffix) when no name is given."""

    def fake(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
        resolved = physical_name(name, inputs)
        return {"name": resolved, "arn": f"arn:aws:iam::{ACCOUNT}:{kind}/{resolved}"}

    return fake


def _oidc_provider(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    host = str(inputs.get("url", "")).removeprefix("https://")
    return {"arn": f"arn:aws:iam::{ACCOUNT}:oidc-provider/{host}"}


def _launch_template(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    """EC2 makes a new version of a template whenever its content changes, and what references
    `latestVersion` (a managed node group, a group's mixed instances policy) is updated to it.
    The mock cannot count versions across plans, so it derives one from the content: any edit
    of the template shows up as a new version where it is referenced, as it would for real."""
    digest = hashlib.sha256(name.encode()).hexdigest()[:17]
    content = json.dumps(inputs, sort_keys=True, default=str).encode()
    version = 1 + int(hashlib.sha256(content).hexdigest()[:8], 16) % 100_000
    return {"__id": f"lt-{digest}", "latestVersion": version, "defaultVersion": version}


def _queue(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    """SQS: autonamed, its URL and ARN built from the name as AWS builds them."""
    queue = physical_name(name, inputs)
    return {
        "name": queue,
        "url": f"https://sqs.{region(world)}.amazonaws.com/{ACCOUNT}/{queue}",
        "arn": f"arn:aws:sqs:{region(world)}:{ACCOUNT}:{queue}",
    }


def _event_rule(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    """EventBridge: a rule on the default bus, its ARN built from its name as AWS builds it."""
    rule = physical_name(name, inputs)
    return {"name": rule, "arn": f"arn:aws:events:{region(world)}:{ACCOUNT}:rule/{rule}"}


def _with_id(prefix: str) -> Any:
    def fake(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
        return {"__id": f"{prefix}-{name}"}

    return fake


def _placement_group(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    """EC2 placement groups: autonamed, known by their name."""
    group = physical_name(name, inputs)
    return {"__id": group, "name": group}


def _node_group(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    group = inputs.get("nodeGroupName") or f"{inputs.get('nodeGroupNamePrefix', name)}20260101"
    # EKS names the group's auto scaling group eks-<node group>-<uuid>.
    return {
        "nodeGroupName": group,
        "status": "ACTIVE",
        "resources": [{"autoscalingGroups": [{"name": f"eks-{group}-{_uuid(group)}"}]}],
    }


def _uuid(text: str) -> str:
    digest = hashlib.sha256(text.encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _auto_scaling_group(name: str, inputs: Mapping[str, Any], world: World) -> dict[str, Any]:
    """An auto scaling group's ARN as EC2 Auto Scaling makes it (Service Authorization
    Reference, resource type autoScalingGroup): about 116 characters before the name, so what
    is sized from ARNs (an IAM policy listing them) is sized as for real."""
    group = physical_name(name, inputs)
    return {
        "name": group,
        "arn": f"arn:aws:autoscaling:{region(world)}:{ACCOUNT}:autoScalingGroup:"
        f"{_uuid(group)}:autoScalingGroupName/{group}",
    }


def _parameter_value(name: object) -> str:
    """An AMI id, or for a Bottlerocket release's image_version its `<version>-<build>`."""
    text = str(name)
    if text.endswith("/image_version"):
        version = text.rsplit("/", 2)[-2]
        return f"{version}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return fake_ami(text)


def _ami(args: Mapping[str, Any]) -> dict[str, Any]:
    """An EKS AMI found by name, described as amazon-eks-ami describes its AMIs (the patch of
    the minor in its name: the one an adopted cluster's world runs, x.y.3)."""
    (name,) = [v for f in args.get("filters", []) if f.get("name") == "name" for v in f["values"]]
    minor = name.rsplit("-", 2)[-2]
    return {
        "id": fake_ami(name),
        "imageId": fake_ami(name),
        "name": name,
        "description": (
            "EKS-optimized Kubernetes node based on Amazon Linux 2023, "
            f"(k8s: {minor}.3, containerd: 2.1.*)"
        ),
        "owners": list(args.get("owners", [])),
        "filters": list(args.get("filters", [])),
    }


# An adopted cluster's VPC: one private subnet per zone of the region (tagged internal-elb).
ADOPTED_VPC = "vpc-0adc0ffee0adc0ffe"


def private_subnets(world: World) -> dict[str, str]:
    """Subnet id -> zone: the adopted VPC's private subnet in each zone of the stack's region."""
    return {
        f"subnet-0{hashlib.sha256(zone.encode()).hexdigest()[:16]}": zone
        for zone in (f"{region(world)}{letter}" for letter in "abcdef")
    }


def _subnets(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    """Every subnet id asked for (the mock cannot know their zones), or the private subnets of
    the adopted cluster's VPC."""
    ids: list[str] = []
    for item in args.get("filters", []):
        if item.get("name") == "subnet-id":
            ids += list(item.get("values", []))
        if item.get("name") == "vpc-id" and ADOPTED_VPC in item.get("values", []):
            ids += sorted(private_subnets(world))
    return {"ids": ids, "id": region(world)}


def _subnet(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    subnet_id = str(args.get("id"))
    zone = private_subnets(world).get(subnet_id)
    if zone is None:
        raise NotFound(f"InvalidSubnetID.NotFound: The subnet ID '{subnet_id}' does not exist")
    return {"id": subnet_id, "availabilityZone": zone, "vpcId": ADOPTED_VPC}


def _get_cluster(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    """An EKS cluster as `aws.eks.get_cluster` returns it (list-valued blocks)."""
    if not world.exists:
        raise NotFound(f"cluster {args.get('name') or args.get('resourceName')} not found")
    cluster = _cluster(str(args.get("name")), {"name": args.get("name")}, world)
    return {
        **cluster,
        "id": args.get("name"),
        "name": args.get("name"),
        "version": ".".join(world.kubernetes_version.split(".")[:2]),
        "platformVersion": "eks.12",
        "certificateAuthorities": [cluster["certificateAuthority"]],
        "vpcConfig": {
            "clusterSecurityGroupId": CLUSTER_SECURITY_GROUP,
            "vpcId": ADOPTED_VPC,
            "subnetIds": sorted(private_subnets(world))[:3],
            "endpointPrivateAccess": True,
            "endpointPublicAccess": False,
            "securityGroupIds": [],
            "publicAccessCidrs": [],
        },
        "accessConfigs": [{"authenticationMode": world.authentication_mode}],
        "kubernetesNetworkConfigs": [{"ipFamily": "ipv4", "serviceIpv4Cidr": "172.20.0.0/16"}],
        "computeConfigs": [{"enabled": world.auto_mode, "nodePools": []}],
    }


def _cluster_name(world: World) -> str | None:
    cluster = world.stack.get("cluster")
    return cluster.get("name") if isinstance(cluster, Mapping) else None


def _denied(world: World, action: str) -> None:
    if world.eks_reads_denied:
        raise NotFound(
            f"AccessDeniedException: User: arn:aws:iam::{ACCOUNT}:user/gpufleet-ci is not "
            f"authorized to perform: {action}"
        )


def _get_clusters(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    """The region's EKS clusters: the stack's, once it exists."""
    _denied(world, "eks:ListClusters")
    name = _cluster_name(world)
    names = [name] if world.exists and name else []
    return {"names": names, "id": region(world)}


def _get_node_groups(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    cluster = args.get("clusterName")
    _denied(world, "eks:ListNodegroups")
    if not world.exists or cluster != _cluster_name(world):
        raise NotFound(f"ResourceNotFoundException: No cluster found for name: {cluster}.")
    return {"clusterName": cluster, "names": sorted(world.eks_node_groups), "id": cluster}


def _get_node_group(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    """A managed node group as `aws.eks.get_node_group` returns it (list-valued blocks)."""
    cluster, group = args.get("clusterName"), str(args.get("nodeGroupName"))
    found = world.eks_node_groups.get(group) if world.exists else None
    if found is None or cluster != _cluster_name(world):
        raise NotFound(f"ResourceNotFoundException: No node group found for name: {group}.")
    sizes = ("minSize", "maxSize", "desiredSize")
    described = all(key in found for key in sizes)
    return {
        "clusterName": cluster,
        "nodeGroupName": group,
        "id": f"{cluster}:{group}",
        # A group described without sizes is one that failed to create: EKS gives it none.
        "status": found.get("status", "ACTIVE" if described else "CREATE_FAILED"),
        "labels": dict(found.get("labels", {})),
        "tags": dict(found.get("tags", {})),
        "scalingConfigs": [{key: found[key] for key in sizes}] if described else [],
    }


def _get_addon(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    """An EKS add-on as `aws.eks.get_addon` returns it: only vpc-cni is read (World.vpc_cni)."""
    cluster, addon = args.get("clusterName"), args.get("addonName")
    if world.vpc_cni == "denied":
        raise NotFound(
            f"AccessDeniedException: User: arn:aws:iam::{ACCOUNT}:user/gpufleet-ci is not "
            "authorized to perform: eks:DescribeAddon"
        )
    if not world.exists or addon != "vpc-cni" or world.vpc_cni == "self-managed":
        raise NotFound(f"ResourceNotFoundException: No addon: {addon} found in cluster: {cluster}")
    role = f"arn:aws:iam::{ACCOUNT}:role/{cluster}-vpc-cni"
    association = f"arn:aws:eks:{region(world)}:{ACCOUNT}:podidentityassociation/{cluster}/a-1"
    return {
        "addonName": addon,
        "clusterName": cluster,
        "id": f"{cluster}:{addon}",
        "addonVersion": f"v{world.kubernetes_version}-eksbuild.1",
        "arn": f"arn:aws:eks:{region(world)}:{ACCOUNT}:addon/{cluster}/{addon}/0",
        "configurationValues": "",
        "createdAt": "2026-01-01T00:00:00Z",
        "modifiedAt": "2026-01-01T00:00:00Z",
        "podIdentityAssociations": [association] if world.vpc_cni == "pod-identity" else [],
        "serviceAccountRoleArn": role if world.vpc_cni == "irsa" else "",
        "tags": {},
    }


def _get_oidc_provider(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    if not world.oidc_provider:
        raise NotFound(f"no IAM OIDC provider for {args.get('url')}")
    return {
        **_oidc_provider("oidc", args, world),
        "url": args.get("url"),
        "clientIdLists": ["sts"],
    }


RESOURCES: dict[str, Any] = {
    "aws:eks/cluster:Cluster": _cluster,
    "aws:eks/nodeGroup:NodeGroup": _node_group,
    "aws:autoscaling/group:Group": _auto_scaling_group,
    "aws:iam/role:Role": _named("role"),
    "aws:iam/instanceProfile:InstanceProfile": _named("instance-profile"),
    "aws:iam/openIdConnectProvider:OpenIdConnectProvider": _oidc_provider,
    "aws:ec2/launchTemplate:LaunchTemplate": _launch_template,
    "aws:sqs/queue:Queue": _queue,
    "aws:cloudwatch/eventRule:EventRule": _event_rule,
    "aws:ec2/vpc:Vpc": _with_id("vpc"),
    "aws:ec2/subnet:Subnet": _with_id("subnet"),
    "aws:ec2/natGateway:NatGateway": _with_id("nat"),
    "aws:ec2/eip:Eip": _with_id("eipalloc"),
    "aws:ec2/internetGateway:InternetGateway": _with_id("igw"),
    "aws:ec2/routeTable:RouteTable": _with_id("rtb"),
    "aws:ec2/placementGroup:PlacementGroup": _placement_group,
    "aws:ec2/securityGroup:SecurityGroup": _with_id("sg"),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": _with_id("sgr"),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": _with_id("sgr"),
}
CALLS: dict[str, Any] = {
    # EKS's default add-on version for a minor: one build per add-on and minor.
    "aws:eks/getAddonVersion:getAddonVersion": lambda args: {
        "addonName": args.get("addonName"),
        "kubernetesVersion": args.get("kubernetesVersion"),
        "mostRecent": bool(args.get("mostRecent")),
        "version": f"v{args.get('kubernetesVersion')}.0-eksbuild.1",
        "id": args.get("addonName"),
    },
    "aws:ec2/getAmi:getAmi": _ami,
    "aws:index/getPartition:getPartition": lambda args: {
        "partition": "aws",
        "dnsSuffix": "amazonaws.com",
        "reverseDnsPrefix": "com.amazonaws",
        "id": "aws",
    },
    "aws:index/getCallerIdentity:getCallerIdentity": lambda args: {
        "accountId": ACCOUNT,
        "arn": f"arn:aws:iam::{ACCOUNT}:user/gpufleet-ci",
        "userId": "AIDAGPUFLEETCI",
        "id": ACCOUNT,
    },
}


def _ssm_parameter(args: Mapping[str, Any], world: World) -> dict[str, Any]:
    return {
        "name": args.get("name"),
        "value": _parameter_value(args.get("name")),
        "insecureValue": _parameter_value(args.get("name")),
        "type": "String",
        "version": 1,
        "arn": f"arn:aws:ssm:{region(world)}::parameter{args.get('name')}",
        "id": args.get("name"),
        "withDecryption": False,
    }


# What the mock makes up that lands in a resource's inputs, by type and input path (a regular
# expression), with what the real value will be: `diff` marks such values as the mock's, so a
# made-up number is not read as the cloud's (the change itself is real: a new minor, an edited
# template).
_TEMPLATE_VERSION = (
    "the numbers are the mock's: EC2 gives the edited launch template its next version at "
    "`pulumi up`"
)
MOCKED_INPUTS: dict[str, dict[str, str]] = {
    "aws:eks/addon:Addon": {
        r"addonVersion": "the versions are the mock's: EKS's default build of the add-on for the "
        "minor is read at `pulumi up` (aws eks describe-addon-versions)",
    },
    "aws:ec2/launchTemplate:LaunchTemplate": {
        r"imageId": "the AMI ids are the mock's: the pinned SSM parameter or image name resolves "
        "to your region's AMI at `pulumi up`",
    },
    "aws:eks/nodeGroup:NodeGroup": {
        r"launchTemplate\.version": _TEMPLATE_VERSION,
        r"releaseVersion": "the Kubernetes patch (x.y.3) and a Bottlerocket build suffix are the "
        "mock's: they are the pinned image's, read at `pulumi up`",
    },
    "aws:autoscaling/group:Group": {
        r"(mixedInstancesPolicy\.launchTemplate\.launchTemplateSpecification|launchTemplate)"
        r"\.version": _TEMPLATE_VERSION,
    },
}
LOOKUPS: dict[str, Any] = {
    "aws:ssm/getParameter:getParameter": _ssm_parameter,
    "aws:ec2/getSubnets:getSubnets": _subnets,
    "aws:ec2/getSubnet:getSubnet": _subnet,
    "aws:eks/getCluster:getCluster": _get_cluster,
    "aws:eks/getClusters:getClusters": _get_clusters,
    "aws:eks/getNodeGroups:getNodeGroups": _get_node_groups,
    "aws:eks/getNodeGroup:getNodeGroup": _get_node_group,
    "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider": _get_oidc_provider,
    "aws:eks/getAddon:getAddon": _get_addon,
}


def _arn(type_: str, name: str, state: Mapping[str, Any], world: World) -> dict[str, Any]:
    """Every AWS resource has an ARN: one of its service, region and account unless its fake
    gives it one."""
    if not type_.startswith("aws:") or "arn" in state:
        return {}
    service = type_.split(":")[1].split("/")[0]
    return {"arn": f"arn:aws:{service}:{region(world)}:{ACCOUNT}:{name}"}


MOCK = CloudMock(
    resources=RESOURCES,
    calls=CALLS,
    lookups=LOOKUPS,
    rotated=ROTATED,
    mocked_inputs=MOCKED_INPUTS,
    finish=_arn,
)
