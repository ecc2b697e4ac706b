"""The tags through which the cluster autoscaler finds a node group and sees it at zero nodes.

Discovery: `k8s.io/cluster-autoscaler/enabled=true` and `k8s.io/cluster-autoscaler/<cluster>=owned`
(the same pair the autoscaler's IAM policy requires before it may resize a group). Scale from
zero: one `node-template` tag per label and taint the nodes register, plus the GPU count and the
ephemeral storage, so the autoscaler can simulate a node it has never seen (kubernetes/autoscaler
`cloudprovider/aws/README.md`, "Auto-Discovery Setup" and "Scaling a node group to 0").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from components.model.labels import GPU_RESOURCE
from components.model.pool_spec import Taint

PREFIX = "k8s.io/cluster-autoscaler"
ENABLED_TAG = f"{PREFIX}/enabled"
TEMPLATE_PREFIX = f"{PREFIX}/node-template"


# Which gpufleet cluster a resource belongs to (a default tag; the node termination handler's
# permissions are conditioned on it).
CLUSTER_TAG = "gpufleet-cluster"


def default_tags(cluster_name: object) -> dict[str, object]:
    """Tags on every resource of the stack (the AWS provider's default tags); groups and the
    instances they launch must carry them explicitly (review eks.md S3-2)."""
    return {"managed-by": "gpufleet", CLUSTER_TAG: cluster_name}


def owner_tag(cluster_name: str) -> str:
    return f"{PREFIX}/{cluster_name}"


# On a cluster gpufleet adopts, EKS has tagged the owner's managed node groups with the two
# discovery tags too; gpufleet's autoscaler finds gpufleet's groups by a tag of its own. And
# gpufleet's self-managed groups there carry only that tag: with the standard pair, an autoscaler
# the owner runs (its default discovery is that pair) would find and resize them as well, and two
# autoscalers would fight over them (review eks-3.md N18).
GPUFLEET_PREFIX = "gpufleet.io/autoscaler"


def gpufleet_owner_tag(cluster_name: str) -> str:
    return f"{GPUFLEET_PREFIX}/{cluster_name}"


def discovery_tags(cluster_name: str, own_tag: str | None = None) -> dict[str, str]:
    """The autoscaler's discovery pair on a cluster gpufleet created; gpufleet's own tag alone on
    one it adopts."""
    if own_tag:
        return {own_tag: "owned"}
    return {ENABLED_TAG: "true", owner_tag(cluster_name): "owned"}


def discovery_keys(cluster_name: str, own_tag: str | None = None) -> list[str]:
    """The tags an auto scaling group needs for gpufleet's autoscaler to find it."""
    return [own_tag] if own_tag else [ENABLED_TAG, owner_tag(cluster_name)]


def resize_condition(cluster_name: str, own_tag: str | None = None) -> dict[str, str]:
    """The tags (key: value) a group must carry for gpufleet's autoscaler role to resize it."""
    return discovery_tags(cluster_name, own_tag)


def node_template_tags(
    labels: Mapping[str, str],
    taints: Sequence[Taint],
    gpus: int,
    ephemeral_storage: str,
) -> dict[str, str]:
    """`node-template` tags for every label, taint (`<value>:<Effect>`) and resource of a node.

    `gpus` is what the node advertises (after time-slicing, MPS or MIG), not the physical count:
    the autoscaler overwrites the template's capacity with this tag (cluster-autoscaler
    aws_manager.go, buildNodeFromTemplate), so a physical count would make it believe a shared
    node holds 1 where it holds 4 (review eks.md S2-1). `ephemeral_storage` is the node's
    allocatable quantity, not the whole disk: the autoscaler takes the tag as allocatable
    ("TODO: use proper allocatable", aws_manager.go), so a disk-sized figure would let it
    scale up for a pod that never fits (review eks.md S2-10)."""
    tags = {f"{TEMPLATE_PREFIX}/label/{k}": v for k, v in sorted(labels.items())}
    for taint in taints:
        # A bare effect ("NoSchedule") is silently ignored by the autoscaler: value first.
        tags[f"{TEMPLATE_PREFIX}/taint/{taint.key}"] = f"{taint.value}:{taint.effect}"
    tags[f"{TEMPLATE_PREFIX}/resources/{GPU_RESOURCE}"] = str(gpus)
    tags[f"{TEMPLATE_PREFIX}/resources/ephemeral-storage"] = ephemeral_storage
    return tags


def resource_tags(resources: Mapping[str, int]) -> dict[str, str]:
    """`node-template/resources/<name>` tags for extended resources beyond the GPUs (EFA
    devices): the autoscaler puts each on its template node's capacity (cluster-autoscaler
    `cloudprovider/aws/README.md`, "Scaling a node group to 0")."""
    return {f"{TEMPLATE_PREFIX}/resources/{name}": str(count) for name, count in resources.items()}


# EC2 Auto Scaling tag limits (docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-tagging.html).
MAX_TAG_KEY_LENGTH = 128
MAX_TAGS_PER_GROUP = 50
