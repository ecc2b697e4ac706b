"""The config rules every cloud shares; each calls into the stack's `Cloud` for its own rules."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from pydantic import BaseModel

from components.model import existing_cluster, mirror
from components.model.capacity import order_problems, shown_order, unsupported
from components.model.catalog import charts, gpus
from components.model.cloud import Cloud
from components.model.labels import RESERVED_LABEL_PREFIXES, label_key_problem, label_value_problem
from components.model.lifecycle import assess
from components.model.problems import Problem
from components.model.schema import (
    SYSTEM_POOL_NAME,
    ClusterConfig,
    GpuPoolConfig,
    GpuSoftwareConfig,
    SoftwareMode,
)

# Cluster keys that configure what only the cluster's owner sets on an adopted cluster.
_OWNER_KEYS = {
    "system_pool": "systemPool",
    "protect": "protect",
    "maintenance": "maintenance",
}


def _alias(model: BaseModel, field: str) -> str:
    return type(model).model_fields[field].alias or field


def existing_keys_of(cloud: Cloud) -> tuple[str, ...]:
    """The keys of `cluster.existing` `cloud` reads: those it names, then its own model's."""
    own = tuple(cloud.existing_options.model_fields) if cloud.existing_options else ()
    return (*cloud.existing_keys, *own)


def check_adopted(cloud: Cloud, cluster: ClusterConfig) -> list[Problem]:
    """`cluster.existing` keys this cloud does not read, and on an adopted cluster the keys that
    would configure the cluster itself (it is its owner's: gpufleet never changes it)."""
    problems: list[Problem] = []
    existing = getattr(cluster, existing_cluster.SECTION, None)
    if isinstance(existing, BaseModel) and existing_cluster.SECTION in cluster.model_fields_set:
        taken = existing_keys_of(cloud)
        allowed = [_alias(existing, key) for key in taken]
        for key in sorted(existing.model_fields_set - set(taken)):
            problems.append(
                Problem(
                    f"cluster.existing.{_alias(existing, key)}",
                    f"does not apply to cloud {cloud.name}; "
                    f"allowed here: {', '.join(allowed) or 'none (an empty existing: {} adopts)'}",
                    getattr(existing, key),
                )
            )
    if not cloud.adopted(cluster):
        return problems
    owner_message = (
        "belongs to the existing cluster, which gpufleet looks up and never changes; remove it "
        "(its owner sets it on the cluster)"
    )
    for field, key in _OWNER_KEYS.items():
        if field in cluster.model_fields_set:
            value = getattr(cluster, field)
            # As written (what the user set), like another cloud's section is shown.
            shown = (
                value.model_dump(by_alias=True, exclude_unset=True)
                if isinstance(value, BaseModel)
                else value
            )
            problems.append(Problem(f"cluster.{key}", owner_message, shown))
    own = getattr(cluster, cloud.name, None)
    if isinstance(own, BaseModel):
        allowed = [_alias(own, key) for key in cloud.adopted_cluster_keys]
        for key in sorted(own.model_fields_set - set(cloud.adopted_cluster_keys)):
            problems.append(
                Problem(
                    f"cluster.{cloud.name}.{_alias(own, key)}",
                    "sets up a cluster gpufleet creates; an adopted cluster keeps its own; "
                    f"allowed with cluster.existing: {', '.join(allowed) or 'none'}",
                    getattr(own, key),
                )
            )
    return problems


def check_cluster(
    cloud: Cloud, cluster: ClusterConfig, warnings: list[str], today: date
) -> list[Problem]:
    problems = []
    if not cloud.cluster_name_rule.accepts(cluster.name):
        problems.append(
            Problem(
                "cluster.name",
                f"not a valid cluster name ({cloud.cluster_name_rule.rule})",
                cluster.name,
            )
        )
    if cloud.version_lifecycle is not None:
        # The cloud's calendar: a minor it no longer creates is an error; extended support or
        # the last 60 days of standard support, a warning; then what the cloud refuses of a
        # minor its calendar allows, for this stack's settings.
        verdict = assess(cloud.version_lifecycle, cluster.kubernetes_version, today)
        if verdict.is_error:
            problems.append(
                Problem("cluster.kubernetesVersion", verdict.message, cluster.kubernetes_version)
            )
        elif cloud.adopted(cluster) and verdict.is_warning:
            # The cluster's support phase is its owner's choice (and bill); its pools follow.
            warnings.append(
                f"cluster.kubernetesVersion (the existing cluster's): {verdict.message}"
            )
            problems += cloud.version_problems(cluster, verdict)
        else:
            refused = cloud.version_problems(cluster, verdict)
            problems += refused
            if verdict.is_warning and not refused:
                advice = cloud.version_advice(cluster, verdict)
                warnings.append(
                    f"cluster.kubernetesVersion: {verdict.message}"
                    + (f" {advice}" if advice else "")
                )
    elif cluster.kubernetes_version not in charts.KUBERNETES_MINORS:
        problems.append(
            Problem(
                "cluster.kubernetesVersion",
                f"unsupported Kubernetes minor; allowed: {', '.join(charts.KUBERNETES_MINORS)}",
                cluster.kubernetes_version,
            )
        )
    if cloud.region_rule is not None:
        if cluster.region is None:
            problems.append(Problem("cluster.region", "is required", has_value=False))
        else:
            if not cloud.region_rule.accepts(cluster.region):
                problems.append(
                    Problem("cluster.region", f"must be {cloud.region_rule.rule}", cluster.region)
                )
            else:
                problems += cloud.region_problems(cluster)
                # Zones are judged against a known region only: a wrong region is one mistake.
                if cloud.region_known(cluster):
                    problems += cloud.zone_problems(
                        cluster.region, cluster.zones or [], "cluster.zones"
                    )
    problems += cloud.check_cluster(cluster)
    warnings += cloud.cluster_warnings(cluster)
    if not re.fullmatch(r"([01][0-9]|2[0-3]):[0-5][0-9]", cluster.maintenance.start_time):
        problems.append(
            Problem(
                "cluster.maintenance.startTime",
                'must be a UTC time of day as HH:MM, such as "02:00"',
                cluster.maintenance.start_time,
            )
        )
    system = cluster.system_pool
    if system.min_nodes > system.max_nodes:
        problems.append(
            Problem(
                "cluster.systemPool.minNodes",
                f"must be <= maxNodes ({system.max_nodes})",
                system.min_nodes,
            )
        )
    return problems


def check_pool(
    cloud: Cloud | None,
    cluster: ClusterConfig | None,
    mode: SoftwareMode,
    pool: GpuPoolConfig,
    path: str,
    warnings: list[str],
) -> list[Problem]:
    """The pool's rules; those of its cloud (and cluster) only when they could be read."""
    problems: list[Problem] = []
    if cloud is not None and not cloud.pool_name_rule.accepts(pool.name):
        problems.append(
            Problem(
                f"{path}.name", f"not a valid pool name ({cloud.pool_name_rule.rule})", pool.name
            )
        )
    if pool.name == SYSTEM_POOL_NAME:
        problems.append(Problem(f"{path}.name", "is reserved for the CPU system pool", pool.name))
    if pool.min_nodes > pool.max_nodes:
        problems.append(
            Problem(f"{path}.minNodes", f"must be <= maxNodes ({pool.max_nodes})", pool.min_nodes)
        )
    if pool.machine_type is not None and pool.machine_types is not None:
        problems.append(
            Problem(
                f"{path}.machineTypes",
                "give machineType or machineTypes, not both",
                pool.machine_types,
            )
        )
    problems += _check_labels_and_taints(pool, path)
    problems += check_capacity(cloud, cluster, pool, path)
    if cloud is not None:
        problems += cloud.check_pool_keys(pool, path)

    model = gpus.GPU_MODELS.get(pool.accelerator)
    if model is None:
        allowed = ", ".join(sorted(gpus.GPU_MODELS))
        problems.append(
            Problem(
                f"{path}.accelerator", f"unknown accelerator; allowed: {allowed}", pool.accelerator
            )
        )
        return problems

    if cloud is not None and cluster is not None:
        problems += cloud.check_pool(cluster, mode, pool, path, warnings)
        problems += cloud.offering_problems(cluster, pool, path, warnings)
    if pool.sharing is not None:
        strategies = cloud.sharing_strategies(model, mode) if cloud is not None else model.sharing
        problems += _check_sharing(pool, model, path, strategies)
    if pool.mig_partition_size is not None:
        problems += _check_mig(cloud, mode, pool, model, path)
    return problems


def check_capacity(
    cloud: Cloud | None, cluster: ClusterConfig | None, pool: GpuPoolConfig, path: str
) -> list[Problem]:
    """`capacity` and `spot`: the shared rules, then whether the pool's kind builds the order
    and its own rules for it."""
    problems: list[Problem] = []
    if pool.capacity is not None:
        spot_written = "spot" in pool.model_fields_set
        problems = order_problems(pool.capacity, spot_written, pool.spot, path)
    if problems or cloud is None or cluster is None:
        return problems
    kind = cloud.pool_kind(cluster, pool)
    order = kind.capacity_order(pool)
    supported = kind.traits(cluster, pool).capacity_orders
    if order not in supported:
        written = pool.capacity is not None
        return [
            Problem(
                f"{path}.capacity" if written else f"{path}.spot",
                unsupported(
                    cloud.name,
                    order,
                    supported,
                    kind.capacity_advice(cluster, pool, order),
                ),
                pool.capacity if written else pool.spot,
            )
        ]
    # A reservation's zones are judged against a known region only: a mistyped region is said
    # once, on cluster.region, not again for every zone derived from it.
    judged = cluster if cloud.region_known(cluster) else cluster.model_copy(update={"region": None})
    problems = kind.check_capacity(judged, pool, order, path)
    if "queued" in order and not problems and kind.provisioning_class(cluster, pool) is None:
        # A kind that lists `queued` names its class; say so rather than build half of it.
        problems.append(
            Problem(
                f"{path}.capacity",
                f"{cloud.name} names no ProvisioningRequest class for {shown_order(order)} "
                "pools; this is a gpufleet bug, please report it",
                pool.capacity,
            )
        )
    return problems


def _check_labels_and_taints(pool: GpuPoolConfig, path: str) -> list[Problem]:
    problems = []
    for key, value in pool.labels.items():
        why = label_key_problem(key)
        if why:
            problems.append(Problem(f"{path}.labels.{key}", f"bad label key: {why}", key))
        elif key.split("/")[0].endswith(RESERVED_LABEL_PREFIXES) and "/" in key:
            problems.append(
                Problem(
                    f"{path}.labels.{key}",
                    f"label prefix is reserved ({', '.join(RESERVED_LABEL_PREFIXES)})",
                    key,
                )
            )
        why = label_value_problem(value)
        if why:
            problems.append(Problem(f"{path}.labels.{key}", f"bad label value: {why}", value))
    for index, taint in enumerate(pool.taints):
        why = label_key_problem(taint.key)
        if why:
            problems.append(
                Problem(f"{path}.taints[{index}].key", f"bad taint key: {why}", taint.key)
            )
        why = label_value_problem(taint.value)
        if why:
            problems.append(
                Problem(f"{path}.taints[{index}].value", f"bad taint value: {why}", taint.value)
            )
    return problems


def _check_sharing(
    pool: GpuPoolConfig, model: gpus.GpuModel, path: str, strategies: Sequence[str]
) -> list[Problem]:
    assert pool.sharing is not None
    problems = []
    if pool.mig_partition_size is not None:
        problems.append(
            Problem(
                f"{path}.sharing",
                "sharing and migPartitionSize cannot be combined; pick one",
                has_value=False,
            )
        )
    if pool.sharing.strategy not in strategies:
        problems.append(
            Problem(
                f"{path}.sharing.strategy",
                f"{model.name} supports {', '.join(strategies)}",
                pool.sharing.strategy,
            )
        )
    clients = pool.sharing.max_shared_clients_per_gpu
    if not 0 < clients <= gpus.MAX_SHARED_CLIENTS_PER_GPU:
        problems.append(
            Problem(
                f"{path}.sharing.maxSharedClientsPerGpu",
                f"must be between 1 and {gpus.MAX_SHARED_CLIENTS_PER_GPU}",
                clients,
            )
        )
    return problems


def _check_mig(
    cloud: Cloud | None, mode: SoftwareMode, pool: GpuPoolConfig, model: gpus.GpuModel, path: str
) -> list[Problem]:
    where = f"{path}.migPartitionSize"
    size = pool.mig_partition_size
    assert size is not None
    # NVIDIA's sizes for the GPU, and any the cloud builds besides (AKS's 4g sizes).
    built = cloud.mig_partitions(model) if cloud is not None else {}
    if not model.mig_partitions and not built:
        return [Problem(where, f"{model.name} does not support MIG", size)]
    if size not in model.mig_partitions and size not in built:
        known = {**model.mig_partitions, **built}
        return [Problem(where, f"{model.name} supports {', '.join(known)}", size)]
    return cloud.check_mig(mode, pool, model, path) if cloud is not None else []


def check_software(
    cloud: Cloud | None,
    software: GpuSoftwareConfig,
    pools: Sequence[GpuPoolConfig],
    cluster: ClusterConfig | None = None,
) -> list[Problem]:
    problems = mirror.problems(software.mirror)
    if software.monitoring.service_monitor and not software.monitoring.dcgm_exporter:
        problems.append(
            Problem("gpuSoftware.monitoring.serviceMonitor", "needs dcgmExporter: true", True)
        )
    if cloud is None:
        return problems
    mode = cloud.software_mode(software.mode, cluster)
    problems = cloud.check_software(software, mode, pools, cluster) + problems
    if mode in ("device-plugin", "gpu-operator"):
        for index, pool in enumerate(pools):
            if pool.name == "default" and (pool.sharing or pool.mig_partition_size):
                problems.append(
                    Problem(
                        f"gpuPools[{index}].name",
                        "a shared or MIG pool cannot be named `default`: it would take the "
                        "device plugin's default config entry, which every other node uses",
                        pool.name,
                    )
                )
    sharing_refused = any(p.path.endswith(".sharing") for p in problems)
    if (
        not cloud.shares_gpus_itself
        and mode == "cloud-managed"
        and any(p.sharing for p in pools)
        and not sharing_refused  # the cloud already said why, and what to do instead
    ):
        problems.append(
            Problem(
                "gpuSoftware.mode",
                "GPU sharing on this cloud is configured through NVIDIA's device plugin or operator; "
                "use device-plugin or gpu-operator",
                software.mode,
            )
        )
    return problems
