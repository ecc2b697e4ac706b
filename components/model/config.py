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

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Any

from pydantic import BaseModel, Field, create_model

from components.model import existing_cluster, fabric_checks, gpu_health, queue_checks
from components.model.catalog import charts
from components.model.config_checks import (
    check_adopted,
    check_cluster,
    check_pool,
    check_software,
)
from components.model.config_hints import (
    flat_key_problem,
    kubeconfig_problem,
    system_machine_problems,
)
from components.model.fabric import PoolFabric
from components.model.pools import resolve_pool
from components.model.problems import ConfigError, Problem
from components.model.registry import CLOUDS
from components.model.schema import (
    ClusterConfig,
    CostConfig,
    GpuPoolConfig,
    GpuSoftwareConfig,
    QueuesConfig,
    SamplesConfig,
    SoftwareMode,
    StackConfig,
)
from components.model.validation import Salvaged, validate_section


def _with_cloud_sections(base: type[Any], sections: Mapping[str, type[BaseModel] | None]) -> Any:
    """`base` plus one optional section per cloud that declares one (defaults when omitted)."""
    fields: dict[str, Any] = {
        name: (model, Field(default_factory=model))
        for name, model in sections.items()
        if model is not None
    }
    return create_model(base.__name__, __base__=base, __module__=__name__, **fields)


def _with_clouds_keys(shared: type[Any], own: Sequence[type[BaseModel] | None]) -> Any:
    """`shared` plus the keys clouds add to that section: a cloud's keys live in its folder,
    keep the section's paths, and read back through the cloud's own model (an instance of the
    result is one of each cloud's model)."""
    # Pydantic collects fields from the last base to the first: the shared keys come first.
    bases = (*(model for model in own if model is not None), shared)
    return create_model(shared.__name__, __base__=bases, __module__=__name__)


# The full models, with every registered cloud's own section and keys.
ClusterModel: type[ClusterConfig] = _with_cloud_sections(
    ClusterConfig,
    {
        name: _with_clouds_keys(
            cloud.cluster_options, [other.existing_options for other in CLOUDS.values()]
        )
        if name == existing_cluster.SECTION and cloud.cluster_options is not None
        else cloud.cluster_options
        for name, cloud in CLOUDS.items()
    },
)
GpuPoolModel: type[GpuPoolConfig] = _with_cloud_sections(
    GpuPoolConfig, {name: cloud.pool_options for name, cloud in CLOUDS.items()}
)
GpuSoftwareModel: type[GpuSoftwareConfig] = _with_clouds_keys(
    GpuSoftwareConfig, [cloud.software_options for cloud in CLOUDS.values()]
)

_SECTIONS: Mapping[str, Any] = {
    "cluster": ClusterModel,
    "gpuSoftware": GpuSoftwareModel,
    "samples": SamplesConfig,
    "queues": QueuesConfig,
    "cost": CostConfig,
}
KNOWN_KEYS = (
    "cloud",
    "cluster",
    "gpuPools",
    "gpuSoftware",
    "samples",
    "kubeconfig",
    "queues",
    "cost",
)


def _other_clouds_sections(cloud: str, owner: BaseModel, path: str) -> list[Problem]:
    """Another cloud's own section written into this stack: it would be ignored silently."""
    return [
        Problem(
            f"{path}.{name}",
            f"applies only to cloud {name}; this stack's cloud is {cloud}; remove it",
            getattr(owner, name).model_dump(by_alias=True, exclude_unset=True),
        )
        for name in sorted(CLOUDS)
        if name != cloud
        and name in owner.model_fields_set
        # An adopting cloud reads its own keys of `cluster.existing` (check_adopted).
        and not (name == existing_cluster.SECTION and CLOUDS[cloud].adopts_clusters)
    ]


def _misplaced_software_keys(
    cloud: str, software: GpuSoftwareConfig, mode: SoftwareMode
) -> list[Problem]:
    """Each cloud's own `gpuSoftware` keys set where they mean nothing, as that cloud says."""
    problems: list[Problem] = []
    for owner in CLOUDS.values():
        keys = owner.software_options
        if keys is not None and isinstance(software, keys):
            problems += keys.misplaced(software, cloud, mode)
    return problems


def clock_today() -> date:
    """The day version support is judged on when the caller names none (tests pin it)."""
    return date.today()


def parse_config(raw: Mapping[str, Any], today: date | None = None) -> StackConfig:
    """Validate the `gpufleet:` keys (prefix stripped); raise ConfigError with every problem.

    Every section is validated on its own, and the cross-field checks run on whatever each
    section got right, so one mistake never hides another.
    """
    problems: list[Problem] = []
    for key in sorted(set(raw) - set(KNOWN_KEYS), key=str):
        problems.append(
            flat_key_problem(str(key), raw[key], KNOWN_KEYS)
            or Problem(
                str(key),
                f"unknown config key; allowed: {', '.join(KNOWN_KEYS)}",
                has_value=False,
            )
        )

    cloud_name = raw.get("cloud")
    cloud = CLOUDS.get(cloud_name) if isinstance(cloud_name, str) else None
    if "cloud" not in raw or cloud_name is None:
        problems.append(
            Problem("cloud", f"is required: one of {', '.join(CLOUDS)}", has_value=False)
        )
    elif cloud is None:
        problems.append(Problem("cloud", f"must be one of {', '.join(CLOUDS)}", cloud_name))
    if cloud is not None and (kubeconfig := kubeconfig_problem(raw, cloud)) is not None:
        problems.append(kubeconfig)

    sections: dict[str, Salvaged] = {}
    for key, model in _SECTIONS.items():
        value = raw.get(key)
        if value is None and key != "cluster":
            value = {}  # an empty block (`gpuSoftware:`) means the defaults
        if value is None:
            problems.append(Problem(key, "is required", has_value=False))
            continue
        sections[key] = validate_section(model, value, key, problems)

    raw_pools = raw.get("gpuPools")
    if raw_pools is None:
        raw_pools = []
    if not isinstance(raw_pools, list):
        problems.append(Problem("gpuPools", "must be a list of pools", raw_pools))
        raw_pools = []
    salvaged_pools = [
        (index, validate_section(GpuPoolModel, raw_pool, f"gpuPools[{index}]", problems))
        for index, raw_pool in enumerate(raw_pools)
    ]
    indexed_pools = [(i, s.model) for i, s in salvaged_pools if s.model is not None]
    pools: list[GpuPoolConfig] = [pool for _, pool in indexed_pools]

    cluster_section = sections.get("cluster", Salvaged(None))
    software_section = sections.get("gpuSoftware", Salvaged(None))
    cluster: ClusterConfig | None = cluster_section.model
    software: GpuSoftwareConfig | None = software_section.model
    unreadable = [cluster_section, software_section, *(s for _, s in salvaged_pools)]
    mode = cloud.software_mode(software.mode, cluster) if cloud and software else "auto"
    warnings: list[str] = []
    checked: list[Problem] = []
    if cloud is not None and cluster is not None:
        checked += _other_clouds_sections(cloud.name, cluster, "cluster")
        checked += check_adopted(cloud, cluster)
        checked += check_cluster(cloud, cluster, warnings, today or clock_today())
        checked += system_machine_problems(cloud, cluster, CLOUDS)
    names: dict[str, int] = {}
    for index, pool in indexed_pools:
        path = f"gpuPools[{index}]"
        if pool.name in names:
            checked.append(
                Problem(
                    f"{path}.name",
                    f"duplicate pool name (also gpuPools[{names[pool.name]}].name)",
                    pool.name,
                )
            )
        names.setdefault(pool.name, index)
        if cloud is not None:
            checked += _other_clouds_sections(cloud.name, pool, path)
        pool_problems = check_pool(cloud, cluster, mode, pool, path, warnings)
        checked += pool_problems
        if cloud is not None and cluster is not None and not pool_problems:
            kind = cloud.pool_kind(cluster, pool)
            warnings += kind.capacity_warnings(cluster, pool, path, today or clock_today())
            checked += fabric_checks.fabric_problems(cloud, cluster, pool, path)
            warnings += fabric_checks.fabric_warnings(pool, path)
    if cloud is not None and cluster is not None:
        warnings += cloud.pools_warnings(cluster, indexed_pools)
        checked += cloud.pools_problems(cluster, indexed_pools)
    if software is not None:
        checked += check_software(cloud, software, pools, cluster)
        warnings += gpu_health.config_warnings(software.monitoring.dcgm_exporter, mode)
        if cloud is not None:
            warnings += cloud.gpu_health_warnings(software, mode, pools)
    if cloud is not None and software is not None:
        checked += _misplaced_software_keys(cloud.name, software, mode)
    queues_section = sections.get("queues", Salvaged(None))
    unreadable.append(queues_section)
    unreadable.append(sections.get("cost", Salvaged(None)))
    checked += queue_checks.queues_problems(
        cloud, queues_section.model, raw.get("queues") is not None, indexed_pools
    )
    if cloud is not None and cluster is not None and queues_section.model is not None:
        warnings += queue_checks.queues_warnings(cloud, cluster, queues_section.model, pools)
    problems += [p for p in checked if not any(s.covers(p) for s in unreadable)]

    if problems:
        raise ConfigError([_with_allowed_values(p) for p in problems])
    assert cloud is not None and cluster is not None and software is not None
    config = StackConfig(
        cloud=cloud.name,
        cluster=cluster,
        gpu_pools=tuple(pools),
        gpu_software=software,
        samples=sections["samples"].model,
        gpu_software_mode=cloud.software_mode(software.mode, cluster),
        warnings=tuple(warnings),
        queues=sections["queues"].model,
        cost=sections["cost"].model,
        today=today or clock_today(),
    )
    # What only the resolved pools show: a fabric pool's notes from its cloud (what the cloud
    # does on day two, what gpufleet cannot check), said as warnings; a queued pool's flavor
    # within Kueue's limits.
    fabric_notes = [
        f"gpuPools[{index}].interconnect: {note}"
        for index, pool in indexed_pools
        if pool.interconnect == "fabric"
        for note in _notes(resolve_pool(config, pool).fabric)
    ]
    if fabric_notes:
        config = replace(config, warnings=(*config.warnings, *fabric_notes))
    queued = [
        (i, resolve_pool(config, p))
        for i, p in indexed_pools
        if queue_checks.has_queue(p, config.queues)
    ]
    resolved = queue_checks.resolved_problems(queued)
    if resolved:
        raise ConfigError(resolved)
    resolved_warnings = [
        *queue_checks.ended_reservation_warnings(queued),
        *queue_checks.unqueued_pods_warnings(queued),
    ]
    if not resolved_warnings:
        return config
    return replace(config, warnings=(*config.warnings, *resolved_warnings))


def _notes(fabric: PoolFabric | None) -> tuple[str, ...]:
    return fabric.notes if fabric is not None else ()


# Keys whose type errors should also say which values are allowed (the type alone does not).
_ALLOWED_VALUES: Mapping[str, Sequence[str]] = {
    "cluster.kubernetesVersion": charts.KUBERNETES_MINORS,
}


def _with_allowed_values(problem: Problem) -> Problem:
    allowed = _ALLOWED_VALUES.get(problem.path)
    # A string the cloud's own rules refused already says which minors it creates (a cloud's
    # calendar, not this static list: review aks-2.md A-N1).
    if allowed is None or "allowed" in problem.message or isinstance(problem.value, str):
        return problem
    return replace(problem, message=f"{problem.message}; allowed: {', '.join(allowed)}")
