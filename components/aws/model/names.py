"""AWS name limits, and names that always fit them whatever the cluster is called.

gpufleet derives its AWS resources' logical names from the cluster name (up to EKS's 100
characters, `cluster.name`), and Pulumi turns a logical name into the physical one: autonamed as
`<logical>-<7 random hex>` (pulumi-terraform-bridge `AutoName`), cut at the bridge's own maximum,
which is not always AWS's (IAM roles and EventBridge rules: 64 like AWS; everything else that
has a `name` input: 255, where AWS takes 64 to 128). A logical name that would not fit gets an
explicit, shortened name instead: its head and a hash of the whole (so two long names stay
distinct), as `namePrefix` where the resource has one (the Terraform provider appends a unique
26-character suffix, so replacements still create before they delete), else as a fixed name.
Names that fit are left alone, so no resource of an existing stack is renamed (renaming
replaces it).

Sources:
- Pulumi autonaming: pulumi/pulumi-aws provider/autonaming.go (every resource with a `name`
  input: `AutoName("name", 255, "-")`) and provider/resource_overrides.go (aws_iam_role and
  aws_cloudwatch_event_rule `AutoName("name", 64, "-")`; aws_cloudwatch_event_target
  `AutoName("targetId", 255, "-")`; aws_sqs_queue `Maxlen: 80, Randlen: 7`);
  pulumi-terraform-bridge `AutoName`: separator plus 7 random characters.
- `namePrefix`: hashicorp/terraform-plugin-sdk helper/id `PrefixedUniqueId`, a 26-character
  suffix (`UniqueIDSuffixLength`), used by terraform-provider-aws `create.Name`.
- AWS limits: IAM API reference, CreateRole (RoleName 1-64), CreateInstanceProfile
  (InstanceProfileName 1-128), PutRolePolicy (PolicyName 1-128), and "IAM and AWS STS quotas"
  (tag keys 128, values 256); Amazon EventBridge API reference, PutRule (Name 1-64) and
  PutTargets (Target Id 1-64); Amazon SQS API reference, CreateQueue (QueueName 1-80); Amazon
  EC2 API reference, CreateLaunchTemplate (LaunchTemplateName 3-128) and "Tag your Amazon EC2
  resources" (keys 128, values 256); Amazon EC2 Auto Scaling API reference,
  CreateAutoScalingGroup (AutoScalingGroupName 1-255) and PutLifecycleHook (LifecycleHookName
  1-255); Amazon EKS API reference, CreateCluster (name 1-100) and CreateNodegroup
  (nodegroupName, 1-63 as the EKS console and the node group label take it); CloudWatch Logs
  API reference, CreateLogGroup (logGroupName 1-512).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

# pulumi-terraform-bridge AutoName: "-" and 7 random characters.
AUTONAME_SUFFIX: Final = len("-0123abc")
# terraform-plugin-sdk helper/id UniqueIDSuffixLength: what `namePrefix` gets appended.
PREFIX_SUFFIX: Final = 26
TAG_KEY_MAX: Final = 128
TAG_VALUE_MAX: Final = 256


@dataclass(frozen=True)
class NameLimit:
    """Where a resource type keeps its AWS name, how long AWS lets it be, and how Pulumi fills
    it when the program leaves it unset."""

    input: str  # the input property holding the name (camelCase)
    limit: int  # AWS's maximum length
    autoname_max: int | None  # Pulumi's own cut for autonamed values; None: never autonamed
    prefix_input: str | None  # the `namePrefix` input, where the resource has one
    source: str


ROLE: Final = "aws:iam/role:Role"
INSTANCE_PROFILE: Final = "aws:iam/instanceProfile:InstanceProfile"
ROLE_POLICY: Final = "aws:iam/rolePolicy:RolePolicy"
EVENT_RULE: Final = "aws:cloudwatch/eventRule:EventRule"
EVENT_TARGET: Final = "aws:cloudwatch/eventTarget:EventTarget"
QUEUE: Final = "aws:sqs/queue:Queue"
LAUNCH_TEMPLATE: Final = "aws:ec2/launchTemplate:LaunchTemplate"
LIFECYCLE_HOOK: Final = "aws:autoscaling/lifecycleHook:LifecycleHook"

_IAM = "IAM API reference"
NAME_LIMITS: Final[Mapping[str, NameLimit]] = MappingProxyType(
    {
        ROLE: NameLimit("name", 64, 64, "namePrefix", f"{_IAM}, CreateRole"),
        INSTANCE_PROFILE: NameLimit(
            "name", 128, 255, "namePrefix", f"{_IAM}, CreateInstanceProfile"
        ),
        ROLE_POLICY: NameLimit("name", 128, 255, "namePrefix", f"{_IAM}, PutRolePolicy"),
        EVENT_RULE: NameLimit(
            "name", 64, 64, "namePrefix", "Amazon EventBridge API reference, PutRule"
        ),
        EVENT_TARGET: NameLimit(
            "targetId", 64, 255, None, "Amazon EventBridge API reference, PutTargets (Id)"
        ),
        QUEUE: NameLimit("name", 80, 80, "namePrefix", "Amazon SQS API reference, CreateQueue"),
        LAUNCH_TEMPLATE: NameLimit(
            "name", 128, 255, "namePrefix", "Amazon EC2 API reference, CreateLaunchTemplate"
        ),
        "aws:autoscaling/group:Group": NameLimit(
            "name",
            255,
            255,
            "namePrefix",
            "Amazon EC2 Auto Scaling API reference, CreateAutoScalingGroup",
        ),
        LIFECYCLE_HOOK: NameLimit(
            "name", 255, 255, None, "Amazon EC2 Auto Scaling API reference, PutLifecycleHook"
        ),
        "aws:eks/cluster:Cluster": NameLimit(
            "name", 100, 255, None, "Amazon EKS API reference, CreateCluster"
        ),
        "aws:eks/nodeGroup:NodeGroup": NameLimit(
            "nodeGroupName",
            63,
            255,
            "nodeGroupNamePrefix",
            "Amazon EKS API reference, CreateNodegroup (63, as the node label takes it)",
        ),
        "aws:cloudwatch/logGroup:LogGroup": NameLimit(
            "name", 512, 255, "namePrefix", "CloudWatch Logs API reference, CreateLogGroup"
        ),
    }
)


def _shortened(logical: str, length: int) -> str:
    """`logical` cut to `length` characters, ending in a hash of all of it."""
    digest = hashlib.sha256(logical.encode()).hexdigest()[:8]
    return f"{logical[: length - len(digest) - 1]}-{digest}"


def name_args(type_token: str, logical: str) -> dict[str, str]:
    """Keyword arguments (Python spelling) that keep the resource's AWS name within its limit:
    none when Pulumi's autoname fits, else a shortened `name_prefix` (or fixed name)."""
    rule = NAME_LIMITS[type_token]
    if rule.autoname_max is not None and len(logical) + AUTONAME_SUFFIX <= rule.limit:
        return {}
    if rule.prefix_input is not None:
        prefix = _shortened(logical, rule.limit - PREFIX_SUFFIX - 1) + "-"
        return {_snake(rule.prefix_input): prefix}
    return {_snake(rule.input): _shortened(logical, rule.limit)}


def physical_length(type_token: str, logical: str, inputs: Mapping[str, object]) -> int | None:
    """How long the resource's AWS name will be, from its planned inputs (None: it has none)."""
    rule = NAME_LIMITS.get(type_token)
    if rule is None:
        return None
    given = inputs.get(rule.input)
    if isinstance(given, str):
        return len(given)
    prefix = inputs.get(rule.prefix_input) if rule.prefix_input else None
    if isinstance(prefix, str):
        return len(prefix) + PREFIX_SUFFIX
    if rule.autoname_max is None:
        return None
    # Past the bridge's own maximum the autoname is an error at `pulumi up`, not a cut.
    return len(logical) + AUTONAME_SUFFIX


def _snake(camel: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
