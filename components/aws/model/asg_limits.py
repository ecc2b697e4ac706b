"""What a self-managed pool's labels and taints become on its auto scaling groups: one
node-template tag each, under EC2 Auto Scaling's tag limits (128-character keys, 50 tags per
group: components/aws/model/autoscaler_tags.py), with the tags gpufleet puts on every group."""

from __future__ import annotations

from components.aws.model import autoscaler_tags, provisioners
from components.model.problems import Problem
from components.model.schema import ClusterConfig, GpuPoolConfig

# Lets the cluster autoscaler wait for the device plugin instead of scaling up twice. AWS's
# label, valued nvidia-<model>; gpufleet's own is labels.ACCELERATOR_LABEL (gpufleet.io/...).
EKS_ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"

# Labels every GPU pool's nodes get from gpufleet on EKS (pool, accelerator, nvidia.com/gpu, and
# the autoscaler's accelerator label).
FIXED_GPU_LABELS = (
    "gpufleet.io/pool",
    "gpufleet.io/accelerator",
    "nvidia.com/gpu",
    EKS_ACCELERATOR_LABEL,
)


def tag_problems(
    cluster: ClusterConfig, pool: GpuPoolConfig, path: str, adopted: bool
) -> list[Problem]:
    """Every label and taint becomes an auto scaling group tag: 128-character keys, 50 tags."""
    problems = []
    label_prefix = f"{autoscaler_tags.TEMPLATE_PREFIX}/label/"
    taint_prefix = f"{autoscaler_tags.TEMPLATE_PREFIX}/taint/"
    for key in pool.labels:
        if len(label_prefix + key) > autoscaler_tags.MAX_TAG_KEY_LENGTH:
            problems.append(
                Problem(
                    f"{path}.labels.{key}",
                    f"at most {autoscaler_tags.MAX_TAG_KEY_LENGTH - len(label_prefix)} "
                    "characters on aws self-managed pools (the autoscaler's tag "
                    f"{label_prefix}<key> takes at most {autoscaler_tags.MAX_TAG_KEY_LENGTH})",
                    key,
                )
            )
    for index, taint in enumerate(pool.taints):
        if len(taint_prefix + taint.key) > autoscaler_tags.MAX_TAG_KEY_LENGTH:
            problems.append(
                Problem(
                    f"{path}.taints[{index}].key",
                    f"at most {autoscaler_tags.MAX_TAG_KEY_LENGTH - len(taint_prefix)} "
                    "characters on aws self-managed pools (autoscaler tag key limit)",
                    taint.key,
                )
            )
    # gpufleet's own tags per group: discovery (2, and gpufleet's own on an adopted
    # cluster), instance (5 and the node termination handler's), resources (2) and the
    # labels and taints every GPU pool gets (see pool_resolution.node_labels and the GPU taint).
    configured_by_label = pool.sharing is not None or pool.mig_partition_size is not None
    instance = 6
    labelled_by_nodeadm = provisioners.nodeadm_labels_gpu(cluster, pool)
    own_labels = len(FIXED_GPU_LABELS) + (1 if labelled_by_nodeadm else 0)
    own_labels += 1 if pool.spot else 0  # provisioners.SPOT_LABEL
    own_labels += 1 if provisioners.zone_balanced(pool) else 0  # provisioners.BALANCING_LABEL
    discovery = 3 if adopted else 2
    fixed = discovery + instance + 2 + own_labels + 1 + (1 if configured_by_label else 0)
    total = fixed + len(pool.labels) + len(pool.taints)
    if total > autoscaler_tags.MAX_TAGS_PER_GROUP:
        problems.append(
            Problem(
                f"{path}.labels",
                f"too many labels and taints for one auto scaling group: {total} tags where "
                f"AWS takes {autoscaler_tags.MAX_TAGS_PER_GROUP} ({fixed} are gpufleet's own)",
                len(pool.labels) + len(pool.taints),
            )
        )
    return problems
