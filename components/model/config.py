"""Every `gpufleet:*` stack config key, validated before any resource exists.

`parse_config(raw)` takes the stack's `gpufleet:` keys (prefix stripped) and returns a frozen
`StackConfig`, or raises `ConfigError` carrying every problem at once, each naming the key path,
the bad value and what is allowed. The same function serves `pulumi up` (via
`components.pulumi_config.load_from_pulumi`)
and the offline engine, so both reject exactly the same input.

The rules every cloud shares are here; each cloud's own rules are its `Cloud`'s checks, and its
own keys (`cluster.<cloud>`, `gpuPools[].<cloud>`) are sections assembled from the registry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field, ValidationError, create_model

from components.model.catalog import charts, gpus
from components.model.cloud import Cloud
from components.model.labels import RESERVED_LABEL_PREFIXES, label_key_problem, label_value_problem
from components.model.problems import ConfigError, Problem
from components.model.registry import CLOUDS
from components.model.schema import (
    SYSTEM_POOL_NAME,
    ClusterConfig,
    GpuPoolConfig,
    GpuSoftwareConfig,
    SamplesConfig,
    SoftwareMode,
    StackConfig,
)


def _with_cloud_sections(base: type[Any], sections: Mapping[str, type[BaseModel] | None]) -> Any:
    """`base` plus one optional section per cloud that declares one (defaults when omitted)."""
    fields: dict[str, Any] = {
        name: (model, Field(default_factory=model))
        for name, model in sections.items()
        if model is not None
    }
    return create_model(base.__name__, __base__=base, __module__=__name__, **fields)


# The full models, with every registered cloud's own section.
ClusterModel: type[ClusterConfig] = _with_cloud_sections(
    ClusterConfig, {name: cloud.cluster_options for name, cloud in CLOUDS.items()}
)
GpuPoolModel: type[GpuPoolConfig] = _with_cloud_sections(
    GpuPoolConfig, {name: cloud.pool_options for name, cloud in CLOUDS.items()}
)

_SECTIONS: Mapping[str, Any] = {
    "cluster": ClusterModel,
    "gpuSoftware": GpuSoftwareConfig,
    "samples": SamplesConfig,
}
KNOWN_KEYS = ("cloud", "cluster", "gpuPools", "gpuSoftware", "samples", "kubeconfig")


def parse_config(raw: Mapping[str, Any]) -> StackConfig:
    """Validate the `gpufleet:` keys (prefix stripped); raise ConfigError with every problem."""
    problems: list[Problem] = []
    for key in sorted(set(raw) - set(KNOWN_KEYS)):
        problems.append(
            Problem(key, f"unknown config key; allowed: {', '.join(KNOWN_KEYS)}", has_value=False)
        )

    cloud_name = raw.get("cloud")
    cloud = CLOUDS.get(cloud_name) if isinstance(cloud_name, str) else None
    if cloud is None:
        problems.append(Problem("cloud", f"must be one of {', '.join(CLOUDS)}", cloud_name))

    parsed: dict[str, Any] = {}
    for key, model in _SECTIONS.items():
        value = raw.get(key, {} if key != "cluster" else None)
        if value is None:
            problems.append(Problem(key, "is required", has_value=False))
            continue
        parsed[key] = _validate(model, value, key, problems)

    indexed_pools: list[tuple[int, GpuPoolConfig]] = []
    raw_pools = raw.get("gpuPools", [])
    if not isinstance(raw_pools, list):
        problems.append(Problem("gpuPools", "must be a list of pools", raw_pools))
        raw_pools = []
    for index, raw_pool in enumerate(raw_pools):
        pool = _validate(GpuPoolModel, raw_pool, f"gpuPools[{index}]", problems)
        if pool is not None:
            indexed_pools.append((index, pool))
    pools = [pool for _, pool in indexed_pools]

    warnings: list[str] = []
    cluster: ClusterConfig | None = parsed.get("cluster")
    software: GpuSoftwareConfig | None = parsed.get("gpuSoftware")
    mode = cloud.software_mode(software.mode) if cloud and software else "auto"
    if cloud is not None and cluster is not None:
        problems += _check_cluster(cloud, cluster)
        names: dict[str, int] = {}
        for index, pool in indexed_pools:
            path = f"gpuPools[{index}]"
            if pool.name in names:
                problems.append(
                    Problem(
                        f"{path}.name",
                        f"duplicate pool name (also gpuPools[{names[pool.name]}].name)",
                        pool.name,
                    )
                )
            names.setdefault(pool.name, index)
            problems += _check_pool(cloud, cluster, mode, pool, path, warnings)
    if cloud is not None and software is not None:
        problems += _check_software(cloud, software, pools, cluster)

    if problems:
        raise ConfigError(problems)
    assert cloud is not None and cluster is not None and software is not None
    return StackConfig(
        cloud=cloud.name,
        cluster=cluster,
        gpu_pools=tuple(pools),
        gpu_software=software,
        samples=parsed["samples"],
        gpu_software_mode=cloud.software_mode(software.mode),
        warnings=tuple(warnings),
    )


def _validate(model: Any, value: Any, path: str, problems: list[Problem]) -> Any:
    try:
        return model.model_validate(value)
    except ValidationError as error:
        for detail in error.errors():
            loc = _render_loc(path, detail["loc"])
            if detail["type"] == "extra_forbidden":
                allowed = ", ".join(_allowed_keys(model, detail["loc"][:-1]))
                problems.append(
                    Problem(loc, f"unknown key; allowed here: {allowed}", has_value=False)
                )
            elif detail["type"] == "missing":
                problems.append(Problem(loc, "is required", has_value=False))
            else:
                problems.append(Problem(loc, detail["msg"], detail.get("input")))
        return None


def _render_loc(path: str, loc: Iterable[int | str]) -> str:
    rendered = path
    for part in loc:
        rendered += f"[{part}]" if isinstance(part, int) else f".{part}"
    return rendered


def _allowed_keys(model: Any, loc: Sequence[int | str]) -> list[str]:
    """The camelCase keys a model accepts at `loc` (for 'unknown key' messages)."""
    current = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = next(
            (f for n, f in current.model_fields.items() if (f.alias or n) == part or n == part),
            None,
        )
        if field is None:
            return []
        annotation = field.annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        nested = [c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)]
        if not nested:
            # list[Model] / Model | None
            for candidate in candidates:
                for arg in getattr(candidate, "__args__", ()):
                    if isinstance(arg, type) and issubclass(arg, BaseModel):
                        nested.append(arg)
        if not nested:
            return []
        current = nested[0]
    return sorted(f.alias or n for n, f in current.model_fields.items())


# --- semantic checks ------------------------------------------------------------------------


def _check_cluster(cloud: Cloud, cluster: ClusterConfig) -> list[Problem]:
    problems = []
    if not cloud.cluster_name_rule.accepts(cluster.name):
        problems.append(
            Problem(
                "cluster.name",
                f"not a valid cluster name ({cloud.cluster_name_rule.rule})",
                cluster.name,
            )
        )
    if cluster.kubernetes_version not in charts.KUBERNETES_MINORS:
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
            problems += cloud.zone_problems(cluster.region, cluster.zones or [], "cluster.zones")
    problems += cloud.check_cluster(cluster)
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


def _check_pool(
    cloud: Cloud,
    cluster: ClusterConfig,
    mode: SoftwareMode,
    pool: GpuPoolConfig,
    path: str,
    warnings: list[str],
) -> list[Problem]:
    problems: list[Problem] = []
    if not cloud.pool_name_rule.accepts(pool.name):
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

    problems += cloud.check_pool(cluster, mode, pool, path, warnings)
    if pool.sharing is not None:
        problems += _check_sharing(pool, model, path)
    if pool.mig_partition_size is not None:
        problems += _check_mig(cloud, mode, pool, model, path)
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


def _check_sharing(pool: GpuPoolConfig, model: gpus.GpuModel, path: str) -> list[Problem]:
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
    if pool.sharing.strategy not in model.sharing:
        problems.append(
            Problem(
                f"{path}.sharing.strategy",
                f"{model.name} supports {', '.join(model.sharing)}",
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
    cloud: Cloud, mode: SoftwareMode, pool: GpuPoolConfig, model: gpus.GpuModel, path: str
) -> list[Problem]:
    where = f"{path}.migPartitionSize"
    size = pool.mig_partition_size
    assert size is not None
    if not model.mig_partitions:
        return [Problem(where, f"{model.name} does not support MIG", size)]
    if size not in model.mig_partitions:
        return [Problem(where, f"{model.name} supports {', '.join(model.mig_partitions)}", size)]
    return cloud.check_mig(mode, pool, model, path)


def _check_software(
    cloud: Cloud,
    software: GpuSoftwareConfig,
    pools: Sequence[GpuPoolConfig],
    cluster: ClusterConfig | None = None,
) -> list[Problem]:
    mode = cloud.software_mode(software.mode)
    problems = cloud.check_software(software, mode, pools, cluster)
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
    if not cloud.shares_gpus_itself and mode == "cloud-managed" and any(p.sharing for p in pools):
        problems.append(
            Problem(
                "gpuSoftware.mode",
                "GPU sharing on this cloud is configured through NVIDIA's device plugin or operator; "
                "use device-plugin or gpu-operator",
                software.mode,
            )
        )
    if software.operator_driver and not cloud.accepts_operator_driver(mode):
        problems.append(
            Problem(
                "gpuSoftware.operatorDriver",
                "only applies to azure with mode gpu-operator",
                software.operator_driver,
            )
        )
    if software.monitoring.service_monitor and not software.monitoring.dcgm_exporter:
        problems.append(
            Problem("gpuSoftware.monitoring.serviceMonitor", "needs dcgmExporter: true", True)
        )
    return problems
