"""A cluster gpufleet did not create: GPU pools described by the labels their nodes carry.

gpufleet installs only the GPU software and samples here, so it knows of each pool what the user
says (labels, taints, GPU model and count), and of the cluster its Kubernetes distribution.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from components.existing.model.kinds import OWNERS_POOLS, PROVISIONING_KEY
from components.model import existing_cluster as existing_config
from components.model.capacity import declared_order
from components.model.catalog.gpus import GPU_MODELS
from components.model.catalog.provisioning import PROVISIONING_CLASSES
from components.model.cloud import Cloud, NameRule
from components.model.exposure import endpoint_warnings
from components.model.labels import DEVICE_PLUGIN_CONFIG_LABEL, GPU_RESOURCE, MIG_CONFIG_LABEL
from components.model.pool_kind import PoolKind
from components.model.pool_spec import PoolSpec, Taint
from components.model.problems import Problem
from components.model.schema import (
    ClusterConfig,
    GpuPoolConfig,
    GpuSoftwareConfig,
    SoftwareMode,
    StackConfig,
)

_RULE = NameRule(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", "1-63 of a-z 0-9 -")


class Existing(Cloud):
    name = "existing"
    cluster_options = existing_config.ExistingClusterOptions
    existing_keys = ("context", "distribution", "provisioning_request_class")
    reads_kubeconfig = True
    stack_module = "components.existing.stack"
    pool_name_rule = _RULE
    cluster_name_rule = _RULE
    # The nodes are there already; gpufleet makes no pool object (kinds.py).
    pool_kinds = (OWNERS_POOLS,)

    def pool_kind(self, cluster: ClusterConfig, pool: GpuPoolConfig) -> PoolKind:
        return OWNERS_POOLS

    def cluster_warnings(self, cluster: ClusterConfig) -> list[str]:
        # The cluster's API endpoint is its owner's: gpufleet sets none to allow.
        return endpoint_warnings(cluster, None, None, "")

    def check_pool(
        self,
        cluster: ClusterConfig,
        mode: SoftwareMode,
        pool: GpuPoolConfig,
        path: str,
        warnings: list[str],
    ) -> list[Problem]:
        # Zones and machine types are the cluster's own business; nothing to check against.
        return []

    def check_software(
        self,
        software: GpuSoftwareConfig,
        mode: SoftwareMode,
        pools: Sequence[GpuPoolConfig],
        cluster: ClusterConfig | None,
    ) -> list[Problem]:
        """An existing cluster's GPU pools are found by their labels; GKE keeps its own plugin."""
        if cluster is None:
            return []
        existing = existing_config.cluster_options(cluster)
        problems = _provisioning_problems(existing.provisioning_request_class, pools)
        if existing.distribution == "gke" and mode == "device-plugin":
            problems.append(
                Problem(
                    "gpuSoftware.mode",
                    "on an existing GKE cluster NVIDIA's device plugin conflicts with GKE's own; "
                    "set cloud-managed or gpu-operator",
                    software.mode,
                )
            )
        for index, pool in enumerate(pools):
            if not pool.labels:
                problems.append(
                    Problem(
                        f"gpuPools[{index}].labels",
                        "describe the pool's nodes by at least one label they carry: the GPU "
                        "software, monitoring and samples select the nodes by it",
                        has_value=False,
                    )
                )
                continue
            for other_index, other in enumerate(pools):
                if (
                    other_index != index
                    and other.labels
                    and pool.labels.items() <= other.labels.items()
                ):
                    problems.append(
                        Problem(
                            f"gpuPools[{index}].labels",
                            f"every label also selects gpuPools[{other_index}] ({other.name}); "
                            "add a label that only this pool's nodes carry",
                            dict(pool.labels),
                        )
                    )
        return problems

    def resolve_pool(self, config: StackConfig, pool: GpuPoolConfig) -> PoolSpec:
        """An existing cluster's GPU nodes, as the user describes them (their labels and taints)."""
        model = GPU_MODELS[pool.accelerator]
        gpus_per_node = pool.gpus_per_node or 1
        mode = config.gpu_software_mode
        per_gpu = 1
        sharing_via: Literal["cloud", "nvidia", "none"] = "none"
        declared: dict[str, str] = dict(pool.labels)
        if pool.sharing:
            per_gpu = pool.sharing.max_shared_clients_per_gpu
            sharing_via = "nvidia"
            declared[DEVICE_PLUGIN_CONFIG_LABEL] = pool.name
        elif pool.mig_partition_size:
            per_gpu = model.mig_partitions[pool.mig_partition_size]
            sharing_via = "nvidia"
            if mode == "gpu-operator":
                declared[MIG_CONFIG_LABEL] = f"all-{pool.mig_partition_size}"
            elif mode == "device-plugin":
                # The GPUs are partitioned already; this pool's plugin config sets migStrategy single.
                declared[DEVICE_PLUGIN_CONFIG_LABEL] = pool.name
        taints = tuple(Taint(t.key, t.value, t.effect) for t in pool.taints)
        labels = {"kubernetes.io/os": "linux", **declared}
        allocatable = {GPU_RESOURCE: gpus_per_node * per_gpu}
        return PoolSpec(
            name=pool.name,
            cloud=self.name,
            kind="gpu",
            accelerator=pool.accelerator,
            machine_types=tuple(
                pool.machine_types or ([pool.machine_type] if pool.machine_type else [])
            ),
            gpus_per_node=gpus_per_node,
            gpu_resource=GPU_RESOURCE,
            allocatable_per_node=allocatable,
            min_nodes=pool.min_nodes,
            max_nodes=pool.max_nodes,
            spot=pool.spot,
            zones=tuple(pool.zones or ()),
            declared_labels=declared,
            declared_taints=taints,
            node_labels=labels,
            label_choices={},
            node_taints=taints,
            vcpus=0,
            memory_gib=0.0,
            sharing_strategy=pool.sharing.strategy if pool.sharing else None,
            max_shared_clients_per_gpu=pool.sharing.max_shared_clients_per_gpu
            if pool.sharing
            else None,
            mig_partition_size=pool.mig_partition_size,
            sharing_via=sharing_via,
            autoscaler_labels=labels,
            autoscaler_taints=taints,
            autoscaler_resources=allocatable,
            disk_size_gb=pool.disk_size_gb,
            selector_keys=tuple(sorted(declared)),
            scale_from_zero="unmanaged",
        )

    def software_distribution(self, config: StackConfig) -> str:
        # The user says which distribution the cluster is (the GPU software's presets follow).
        return existing_config.cluster_options(config.cluster).distribution


def _provisioning_problems(
    provisioning_class: str | None, pools: Sequence[GpuPoolConfig]
) -> list[Problem]:
    """The class must be one gpufleet knows, and there must be a queued pool to use it."""
    if provisioning_class is None:
        return []
    problems = []
    if provisioning_class not in PROVISIONING_CLASSES:
        problems.append(
            Problem(
                PROVISIONING_KEY,
                f"unknown ProvisioningRequest class; known: {', '.join(PROVISIONING_CLASSES)}",
                provisioning_class,
            )
        )
    if not any("queued" in declared_order(pool.capacity, pool.spot) for pool in pools):
        problems.append(
            Problem(
                PROVISIONING_KEY,
                "applies to queued pools only and no pool has capacity: queued; remove it",
                provisioning_class,
            )
        )
    return problems


EXISTING = Existing()
